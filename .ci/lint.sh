#!/usr/bin/env bash
# Static checks of the action, the example workflows and the JSON Schemas. Offline; exits
# non-zero on the first failing check. VENV names the virtual environment holding the tools
# (default: .venv at the repository root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${VENV:-$root/.venv}"
bin="$venv/bin"
[ -d "$bin" ] || bin="$venv/Scripts"

shopt -s nullglob
workflows=(examples/*/.github/workflows/*.yml examples/*/.github/workflows/*.yaml)
schemas=(schemas/*.json)
shopt -u nullglob

if [ "${#workflows[@]}" -eq 0 ]; then
  echo "lint: no example workflows found under examples/" >&2
  exit 1
fi
if [ "${#schemas[@]}" -eq 0 ]; then
  echo "lint: no JSON Schemas found under schemas/" >&2
  exit 1
fi

echo "lint: action.yml against the GitHub action schema"
"$bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml

echo "lint: ${#workflows[@]} example workflows against the GitHub workflow schema"
"$bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"

echo "lint: ${#schemas[@]} JSON Schemas against their metaschema"
"$bin/check-jsonschema" --check-metaschema "${schemas[@]}"

# Any finding fails; accepted exceptions carry an inline `zizmor: ignore[...]` with the reason.
echo "lint: zizmor on action.yml and the example workflows"
"$bin/zizmor" --offline --no-progress action.yml "${workflows[@]}"

echo "lint: ok"
