"""Constraint-based contact benchmarks (issue 5 point 8), one function per part.

    python bench/contact.py [--part a] [--rounds 200]

(a) The Delassus operator Λ = J M⁻¹ Jᵀ by the thesis's three methods (seed 000 §3.2, Fig 3.12) on Talos
    (example-robot-data, floating base) standing: 2 feet × 4 points (m = 8, as HRP-2 in the thesis), and the
    same-branch case (right hand + forearm, 4 points each, L1808).  Methods: test-force (Alg. 3),
    chang-khatib (Alg. 4), thesis (Alg. 5), dense (CRBA + Cholesky, reference) and auto.  Talos's feet are
    the 6th body after the base like HRP-2's, so the thesis's operation counts (Tables 3.1-3.3) apply as is.
    "full": the call computes the articulated inertias (IA, D, U at q); "reuse": it takes them from the free
    dynamics' ABA at the same q (``reuse_aba=True``), as Algs. 3-5 take S, I, H as data.  Calls are
    interleaved across methods (rounds × batches of 20), times are per call, medians over rounds.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from time import perf_counter

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine                                                           # noqa: E402
from engine.contact import opcount                                      # noqa: E402
from engine.contact.delassus import BlockMaps, choose_method, delassus  # noqa: E402
from engine.dynamics import aba, forward_kinematics, frame_jacobian     # noqa: E402
from engine.model.paths import example_robot_data_dir                   # noqa: E402
from engine.spatial import skew                                         # noqa: E402

METHODS = ("test-force", "chang-khatib", "thesis", "auto", "dense")  # dense last: it flushes the caches
THESIS_RATIO = 6.5  # test-force / new method, HRP-2 standing (seed 000 Fig 3.12, L1759)


def talos():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <mimic> joints simulated as independent joints
        return engine.load_model(str(example_robot_data_dir() / "talos_data/robots/talos_reduced.urdf"),
                                 floating_base=True)


def corner_blocks(model, data, body, corners):
    """Frictional contacts (n = +z, t1 = x, t2 = y of the base) at points given in the body frame:
    X = C [1, −[r]×] with r the point's offset from the body origin in base axes."""
    R = data.oMi_R[body]
    C = np.eye(3)[[2, 0, 1]]
    X = np.array([C @ np.hstack([np.eye(3), -skew(R @ c)]) for c in corners])
    return np.full(len(corners), body), X


def delassus_case(model, bodies, corners):
    """(BlockMaps, contact bodies) for 4 corners on each body at the neutral configuration."""
    data = model.create_data()
    forward_kinematics(model, data, engine.neutral(model))
    parts = [corner_blocks(model, data, b, corners) for b in bodies]
    body, X = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return BlockMaps.from_arrays(np.arange(len(body)), body, X)


def time_methods(model, maps, rounds, batch=20):
    """Median µs per delassus call of each method, calls interleaved across methods: computing the articulated
    inertias (``full``) or reusing those of the free dynamics' ABA at the same q (``reuse``, Algs. 3-5 take
    S, I, H as data)."""
    data, q = model.create_data(), engine.neutral(model)
    aba(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    calls = {(m, reuse): (lambda m=m, reuse=reuse: delassus(model, data, q, maps, m, reuse_aba=reuse))
             for m in METHODS for reuse in ((False, True) if m != "dense" else (False,))}
    times = {key: [] for key in calls}
    for call in calls.values():
        call()  # compile / warm up
    for _ in range(rounds):
        for key, call in calls.items():
            t0 = perf_counter()
            for _ in range(batch):
                call()
            times[key].append((perf_counter() - t0) / batch)
    return {key: 1e6 * float(np.median(t)) for key, t in times.items()}


def literal_test_force(model, maps, rounds):
    """Alg. 3 read literally ("on effectue 3m fois l'algorithme de Featherstone", L1557): one full ABA call
    (articulated inertias included) per constraint row with the unit wrench as f_ext, v = 0, tau = 0, g = 0,
    then Λ[:, j] = J ddq.  Returns (median µs, Λ)."""
    data, q, zero = model.create_data(), engine.neutral(model), np.zeros(model.nv)
    forward_kinematics(model, data, q)
    J = {b: frame_jacobian(model, data, q, model.frame_index(model.joint_name[b]), "local_world_aligned")
         for b in maps.bodies}
    rows = np.vstack([maps.term_X[t, :3] @ J[b] for t, b in enumerate(maps.term_body)])
    wrench, Lam, times = np.zeros((model.nbodies, 6)), np.zeros((maps.nrows, maps.nrows)), []
    for _ in range(max(rounds // 10, 5)):
        t0 = perf_counter()
        for t, b in enumerate(maps.term_body):
            R = data.oMi_R[b]
            for e in range(3):
                wrench[b] = np.r_[R.T @ maps.term_X[t, e, :3], R.T @ maps.term_X[t, e, 3:]]  # to the body frame
                Lam[:, 3 * t + e] = rows @ aba(model, data, q, zero, zero, f_ext=wrench, gravity=np.zeros(3))
            wrench[b] = 0.0
        times.append(perf_counter() - t0)
    return 1e6 * float(np.median(times)), Lam


def part_a(rounds):
    """Delassus methods on Talos standing and on the same-branch case."""
    model = talos()
    sole = model.frame_p[model.frame_index("left_sole_link")]  # 10.7 cm below the ankle
    sole = [sole + (x, y, 0.0) for x in (-0.1, 0.1) for y in (-0.065, 0.065)]
    palm = [(x, y, -0.05) for x in (-0.03, 0.03) for y in (-0.03, 0.03)]
    cases = {"Talos standing (2 feet × 4 points, m = 8)": ("leg_left_6_link", "leg_right_6_link"),
             "same branch (right hand + forearm, 4 points each)": ("arm_right_7_link", "arm_right_5_link")}
    hrp2 = dict(m=8, s=12, C=2, beta_m=48, alpha_C=12, beta_C=12)
    ops = {"test-force": opcount.initial_method_ops(hrp2["m"], hrp2["s"], hrp2["beta_m"]).total,
           "chang-khatib": opcount.chang_khatib_ops(hrp2["m"], hrp2["s"], hrp2["C"], hrp2["alpha_C"]).total,
           "thesis": opcount.thesis_method_ops(hrp2["m"], hrp2["s"], hrp2["C"], hrp2["beta_C"]).total}
    print(f"(a) Delassus operator, {model.name}: nv = {model.nv}, {model.nbodies} bodies; {rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f} (timings under load)")
    for label, names in cases.items():
        bodies = [model.body_index(n) for n in names]
        maps = delassus_case(model, bodies, palm if "hand" in label else sole)
        us = time_methods(model, maps, rounds)
        literal, Lam = literal_test_force(model, maps, rounds)
        assert np.allclose(Lam, delassus(model, model.create_data(), engine.neutral(model), maps, "thesis"))
        print(f"\n  {label}: Λ {maps.nrows}×{maps.nrows}, auto → {choose_method(model, bodies)}")
        print(f"  {'method':14s} {'full µs':>9s} {'/ thesis':>9s} {'reuse µs':>9s} {'/ thesis':>9s} "
              f"{'thesis ops':>11s}")
        for m in METHODS:
            count = f"{ops[m]:11d}" if m in ops and "standing" in label else f"{'':11s}"
            reuse = (f"{us[m, True]:9.1f} {us[m, True] / us['thesis', True]:9.2f}" if (m, True) in us
                     else f"{'':9s} {'':9s}")
            print(f"  {m:14s} {us[m, False]:9.1f} {us[m, False] / us['thesis', False]:9.2f} {reuse} {count}")
        print(f"  {'test-force, 3m aba calls':26s} {literal:9.1f} {literal / us['thesis', False]:9.2f}   "
              f"(Alg. 3 read literally: {maps.nrows} full ABA calls with f_ext)")
        for reuse in (False, True):
            print(f"  {'reuse' if reuse else 'full'}: test-force / thesis = "
                  f"{us['test-force', reuse] / us['thesis', reuse]:.2f}x (thesis measured ~{THESIS_RATIO}x on HRP-2), "
                  f"chang-khatib / thesis = {us['chang-khatib', reuse] / us['thesis', reuse]:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("a",), default=None, help="run one part (default: all)")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    if args.part in (None, "a"):
        part_a(args.rounds)


if __name__ == "__main__":
    main()
