"""The benchmark bicycle (issue 12, "Performance" and part 5): its linearised stability, and 5 s of its self-stable
run at δt = 1 ms on the exact rolling model beside the same bicycle on friction point contacts (Articula's time
stepping and pybullet).

1. Eigenvalues of the lean/steer state matrix (``engine.dynamics.linearize.bicycle_lean_steer``) against the
   forward speed, 0-10 m/s, for the benchmark's exact parameters (assets/robots/meijaard_bicycle.urdf) and the
   thesis's rounded ones (benchmark_bicycle.urdf): a PNG (real parts as dots, imaginary parts as crosses; the
   published weave and capsize speeds as dotted lines) and the speeds, printed beside Meijaard et al. 2007's.
2. Real-time factor (simulated / wall time) of 5 s of scenes/bicycle.xml (<Wheel>: KKT rolling, RK4, projection)
   and of scenes/bicycle_friction.xml (collision disks, μ = 1) on Articula's time stepping and on pybullet,
   medians over rounds (the machine is shared: the spread is printed), then where each friction run drifts from
   the exact one: roll rate, forward speed, rear hub, energy, every 0.5 s.

    python bench/bicycle.py [--rounds 3] [--png runs/bicycle_eigenvalues.png]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from time import perf_counter, process_time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.dynamics.linearize import bicycle_lean_steer, self_stable_speeds  # noqa: E402
from engine.dynamics.rolling import RollingDisks  # noqa: E402

MODELS = {"benchmark (meijaard_bicycle.urdf)": "meijaard_bicycle.urdf",
          "thesis Table 2.1 (benchmark_bicycle.urdf)": "benchmark_bicycle.urdf"}
PUBLISHED = (4.29238253634111, 6.02426201538837)        # Meijaard et al. 2007, Table 2 (a): weave, capsize
TABLE_2_AT_5 = "-0.32286642900409, -0.77534188219585 ± 4.46486771378823i, -14.07838969279820"
RUNS = (("exact rolling (articula, <Wheel>)", "bicycle.xml", "articula"),
        ("friction, time stepping (articula)", "bicycle_friction.xml", "articula"),
        ("friction (pybullet)", "bicycle_friction.xml", "pybullet"))
DURATION = 5.0


def bicycle(file):
    model = engine.load_model(ROOT / "assets" / "robots" / file, floating_base=True)
    body = {n: b for b, n in enumerate(model.body_name)}
    return model, RollingDisks(bodies=(body["front_wheel"], body["rear_wheel"]), radii=(0.35, 0.3),
                               axes=((0, 1, 0), (0, 0, 1)))


def eigenvalues(png):
    speeds = np.linspace(0.0, 10.0, 201)
    curves = {}
    for title, file in MODELS.items():
        model, disks = bicycle(file)
        curves[title] = np.array([np.sort_complex(np.linalg.eigvals(bicycle_lean_steer(model, disks, v)))
                                  for v in speeds])
        weave, capsize = self_stable_speeds(model, disks)
        at_5 = np.sort_complex(np.linalg.eigvals(bicycle_lean_steer(model, disks, 5.0)))
        print(f"{title}: weave {weave:.8f} m/s, capsize {capsize:.8f} m/s "
              f"(Meijaard: {PUBLISHED[0]:.8f}, {PUBLISHED[1]:.8f}); at 5 m/s "
              + ", ".join(f"{z.real:.8f}{z.imag:+.8f}i" for z in at_5))
    print(f"Meijaard Table 2 at 5 m/s: {TABLE_2_AT_5}")
    plot(png, speeds, curves)


def plot(png, speeds, curves):
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter
    from PySide6 import QtCore
    app = pg.mkQApp()
    view = pg.PlotWidget(title="Whipple bicycle: eigenvalues of the lean/steer dynamics against speed")
    view.setBackground("w")
    view.addLegend(offset=(10, 10))
    view.setLabel("bottom", "forward speed v (m/s)")
    view.setLabel("left", "eigenvalue (1/s): real part dots, imaginary part crosses")
    view.setYRange(-10, 10)
    for (title, values), colour in zip(curves.items(), ("#1f77b4", "#d62728")):
        v = np.repeat(speeds, values.shape[1])                # points: no false branches where modes cross
        view.plot(v, values.real.ravel(), pen=None, symbol="o", symbolSize=4, symbolPen=None, symbolBrush=colour,
                  name=title)
        view.plot(v, values.imag.ravel(), pen=None, symbol="x", symbolSize=4, symbolPen=colour)
    for v in PUBLISHED:
        view.addItem(pg.InfiniteLine(v, pen=pg.mkPen("#2ca02c", style=QtCore.Qt.PenStyle.DotLine)))
    view.resize(1100, 700)
    view.show()
    app.processEvents()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    ImageExporter(view.plotItem).export(str(png))
    view.close()
    print(f"wrote {png}")


def series(sim, every):
    """(t, roll rate, forward speed, rear hub position, energy) every ``every`` steps over DURATION."""
    rows = []
    for _ in range(int(round(DURATION / sim.dt)) // every):
        sim.step(every)
        run = sim.runs[0]
        rows.append((sim.time, run.v[4], run.v[1], *run.q[:3], sum(sim.energy())))
    return np.array(rows)


def real_time(rounds):
    wall, cpu, trace = {name: [] for name, *_ in RUNS}, {name: [] for name, *_ in RUNS}, {}
    for _ in range(rounds):                                   # rounds alternate the runs: drift touches all
        for name, scene, which in RUNS:
            sim = engine.Simulation(engine.load_universe(ROOT / "scenes" / scene), engine=which)
            sim.step(5)                                       # compiled, first contacts
            sim.reset()
            t0, c0 = perf_counter(), process_time()
            trace[name] = series(sim, 500)
            wall[name].append(perf_counter() - t0)
            cpu[name].append(process_time() - c0)
    print(f"\n{DURATION:g} s at δt = 1 ms, median of {rounds} rounds (min-max), real-time factor = {DURATION:g} s "
          f"/ wall time (goal for the exact model: >= 20); CPU time: this process's (the others' load left out)")
    for name, *_ in RUNS:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"  {name:38s} wall {w:6.2f} s  RTF {DURATION / w:6.2f}  ({min(wall[name]):.2f}-{max(wall[name]):.2f} s)"
              f"   CPU {c:6.2f} s  RTF {DURATION / c:6.2f}")
    exact = trace[RUNS[0][0]]
    print("\nwhere the friction runs drift from the exact one (t, roll rate, forward speed, |hub - hub_exact|, "
          "energy - E_exact; the differences in brackets)")
    for name, *_ in RUNS:
        rows = trace[name]
        print(f"  {name}")
        for r, e in zip(rows, exact):
            print(f"    t {r[0]:3.1f} s  roll {r[1]:+.4f} ({r[1] - e[1]:+.4f}) rad/s  v {r[2]:.4f} "
                  f"({r[2] - e[2]:+.4f}) m/s  hub {np.linalg.norm(r[3:6] - e[3:6]):.4f} m  ΔE {r[6] - e[6]:+9.3f} J")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--png", default="runs/bicycle_eigenvalues.png")
    args = parser.parse_args()
    eigenvalues(args.png)
    real_time(args.rounds)


if __name__ == "__main__":
    main()
