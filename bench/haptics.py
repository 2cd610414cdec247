"""Haptic loop timing: does the haptic thread hold 1 kHz while the physics runs?  (issue 7, "Performance")

Runs the haptic thread (a real attach-mode ``HapticSession.tick`` and its ``PhysicsPort.update`` on a pinned
body) next to a "physics" thread that loads the CPU in one of these ways:
  none         nothing else runs
  numba nogil  compiled kernels that release the GIL (how the engine's kernels are written)
  numba GIL    the same kernels holding the GIL (what happens if ``nogil=True`` is forgotten)
  python       pure-Python work (driver code, plugins, a Python physics)
  mixed        a physics step's shape: a little Python driving a longer nogil kernel
with CPython's switch interval at its 5 ms default and lowered; then the OpenHaptics servo callback (the real
pyOpenHaptics binding on the test fake libHD, if a C compiler is present) under the Python load; then the haptic
loop alone in a separate process beside the Python load.  Prints, per case, the median over ``--repeats`` runs of
the mean rate and the 99th-percentile period, and the jitter histogram of the last run.

    python bench/haptics.py [--seconds 2] [--repeats 3] [--match servo]

The targets are mean rate >= 990 Hz and p99 period <= 2 ms.  ``--gui`` runs the configuration of the issue's
performance clause instead: the application's window on the default scene (Talos standing under its stance
controller, in real time, and the box on the table), the mouse grasping the box through the same haptic
session, port and physics thread as any device, and the view rendering; it prints the haptic rate and jitter
histogram with the physics real-time factor, the frame rate and the load average (needs a display:
``xvfb-run -a``), for the haptic session in its own process (the application's default,
``engine.interaction.process``) and, for comparison, on a thread of the application's process.

    xvfb-run -a python bench/haptics.py --gui [--seconds 10] [--repeats 3]
"""
from __future__ import annotations

import argparse
import ctypes
import multiprocessing as mp
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from numba import njit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from engine.interaction import (CouplingSettings, HapticSession, HapticThread, PhantomDevice,  # noqa: E402
                                ScriptedDevice)
from engine.interaction.thread import PeriodStats  # noqa: E402

FAKE_HD = pathlib.Path(__file__).resolve().parents[1] / "tests" / "interaction" / "fake_hd" / "fake_hd.c"


@njit(cache=True, nogil=True)
def _kernel_nogil(a, repeats):
    s = 0.0
    for _ in range(repeats):
        for i in range(a.shape[0]):
            s += a[i] * 1.0000001
    return s


@njit(cache=True)
def _kernel_gil(a, repeats):
    s = 0.0
    for _ in range(repeats):
        for i in range(a.shape[0]):
            s += a[i] * 1.0000001
    return s


def _python_work(n=20000):
    s = 0
    for i in range(n):
        s += i * i
    return s


def _mixed_work(a):
    _python_work(2000)
    return _kernel_nogil(a, 100)


LOADS = {
    "none": None,
    "numba nogil": lambda a: _kernel_nogil(a, 200),
    "numba GIL": lambda a: _kernel_gil(a, 200),
    "python": lambda a: _python_work(),
    "mixed": _mixed_work,
}


class Load:
    """A 'physics' thread running one kind of work in a loop until stopped."""

    def __init__(self, kind: str):
        self.work, self.stop = LOADS[kind], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        a = np.random.default_rng(0).random(10000)
        while not self.stop.is_set():
            self.work(a)

    def __enter__(self):
        if self.work is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.work is not None:
            self.thread.join()


class Pinned:
    """A grasped body that does not move (the tick's cost is what is measured, not a motion)."""
    mass = 1.75

    def placement(self):
        return np.eye(3), np.zeros(3)

    def velocity_at(self, point):
        return np.zeros(3)

    def apply_wrench(self, wrench, point):
        pass


def haptic_tick():
    """A real attach-mode tick with its physics-port update: the haptic thread's work at 1 kHz."""
    t = np.array([0.0, 3600.0])
    device = ScriptedDevice(t, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.01]], buttons=[1, 1])
    session = HapticSession(device, coupling=CouplingSettings(k_p=400.0))
    port = session.physics_port(lambda x: "pinned", lambda key: Pinned())
    device.start()

    def tick():
        port.update()
        session.tick()
    return tick


def run_thread(load: str, interval: float, seconds: float, priority=None):
    tick = haptic_tick()
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        with Load(load):
            thread = HapticThread(tick, 1000.0, switch_interval=None, priority=priority)
            thread.start()
            time.sleep(seconds)
            thread.stop()
    finally:
        sys.setswitchinterval(previous)
    return thread.stats.summary()


def build_fake_libhd(directory: str) -> str | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    out = os.path.join(directory, "libHD.so")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-Wl,-soname,libHD.so", "-o", out, str(FAKE_HD), "-lpthread",
                    "-lm"], check=True)
    return out


def run_servo(library: str, load: str, interval: float, seconds: float, priority=None):
    """Periods of the OpenHaptics servo callback (frame stamps logged by the fake libHD) with the haptic thread
    running too."""
    lib = ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
    lib.fakehd_force_log.restype = ctypes.c_long
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    device = PhantomDevice(library=library)
    session = HapticSession(device)
    session.thread.switch_interval, session.thread.priority = None, priority
    try:
        with Load(load):
            session.start()
            time.sleep(seconds)
            session.stop()
    finally:
        sys.setswitchinterval(previous)
    n = 1 << 16
    buf = (ctypes.c_double * (4 * n))()
    count = lib.fakehd_force_log(buf, n)
    stamps = np.frombuffer(buf, dtype=float)[:4 * count:4]
    stats = PeriodStats()
    for period in np.diff(stamps[stamps > 0.2]):                   # skip the start-up
        stats.record(int(1e9 * period))
    return stats.summary()


def _process_loop(seconds, priority, queue):
    thread = HapticThread(haptic_tick(), 1000.0, switch_interval=None, priority=priority)
    thread.start()
    time.sleep(seconds)
    thread.stop()
    queue.put(thread.stats.summary())


def run_process(load: str, interval: float, seconds: float, priority=None):
    """The haptic loop in its own process (its own GIL) while this process runs the load."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    with Load(load):
        proc = ctx.Process(target=_process_loop, args=(seconds, priority, queue))
        proc.start()
        summary = queue.get(timeout=60 + seconds)
        proc.join()
    return summary


def _run_qt(qapp, seconds: float):
    from PySide6 import QtCore
    loop = QtCore.QEventLoop()
    QtCore.QTimer.singleShot(int(1000 * seconds), loop.quit)
    loop.exec()


def run_gui(seconds: float, repeats: int, backends=("process", "thread")):
    """The haptic loop of the mouse holding the box in the GUI, while Talos stands in real time and the view
    renders, for each haptic backend (the session in its own process, the default; or on a thread of the GUI's
    process): {backend: [(summary, real-time factor, frames per second, load average)] per repeat}."""
    from PySide6 import QtGui

    import app
    from app.main_window import MainWindow
    qapp = app.application()
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    results = {}
    for backend in backends:
        window.interaction.backend = backend
        if not window.open_scene(app.DEFAULT_SCENE):
            raise RuntimeError(window.log.text())
        window.physics.play()
        while window.frame is None or window.frame.snapshot.t < 0.2:      # kernels loaded or compiled
            _run_qt(qapp, 0.1)
        view, results[backend] = window.viewport, []
        for _ in range(repeats):
            m = [mb.name for mb in window.universe.multibodies].index("box")
            box = window.frame.snapshot.body_p[m][0] + [0.0, 0.0, 0.075]
            w, h = view.width(), view.height()
            clip = (view.projectionMatrix((0, 0, w, h), (0, 0, w, h)) * view.viewMatrix()).map(
                QtGui.QVector4D(*box, 1))
            window.interaction.double_click((clip.x() / clip.w() + 1) * w / 2, (1 - clip.y() / clip.w()) * h / 2)
            if window.interaction.grasped != (m, 0):
                raise RuntimeError(f"the double-click did not grasp the box (got {window.interaction.grasped})")
            _run_qt(qapp, seconds)
            summary = window.interaction.mouse.summary()
            results[backend].append((summary, window.frame.real_time_factor, window.fps, os.getloadavg()[0]))
            window.interaction.release()
            _run_qt(qapp, 1.0)
        window.physics.pause().result(30)
    window.close()
    return results


def main_gui(seconds: float, repeats: int):
    results = run_gui(seconds, repeats)
    print(f"haptic loop of the mouse holding the box, GUI on the default scene (Talos standing, real time), "
          f"{repeats} x {seconds} s per backend, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}\n")
    print(f"{'backend':8s} {'mean rate':>10s} {'p99 period':>11s} {'max':>9s} {'physics rtf':>12s} {'view':>8s} "
          f"{'load avg':>9s}")
    for backend, runs in results.items():
        for summary, rtf, fps, load in runs:
            ok = "ok" if summary.mean_rate >= 990 and summary.p99 <= 2e-3 else "MISS"
            print(f"{backend:8s} {summary.mean_rate:8.1f}Hz {1e3 * summary.p99:9.3f}ms {1e3 * summary.max:7.2f}ms "
                  f"{rtf:12.2f} {fps:5.0f}fps {load:9.2f}  {ok}")
    for backend, runs in results.items():
        rate, p99 = np.median([r[0].mean_rate for r in runs]), np.median([r[0].p99 for r in runs])
        print(f"\n{backend}: median mean rate {rate:.1f} Hz, median p99 period {1e3 * p99:.3f} ms; jitter histogram "
              f"of the last run:")
        print("\n".join("    " + line for line in runs[-1][0].table().splitlines()[1:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--match", default="", help="run only the cases whose 'where load' contains this")
    parser.add_argument("--gui", action="store_true", help="the GUI case: Talos standing, rendering, mouse grasp")
    args = parser.parse_args()
    if args.gui:
        return main_gui(args.seconds, args.repeats)
    _kernel_nogil(np.ones(10), 1)
    _kernel_gil(np.ones(10), 1)
    tick = haptic_tick()
    costs = []
    for _ in range(2000):
        t0 = time.perf_counter()
        tick()
        costs.append(time.perf_counter() - t0)
    print(f"one haptic tick (attach mode + port update): median {1e6 * np.median(costs):.0f} us, "
          f"p99 {1e6 * np.percentile(costs, 99):.0f} us")
    rt = 10
    cases = [("thread", load, 5e-3, None) for load in LOADS]
    cases += [("thread", "python", interval, None) for interval in (1e-3, 5e-4, 2e-4)]
    cases += [("thread", load, 5e-3, rt) for load in ("none", "python")]
    cases += [("thread", load, 2e-4, rt) for load in LOADS]
    with tempfile.TemporaryDirectory() as tmp:
        library = build_fake_libhd(tmp)
        if library is not None:
            cases += [("servo", "python", 5e-3, None), ("servo", "python", 2e-4, rt), ("servo", "none", 2e-4, rt),
                      ("servo", "mixed", 2e-4, rt)]
        cases += [("process", "python", 5e-3, None), ("process", "python", 5e-3, rt)]
        print(f"haptic loop at 1 kHz, {args.repeats} x {args.seconds} s per case, {os.cpu_count()} CPUs, "
              f"Python {sys.version.split()[0]}; medians\n")
        print(f"{'where':8s} {'load':12s} {'switch':>7s} {'rt':>3s} {'mean rate':>10s} {'p99 period':>11s} "
              f"{'max':>9s}")
        for where, load, interval, priority in [c for c in cases if args.match in f"{c[0]} {c[1]}"]:
            runner = {"thread": run_thread, "process": run_process,
                      "servo": lambda *a: run_servo(library, *a)}[where]
            runs = [runner(load, interval, args.seconds, priority) for _ in range(args.repeats)]
            rate = np.median([r.mean_rate for r in runs])
            p99 = np.median([r.p99 for r in runs])
            worst = np.median([r.max for r in runs])
            ok = "ok" if rate >= 990 and p99 <= 2e-3 else "MISS"
            print(f"{where:8s} {load:12s} {1e3 * interval:5.1f}ms {'yes' if priority else 'no':>3s} {rate:8.1f}Hz "
                  f"{1e3 * p99:9.3f}ms "
                  f"{1e3 * worst:7.2f}ms  {ok}")
            print("\n".join("    " + line for line in runs[-1].table().splitlines()[1:]))


if __name__ == "__main__":
    main()
