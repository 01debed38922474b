#!/usr/bin/env bash
# Regenerate requirements.lock, the hash-pinned install of the composite action, from the
# runtime dependencies of pyproject.toml. (The package itself is copied, never built, so no
# build backend belongs in it; uv, the installer, is pinned apart in action/installer.lock.)
#
#   scripts/lock.sh                         keep every pin that still fits; add what is missing
#   scripts/lock.sh --upgrade               move every pin to the newest release in range
#   scripts/lock.sh --upgrade-package NAME  move one pin
#   scripts/lock.sh --check                 exit 1 when the committed lock is not what the
#                                           command above would write (nothing is changed)
#
# Needs the package index and `uv` from the dev extra (VENV names the virtual environment,
# default .venv). The resolution is universal (Linux, macOS and Windows) for CPython 3.11, the
# interpreter action.yml installs, so the result does not depend on the machine it runs on;
# every pin lists the hashes of all its files. Other pip/uv configuration is ignored.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$root/.venv}"
bin="$venv/bin"
[ -d "$bin" ] || bin="$venv/Scripts"
python="$bin/python"
[ -x "$python" ] || python="$bin/python.exe"
uv="$bin/uv"
[ -x "$uv" ] || uv="$bin/uv.exe"
if [ ! -x "$uv" ]; then
  echo "lock: no uv in $venv; install the dev extra: pip install -e '.[dev]'" >&2
  exit 2
fi

check=false
args=()
for arg in "$@"; do
  if [ "$arg" = --check ]; then
    check=true
  else
    args+=("$arg")
  fi
done

# A developer's own index, constraint or find-links settings must not leak into the lock.
while IFS= read -r name; do
  case "$name" in
    UV_CACHE_DIR | UV_NATIVE_TLS) ;;
    UV_* | PIP_INDEX_URL | PIP_EXTRA_INDEX_URL | PIP_FIND_LINKS | PIP_CONSTRAINT) unset "$name" ;;
  esac
done < <(compgen -e)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The input: exactly the runtime dependencies pyproject.toml declares, one a line.
"$python" - "$root/pyproject.toml" > "$work/jev-select.in" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as handle:
    pyproject = tomllib.load(handle)
for requirement in pyproject["project"]["dependencies"]:
    print(requirement)
PY

# The committed pins are the preferences: without --upgrade a pin changes only when it no
# longer fits, so running this twice writes the same file.
grep -v '^#' "$root/requirements.lock" > "$work/requirements.lock" || true
(
  cd "$work"
  "$uv" pip compile --quiet --no-config --no-header \
    --universal --python-version 3.11 --generate-hashes \
    --output-file requirements.lock jev-select.in ${args[@]+"${args[@]}"}
)

{
  cat <<'HEADER'
# Locked runtime dependencies of the jev-select composite action, for CPython 3.11. Installed by
# action/install.py with `uv pip install --require-hashes --only-binary :all:`; every pin carries
# the hashes of all its files on the index (Linux, macOS and Windows wheels), so nothing
# unverified reaches the job that holds the API key. The package itself is copied from the
# action's checkout, not built: no build backend belongs here.
#
# Generated from pyproject.toml by scripts/lock.sh; do not edit by hand. `scripts/lock.sh
# --upgrade` moves every pin to the newest release within the declared ranges.
HEADER
  cat "$work/requirements.lock"
} > "$work/new.lock"

if "$check"; then
  if ! diff -u "$root/requirements.lock" "$work/new.lock"; then
    echo "lock: requirements.lock differs from what scripts/lock.sh writes" >&2
    exit 1
  fi
  echo "lock: requirements.lock is current"
  exit 0
fi
mv "$work/new.lock" "$root/requirements.lock"
echo "lock: wrote requirements.lock ($(grep -c -- '--hash=' "$root/requirements.lock") hashes)"
