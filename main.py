"""Articula: ``python main.py [SCENE]`` opens the window (or runs headless when there is no display);
``python main.py run SCENE --duration 5 --out run`` runs headless; ``python main.py --help`` lists the rest.
The same as the installed ``articula`` command (engine/cli.py)."""
import sys

if __name__ == "__main__":
    from engine.cli import main
    sys.exit(main(sys.argv[1:]))
