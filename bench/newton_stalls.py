"""Steps the nonsmooth Newton solver leaves unconverged in simulation, and the cost of a step.

Five runs with ``nonsmooth-newton`` (tolerance 1e-6, 100 iterations): Talos falling from scenes/default.xml's pose
without its stance controller for 2 s (as tests/contact/data/record_hard_problems.py), the same with
``joint_limits="constraint"``, scenes/talos_knocks_box.xml for 5 s, scenes/default.xml for 1 s and the
flexible-ankle walk (scenes/talos_walk_ankles.xml, its six steps, 6 s; issue 16). Prints per run
the steps left unconverged in its first and second halves (the fall's falling and lying steps) and the median wall
time of a step over blocks of 100 steps (the first block, which compiles, is left out). ``--root`` runs another
checkout (a worktree of main for before/after: alternate the runs). A fall is chaotic, and its counts move with
the trajectory: ``--offsets-nm 0 1 -1`` runs the falls again from starts that many nanometres higher.

    python bench/newton_stalls.py [--root /tmp/ref] [--runs fall limits knock default walk] [--offsets-nm 0 ...]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from time import perf_counter

import numpy as np

SECONDS = {"fall": 2.0, "limits": 2.0, "knock": 5.0, "default": 1.0, "walk": 6.0}
SCENES = {"knock": "talos_knocks_box.xml", "default": "default.xml", "walk": "talos_walk_ankles.xml"}


def simulation(run, root, offset):
    import record_hard_problems as R
    if run in ("fall", "limits"):
        sim = R.talos("nonsmooth-newton", limits=run == "limits")
        sim.runs[0].q[2] += offset
        return sim
    from dataclasses import replace
    universe = R.load_universe(root / "scenes" / SCENES[run])
    return R.Simulation(universe.with_settings(solver=replace(universe.solver, name="nonsmooth-newton")))


def measure(run, root, offset):
    sim = simulation(run, root, offset)
    steps = int(round(SECONDS[run] / sim.dt))
    times, halves = [], []
    for block in range(steps // 100):
        if block == steps // 200:
            halves.append(sim.contact_report().unconverged_steps)
        t0 = perf_counter()
        for _ in range(100):
            sim.step()
        times.append((perf_counter() - t0) / 100)
    halves.append(sim.contact_report().unconverged_steps - halves[0])
    return halves, steps, 1e6 * float(np.median(times[1:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--runs", nargs="+", default=list(SECONDS), choices=list(SECONDS))
    parser.add_argument("--offsets-nm", nargs="+", type=float, default=[0.0],
                        help="the falls' start heights above the recorded one (nm)")
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path[:0] = [str(root), str(root / "tests/contact/data")]
    os.chdir(root)
    import engine
    print(f"checkout {Path(engine.__file__).parent.parent}, load {os.getloadavg()[0]:.2f}")
    for run in args.runs:
        for offset in args.offsets_nm if run in ("fall", "limits") else [0.0]:
            (first, second), steps, us = measure(run, root, 1e-9 * offset)
            print(f"  {run:8s} start {offset:+g} nm  unconverged {first + second:5d} / {steps:5d} ({first} + "
                  f"{second} in the halves)   {us:7.0f} µs/step", flush=True)


if __name__ == "__main__":
    main()
