"""Benchmark: Articula's dynamics algorithms side by side with Pinocchio, called from Python.

    python bench/dynamics.py [--rounds 30] [--number 300]

Talos (example-robot-data ``talos_reduced``, floating base, 38 velocities) and UR5 (fixed base, 6): the same
random (q, v, a) for both libraries.  Each round times ``number`` calls of ours then ``number`` calls of
Pinocchio's; the table gives the median over rounds of the time per call (microseconds), the ratio of the
medians ours / Pinocchio (target for rnea, crba and aba: at most 1.5) and, less sensitive to other load on
the machine, the ratio of the fastest rounds.  The first call (numba compilation or cache load) is timed
separately.  Pinocchio represents a continuous joint by (cos, sin); such q entries are
converted (neither model here has one).  Numbers depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: E402
from engine import dynamics as dyn  # noqa: E402
from engine.model.paths import example_robot_data_dir  # noqa: E402
from engine.model.pinocchio_layout import pinocchio_q  # noqa: E402

# (title, URDF, floating base, frame of the Jacobian benchmark)
ROBOTS = [("Talos (floating base)", "talos_data/robots/talos_reduced.urdf", True, "gripper_left_base_link"),
          ("UR5 (fixed base)", "ur_description/urdf/ur5_robot.urdf", False, "tool0")]
TARGETS = {"rnea": 1.5, "crba": 1.5, "aba": 1.5}


def load(path, floating):
    full = str(example_robot_data_dir() / path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Talos' <mimic> gripper joints are simulated as independent joints
        model = engine.load_model(full, floating_base=floating)
    pm = pin.buildModelFromUrdf(full, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(full)
    return model, pm


def cases(model, pm, frame):
    data, pd = model.create_data(), pm.createData()
    rng = np.random.default_rng(0)
    q = engine.neutral(model)
    for j in model.joints:
        if j.nq == 1:
            q[j.idx_q] = rng.uniform(-1.0, 1.0)
    pq = pinocchio_q(model, pm, q)
    v, a = rng.normal(size=(2, model.nv))
    f, fid = model.frame_index(frame), pm.getFrameId(frame)
    return {
        "forward kinematics (q)": (lambda: dyn.forward_kinematics(model, data, q),
                                   lambda: pin.forwardKinematics(pm, pd, pq)),
        "forward kinematics (q, v, a)": (lambda: dyn.forward_kinematics(model, data, q, v, a),
                                         lambda: pin.forwardKinematics(pm, pd, pq, v, a)),
        "rnea": (lambda: dyn.rnea(model, data, q, v, a), lambda: pin.rnea(pm, pd, pq, v, a)),
        "crba": (lambda: dyn.crba(model, data, q), lambda: pin.crba(pm, pd, pq)),
        "aba": (lambda: dyn.aba(model, data, q, v, a), lambda: pin.aba(pm, pd, pq, v, a)),
        "frame Jacobian (local)": (lambda: dyn.frame_jacobian(model, data, q, f, "local"),
                                             lambda: pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL)),
        "centre-of-mass Jacobian": (lambda: dyn.com_jacobian(model, data, q),
                                    lambda: pin.jacobianCenterOfMass(pm, pd, pq)),
    }


def per_call(f, number):
    t = time.perf_counter()
    for _ in range(number):
        f()
    return (time.perf_counter() - t) / number * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"pinocchio {pin.__version__}; medians over {args.rounds} rounds of {args.number} calls; "
          f"microseconds per call from Python")
    for title, path, floating, frame in ROBOTS:
        model, pm = load(path, floating)
        print(f"\n{title}: nq={model.nq} nv={model.nv} bodies={model.nbodies}; Jacobian of frame '{frame}'")
        print(f"  {'algorithm':34s} {'articula':>9s} {'pinocchio':>10s} {'ratio':>6s} {'(best)':>7s}  first call")
        for name, (ours, theirs) in cases(model, pm, frame).items():
            t = time.perf_counter()
            ours()
            first = time.perf_counter() - t
            theirs()
            mine, ref = [], []
            for _ in range(args.rounds):
                mine.append(per_call(ours, args.number))
                ref.append(per_call(theirs, args.number))
            ratio, best = np.median(mine) / np.median(ref), min(mine) / min(ref)
            target = TARGETS.get(name)
            flag = "" if target is None else ("  ok (<= 1.5)" if ratio <= target else "  ABOVE TARGET 1.5")
            print(f"  {name:34s} {np.median(mine):9.2f} {np.median(ref):10.2f} {ratio:6.2f} {best:7.2f}  "
                  f"{first:.2f} s{flag}")


if __name__ == "__main__":
    main()
