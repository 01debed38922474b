#!/usr/bin/env bash
# Static checks of the action, the project's workflows, the example workflows and the JSON
# Schemas. Offline; exits non-zero on the first failing check. VENV names the virtual
# environment holding the tools (default: .venv at the repository root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${VENV:-$root/.venv}"
bin="$venv/bin"
[ -d "$bin" ] || bin="$venv/Scripts"

shopt -s nullglob
examples=(examples/*/.github/workflows/*.yml examples/*/.github/workflows/*.yaml)
own=(.github/workflows/*.yml .github/workflows/*.yaml)
schemas=(schemas/*.json)
shopt -u nullglob

if [ "${#examples[@]}" -eq 0 ]; then
  echo "lint: no example workflows found under examples/" >&2
  exit 1
fi
if [ "${#own[@]}" -eq 0 ]; then
  echo "lint: no workflows found under .github/workflows/" >&2
  exit 1
fi
if [ "${#schemas[@]}" -eq 0 ]; then
  echo "lint: no JSON Schemas found under schemas/" >&2
  exit 1
fi
workflows=("${own[@]}" "${examples[@]}")

echo "lint: action.yml against the GitHub action schema"
"$bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml

echo "lint: ${#workflows[@]} workflows against the GitHub workflow schema"
"$bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"

echo "lint: .github/dependabot.yml against the Dependabot schema"
"$bin/check-jsonschema" --builtin-schema vendor.dependabot .github/dependabot.yml

echo "lint: ${#schemas[@]} JSON Schemas against their metaschema"
"$bin/check-jsonschema" --check-metaschema "${schemas[@]}"

# actionlint checks expressions, contexts, job needs and every `run:` script with shellcheck;
# through the self-test's `uses: ./` it also checks every `with:` against action.yml's inputs.
echo "lint: actionlint (with shellcheck) on ${#workflows[@]} workflows"
"$bin/actionlint" -shellcheck "$bin/shellcheck" -no-color "${workflows[@]}"

# Any finding fails; accepted exceptions carry an inline `zizmor: ignore[...]` with the reason.
echo "lint: zizmor on action.yml, the workflows and the Dependabot configuration"
"$bin/zizmor" --offline --no-progress action.yml "${workflows[@]}" .github/dependabot.yml

echo "lint: ok"
