#!/usr/bin/env bash
# Run the whole test suite in the project environment; GUI tests need a display, so use Xvfb when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${VENV:-.venv}/bin/python
# One pytest worker per core (pytest-xdist); pass -n 0 to run serially.
set -- -n auto "$@"
if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$PY" -m pytest "$@"
fi
[ -n "${DISPLAY:-}" ] || echo "warning: no display and no xvfb-run: the GUI tests will be skipped (apt-get install xvfb)"
exec "$PY" -m pytest "$@"
