"""Articula: ``python main.py [SCENE]`` opens the GUI (or runs headless when there is no display);
``python main.py run SCENE --duration 5 --out run.npz`` runs headless."""
import os
import sys


def main(argv) -> int:
    from engine.cli import DEFAULT_SCENE, main as cli_main
    if argv and argv[0] == "run":
        return cli_main(argv)
    scene = argv[0] if argv else str(DEFAULT_SCENE)
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        print("no display: running the scene headless for 1 s (use xvfb-run or a desktop for the GUI)",
              file=sys.stderr)
        return cli_main(["run", scene, "--duration", "1"])
    from app import run_gui
    return run_gui(scene)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
