#!/usr/bin/env bash
# Serve the gpodder.net-API (v2) test server in the FOREGROUND on 127.0.0.1:PORT.
# Usage: serve-gpodder.sh PORT USER PASS DATADIR
#   DATADIR holds gpodder.db (SQLite); it is created if missing and kept on restart
#   (the user's password is reset to PASS if the user already exists).
# Env: VENV (default: ../../../.build/sync-venv beside this script; made by setup.sh),
#      LOGLEVEL (uvicorn --log-level, default warning; 'info' prints an access log),
#      GPODDER_TEST_STRICT=1 (the package's raw behaviour, no compat shim).
# The last step execs uvicorn, so the pid of this script is the server's: kill it to stop.
# Ready when GET http://127.0.0.1:PORT/clientconfig.json answers 200.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ne 4 ]; then echo "usage: $0 PORT USER PASS DATADIR" >&2; exit 2; fi
PORT="$1"; GUSER="$2"; GPASS="$3"; DATA="$4"
VENV="${VENV:-$HERE/../../../.build/sync-venv}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac   # the script changes folder below
if [ ! -x "$VENV/bin/uvicorn" ] || [ ! -x "$VENV/bin/gpodder-router" ]; then
  echo "serve-gpodder.sh: no venv at $VENV (run: $HERE/setup.sh $VENV)" >&2; exit 1
fi
mkdir -p "$DATA"
DATA="$(cd "$DATA" && pwd)"
export GPODDER_DATABASE_URL="sqlite+aiosqlite:///$DATA/gpodder.db"
export GPODDER_BCRYPT_ROUNDS=4            # fast hashing: tests only
export GPODDER_BASE_URL="http://127.0.0.1:$PORT"
cd "$DATA"                                # GPodderConfig also reads ./.env: keep cwd ours
# Create the schema and the user offline (or reset the password of an existing one).
if ! out="$("$VENV/bin/gpodder-router" create-user "$GUSER" --password "$GPASS" 2>&1)"; then
  case "$out" in
    *xists*) "$VENV/bin/gpodder-router" set-password "$GUSER" --password "$GPASS" >/dev/null ;;
    *) echo "$out" >&2; exit 1 ;;
  esac
fi
exec "$VENV/bin/uvicorn" --app-dir "$HERE" gpodder_server:app \
  --host 127.0.0.1 --port "$PORT" --log-level "${LOGLEVEL:-warning}"
