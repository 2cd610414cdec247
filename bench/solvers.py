"""Contact solvers on an HRP-2-like standing problem with 16 contact points (seed 000 Table 5.1).

    python bench/solvers.py [--repeat 300]

The Delassus matrix comes from a small humanoid built here (floating base + two 6-joint legs, 8 points per
sole of 22 × 13 cm, the thesis's sole size): W = δt J M⁻¹ Jᵀ (48 × 48, rank ≤ 18: hyperstatic), v_free from
gravity, δt = 1 ms, μ = 0.4. Each solver runs cold (f0 = 0) and warm (from the solution of a 1 % perturbed
problem, as from the previous time step); medians over the repeats. The peer is scipy's L-BFGS-B on the
equivalent frictionless QP (SICONOS's "QP" row). Thesis times: 2.5 GHz PC of 2009 (L1475, L2959–2980).

Then the recorded hard problems of tests/contact/data/ (Talos lying and falling, a 10-box stack, a 4-point
sole), or the problem files of a run (``--problems DIR``, written by ``articula run --export-problems DIR``):
gauss-seidel-newton against nonsmooth-newton at the default budget (tolerance 1e-6, 100 iterations), warm (the
recorded warm start) and cold, and the external conic solver Clarabel on the convex relaxation
(engine/contact/conic.py); every relative residual on the exact Coulomb problem = natural residual /
max(‖f‖, residual of f = 0), whatever the solver's own criterion.

    python bench/solvers.py [--repeat 300] [--problems DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from time import perf_counter

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.contact import contact_residual, solve                   # noqa: E402
from engine.contact.conic import ClarabelSolver, load_problem        # noqa: E402
from engine.model.universe import SolverSettings                    # noqa: E402

THESIS_MS = {"gauss-seidel": 0.057611, "gauss-seidel-newton": 0.347008, "lemke": 0.071642, "scipy QP": 0.078202}
DATA = Path(__file__).resolve().parent.parent / "tests/contact/data"
HARD = ("talos_lying", "talos_falling", "stack10", "sole4")
DT, G, MU = 1e-3, 9.81, 0.4


def skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def spatial_inertia(m, c, Ic):
    """Inertia at the world origin, (linear, angular) order (engine/spatial.py)."""
    C = skew(c)
    return np.block([[m * np.eye(3), -m * C], [m * C, Ic - m * C @ C]])


def humanoid_problem():
    """(W, v_free) of the standing humanoid: nv = 6 + 12, 16 contacts with normal +z."""
    nv = 18
    bodies = [(40.0, np.array([0.0, 0.0, 0.95]), np.diag([2.0, 1.8, 0.6]), np.c_[np.eye(6), np.zeros((6, 12))])]
    contacts = []
    for side, y in ((0, 0.1), (1, -0.1)):
        joints = [((0, y, 0.75), (0, 0, 1)), ((0, y, 0.75), (1, 0, 0)), ((0, y, 0.75), (0, 1, 0)),
                  ((0, y, 0.42), (0, 1, 0)), ((0, y, 0.1), (0, 1, 0)), ((0, y, 0.1), (1, 0, 0))]
        A = bodies[0][3].copy()
        links = {2: (5.0, (0, y, 0.6), 0.08), 3: (3.0, (0, y, 0.25), 0.04), 5: (1.5, (0.03, y, 0.05), 0.01)}
        for j, (p, a) in enumerate(joints):
            A[:, 6 + 6 * side + j] = np.r_[np.cross(p, a), a]          # revolute twist S = (p × a, a)
            if j in links:
                m, c, i = links[j]
                bodies.append((m, np.array(c, float), i * np.eye(3), A.copy()))
        for x in (-0.08, 0.03, 0.14):                                  # 22 × 13 cm sole: corners + mid-edges
            for yy in (y - 0.065, y, y + 0.065):
                if not (x == 0.03 and yy == y):
                    r = np.array([x, yy, 0.0])
                    contacts.append(np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]]) @ (A[:3] - skew(r) @ A[3:]))
    M = sum(Ab.T @ spatial_inertia(m, c, Ic) @ Ab for m, c, Ic, Ab in bodies) + 1e-3 * np.eye(nv)
    tau = sum(Ab.T @ np.r_[0.0, 0.0, -m * G, np.cross(c, [0.0, 0.0, -m * G])] for m, c, _, Ab in bodies)
    J = np.vstack(contacts)
    return DT * J @ np.linalg.solve(M, J.T), DT * J @ np.linalg.solve(M, tau)


def scipy_qp(W, v_free):
    """Frictionless contact as the QP min ½ fᵀ W_nn f + fᵀ v_n, f ≥ 0 (seed 000 eq. 2.38) by L-BFGS-B."""
    Wn, vn = W[0::3, 0::3], v_free[0::3]
    res = minimize(lambda z: (0.5 * z @ Wn @ z + z @ vn, Wn @ z + vn), np.zeros(len(vn)), jac=True,
                   method="L-BFGS-B", bounds=[(0.0, None)] * len(vn), options={"ftol": 1e-15, "gtol": 1e-10})
    f = np.zeros_like(v_free)
    f[0::3] = res.x
    return f


def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = perf_counter()
        fn()
        times.append(perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--problems", metavar="DIR", help="problem files to solve instead of the recorded ones")
    args = parser.parse_args()
    if args.problems:
        hard_problems(max(args.repeat // 10, 5), sorted(Path(args.problems).glob("*.npz")))
        return
    W, v_free = humanoid_problem()
    settings = SolverSettings(tolerance=1e-6, max_iterations=200)
    print(f"W {W.shape}, rank {np.linalg.matrix_rank(W)} (16 contacts, μ = {MU}, tolerance "
          f"{settings.tolerance}, at most {settings.max_iterations} sweeps; load average {os.getloadavg()[0]:.1f})")
    rows = []
    for name, mu in (("gauss-seidel", MU), ("gauss-seidel-newton", MU), ("nonsmooth-newton", MU), ("lemke", 0.0),
                     ("lemke", MU)):
        f, stats = solve(name, W, v_free, mu, settings)
        f_prev = solve(name, W, 1.01 * v_free, mu, settings)[0]
        cold = median_ms(lambda: solve(name, W, v_free, mu, settings), args.repeat)
        warm = median_ms(lambda: solve(name, W, v_free, mu, settings, f0=f_prev), args.repeat)
        label = f"{name} (μ = {mu}{', 8 facets' if name == 'lemke' and mu else ''})"
        thesis = THESIS_MS.get(name) if (name != "lemke" or mu == 0.0) else None
        rows.append((label, cold, warm, stats, thesis))
        print(f"  {label:34s} Σf_n = {f[0::3].sum():8.2f} N")
    qp_ms = median_ms(lambda: scipy_qp(W, v_free), max(args.repeat // 10, 5))
    print(f"\n{'solver':34s} {'cold ms':>9s} {'warm ms':>9s} {'iters':>6s} {'residual N':>11s} "
          f"{'thesis ms':>10s} {'warm/thesis':>11s}")
    for label, cold, warm, stats, thesis in rows:
        ratio = f"{warm / thesis:11.2f}" if thesis else f"{'':11s}"
        th = f"{thesis:10.4f}" if thesis else f"{'':10s}"
        print(f"{label:34s} {cold:9.4f} {warm:9.4f} {stats.iterations:6d} {stats.residual:11.2e} {th} {ratio}")
    gs_frictionless = median_ms(lambda: solve("gauss-seidel", W, v_free, 0.0, settings), args.repeat)
    print(f"{'scipy L-BFGS-B QP (μ = 0)':34s} {qp_ms:9.4f} {'':9s} {'':6s} {'':11s} {THESIS_MS['scipy QP']:10.4f}")
    print(f"\nfrictionless: scipy QP / gauss-seidel = {qp_ms / gs_frictionless:.1f}x "
          f"(gauss-seidel μ = 0: {gs_frictionless:.4f} ms)")
    hard_problems(max(args.repeat // 10, 5), [DATA / f"{name}.npz" for name in HARD])


def hard_problems(repeat, paths):
    """Problem files: iterations, relative residual on the exact problem and ms of the two exact-cone solvers at
    the default budget, warm and cold, and of Clarabel on the relaxation (cold: it takes no warm start)."""
    settings = SolverSettings()
    clarabel = ClarabelSolver(settings)
    print(f"\nproblems ({paths[0].parent}), tolerance {settings.tolerance}, at most "
          f"{settings.max_iterations} iterations, median of {repeat}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'problem':20s} {'contacts':>8s} {'rank W':>6s} | {'solver':20s} {'start':5s} {'iters':>5s} "
          f"{'rel. residual':>13s} {'conv.':>5s} {'ms':>8s}")
    for path in paths:
        W, u, blocks, warm = load_problem(path)
        zero = contact_residual(W, u, np.zeros_like(u), blocks)[0]
        rank = np.linalg.matrix_rank(W, tol=1e-10 * np.abs(W).max())
        runs = [(name, start, lambda name=name, f0=f0: solve(name, W, u, blocks, settings, f0=f0))
                for name in ("gauss-seidel-newton", "nonsmooth-newton") for start, f0 in (("warm", warm), ("cold", None))]
        runs.append(("clarabel", "cold", lambda: clarabel.solve(W, u, blocks, None)))
        for name, start, run in runs:
            f, stats = run()
            residual = contact_residual(W, u, f, blocks)[0]        # on the exact problem, for every solver
            ms = median_ms(run, repeat)
            print(f"{path.stem[:20]:20s} {len(blocks.block_kind):8d} {rank:6d} | {name:20s} {start:5s} "
                  f"{stats.iterations:5d} {residual / max(np.linalg.norm(f), zero):13.2e} "
                  f"{'yes' if stats.converged else 'no':>5s} {ms:8.3f}")


if __name__ == "__main__":
    main()
