#!/usr/bin/env bash
# The Python peers of the interop suite (interop/test/mcp-python.test.mjs): the official PyPI x402 MCP buyer
# and server helpers on the official MCP Python SDK, with the Python guard (clients/python).
#
# They run in their own virtualenv, interop/.venv (gitignored), made from the pinned
# interop/python/requirements.txt (PyPI), remade when that file changes; clients/python is installed into it
# on every run (no dependencies: the pins carry them), so the test exercises this checkout's guard.
#
# Without python3 (or without PyPI) this exits 3 with a notice and the test skips loudly, unless CI=true:
# then it fails (.ci/run installs python3 and python3-venv).
#
#   scripts/interop-python.sh --setup     make or refresh interop/.venv; prints its python's path
set -uo pipefail
cd "$(dirname "$0")/.."

REQ=interop/python/requirements.txt
VENV=interop/.venv
PY=$VENV/bin/python

unavailable() {
  echo "interop python: $1" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 3
}

command -v python3 >/dev/null || unavailable "python3 is not on PATH"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || unavailable "python3 is older than 3.10"
stamp=$(sha256sum "$REQ" | cut -d' ' -f1)
if ! [ -x "$PY" ] || [ "$(cat "$VENV/.payguard-stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "interop python: creating $VENV from $REQ (PyPI)" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV" >&2 || { rm -rf "$VENV"; unavailable "python3 -m venv failed"; }
  if ! "$PY" -m pip install -q --disable-pip-version-check -r "$REQ" >&2; then
    rm -rf "$VENV"
    unavailable "pip could not install $REQ from PyPI"
  fi
  echo "$stamp" >"$VENV/.payguard-stamp"
fi
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall ./clients/python >&2 ||
  unavailable "clients/python could not be installed into $VENV"
echo "$PWD/$PY"
