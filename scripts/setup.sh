#!/usr/bin/env bash
# Install everything Articula needs into the project's own environment (.venv in the checkout), then compile the
# numba kernels once. The system interpreter's packages are never touched.
#   scripts/setup.sh         runtime dependencies (the GUI and the headless runner)
#   scripts/setup.sh test    plus the test dependencies (pytest, pytest-qt, Pinocchio, MuJoCo, hypothesis)
# Environment: PYTHON (the interpreter that creates the venv, default python3), VENV (default .venv),
# ARTICULA_FRESH_VENV=1 (delete and recreate the venv first, as CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# System libraries for Qt/OpenGL windows and Xvfb (virtual display for tests and headless screenshots).
SYSTEM_PACKAGES="xvfb xauth libgl1 libegl1 libglx-mesa0 libgl1-mesa-dri libxkbcommon-x11-0 libxcb-icccm4
  libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1 libxcb-cursor0
  libxcb-shape0 libfontconfig1 libdbus-1-3 gcc"
if command -v dpkg >/dev/null; then
  missing=$(for p in $SYSTEM_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "setup: installing system packages for Qt and Xvfb: $(echo $missing)"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
    else
      echo "setup: warning: not root, so these system packages (needed by the GUI and its tests) are not installed:"
      echo "  sudo apt-get install $(echo $missing)"
    fi
  fi
fi

if [ "${ARTICULA_FRESH_VENV:-0}" = 1 ]; then rm -rf "$VENV"; fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating the project environment $VENV ($("$PYTHON" --version))"
  "$PYTHON" -m venv "$VENV"
fi
if [ "${1:-}" = "test" ]; then extras="[test]"; else extras=""; fi
echo "setup: installing articula$extras and its pinned dependencies (requirements/constraints.txt) into $VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  -c requirements/constraints.txt -e ".${extras}"
# Compile the numba kernels once so the first window opens in seconds (a progress line every kernel).
"$VENV/bin/python" -m engine.warmup
