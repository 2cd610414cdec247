"""Deformable soles (seed 000 §3.8-3.9, §4.4): precomputation, the cost of standing on soles, the drop experiment
and the material sweep.

    python bench/soles.py [precompute|standing|drop|sweep] [--repeat 5]

precompute: the thesis's sole (22 × 13 × 2 cm, E = 3 MPa, ν = 0.4) meshed by scikit-fem's structured generator
at three element sizes, and the two-layer sole with pads (Gmsh): nodes, candidate contact nodes, the time to
mesh, ``build_sole`` cold (empty cache) and from the disk cache; peer: K_c⁻¹ read off the dense inverse of K^r,
what the condensation avoids. Targets (issue 11): < 5 s cold, < 0.2 s cached, ≥ 40 contact nodes.

standing: Talos standing on its rigid feet and on two FEM soles (scenes/default.xml, scenes/talos_soles.xml),
alternated in one process: time per step (wall, and the thread's CPU time: steadier on a loaded machine, where
the wall time counts the other processes' turns), its ratio to rigid (target ≤ 2), the real-time factor, contact
nodes per foot, rows of the largest solve, the stages, and how many sole groups the stick-first solve took.

drop: the thesis's drop (L2266): Talos from 1 cm with every joint at 0, rigid feet, flexible ankles, FEM soles,
two-layer soles (scenes/drop_*.xml): the peak vertical acceleration of the torso and the time per step. The thesis
prints no peak for this drop (its Fig. 4.5 plots it against the material); its 50 / 30 / 5 m/s² (rigid, flexible
ankle, soles) are walking peaks (§4.4.2, L2283-2301: HRP-2 walking six steps), and 2 m/s² the two-layer sole's
(§4.6). A 1 cm drop on a 3 MPa sole cannot peak near 5 m/s²: the sole stops the robot (v₀ = 0.44 m/s) within
v₀² / a = 39 mm at 5 m/s², twice its thickness.

sweep: the drop on soles over E (1-10 MPa) × ν (0.01-0.49), the thesis's material study.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter, thread_time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Simulation, load_universe                                         # noqa: E402
from engine.deformable import Material, box_mesh, build_sole, two_layer_sole          # noqa: E402
from engine.deformable.assembly import stiffness                                      # noqa: E402
from engine.metrics import PeakTorsoAcceleration                                      # noqa: E402
from engine.sweep import Parameter                                                    # noqa: E402
from engine.sweep import sweep as run_sweep                                           # noqa: E402

RUBBER = [Material(3e6, 0.4)]
LAYERS = [Material(3e6, 0.25), Material(1e6, 0.25)]        # the thesis's two-layer sole (§4.6)
DENSE_LIMIT = 4000                                           # DOFs of K^r up to which the dense peer runs


def _timed(fn):
    t0 = perf_counter()
    result = fn()
    return perf_counter() - t0, result


def _dense_compliance(sole):
    """Peer: K_c⁻¹ as the contact block of (K^r)⁻¹, the reduced stiffness inverted densely."""
    free = sole.free_dof
    K_r = stiffness(sole.mesh, sole.materials)[free][:, free].toarray()
    rows = np.searchsorted(free, (3 * sole.contact_node[:, None] + np.arange(3)).ravel())
    return np.linalg.inv(K_r)[np.ix_(rows, rows)]


def precompute(repeat: int):
    cases = [(f"box h = {h * 100:g} cm", lambda h=h: box_mesh(h=h), RUBBER) for h in (0.02, 0.01, 0.007)]
    cases.append(("two-layer, pads, h = 1 cm", lambda: two_layer_sole(h=0.01), LAYERS))
    build_sole(box_mesh((0.04, 0.04, 0.02), h=0.02), RUBBER, use_cache=False)    # imports, first calls
    print(f"precompute: 22 x 13 x 2 cm sole; medians of {repeat}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores before the runs")
    print(f"{'mesh':28s} {'nodes':>6s} {'contact':>7s} {'mesh s':>7s} {'cold s':>7s} {'cached s':>8s} "
          f"{'dense s':>8s} {'dense/cold':>10s}")
    for name, build_mesh, materials in cases:
        mesh_times, cold, warm, dense = [], [], [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as folder:
                os.environ["ARTICULA_CACHE_DIR"] = folder
                t, mesh = _timed(build_mesh)
                mesh_times.append(t)
                t, sole = _timed(lambda: build_sole(mesh, materials))
                cold.append(t)
                warm.append(_timed(lambda: build_sole(mesh, materials))[0])
        if len(sole.free_dof) <= DENSE_LIMIT:
            t, C = _timed(lambda: _dense_compliance(sole))
            dense.append(t)
            assert np.allclose(C, sole.K_c_inv, rtol=1e-6, atol=1e-9 * np.abs(C).max())
        cold_s = statistics.median(cold)
        dense_cell = (f"{dense[0]:8.2f} {dense[0] / cold_s:10.1f}" if dense else f"{'-':>8s} {'-':>10s}")
        print(f"{name:28s} {len(mesh.node_position):6d} {len(sole.contact_node):7d} "
              f"{statistics.median(mesh_times):7.2f} {cold_s:7.2f} {statistics.median(warm):8.3f} {dense_cell}")
    print(f"load average {os.getloadavg()[0]:.1f} after the runs")


def standing(repeat: int, seconds: float = 0.5):
    """Talos standing on its rigid feet (scenes/default.xml) and on two FEM soles (scenes/talos_soles.xml),
    alternated in one process: the median wall and thread CPU time per step, the stages, contact nodes and solve
    rows."""
    scenes = {"rigid": ROOT / "scenes/default.xml", "FEM soles": ROOT / "scenes/talos_soles.xml"}
    sims = {name: Simulation(load_universe(path)) for name, path in scenes.items()}
    for sim in sims.values():
        sim.step(300)                                       # settled, kernels compiled
    steps = int(seconds / 1e-3)
    per_step = {name: [] for name in sims}
    cpu_per_step = {name: [] for name in sims}
    stages = {}
    soles = sims["FEM soles"].contact_stage.soles
    before = list(soles.stick_first_solves)
    for _ in range(repeat):
        for name, sim in sims.items():
            sim.timer.reset()
            cpu = thread_time()
            per_step[name].append(_timed(lambda: sim.step(steps))[0] / steps)
            cpu_per_step[name].append((thread_time() - cpu) / steps)
            stages[name] = sim.timer.summary()
    solved, tried = (a - b for a, b in zip(soles.stick_first_solves, before))
    rigid, rigid_cpu = statistics.median(per_step["rigid"]), statistics.median(cpu_per_step["rigid"])
    print(f"standing: Talos, {steps} steps per run, medians of {repeat}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'feet':10s} {'us/step':>8s} {'x rigid':>8s} {'cpu us':>7s} {'x rigid':>8s} {'RTF':>5s} "
          f"{'nodes/foot':>10s} {'rows':>5s}  stages (us)")
    for name, sim in sims.items():
        t, cpu = statistics.median(per_step[name]), statistics.median(cpu_per_step[name])
        soles = sim.contact_stage.soles
        nodes = "/".join(str(len(r)) for r in soles.rest) if soles else "-"
        rows = max(r.rows for r in sim.contact_stage.reports)
        stage = "  ".join(f"{k} {v * 1e6:.0f}" for k, v in stages[name].items() if k != "total" and v > 5e-7)
        print(f"{name:10s} {t * 1e6:8.0f} {t / rigid:8.2f} {cpu * 1e6:7.0f} {cpu / rigid_cpu:8.2f} {1e-3 / t:5.2f} "
              f"{nodes:>10s} {rows:5d}  {stage}")
    print(f"soles: {solved} of the {tried} sole groups solved stick-first (docs/architecture.md, Deformable soles)")


DROPS = {"rigid": "drop_rigid", "flexible ankles": "drop_flexible_ankles", "FEM soles": "drop_soles",
         "two-layer soles": "drop_two_layer"}


def peak_acceleration(universe, seconds: float = 0.3) -> tuple[float, float, float]:
    """(peak |a_z| of the torso, the same over 10 ms windows, wall seconds per step) of a drop: a_z from the
    world vertical velocity of the base (the pelvis, rigid with the torso while every joint is held at 0),
    differenced over one step (the ``peak_torso_acc`` metric of engine/metrics.py)."""
    sim = Simulation(universe)
    metric = PeakTorsoAcceleration(sim)
    vz = np.empty(int(seconds / universe.time_step))
    start = perf_counter()
    for k in range(len(vz)):
        sim.step(1)
        metric.observe(sim)
        vz[k] = metric.last
    wall = (perf_counter() - start) / len(vz)
    window = max(1, int(round(0.01 / universe.time_step)))
    return metric.value(), float(np.abs(vz[window:] - vz[:-window]).max() / (window * universe.time_step)), wall


def drop(seconds: float = 0.3):
    """The thesis's drop (seed 000 §4.4, L2266): Talos from 1 cm, every joint at 0, in the four configurations."""
    print(f"drop: Talos from 1 cm, joints at 0, {seconds:g} s; load average {os.getloadavg()[0]:.1f}")
    print(f"{'feet':16s} {'peak a m/s2':>11s} {'10 ms mean':>10s} {'us/step':>8s} {'x rigid':>8s}")
    rigid = None
    for name, scene in DROPS.items():
        path = ROOT / "scenes" / f"{scene}.xml"
        if not path.exists():
            print(f"{name:16s} (no {path.name})")
            continue
        peak, smooth, wall = peak_acceleration(load_universe(path), seconds)
        rigid = rigid or wall
        print(f"{name:16s} {peak:11.1f} {smooth:10.1f} {wall * 1e6:8.0f} {wall / rigid:8.2f}")


def sweep(seconds: float = 0.2):
    """The thesis's material sweep (§4.4, L2244-2269): the drop on soles of E × ν, peak torso acceleration, on a
    local Dask cluster of two workers (engine/sweep.py, the same as ``articula sweep``)."""
    parameters = [Parameter("Sole.Material.E", (1e6, 2e6, 3e6, 5e6, 10e6)),
                  Parameter("Sole.Material.nu", (0.01, 0.25, 0.4, 0.49))]
    print(f"sweep: peak vertical torso acceleration (m/s2) of the drop on 22 x 13 x 2 cm soles, {seconds:g} s")
    result = run_sweep(ROOT / "scenes/drop_soles.xml", parameters, ["peak_torso_acc"], seconds, workers=2)
    table = result.metrics[:, 0].reshape(len(parameters[0].values), len(parameters[1].values))
    print(f"{'E MPa':>6s} " + " ".join(f"nu={nu:<5g}" for nu in parameters[1].values))
    for E, row in zip(parameters[0].values, table):
        print(f"{E / 1e6:6g} " + " ".join(f"{a:8.1f}" for a in row))
    for i, error in result.errors.items():
        print(f"run {i} failed: {error}")


PARTS = {"precompute": precompute, "standing": standing, "drop": drop, "sweep": sweep}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", nargs="?", choices=PARTS, default=None, help="default: every part")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name in PARTS:
        if args.part in (None, name):
            PARTS[name](args.repeat) if name in ("precompute", "standing") else PARTS[name]()


if __name__ == "__main__":
    main()
