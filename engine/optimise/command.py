"""``articula optimise SCENE --problem P.toml -o OUT.npz``: an optimal trajectory of one multibody of a scene.

Exit status 0 when IPOPT converged; 3 when it did not (infeasible, iteration limit, ...): its status is printed
in plain words and the last iterate is written all the same, so nothing computed is lost.
"""
from __future__ import annotations

import sys

import numpy as np


def add_optimise_parser(subparsers):
    """Register ``articula optimise``; the parsed namespace's ``run(args)`` does it."""
    p = subparsers.add_parser("optimise", help="an optimal trajectory (direct collocation, IPOPT)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("scene", help="a universe XML (or robot XML / URDF)")
    p.add_argument("--problem", required=True, metavar="TOML", help="the problem file (docs/plugins.md)")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="the trajectory, .npz or .csv")
    p.add_argument("--ipopt-log", action="store_true", help="print IPOPT's iterations")
    p.set_defaults(run=_run)
    return p


def multibody_of(universe, problem):
    """The problem's multibody (by name, or the scene's only one)."""
    if problem.multibody is None:
        if len(universe.multibodies) != 1:
            raise problem.error("the scene has several multibodies: name one", "multibody",
                                [m.name for m in universe.multibodies])
        return universe.multibodies[0]
    try:
        return universe.multibody(problem.multibody)
    except KeyError:
        raise problem.error(f"no multibody '{problem.multibody}' in {universe.source}", "multibody",
                            problem.multibody) from None


def optimise(universe, problem, verbose=False):
    """Solve ``problem`` on its multibody of ``universe``; gravity in the multibody's base frame."""
    from engine.optimise import collocation, smooth_step
    mb = multibody_of(universe, problem)
    solver = smooth_step if problem.smooth_step is not None else collocation
    return solver.solve(mb.model, problem, mb.q0, mb.R.T @ np.asarray(universe.gravity, float), verbose)


def _run(args) -> int:
    from engine.cli import open_scene
    from engine.optimise.problem import load_problem
    from engine.optimise.trajectory import save_trajectory
    problem = load_problem(args.problem)
    result = optimise(open_scene(args.scene), problem, args.ipopt_log)
    path = save_trajectory(result, args.out)
    print(f"{result.status_words} ({result.status}); {result.iterations} iterations, "
          f"{sum(result.evaluations.values())} evaluations, {result.wall_time:.2f} s\n"
          f"energy J_e = {result.energy:.3f} J, effort = {result.effort:.3f}, "
          f"closure residual {result.closure_residual:.1e} m; written to {path}")
    if problem.smooth_step is not None:
        m = result.meta
        print(f"t_f = {m['t_f']:.3f} s, t_M = {m['t_M']:.3f} s, phi_M = {np.degrees(m['phi_M']):.2f} deg, "
              f"integral of |C| = {result.effort:.3f} N m s")
    if not result.success:
        print(f"error: {args.problem}: not solved: {result.status_words}; the last iterate is in {path}",
              file=sys.stderr)
        return 3
    return 0
