#!/usr/bin/env bash
# Create (or reuse) the Python venv for the podcast-sync test servers.
# Usage: setup.sh VENV_DIR
# Idempotent: does nothing when VENV_DIR/bin/uvicorn exists and mygpoclient and
# gpodder_router import. Needs Python >= 3.12 (set PY312=/path/to/python3 to choose one).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:?usage: setup.sh VENV_DIR}"

if [ -x "$VENV/bin/uvicorn" ] && [ -x "$VENV/bin/python" ] &&
   "$VENV/bin/python" -c 'import mygpoclient, gpodder_router' 2>/dev/null; then
  echo "sync venv ready: $VENV (already set up)"
  exit 0
fi

# gpodder-fastapi-router needs Python >= 3.12 (Debian 12's python3 is 3.11).
if [ -z "${PY312:-}" ]; then
  for c in /root/.pyenv/versions/3.12*/bin/python3 /root/.pyenv/versions/3.13*/bin/python3 \
           python3.12 python3.13 python3; do
    if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then PY312="$c"; break; fi
  done
fi
if [ -z "${PY312:-}" ] || ! "$PY312" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
  echo "setup.sh: no Python >= 3.12 found (looked at /root/.pyenv/versions/3.12*, 3.13*, python3.12, python3.13, python3);" \
       "install one or set PY312=/path/to/python3.12" >&2
  exit 1
fi

"$PY312" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/requirements.txt"
"$VENV/bin/python" -c 'import mygpoclient, gpodder_router' || {
  echo "setup.sh: packages installed but do not import" >&2; exit 1; }
echo "sync venv ready: $VENV ($("$VENV/bin/python" --version 2>&1))"
