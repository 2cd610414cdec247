"""The Delassus operator Lambda = J M^-1 J^T of one multibody (seed 000 §3.2, eqs. 3.37-3.49), in O(n) per
column and never forming M^-1, by the thesis's three methods:

* ``"test-force"`` (Alg. 3, the initial method): one unit force per constraint row, a full ABA-like
  backward and forward pass each (3m passes for m contacts);
* ``"chang-khatib"`` (Alg. 4): the Omega recursion with L_i and the nearest common ancestor (eqs. 3.41-3.44);
* ``"thesis"`` (Alg. 5, the new method): 6 unit wrenches per contact body, backward pass from the body to the
  base only, forward pass along the contact bodies' paths (eqs. 3.47-3.49);
* ``"dense"``: J M^-1 J^T with the CRBA and a Cholesky factorisation (the test reference);
* ``"auto"``: ``choose_method`` — the thesis's method unless two contact bodies share a branch (L1808-1810).

``delassus_factor`` gives Λ = B Bᵀ in the joint space instead (B = J Aᵀ D^-1/2 from the ABA's inward pass, at
most nv columns, each row on the dofs of its bodies' paths to the base); the contact stage's ``auto`` builds the
W of a group of ``TREE_FACTOR_ROWS`` rows or more as that product and hands B to the Newton solver
(``_group_delassus_kernels.multibody_delassus_factor``, reported as ``"joint-space"``).

Constraints come in blocks (a frictional contact: 3 rows; a loop closure: 3 or 5).  A block acts on one or
more bodies s of this multibody through (rows, 6) maps X_ks on V_s = (v_o, omega): the velocity of the body
origin o_s and the angular velocity, both in the multibody's base axes (Pinocchio's LOCAL_WORLD_ALIGNED).  Then
Lambda_kl = sum_s sum_t X_ks Omega_st X_lt^T with Omega_st = J_s M^-1 J_t^T (eqs. 3.37, 3.45).  Lambda depends on
q only (velocities, torques and gravity play no role); rotors enter exactly as in the core's ABA and CRBA.
Each (model, data) gets its own ``DelassusWorkspace``; the caller's ``data`` is only read (``reuse_aba``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from engine.contact import _delassus_kernels as _k
from engine.dynamics.crba import crba
from engine.dynamics.inputs import pack_of, report, vector
from engine.dynamics.pack import WD_OS
from engine.spatial import skew

METHODS = ("test-force", "chang-khatib", "thesis", "dense")
_WORKSPACES = weakref.WeakKeyDictionary()  # Data -> DelassusWorkspace


@dataclass(frozen=True)
class BlockMaps:
    """Constraint blocks in kernel form (build with ``BlockMaps.from_arrays`` or ``block_maps``).

    Term t is body ``term_body[t]`` of block ``term_block[t]`` (terms sorted by block) with its map
    ``term_X[t]`` (6, 6): the block's rows, then zero rows.  Block k owns the rows ``block_row[k]:block_row[k+1]``
    of Lambda and the terms ``block_term[k]:block_term[k+1]``.  ``bodies``: the distinct bodies, sorted;
    ``term_contact[t]``: the position of ``term_body[t]`` in ``bodies``.
    """

    block_row: np.ndarray
    block_term: np.ndarray
    term_block: np.ndarray
    term_body: np.ndarray
    term_X: np.ndarray
    bodies: np.ndarray
    term_contact: np.ndarray

    @property
    def nrows(self) -> int:
        return int(self.block_row[-1])

    def check(self, model):
        if len(self.bodies) and not 0 <= self.bodies[0] <= self.bodies[-1] < model.nbodies:
            raise ValueError(f"constraint blocks act on bodies {self.bodies.tolist()}, but {model.name!r} has "
                             f"bodies 0 .. {model.nbodies - 1}")

    @classmethod
    def from_arrays(cls, term_block, term_body, X, rows=None):
        """From term arrays: ``term_block`` (nt,) 0, ..., 0, 1, ... (each block has a term), ``term_body`` (nt,),
        ``X`` (nt, R, 6) with R <= 6, and ``rows`` (nblocks,) the rows of each block (default: R for all)."""
        tb, body = np.asarray(term_block, dtype=np.int64), np.asarray(term_body, dtype=np.int64)
        X = np.asarray(X, dtype=float)
        if tb.ndim != 1 or body.shape != tb.shape or X.ndim != 3 or X.shape[0] != len(tb) or X.shape[2] != 6 \
                or not 1 <= X.shape[1] <= 6:
            raise ValueError(f"term_block (nt,), term_body (nt,) and X (nt, rows <= 6, 6) expected, got shapes "
                             f"{tb.shape}, {body.shape} and {X.shape}")
        if len(tb) and (tb[0] != 0 or np.any((np.diff(tb) != 0) & (np.diff(tb) != 1))):
            raise ValueError(f"term_block must list blocks 0, 1, 2, ... in order, got {tb.tolist()}")
        if np.any(body < 0) or not np.isfinite(X).all():
            bad = np.flatnonzero((body < 0) | ~np.isfinite(X).all(axis=(1, 2)))[0]
            raise ValueError(f"constraint term {bad} (block {tb[bad]}): body {body[bad]} must be >= 0 and its map "
                             f"finite, got X = {X[bad].tolist()}")
        nblocks = int(tb[-1]) + 1 if len(tb) else 0
        rows = np.full(nblocks, X.shape[1], np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        if rows.shape != (nblocks,) or np.any((rows < 1) | (rows > X.shape[1])):
            raise ValueError(f"rows must give 1 .. {X.shape[1]} rows for each of the {nblocks} blocks, got {rows}")
        term_X = np.zeros((len(tb), 6, 6))
        term_X[:, :X.shape[1]] = X
        term_X[np.arange(6)[None, :] >= rows[tb][:, None]] = 0.0
        bodies, contact = np.unique(body, return_inverse=True)
        return cls(np.concatenate([[0], np.cumsum(rows)]), np.searchsorted(tb, np.arange(nblocks + 1)), tb, body,
                   term_X, bodies, contact.astype(np.int64))


def block_maps(blocks, nbodies=None) -> BlockMaps:
    """``BlockMaps`` from a list whose entries are ``(body, X)`` or a list of such pairs (one block on several
    bodies); X (rows, 6), the same rows for every body of a block."""
    term_block, term_body, maps, rows = [], [], [], []
    for k, block in enumerate(blocks):
        pairs = [block] if _is_pair(block) else list(block)
        if not pairs or not all(_is_pair(p) for p in pairs):
            raise ValueError(f"blocks[{k}] must be (body, X) or a non-empty list of (body, X), got {block!r}")
        shapes = {np.shape(X) for _, X in pairs}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2 or not 1 <= next(iter(shapes))[0] <= 6 \
                or next(iter(shapes))[1] != 6:
            raise ValueError(f"blocks[{k}]: X must have shape (rows, 6) with 1 <= rows <= 6, the same for each body "
                             f"of the block, got shapes {sorted(shapes)}")
        for body, X in pairs:
            if nbodies is not None and not 0 <= body < nbodies:
                raise ValueError(f"blocks[{k}]: body must be in [0, {nbodies}), got {body}")
            term_block.append(k)
            term_body.append(body)
            maps.append(np.zeros((6, 6)))
            maps[-1][:len(X)] = X
        rows.append(next(iter(shapes))[0])
    if not maps:
        empty = np.zeros(0, np.int64)
        return BlockMaps(np.zeros(1, np.int64), np.zeros(1, np.int64), empty, empty, np.zeros((0, 6, 6)), empty,
                         empty)
    return BlockMaps.from_arrays(term_block, term_body, np.array(maps), rows)


def _is_pair(x):
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], (int, np.integer)) \
        and not isinstance(x[0], (bool, np.bool_))


class DelassusWorkspace:
    """Preallocated arrays of the Delassus kernels for one (model, data) (see ``_delassus_kernels``), and
    ``method``, the method used by the last call ("auto" resolved)."""

    def __init__(self, model):
        nb, nv = model.nbodies, model.nv
        self.data = model.create_data()      # IA, D^-1 and U of the ABA at v = 0 live here
        self.Sw, self.Uw = np.zeros((nv, 6)), np.zeros((nv, 6))
        self.y = np.zeros(nv)
        self.F, self.A = np.zeros((nb, 6)), np.zeros((nb, 6))
        self.Od = np.zeros((nb, 6, 6))
        self.S6 = np.zeros((3, 6, 6))
        self.path = np.zeros((2, nb), np.int64)
        self.mark, self.union = np.zeros(nb, np.int64), np.zeros(nb, np.int64)
        self.v0, self.f0 = np.zeros(nv), np.zeros((nb, 6))
        self.method = None


def workspace(model, data) -> DelassusWorkspace:
    """The workspace of ``data`` (created on first use, freed with ``data``)."""
    pack_of(model, data)
    work = _WORKSPACES.get(data)
    if work is None:
        work = _WORKSPACES[data] = DelassusWorkspace(model)
    return work


def choose_method(model, bodies) -> str:
    """``"chang-khatib"`` when a contact body is an ancestor of another one (hand and forearm: the thesis's
    method would climb to the base twice, seed 000 L1808-1810), else ``"thesis"``."""
    bodies = {_body(model, b) for b in bodies}
    for b in bodies:
        p = int(model.body_parent[b])
        while p >= 0:
            if p in bodies:
                return "chang-khatib"
            p = int(model.body_parent[p])
    return "thesis"


def delassus(model, data, q, blocks, method="auto", reuse_aba=False):
    """Lambda (n, n), n = total rows, for ``blocks``: a ``BlockMaps`` or a list whose entries are one
    ``(body, X)`` (a block on one body) or a list of them (a block on several bodies of this multibody: a
    self-contact, a loop closure); X (rows, 6) maps (v_o, omega) (base axes) to the block's rows.  Symmetric
    positive semi-definite; only the upper triangle is computed and mirrored.  The method used is left in
    ``workspace(model, data).method``.

    ``reuse_aba``: ``data`` holds ``aba(model, data, q, ...)`` at this very q, and its articulated inertias
    (which depend on q only) are reused, as Algs. 3-5 take S, I and H from the free dynamics.  Otherwise
    they are computed in the workspace and ``data`` is not touched.
    """
    maps = blocks if isinstance(blocks, BlockMaps) else block_maps(blocks, model.nbodies)
    maps.check(model)
    _check_method(method, METHODS)
    q = vector(q, model.nq, "q")
    if method == "dense":
        work = workspace(model, data)
        work.method = method
        return _dense_lambda(model, work, q, maps)
    Lam = np.zeros((maps.nrows, maps.nrows))
    delassus_into(model, data, q, maps, method, Lam, reuse_aba)
    return Lam


def delassus_into(model, data, q, maps, method, Lam, reuse_aba=True):
    """``delassus`` into ``Lam`` (maps.nrows, maps.nrows), zero on entry, for inputs the caller has checked:
    ``maps`` a ``BlockMaps`` on bodies of ``model``, ``method`` one of ``METHODS`` but "dense", or "auto", and
    ``q`` a float64 (nq,) array (the simulation's contact stage, which builds its maps in a kernel).  Returns
    the method used (also left in ``workspace(model, data).method``)."""
    work = workspace(model, data)
    ws = _articulated(model, data, work, q, reuse_aba)
    Xw = np.empty_like(maps.term_X)
    _k.world_terms(ws, maps.term_body, maps.term_X, Xw)
    if method == "test-force":
        _k.test_force(work.data.model_pack.bi, ws, work.Sw, work.Uw, work.y, work.F, work.A, maps.term_body,
                      maps.term_block, maps.block_row, maps.block_term, Xw, Lam)
    else:
        Om, method = _omega_base(work, ws, maps.bodies, method)
        Y = np.empty((len(maps.term_body), 6, 6 * len(maps.bodies)))
        _k.project(maps.term_contact, maps.term_block, maps.block_row, Xw, Om, Y, Lam)
    work.method = method
    return method


def delassus_factor(model, data, q, blocks, reuse_aba=False):
    """A factor of Lambda = B Bᵀ in the joint space (``_delassus_kernels.tree_factor``: B = J Aᵀ D^-1/2 from the
    ABA's inward pass), ``blocks`` as in ``delassus``; row i of B has the values ``B_val[i, :, 0]`` on the columns
    ``B_col[i, :]`` (−1: none), at most the dofs on its bodies' paths to the base. Returns (B_col (n, K),
    B_val (n, K, 1), width), the columns the multibody's dofs on the blocks' paths, in dof order."""
    maps = blocks if isinstance(blocks, BlockMaps) else block_maps(blocks, model.nbodies)
    maps.check(model)
    work = workspace(model, data)
    ws = _articulated(model, data, work, vector(q, model.nq, "q"), reuse_aba)
    Xw = np.empty_like(maps.term_X)
    _k.world_terms(ws, maps.term_body, maps.term_X, Xw)
    bi = work.data.model_pack.bi
    K = _k.tree_factor_support(bi, maps.term_body, maps.block_term)
    B_col, B_val = np.empty((maps.nrows, K), np.int64), np.empty((maps.nrows, K, 1))
    width = _k.tree_factor(bi, ws, work.Sw, work.Uw, work.y, work.F, maps.term_body, maps.block_term,
                           maps.block_row, Xw, 1.0, np.arange(maps.nrows), B_col, B_val)
    return B_col, B_val, width


def omega(model, data, q, bodies, method="auto", reuse_aba=False):
    """Omega (C, C, 6, 6) for the contact bodies ``bodies`` (in the given order): Omega[s, t] = J_s M^-1 J_t^T,
    the acceleration (a_o, alpha) of body s (origin, base axes) per unit wrench (f, n_o) on body t (moment
    about its origin, base axes).  Methods: "chang-khatib", "thesis", "dense" or "auto"; ``reuse_aba`` as in
    ``delassus``."""
    bodies = np.array([_body(model, b) for b in bodies], dtype=np.int64)
    _check_method(method, ("chang-khatib", "thesis", "dense"))
    work, q = workspace(model, data), vector(q, model.nq, "q")
    C = len(bodies)
    if method == "dense":
        work.method = method
        J = _body_jacobians(model, work, q, bodies).reshape(6 * C, model.nv)
        return _dense_product(work.data.M, J).reshape(C, 6, C, 6).transpose(0, 2, 1, 3).copy()
    ws = _articulated(model, data, work, q, reuse_aba)
    Om, work.method = _omega_base(work, ws, bodies, method)
    out = np.empty((C, C, 6, 6))
    _k.to_body_origins(ws, bodies, Om, out)
    return out


def _check_method(method, allowed):
    if method != "auto" and method not in allowed:
        raise ValueError(f"unknown Delassus method {method!r}; expected 'auto' or one of {', '.join(allowed)}")


def _body(model, b):
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or not 0 <= b < model.nbodies:
        raise ValueError(f"body must be an integer in [0, {model.nbodies}) for {model.name!r}, got {b!r}")
    return int(b)


def _articulated(model, data, work, q, reuse_aba):
    """The ``ws`` holding the placements, IA_i, D_i^-1 and U_i at q (the caller's with ``reuse_aba``, else
    the workspace's, computed here); S and U in base coordinates go to work.Sw, work.Uw."""
    source = data if reuse_aba else work.data
    pack = source.model_pack
    if not reuse_aba:
        status = _k.articulate(pack.bi, pack.bf, pack.di, pack.df, source.ws, source.wd, q, work.v0, work.f0)
        report(status, model, stacklevel=4, q=q)
    _k.world_axes(pack.bi, pack.df, source.ws, source.wd, work.Sw, work.Uw)
    return source.ws


def _omega_base(work, ws, bodies, method):
    """(Omega in base Plücker coordinates (C, C, 6, 6), method) by Alg. 4 or Alg. 5; "auto" picks Alg. 4 when
    two contact bodies share a branch (as ``choose_method``)."""
    bi = work.data.model_pack.bi
    n, shared = _k.reach(bi, bodies, work.mark, work.union)
    if method == "auto":
        method = "chang-khatib" if shared else "thesis"
    Om = np.empty((len(bodies), len(bodies), 6, 6))
    if method == "thesis":
        _k.thesis_omega(bi, ws, work.Sw, work.Uw, work.y, work.F, work.A, bodies, work.mark, work.union[:n], Om)
    else:
        _k.chang_khatib_omega(bi, ws, work.Sw, work.Uw, work.Od, work.S6, work.path, bodies, work.union[:n], Om)
    return Om, method


def _body_jacobians(model, work, q, bodies):
    """M(q) into work.data.M (CRBA) and J (C, 6, nv): body origin velocity and angular velocity, base axes."""
    crba(model, work.data, q)
    oS = work.data.wd[:, WD_OS:WD_OS + 6]   # joint twists at the base origin
    J = np.zeros((len(bodies), 6, model.nv))
    for c, s in enumerate(bodies):
        dofs, i = [], int(s)
        while i >= 0:
            dofs.extend(range(model.joint_idx_v[i], model.joint_idx_v[i] + model.joint_nv[i]))
            i = int(model.body_parent[i])
        J[c, :3, dofs] = oS[dofs, :3] + oS[dofs, 3:] @ skew(work.data.oMi_p[s])   # v_o = v_0 + omega x o
        J[c, 3:, dofs] = oS[dofs, 3:]
    return J


def _dense_product(M, J):
    """J M^-1 J^T by a Cholesky factorisation of M."""
    out = J @ cho_solve(cho_factor(M, check_finite=False), J.T, check_finite=False)
    return 0.5 * (out + out.T)


def _dense_lambda(model, work, q, maps):
    J = _body_jacobians(model, work, q, maps.bodies)
    rows = np.zeros((maps.nrows, model.nv))
    for t in range(len(maps.term_body)):
        k = maps.term_block[t]
        r0, r1 = maps.block_row[k], maps.block_row[k + 1]
        rows[r0:r1] += maps.term_X[t, :r1 - r0] @ J[maps.term_contact[t]]
    return _dense_product(work.data.M, rows)
