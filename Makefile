# The two commands of the README. Both install into the project's own environment, .venv in the checkout.
.PHONY: run test lock
export VENV ?= .venv

run:  ## install everything, then open the GUI on the default scene (a headless run without a display)
	scripts/setup.sh
	$(VENV)/bin/python main.py

test:  ## install everything, then run the whole test suite (under Xvfb when there is no display)
	scripts/setup.sh test
	scripts/test.sh

lock:  ## re-pin requirements/constraints.txt from a fresh environment after editing pyproject.toml
	scripts/lock.sh
