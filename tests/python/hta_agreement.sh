#!/usr/bin/env bash
# Runs hta_agreement.py with HolisticTraceAnalysis from PyPI, in a venv of its own
# (build/hta-venv, made on first use from tests/python/hta-requirements.txt). Exits 77 (ctest:
# skipped) when the venv cannot be made, e.g. without a package registry.
#   hta_agreement.sh PIPEBENCH VENV_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pipebench=$1
venv=$2
requirements=$here/hta-requirements.txt
if ! cmp -s "$requirements" "$venv/.requirements" 2>/dev/null; then
  rm -rf "$venv"
  if ! /usr/bin/python3 -m venv "$venv" ||
     ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
         -r "$requirements"; then
    echo "skipped: could not install HolisticTraceAnalysis into $venv"
    exit 77
  fi
  cp "$requirements" "$venv/.requirements"
fi
exec "$venv/bin/python" "$here/hta_agreement.py" "$pipebench"
