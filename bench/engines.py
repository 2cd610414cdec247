"""Time per step of the same scene on each dynamics engine, in one run (issue 15: ``bench/engines.py``).

For each scene, every engine builds a Simulation of the same universe and steps it; the rounds alternate the
engines so that the machine's drift touches both alike, and the medians over rounds are printed with their
ratio to Articula's. For the pybullet engine, the time inside Bullet (``stepSimulation`` with the torques and
wrenches it is given, stage "dynamics") is printed apart from the conversions around it (state read back in
Articula's convention, kinematics, contacts: stage "integration"), and the whole step includes the controllers
and the checks that both engines share.

    python bench/engines.py [--rounds 5] [--steps 500]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import Simulation, load_universe  # noqa: E402

SCENES = {"Talos standing (default.xml)": ROOT / "scenes" / "default.xml",
          "10 cubes in 10 groups (cubes_groups.xml)": ROOT / "scenes" / "cubes_groups.xml"}
ENGINES = ("articula", "pybullet")


def per_step(sim, steps):
    """(µs per step, µs in the stage "dynamics", µs in "integration") over ``steps`` steps."""
    sim.timer.reset()
    t0 = perf_counter()
    sim.step(steps)
    wall = (perf_counter() - t0) / steps * 1e6
    mean = sim.timer.summary()
    return wall, mean["dynamics"] * 1e6, mean["integration"] * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    for title, path in SCENES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            universe = load_universe(path)
            sims = {name: Simulation(universe, engine=name) for name in ENGINES}
        for sim in sims.values():
            sim.step(50)                                   # compile, first contacts
        times = {name: [] for name in ENGINES}
        for _ in range(args.rounds):
            for name, sim in sims.items():
                times[name].append(per_step(sim, args.steps))
        print(f"\n{title}: {args.steps} steps of {universe.time_step * 1e3:g} ms, median of {args.rounds} rounds")
        reference = statistics.median(t[0] for t in times["articula"])
        for name in ENGINES:
            wall, inside, around = (statistics.median(t[k] for t in times[name]) for k in range(3))
            detail = (f"  (Bullet's step {inside:6.0f} µs, conversions {around:5.0f} µs)" if name == "pybullet"
                      else "")
            print(f"  {name:9s} {wall:7.0f} µs per step   {wall / reference:5.2f}× articula{detail}")


if __name__ == "__main__":
    main()
