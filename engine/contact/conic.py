"""External solvers for the contact problem (seed 000 §2: the thesis's unfinished link to SICONOS): one collision
group's problem written to a documented file any solver can read, and Clarabel as a shipped solver plugin.

**The problem file** (``save_problem`` / ``load_problem``): a NumPy ``.npz`` holding what the contact stage hands
to its solver for one collision group of one step —

=================  ==========  ===================================================================================
``W``              (n, n)      the Delassus matrix δt J M⁻¹ Jᵀ plus the FEM soles' compliance blocks (m/s per N)
``u``              (n,)        the free velocity J v_free with the normal targets (restitution, gap, correction)
``block_start``    (nb + 1,)   rows of block b: block_start[b] … block_start[b + 1] − 1
``block_kind``     (nb,)       0: contact, rows (n, t1, t2), force in the Coulomb cone K_μ; 1: bilateral (closure);
                               2: a joint's dry friction, one row, |f| ≤ b; 3: a joint limit, one row, f ≥ 0
``block_mu``       (nb,)       μ of each contact block, b of each friction row (0 for bilateral blocks)
``f0``             (n,)        the warm start (the previous step's forces of the same contacts)
=================  ==========  ===================================================================================

The solution is f with v = W f + u, per contact f ∈ K_μ, ṽ = (v_n + μ‖v_t‖, v_t) ∈ K_μ* and f ⟂ ṽ (Signorini and
Coulomb's law in De Saxcé's form), v = 0 on bilateral rows, on a friction row |f| ≤ b with v = 0 while
|f| < b and f = −b sign(v) otherwise, and on a limit row 0 ≤ f ⟂ v ≥ 0: the exact problem whose natural residual
every solver of Articula reports (``engine.contact.cone``). ``articula run scene.xml --export-problems DIR``
writes every group of every step; the fixtures of ``tests/contact/data`` are such files.

**Clarabel** (``<Solver name="clarabel"/>``; Goulart & Chen 2024, an interior-point solver for conic programs):
the convex relaxation of the problem (Anitescu 2006; the cone complementarity problem of Tasora & Anitescu 2011),

    min_f  ½ fᵀ W f + uᵀ f    subject to  f_i ∈ K_μi  (contacts),  f free (bilateral rows),  |f| ≤ b (friction),
                                                f ≥ 0 (limits),

whose optimality conditions are those of the exact problem with v instead of ṽ: it agrees with it where every
contact sticks or separates, and where μ = 0 (then it is the frictionless LCP), and a sliding contact separates at
v_n = μ‖v_t‖ instead of staying on the surface. The engine measures every plugin's residual on the exact
problem, so the difference shows in the run's solver statistics.
"""
from __future__ import annotations

from pathlib import Path
from time import perf_counter

import numpy as np
from scipy import sparse

from engine.contact.cone import BILATERAL, FRICTION, LIMIT, ConstraintBlocks, SolverStats
from engine.plugins import register

PROBLEM_KEYS = ("W", "u", "block_start", "block_kind", "block_mu", "f0")


def save_problem(path, W, u, blocks: ConstraintBlocks, f0=None):
    """Write one contact problem to ``path`` (.npz, module docstring)."""
    n = len(u)
    np.savez_compressed(path, W=np.asarray(W, float).reshape(n, n), u=np.asarray(u, float),
                        block_start=blocks.block_start, block_kind=blocks.block_kind, block_mu=blocks.block_mu,
                        f0=np.zeros(n) if f0 is None else np.asarray(f0, float))


def load_problem(path) -> tuple:
    """(W, u, ConstraintBlocks, f0) of a problem file; ValueError naming the file and the missing or bad array."""
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in PROBLEM_KEYS if k not in data.files]
        if missing:
            raise ValueError(f"{path}: not a contact problem file, missing {missing} (engine/contact/conic.py)")
        W, u, f0 = (np.array(data[k], float) for k in ("W", "u", "f0"))
        try:
            blocks = ConstraintBlocks(*(np.array(data[k]) for k in ("block_start", "block_kind", "block_mu")))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    n = len(u)
    if W.shape != (n, n) or f0.shape != (n,) or blocks.block_start[-1] != n:
        raise ValueError(f"{path}: W {W.shape}, u ({n},), f0 {f0.shape} and the blocks' {blocks.block_start[-1]} "
                         f"rows do not fit")
    return W, u, blocks, f0


class ProblemExport:
    """Writes every problem the contact stage solves to ``directory``/step{k:06d}_group{g}.npz, k counting the
    steps that solved a contact problem (a step without contact writes nothing)."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.written = 0

    def write(self, step: int, group: int, W, u, blocks, f0):
        save_problem(self.directory / f"step{step:06d}_group{group}.npz", W, u, blocks, f0)
        self.written += 1


@register("clarabel")
class ClarabelSolver:
    """The contact problem's conic relaxation (module docstring) solved by Clarabel."""

    kind, stage = "solver", "solver"

    def __init__(self, settings):
        import clarabel
        self.clarabel = clarabel
        self.settings = clarabel.DefaultSettings()
        self.settings.verbose = False
        self.settings.max_iter = max(int(settings.max_iterations), 50)

    def solve(self, W, v_free, blocks: ConstraintBlocks, f0):
        t0 = perf_counter()
        c = self.clarabel
        P = sparse.triu(sparse.csc_matrix(W), format="csc")
        rows, cols, vals, cones, m, bound = [], [], [], [], 0, {}
        for b, kind in enumerate(blocks.block_kind):
            s = int(blocks.block_start[b])
            if kind == BILATERAL:
                continue
            if kind == FRICTION:                       # b − f ≥ 0 and b + f ≥ 0
                rows += [m, m + 1]
                cols += [s, s]
                vals += [1.0, -1.0]
                bound[m] = bound[m + 1] = float(blocks.block_mu[b])
                cones.append(c.NonnegativeConeT(2))
                m += 2
                continue
            if kind == LIMIT:                          # f ≥ 0
                rows, cols, vals = rows + [m], cols + [s], vals + [-1.0]
                cones.append(c.NonnegativeConeT(1))
                m += 1
                continue
            mu = float(blocks.block_mu[b])
            if mu > 0.0:                               # s = (μ f_n, f_t) in the second-order cone
                rows += [m, m + 1, m + 2]
                cols += [s, s + 1, s + 2]
                vals += [-mu, -1.0, -1.0]
                cones.append(c.SecondOrderConeT(3))
            else:                                      # f_n ≥ 0, f_t = 0
                rows += [m, m + 1, m + 2]
                cols += [s, s + 1, s + 2]
                vals += [-1.0, 1.0, 1.0]
                cones += [c.NonnegativeConeT(1), c.ZeroConeT(2)]
            m += 3
        n = len(v_free)
        A = sparse.csc_matrix((vals, (rows, cols)), shape=(m, n))
        rhs = np.zeros(m)
        rhs[list(bound)] = list(bound.values())
        solution = c.DefaultSolver(P, np.asarray(v_free, float), A, rhs, cones, self.settings).solve()
        f = np.array(solution.x, float)
        solved = solution.status == c.SolverStatus.Solved
        # residual and cone violation: measured by the engine on the exact problem
        return f, SolverStats("clarabel", int(solution.iterations), float("nan"), float("nan"), bool(solved),
                              str(solution.status), perf_counter() - t0)
