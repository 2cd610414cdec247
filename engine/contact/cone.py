"""The set a contact force lives in, and how far a force is from solving the contact problem.

Contact-frame convention (seed 000 eq. 3.27): per contact the local force is ``f = (f_n, f_t1, f_t2)`` and the
relative velocity ``v = (v_n, v_t1, v_t2)``, with ``v = W f + v_free`` over all rows, ``W`` symmetric positive
semi-definite. Forces are in N, velocities in m/s, ``W = δt Λ`` in m/(N s).

* ``CoulombCone(mu)``: K_μ = {f : ‖f_t‖ ≤ μ f_n} (seed 000 eq. 2.26), its exact Euclidean projection, its
  dual K_μ* = K_{1/μ} and its polar −K_μ*.
* ``ConstraintBlocks``: the row layout of one problem, the product set K = K_μ1 × … × K_μm × R^s1 × … × [−b, b]
  × … × R+ × …, with *contact* blocks (3 rows, force in a Coulomb cone), *bilateral* blocks (loop closures: any
  number of rows, free force, velocity 0), *friction* blocks (a joint's dry friction: one row, |f| ≤ b, velocity
  0 while |f| < b, and f = ∓b while the joint slides one way or the other) and *limit* blocks (a joint limit: one
  row, Signorini's 0 ≤ f ⟂ v ≥ 0).
* ``SolverStats``: what every solver reports — iterations, natural-map residual, cone violation.

The residual is the natural map of the De Saxcé formulation of Coulomb's law: with the modified velocity
``ũ = (v_n + μ‖v_t‖, v_t)``, a force solves a contact iff ``f = proj_K(f − ρ ũ)`` (K ∋ f ⊥ ũ ∈ K*), so

    residual = ‖ f − proj_K(f − ρ ũ) ‖₂      over all blocks, in N,

with ``ρ = 1/W_nn`` per contact (the Alart–Curnier gain of eq. 3.30); for a bilateral block, ``r = ρ v``
with ``ρ = 1/max diag W_bb``; for a friction row, ``r = f − clip(f − ρ v, −b, b)`` and for a limit row
``r = f − max(f − ρ v, 0)``, with ``ρ = 1/W_bb``. It is zero exactly at a solution and has the units of a force.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from engine.contact._kernels import BILATERAL, CONTACT, FRICTION, LIMIT, project_forces, scan_problem


def project_coulomb(f, mu):
    """Euclidean projection of forces ``f`` (..., 3) onto K_μ = {‖f_t‖ ≤ μ f_n}; ``mu`` scalar or (...,).

    Three cases (second-order cone): inside → f; in the polar cone μ‖f_t‖ ≤ −f_n → 0; otherwise the
    closest point on the lateral surface, f_n' = (f_n + μ‖f_t‖)/(1 + μ²), f_t' = μ f_n' f_t/‖f_t‖.
    """
    f = np.asarray(f, dtype=float)
    mu = np.broadcast_to(np.asarray(mu, dtype=float), f.shape[:-1])
    fn, ft = f[..., 0], f[..., 1:]
    nt = np.linalg.norm(ft, axis=-1)
    inside = nt <= mu * fn
    polar = mu * nt <= -fn
    lateral = ~(inside | polar)
    out = np.where(inside[..., None], f, 0.0)
    pn = (fn + mu * nt) / (1.0 + mu * mu)
    scale = np.divide(mu * pn, nt, out=np.zeros_like(nt), where=lateral)
    out[..., 0] = np.where(lateral, pn, out[..., 0])
    out[..., 1:] = np.where(lateral[..., None], ft * scale[..., None], out[..., 1:])
    return out


@dataclass(frozen=True)
class CoulombCone:
    """The Coulomb friction cone K_μ = {(f_n, f_t) : ‖f_t‖ ≤ μ f_n} of one contact (seed 000 eq. 2.26)."""

    mu: float

    def __post_init__(self):
        if not (np.isfinite(self.mu) and self.mu >= 0.0):
            raise ValueError(f"friction coefficient mu must be finite and >= 0 (got {self.mu!r})")

    def project(self, f):
        """Closest point of K_μ to ``f`` (..., 3), in the Euclidean norm."""
        return project_coulomb(f, self.mu)

    def project_dual(self, u):
        """Closest point of the dual cone K_μ* = {μ‖u_t‖ ≤ u_n} to ``u`` (..., 3) (velocities)."""
        if self.mu == 0.0:
            u = np.array(u, dtype=float)
            u[..., 0] = np.maximum(u[..., 0], 0.0)
            return u
        return project_coulomb(u, 1.0 / self.mu)

    def contains(self, f, tol=0.0):
        """``‖f_t‖ ≤ μ f_n + tol`` and ``f_n ≥ −tol`` for ``f`` (..., 3); ``tol`` in force units."""
        f = np.asarray(f, dtype=float)
        return (np.linalg.norm(f[..., 1:], axis=-1) <= self.mu * f[..., 0] + tol) & (f[..., 0] >= -tol)


@dataclass(frozen=True, eq=False)
class ConstraintBlocks:
    """Row layout of a contact problem: the product set K of the force vector (arrays are read-only).

    block_start (nb+1,) int64   rows of block b are ``block_start[b]:block_start[b+1]``
    block_kind  (nb,)   int64   CONTACT (3 rows n, t1, t2; force in K_μ), BILATERAL (free force, v = 0),
                                FRICTION (1 row, |f| ≤ b) or LIMIT (1 row, 0 ≤ f ⟂ v ≥ 0)
    block_mu    (nb,)   float64 friction coefficient of each contact block, the bound b of a friction row (N or
                                N m), 0 for bilateral and limit blocks
    """

    block_start: np.ndarray
    block_kind: np.ndarray
    block_mu: np.ndarray

    def __post_init__(self):
        start, kind, mu = self.block_start, self.block_kind, self.block_mu
        sizes = np.diff(start)
        if not (start.dtype == kind.dtype == np.int64 and mu.dtype == np.float64 and len(start) == len(kind) + 1
                and len(mu) == len(kind) and start[0] == 0 and np.all(sizes >= 1)
                and np.all((kind == CONTACT) | (kind == BILATERAL) | (kind == FRICTION) | (kind == LIMIT))
                and np.all(sizes[kind == CONTACT] == 3) and np.all(sizes[kind >= FRICTION] == 1)
                and np.all(np.isfinite(mu)) and np.all(mu >= 0.0)):
            raise ValueError("inconsistent constraint blocks: block_start (nb+1,) int64 from 0 increasing, "
                             "block_kind (nb,) int64 CONTACT (3 rows), BILATERAL, FRICTION or LIMIT (1 row), "
                             "block_mu (nb,) float64 >= 0 "
                             f"(got {start!r}, {kind!r}, {mu!r})")
        for a in (start, kind, mu):
            a.flags.writeable = False

    @classmethod
    def contacts(cls, mu, bilateral_sizes=()):
        """``len(mu)`` frictional contacts (rows 3i..3i+2) followed by bilateral blocks of the given sizes."""
        mu = np.array(mu, dtype=float, ndmin=1)
        if mu.ndim != 1 or not (np.isfinite(mu).all() and (mu >= 0.0).all()):
            raise ValueError(f"friction coefficients must be a finite, non-negative 1-D array (got {mu!r})")
        sizes = np.array(bilateral_sizes, dtype=np.int64).reshape(-1)
        if np.any(sizes < 1):
            raise ValueError(f"bilateral block sizes must be >= 1 (got {list(bilateral_sizes)!r})")
        starts = np.concatenate([np.arange(0, 3 * len(mu) + 1, 3), 3 * len(mu) + np.cumsum(sizes)])
        kind = np.concatenate([np.full(len(mu), CONTACT), np.full(len(sizes), BILATERAL)])
        return cls(starts.astype(np.int64), kind.astype(np.int64), np.concatenate([mu, np.zeros(len(sizes))]))

    @classmethod
    def with_rows(cls, blocks, bounds=(), limits=0):
        """``blocks`` followed by one friction row per bound b (|f| ≤ b), then ``limits`` limit rows (f ≥ 0)."""
        b = np.array(bounds, dtype=float, ndmin=1)
        if b.ndim != 1 or not (np.isfinite(b).all() and (b >= 0.0).all()):
            raise ValueError(f"friction bounds must be a finite, non-negative 1-D array (got {bounds!r})")
        n = len(b) + int(limits)
        start = np.concatenate([blocks.block_start, blocks.n_rows + np.arange(1, n + 1)]).astype(np.int64)
        kind = np.concatenate([blocks.block_kind, np.full(len(b), FRICTION), np.full(int(limits), LIMIT)])
        return cls(start, kind.astype(np.int64), np.concatenate([blocks.block_mu, b, np.zeros(int(limits))]))

    @classmethod
    def from_blocks(cls, rows, bilateral, mu):
        """Blocks in any order: per block its number of rows, whether it is bilateral, and its μ (ignored for
        bilateral blocks)."""
        kind = np.where(np.asarray(bilateral, dtype=bool), BILATERAL, CONTACT).astype(np.int64)
        mu = np.where(kind == CONTACT, np.asarray(mu, dtype=float), 0.0)
        return cls(np.concatenate([[0], np.cumsum(rows)]).astype(np.int64), kind, mu)

    @classmethod
    def coerce(cls, mu, n_rows):
        """A ``ConstraintBlocks`` from ``mu``: itself, or a scalar / (m,) array of contact coefficients."""
        if isinstance(mu, cls):
            blocks = mu
        elif np.ndim(mu) == 0:
            if n_rows % 3:
                raise ValueError(f"a scalar mu needs 3 rows per contact, but the problem has {n_rows} rows")
            blocks = _uniform_contacts(float(mu), n_rows // 3)
        else:
            blocks = cls.contacts(mu)
        if blocks.n_rows != n_rows:
            raise ValueError(f"the constraint blocks cover {blocks.n_rows} rows but W has {n_rows}")
        return blocks

    @property
    def n_rows(self) -> int:
        return int(self.block_start[-1])

    @property
    def n_blocks(self) -> int:
        return len(self.block_kind)

    @cached_property
    def contact_blocks(self) -> np.ndarray:
        """Indices of the contact blocks."""
        return np.flatnonzero(self.block_kind == CONTACT)

    @cached_property
    def has_bilateral(self) -> bool:
        return bool(np.any(self.block_kind == BILATERAL))

    @cached_property
    def contacts_only(self) -> bool:
        """Every block is a frictional contact (what the LCP formulations take)."""
        return bool(np.all(self.block_kind == CONTACT))

    @cached_property
    def inv_start(self) -> np.ndarray:
        """Offsets of the flattened (s_b × s_b) diagonal-block inverses, (nb+1,) int64."""
        sizes = np.diff(self.block_start)
        return np.concatenate([[0], np.cumsum(sizes * sizes)]).astype(np.int64)

    def contact_forces(self, f) -> np.ndarray:
        """The local contact forces (m, 3) out of a stacked force vector ``f`` (n_rows,)."""
        rows = self.block_start[self.contact_blocks]
        return np.asarray(f, dtype=float)[rows[:, None] + np.arange(3)]

    def project(self, f) -> np.ndarray:
        """proj_K(f): each contact force onto its cone, each friction row into its box, each limit row onto R+,
        bilateral forces unchanged."""
        out = np.array(f, dtype=float)
        project_forces(out, self.block_start, self.block_kind, self.block_mu)
        return out

    def violation(self, f) -> float:
        """max over contacts of max(‖f_t‖ − μ f_n, −f_n, 0), over friction rows of |f| − b and over limit rows of
        −f, in N (0 for a force in K)."""
        f = np.asarray(f, dtype=float)
        fc = self.contact_forces(f)
        friction, limit = self.block_kind == FRICTION, self.block_kind == LIMIT
        excess = np.concatenate([np.maximum(np.linalg.norm(fc[:, 1:], axis=1) - self.block_mu[self.contact_blocks]
                                            * fc[:, 0], -fc[:, 0]),
                                 np.abs(f[self.block_start[:-1][friction]]) - self.block_mu[friction],
                                 -f[self.block_start[:-1][limit]], [0.0]])
        return float(excess.max())


@lru_cache(maxsize=128)
def _uniform_contacts(mu, m):
    return ConstraintBlocks.contacts(np.full(m, mu))


@dataclass(frozen=True)
class SolverStats:
    """What a contact solve reports.

    solver          registry name (``nonsmooth-newton``, ``gauss-seidel-newton``, ``gauss-seidel``, ``lemke``)
    iterations      Gauss–Seidel sweeps, Lemke pivots, or Newton iterations (a step or a fallback sweep)
    residual        natural-map residual ‖f − proj_K(f − ρ ũ)‖₂ of the returned force, in N (module docstring)
    cone_violation  max(‖f_t‖ − μ f_n, −f_n, 0) over contacts, in N
    converged       the stopping criterion was met (seed 000 eq. 3.34; the relative natural residual for
                    nonsmooth-newton; or Lemke reached a solution)
    stopped_by      "tolerance", "max_iter", "time_budget", "stalled" (nonsmooth-newton); for Lemke "solution",
                    "inaccurate", "ray" or "max_iter"
    time            wall-clock time of the solve, in s
    relative_change last value of the criterion (3.34), NaN for Lemke and nonsmooth-newton
    local_failures  per-contact Newton solves that fell back to a projection step (Gauss–Seidel–Newton), or
                    Gauss–Seidel sweeps taken where the global Newton step failed (nonsmooth-newton)
    """

    solver: str
    iterations: int
    residual: float
    cone_violation: float
    converged: bool
    stopped_by: str
    time: float
    relative_change: float = float("nan")
    local_failures: int = 0


def writeable(*arrays):
    """The arrays, each copied if read-only (a ``ConstraintBlocks``'), as the contact stage passes them to the
    kernels: numba compiles a kernel, with all it calls, once more for read-only arrays (the Newton chain, about a
    minute of CPU)."""
    return tuple(a if a.flags.writeable else a.copy() for a in arrays)


def check_problem(W, v_free):
    """float64 C-contiguous ``W`` (n, n), symmetrised if needed, and ``v_free`` (n,); ValueError naming the fault.
    Inputs are not modified."""
    W = np.ascontiguousarray(W, dtype=float)
    v_free = np.ascontiguousarray(v_free, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square matrix (got shape {W.shape})")
    if v_free.shape != (W.shape[0],):
        raise ValueError(f"v_free must have shape ({W.shape[0]},) to match W (got {v_free.shape})")
    if W.size == 0:
        return W, v_free
    bad_w, bad_v, asym, scale, i = scan_problem(W, v_free)
    if bad_w >= 0:
        raise ValueError(f"W has a non-finite entry at {divmod(int(bad_w), W.shape[0])}")
    if bad_v >= 0:
        raise ValueError(f"v_free has a non-finite entry at ({bad_v},)")
    if asym > 1e-9 * scale:
        raise ValueError(f"W must be symmetric (max |W - W^T| = {asym:.3g} for max |W| = {scale:.3g})")
    if W[i, i] < -1e-12 * scale:
        raise ValueError(f"W must be positive semi-definite: W[{i},{i}] = {W[i, i]:.3g} < 0")
    return (W if asym == 0.0 else 0.5 * (W + W.T)), v_free
