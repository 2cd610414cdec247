# The two commands of the README.
.PHONY: run test

run:  ## install everything, then open the GUI on the default scene (a headless run without a display)
	scripts/setup.sh
	python3 main.py

test:  ## install everything, then run the whole test suite (under Xvfb when there is no display)
	scripts/setup.sh test
	scripts/test.sh
