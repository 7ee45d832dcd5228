#!/usr/bin/env bash
# The Python guard's suite (clients/python, pytest), as scripts/test.sh runs it.
#
# It runs in its own virtualenv, clients/python/.venv (gitignored): created on first use with the package's
# test dependencies from PyPI (x402[evm,httpx,svm], pytest, ...), recreated when pyproject.toml changes. Every
# run then installs clients/python into it as `pip install clients/python` does (a regular install, not an
# editable one), so the suite tests the installed package, README included.
#
# README's test command needs only Go and Node. So on a machine without python3 (or where the virtualenv
# cannot be made: no venv module, no network) this suite is SKIPPED with a loud notice, unless CI=true:
# CI installs python3 (.ci/run), and there a missing Python is a failure, never a skip.
#
#   scripts/test-python.sh            set up if needed, then run the suite (extra arguments go to pytest)
#   scripts/test-python.sh --setup    set up the virtualenv only (.ci/run does this before the tests)
set -uo pipefail
cd "$(dirname "$0")/.."

PKG=clients/python
VENV=$PKG/.venv
PY=$VENV/bin/python

unavailable() {
  if [ "${CI:-}" = "true" ]; then
    echo "clients/python: $1 (CI=true: failing; .ci/run installs python3 and python3-venv)" >&2
    exit 1
  fi
  cat >&2 <<EOF
################################################################################
## SKIPPED: the Python guard's suite (clients/python) did not run.
## Reason: $1
## Install python3 with its venv module (Debian: apt-get install python3-venv)
## and network access to PyPI, or run with CI=true to make this a failure.
################################################################################
EOF
  exit 0
}

setup() {
  command -v python3 >/dev/null || unavailable "python3 is not on PATH"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || unavailable "python3 is older than 3.10"
  local stamp
  stamp=$(sha256sum "$PKG/pyproject.toml" | cut -d' ' -f1)
  if [ -x "$PY" ] && [ "$(cat "$VENV/.payguard-stamp" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  echo "clients/python: creating $VENV with the test dependencies from PyPI"
  rm -rf "$VENV"
  python3 -m venv "$VENV" 2>&1 || { rm -rf "$VENV"; unavailable "python3 -m venv failed (no venv/ensurepip module?)"; }
  # setuptools and wheel let the per-run install build without fetching them again (--no-build-isolation).
  if ! "$PY" -m pip install -q --disable-pip-version-check 'setuptools>=70.1' wheel "./$PKG[test]"; then
    rm -rf "$VENV"
    unavailable "pip could not install clients/python[test] from PyPI"
  fi
  echo "$stamp" >"$VENV/.payguard-stamp"
}

setup
if [ "${1:-}" = "--setup" ]; then exit 0; fi

# This checkout's package, installed as users install it.
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall "./$PKG" || exit 1
# From inside the package directory: its pyproject.toml configures pytest; the tests import the installed package.
cd "$PKG" && exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
