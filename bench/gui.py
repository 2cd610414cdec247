"""Frames per second of the main window while the physics runs Talos in the default scene.

    xvfb-run -a -s "-screen 0 1600x1200x24" python bench/gui.py [--seconds 5] [--repeat 3] [--scene PATH]

The window (1280 x 800, docks as opened) plays the default scene while the 3D view is asked to redraw
continuously (as when the user orbits the camera): "fps" counts the frames the view swapped per second of
wall clock, "new states/s" the frames that showed a new snapshot of the physics (the window draws one only
when the physics has published a new state). Each setting runs ``--repeat`` windows of ``--seconds`` and
reports medians: "paused" is the cost of drawing alone; "real time" is the target case (at least 30 fps
expected under Xvfb with Mesa's software renderer on 2 cores); "as fast as possible" lets the physics thread
compete for the CPU without pause. The real-time factor is simulated time over wall time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402  (sets PyOpenGL's error checking before OpenGL is imported)


def measure(qt_app, window, seconds, play=True):
    """(fps, new states shown per second, real-time factor) over ``seconds`` of playing (or paused)."""
    if play:
        window.physics.play().result(30)
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:      # let the pacing settle
        qt_app.processEvents()
    frames = [0]

    def redraw():
        frames[0] += 1
        window.viewport.update()
    window.viewport.frameSwapped.connect(redraw)
    window.viewport.update()
    t0, ticks0, wall0 = window.frame.snapshot.t, window._ticks, time.perf_counter()
    while time.perf_counter() - wall0 < seconds:
        qt_app.processEvents()
        time.sleep(0.001)
    wall = time.perf_counter() - wall0
    window.viewport.frameSwapped.disconnect(redraw)
    rtf = (window.frame.snapshot.t - t0) / wall
    states = (window._ticks - ticks0) / wall
    window.physics.pause().result(30)
    window.physics.reset().result(30)
    return frames[0] / wall, states, rtf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scene", default=str(app.DEFAULT_SCENE), help="a universe XML or URDF")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    qt_app = app.application()
    from app.main_window import MainWindow
    window = MainWindow()
    window.resize(1280, 800)
    window.show()
    if not window.open_scene(args.scene):
        sys.exit(window.log.text())
    for _ in range(50):
        qt_app.processEvents()
        time.sleep(0.01)
    from OpenGL import GL
    window.viewport.makeCurrent()
    renderer = GL.glGetString(GL.GL_RENDERER).decode()
    print(f"renderer: {renderer}; 3D view {window.viewport.width()} x {window.viewport.height()} px; "
          f"{sum(len(item._faces) for item, _ in window.viewport.layers['visual'])} triangles drawn; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores before the runs")
    print(f"{'physics':>22} {'fps':>7} {'new states/s':>13} {'real-time factor':>17}")
    for label in ("paused", "real time", "as fast as possible"):
        if label != "paused":
            window.set_speed(label)
        runs = [measure(qt_app, window, args.seconds, play=label != "paused") for _ in range(args.repeat)]
        fps, states, rtf = (statistics.median(r[k] for r in runs) for k in range(3))
        print(f"{label:>22} {fps:7.1f} {states:13.1f} {rtf:17.3f}")
    window.close()


if __name__ == "__main__":
    main()
