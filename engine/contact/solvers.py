"""Contact solvers by name (seed 000 §5.3): the universe file picks one with the thesis's names.

======================  ================  ==============================================================
name                    thesis            method
======================  ================  ==============================================================
``gauss-seidel-newton`` AMELIFGSNEWTON    block Gauss–Seidel, exact cone, Alart–Curnier Newton
``gauss-seidel``        AMELIFGS          block Gauss–Seidel, exact cone, projection step
``lemke``               AMELIFLCP         Lemke: frictionless LCP if every μ = 0, else the faceted-cone
                                          LCP with ``settings.facets`` facets
``nonsmooth-newton``    (not in thesis)   (default) semismooth Newton on the Alart–Curnier function of the whole
                                          problem, exact cone, Gauss–Seidel–Newton sweep as fallback
                                          (``newton.py``); its tolerance is on the relative natural residual
======================  ================  ==============================================================

``solve(name, W, v_free, mu, settings)`` returns (f, ``SolverStats``): iterations, natural-map residual and
cone violation for every solver, so they compare on the same measure. A compliance block (FEM soles, seed 000
eq. 4.30: W = Λ + P K_c⁻¹ Pᵀ/δt) is added to W on given rows with ``compliance=[(rows, C), ...]``.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.contact.cone import ConstraintBlocks, SolverStats, check_problem
from engine.contact.gauss_seidel import gauss_seidel, residual_of
from engine.contact.lemke import faceted_lcp, frictionless_lcp, lemke
from engine.contact.newton import nonsmooth_newton
from engine.errors import did_you_mean
from engine.model.universe import SolverSettings

THESIS_NAMES = {"AMELIFGSNEWTON": "gauss-seidel-newton", "AMELIFGS": "gauss-seidel", "AMELIFLCP": "lemke"}


def _gauss_seidel_newton(W, v_free, mu, settings, f0):
    return gauss_seidel(W, v_free, mu, settings.tolerance, settings.max_iterations, f0, settings.time_budget, True)


def _gauss_seidel(W, v_free, mu, settings, f0):
    return gauss_seidel(W, v_free, mu, settings.tolerance, settings.max_iterations, f0, settings.time_budget, False)


def _nonsmooth_newton(W, v_free, mu, settings, f0):
    return nonsmooth_newton(W, v_free, mu, settings.tolerance, settings.max_iterations, f0, settings.time_budget)


def _lemke(W, v_free, mu, settings, f0):
    """AMELIFLCP; Lemke is a finite method, so it takes no warm start and no time budget."""
    t0 = perf_counter()
    W, v_free = check_problem(W, v_free)
    blocks = ConstraintBlocks.coerce(mu, len(v_free))
    if np.all(blocks.block_mu == 0.0):
        M, q, G = frictionless_lcp(W, v_free, blocks)
    else:
        M, q, G = faceted_lcp(W, v_free, blocks, settings.facets)
    z, lcp = lemke(M, q)
    f = blocks.project(G @ z)                        # removes rounding-level excursions (μ f_n − Σβ ≈ −1e-13)
    residual, violation = residual_of(W, v_free, f, blocks)
    return f, SolverStats("lemke", lcp.pivots, residual, violation, lcp.status == "solution", lcp.status,
                          perf_counter() - t0)


SOLVERS = {"gauss-seidel-newton": _gauss_seidel_newton, "gauss-seidel": _gauss_seidel, "lemke": _lemke,
           "nonsmooth-newton": _nonsmooth_newton}


def solver_name(name: str) -> str:
    """The registry name of ``name`` (a built-in name or a thesis name, any case, or the name of a registered
    "solver" plugin); ValueError if unknown."""
    key = str(name).strip()
    if key.lower() in SOLVERS:
        return key.lower()
    if key.upper() in THESIS_NAMES:
        return THESIS_NAMES[key.upper()]
    from engine import plugins
    if key in plugins.available("solver"):
        return key
    known = list(SOLVERS) + list(THESIS_NAMES) + plugins.available("solver")
    raise ValueError(f"unknown contact solver {name!r}{did_you_mean(key.lower(), known)}; known: {known}")


def add_compliance(W, compliance):
    """W + Σ E_r C Eᵣᵀ: each symmetric block C (k, k) added on the rows ``rows`` (k,) (seed 000 eq. 4.30)."""
    W = np.array(W, dtype=float)
    for rows, C in compliance:
        rows, C = np.asarray(rows, dtype=np.int64), np.asarray(C, dtype=float)
        if C.shape != (len(rows), len(rows)) or np.any(rows < 0) or np.any(rows >= len(W)):
            raise ValueError(f"a compliance block needs C ({len(rows)}, {len(rows)}) on rows < {len(W)} "
                             f"(got C {C.shape}, rows {rows.tolist()})")
        W[np.ix_(rows, rows)] += C
    return W


def solve(name, W, v_free, mu, settings=None, f0=None, compliance=()):
    """Solve the contact problem (W, v_free, mu) with the solver ``name``; returns (f, SolverStats).

    ``settings``: ``SolverSettings`` (tolerance, max_iterations, time_budget, facets), defaults if None;
    ``f0``: warm start (Gauss–Seidel solvers); ``compliance``: [(rows, C), ...] added to W first.
    """
    solver = SOLVERS[solver_name(name)]
    settings = SolverSettings() if settings is None else settings
    if len(compliance):
        W = add_compliance(W, compliance)
    return solver(W, v_free, mu, settings, f0)
