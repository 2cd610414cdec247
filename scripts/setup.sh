#!/usr/bin/env bash
# Install everything Articula needs on a fresh Debian/Ubuntu machine, then warm the numba kernel cache.
#   scripts/setup.sh         runtime dependencies (the GUI and the headless runner)
#   scripts/setup.sh test    plus the test dependencies (pytest, pytest-qt, Pinocchio, MuJoCo, hypothesis)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

# System libraries for Qt/OpenGL windows and Xvfb (virtual display for tests and headless screenshots).
SYSTEM_PACKAGES="xvfb xauth libgl1 libegl1 libglx-mesa0 libgl1-mesa-dri libxkbcommon-x11-0 libxcb-icccm4
  libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1 libxcb-cursor0
  libxcb-shape0 libfontconfig1 libdbus-1-3 gcc"
missing=$(for p in $SYSTEM_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing system packages: $(echo $missing)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
  else
    echo "warning: please install these system packages (GUI and GUI tests need them):"
    echo "  sudo apt-get install $(echo $missing)"
  fi
fi

if [ "${1:-}" = "test" ]; then extras="[test]"; else extras=""; fi
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e ".${extras}"
# Compile the numba kernels once so the first window opens in seconds.
"$PYTHON" -m engine.warmup
