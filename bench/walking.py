"""Walking (issue 13): Talos with the ``walk`` controller on rigid feet (scenes/talos_walk.xml), flexible ankles
(scenes/talos_walk_ankles.xml) and FEM soles (scenes/talos_walk_soles.xml).

    python bench/walking.py [--scenes rigid ankles soles] [--steps 6 10] [--length 0.2]

For each scene and number of steps: the run of the plan's whole duration, measured from the simulation (WalkRecord):
steps taken, fall, QP failures, the CoM's distance to the planned final mid-feet point (target ≤ 5 cm), the
largest stance-foot slip (target ≤ 5 mm), how far the centre of pressure comes from leaving the real soles'
support polygon, the worst QP dynamics residual (target ≤ 1e-8) — and the cost, side by side: the real-time
factor of the scene (controller included; goal ≥ 1), the mean time per step of the physics stages and of the
controller, and of proxsuite alone (goal ≤ 0.5 ms). Last, the thesis's impact measure (seed 000 §4.4.2, raw
L2283–2301: rigid ≈ 50 > flexible ankles ≈ 30 > FEM soles ≈ 5 m/s²): the peak |c̈_z| of the robot's centre of mass
from the first lift-off on (the plots' "centre of mass/acceleration z", Newton's law on the contact forces of each
step), and the same averaged over 10 ms.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from time import perf_counter

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from types import SimpleNamespace                                             # noqa: E402

from app.signals import centre_of_mass_acceleration                           # noqa: E402
from engine import Simulation, load_universe                                  # noqa: E402
from engine.control.walking.record import WalkRecord, talos_sole_outlines     # noqa: E402

FEET = ["talos/leg_left_6_link", "talos/leg_right_6_link"]
SCENES = {"rigid": ("talos_walk.xml", FEET), "soles": ("talos_walk_soles.xml", FEET),
          "ankles": ("talos_walk_ankles.xml", [f"{f}_sole_plate" for f in FEET])}   # the plates touch the ground


def walk(scene, steps, length):
    name, feet = SCENES[scene]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulation(load_universe(ROOT / "scenes" / name, overrides={"Controller[walk].steps": steps,
                                                                          "Controller[walk].length": length}))
    ctrl = sim.runs[0].controllers[0]
    record = WalkRecord(sim, ctrl, talos_sole_outlines(), feet)
    n = int(round(ctrl.plan.duration / sim.dt))
    sim.step(1)                                    # compile and warm up outside the timing
    sim.timer.reset()
    ctrl.seconds = ctrl.calls = 0
    for qp in ctrl.qps.values():
        qp.seconds = qp.calls = 0
    wall, mass, az = 0.0, float(ctrl.model.body_mass.sum()), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n - 1):
            t0 = perf_counter()
            sim.step(1)
            wall += perf_counter() - t0
            record.observe()
            if sim.time >= ctrl.plan.steps[0].t_lift:   # the contacts of this step, as the plot reads them
                az.append(centre_of_mass_acceleration(SimpleNamespace(contacts=sim.contacts, external=()), 0,
                                                      "talos", mass, sim.universe.gravity)[2])
            if ctrl.fallen is not None:
                break
    stages = sim.timer.summary()
    qp_seconds = sum(qp.seconds for qp in ctrl.qps.values())
    qp_calls = max(sum(qp.calls for qp in ctrl.qps.values()), 1)
    goal = ctrl.plan.feet_final[:, :2].mean(axis=0)
    print(f"\n{scene} ({name}): {steps} steps of {length} m, {ctrl.plan.duration:.1f} s planned, "
          f"{sim.time:.3f} s simulated")
    print(f"  steps taken {ctrl.plan.steps_taken(sim.time)}, fallen {ctrl.fallen}, QP failures {ctrl.qp_failures}")
    print(f"  CoM {np.round(record.com, 4)} m, planned final mid-feet {np.round(goal, 4)} m: "
          f"{1e3 * np.linalg.norm(record.com[:2] - goal):.1f} mm apart (target <= 50 mm)")
    print(f"  stance slip left/right {1e3 * record.slip[0]:.2f} / {1e3 * record.slip[1]:.2f} mm (target <= 5 mm)")
    print(f"  CoP outside the soles' support polygon {1e3 * record.cop_outside:.2f} mm, smallest margin inside "
          f"{1e3 * record.cop_margin:.2f} mm")
    print(f"  QP: dynamics residual {record.qp_residual:.1e} (target <= 1e-8), cone violation "
          f"{record.cone_violation:.1e} N")
    physics = stages["total"] - stages["control"]
    per_step = wall / max(sim.timer.steps, 1)
    print(f"  real-time factor {sim.dt / per_step:.2f} ({1e3 * per_step:.2f} ms per 1 ms step; goal >= 1)")
    print(f"  per step: physics {1e3 * physics:.2f} ms | controller {1e3 * ctrl.seconds / max(ctrl.calls, 1):.2f} ms"
          f" of which proxsuite {1e3 * qp_seconds / qp_calls:.3f} ms (goal <= 0.5 ms)")
    az, window = np.array(az), int(round(0.01 / sim.dt))
    print(f"  impacts: peak |c_z''| {np.abs(az).max():.2f} m/s2, over 10 ms "
          f"{np.abs(np.convolve(az, np.ones(window) / window, mode='valid')).max():.2f} m/s2 (thesis: rigid ~50, "
          f"flexible ankles ~30, FEM soles ~5)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", nargs="+", choices=list(SCENES), default=["rigid", "ankles"])
    parser.add_argument("--steps", type=int, nargs="+", default=[6, 10])
    parser.add_argument("--length", type=float, default=0.2)
    args = parser.parse_args()
    for scene in args.scenes:
        for steps in args.steps:
            walk(scene, steps, args.length)


if __name__ == "__main__":
    main()
