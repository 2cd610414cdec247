#!/usr/bin/env bash
# Regenerate requirements/constraints.txt, the pinned versions of every runtime and test dependency, from a
# freshly created environment (run it after changing the dependency lists of pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${PYTHON:-python3} -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test]"
{
  echo "# Pinned versions of Articula's runtime and test dependencies, written by scripts/lock.sh."
  echo "# The README's commands install with '-c requirements/constraints.txt'."
  "$tmp/venv/bin/python" -m pip freeze --exclude-editable
} > requirements/constraints.txt
echo "wrote requirements/constraints.txt"
