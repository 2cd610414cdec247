"""The per-step collision pipeline in numba: shape placements, bounding boxes, broadphase over the filtered
pair list and the narrowphases; the pairs that need FCL are listed for the Python driver (narrowphase.py).

Pair kinds (``PairArrays.kind``): HALFSPACE (A against plane B), SWEPT (sphere/capsule pairs), SPHERE_BOX,
BOX_BOX (closed forms), CONVEX (every other pair): an OBB test, then GJK on the shape cores (_gjk.py); while
the cores are apart GJK's witness points give the contact (exact for convex shapes, with the swept radius
of spheres and capsules), when they overlap or touch EPA's (_epa.py), completed by face clipping for
polytopes.  Only pairs that GJK and EPA leave undecided (a degenerate simplex, an iteration cap), or that involve
a triangle mesh (bounded by its hull), go to FCL.  Contacts of each pair are reduced
(reduction.py) and appended to the output in pair order.  The result of a pair involving a convex hull or a
mesh (CONVEX pairs, a hull on a plane) is kept and reused while the pair barely moves (_reuse.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit

from engine._borrowed import borrowed
from engine.collision import _vec as v
from engine.collision import _reuse
from engine.collision._epa import epa
from engine.collision._gjk import BEYOND, ENCLOSED, INTERSECTING, SEPARATED, gap_along, gjk
from engine.collision._manifold import box_box_contacts, face_manifold, obb_gap
from engine.collision._primitives import halfspace_contacts, sphere_box_contacts, swept_contacts
from engine.collision._world_arrays import WorldArrays
from engine.collision.geometry import MESH, PLANE, SPHERE
from engine.collision.reduction import reduce_manifold

HALFSPACE, SWEPT, SPHERE_BOX, BOX_BOX, CONVEX = range(5)


class PairArrays(NamedTuple):
    a: np.ndarray             # (P,) shape A
    b: np.ndarray             # (P,) shape B (the plane for HALFSPACE pairs)
    kind: np.ndarray          # (P,) HALFSPACE ... CONVEX
    manifold: np.ndarray      # (P,) bool: one shape is a polytope, the other has an incident feature
    reuse: np.ndarray         # (P,) bool: the result is kept and reused while the pair barely moves (_reuse.py)


class Workspace(NamedTuple):
    """Everything the pipeline writes, allocated once (K: raw points per pair, C = P N: output capacity)."""

    body_R: np.ndarray        # (NB, 3, 3) world placements of the bodies of all multibodies
    body_p: np.ndarray        # (NB, 3)
    R: np.ndarray             # (S, 3, 3) world placements of the shapes
    p: np.ndarray             # (S, 3)
    lo: np.ndarray            # (S, 3) world bounding boxes
    hi: np.ndarray            # (S, 3)
    raw: np.ndarray           # (K, 7) contacts of the current pair: point, normal, depth
    polys: np.ndarray         # (3, K, 3) clipping buffers
    uv: np.ndarray            # (K, 2) reduction: tangent-plane coordinates
    selected: np.ndarray      # (K,) reduction: chosen rows
    work: np.ndarray          # (2 (N + 1),) reduction: hull buffers
    point: np.ndarray         # (C, 3) output, in pair order
    normal: np.ndarray        # (C, 3)
    depth: np.ndarray         # (C,)
    pair: np.ndarray          # (C,)
    fcl_pairs: np.ndarray     # (P,) pairs left to FCL this step
    simplex: np.ndarray       # (3, 4 + _epa.MAX_ITERATIONS, 3) GJK's simplex, then EPA's polytope: points of M, A, B
    epa_faces: np.ndarray     # (_epa.MAX_FACES, 3) EPA's polytope: triangles (vertex rows of simplex) ...
    epa_normal: np.ndarray    # (_epa.MAX_FACES, 3) ... their outward unit normals ...
    epa_distance: np.ndarray  # (_epa.MAX_FACES,) ... and distances from the origin
    axis: np.ndarray          # (P, 3) last separating axis found by GJK for each pair (0 = none)


def bind(kernel, *args):
    """``kernel`` compiled for the types of ``args``, as a plain callable that skips numba's per-call type
    dispatch (about 40 arrays to type-check, ~10 us, on every step); the per-step calls pass arguments of
    exactly these types.  With NUMBA_DISABLE_JIT the Python function itself is returned."""
    if not hasattr(kernel, "overloads"):
        return kernel
    signature = tuple(numba.typeof(a) for a in args)
    kernel.compile(signature)
    return kernel.overloads[signature].entry_point


@njit(cache=True, nogil=True)
def place_shapes(sh, ws, moving_only):
    """World placement (R, p) = body placement * local placement, and world AABB of every shape; False
    (and nothing placed) when a body placement is not finite.

    AABB of an OBB (centre c, half extents h, rotation R): centre R c + p, half extents |R| h.
    """
    for b in range(ws.body_p.shape[0]):
        for i in range(3):
            if not np.isfinite(ws.body_p[b, i]):
                return False
            for j in range(3):
                if not np.isfinite(ws.body_R[b, i, j]):
                    return False
    for s in range(sh.kind.shape[0]):
        b = sh.slot[s]
        if b < 0:
            if moving_only:
                continue
            ws.R[s] = sh.local_R[s]
            ws.p[s] = sh.local_p[s]
        else:
            Rb = v.mat(ws.body_R, b)
            for j in range(3):  # column j of R_body R_local
                c = v.rotate(Rb, (sh.local_R[s, 0, j], sh.local_R[s, 1, j], sh.local_R[s, 2, j]))
                ws.R[s, 0, j], ws.R[s, 1, j], ws.R[s, 2, j] = c[0], c[1], c[2]
            v.store(ws.p, s, v.transform(Rb, v.row(ws.body_p, b), v.row(sh.local_p, s)))
        if sh.kind[s] == PLANE:
            ws.lo[s] = -np.inf
            ws.hi[s] = np.inf
            continue
        R = v.mat(ws.R, s)
        c = v.transform(R, v.row(ws.p, s), v.row(sh.box_center, s))
        h = v.row(sh.box_half, s)
        for i in range(3):
            e = abs(R[i][0]) * h[0] + abs(R[i][1]) * h[1] + abs(R[i][2]) * h[2]
            ws.lo[s, i] = c[i] - e
            ws.hi[s, i] = c[i] + e
    return True


@njit(cache=True, nogil=True, inline="always")
def _aabb_overlap(lo, hi, a, b, margin):
    for i in range(3):
        if lo[a, i] - margin > hi[b, i] or lo[b, i] - margin > hi[a, i]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _lowest(lo, hi, a, n):
    """min over the corners x of A's AABB of n.x"""
    low = 0.0
    for i in range(3):
        low += n[i] * 0.5 * (lo[a, i] + hi[a, i]) - abs(n[i]) * 0.5 * (hi[a, i] - lo[a, i])
    return low


@njit(cache=True, nogil=True, inline="always")
def _shape(sh, R, p, s):
    """Shape s as the tuple (kind, size, support points, world rotation, world position) of the kernels."""
    start = sh.vert_start[s]
    return sh.kind[s], v.row(sh.size, s), sh.verts[start:start + sh.vert_count[s]], v.mat(R, s), v.row(p, s)


@njit(cache=True, nogil=True, inline="always")
def _graph(sh, s):
    """Shape s's edge graph (first, neighbour) as ``_gjk.climb`` takes it (``ShapeArrays.edge_first``, ``edge_to``)."""
    row = sh.vert_start[s] + s
    return sh.edge_first[row:row + sh.vert_count[s] + 1], sh.edge_to


@njit(cache=True, nogil=True, inline="always")
def _segment(shape):
    """End points of the core segment of a sphere (a point, size[1] = 0) or a capsule (along its z axis)."""
    _, size, _, R, p = shape
    axis = v.column(R, 2)
    return v.axpy(-size[1], axis, p), v.axpy(size[1], axis, p)


@njit(cache=True, nogil=True)
def detect_native(sh, pairs, ws, cache, margin, n_max, tol, reuse_distance):
    """Place the moving shapes, then broad + narrow phase of every pair.  A pair marked ``reuse`` whose kept
    result stands reuses it (``cache``, _reuse.py), else keeps its new one: apart, with the gap beyond the
    margin as its reach; in contact, with ``reuse_distance`` (FCL's pairs: ``append_fcl_contacts``).

    Returns (contacts written to ws.point..., pairs written to ws.fcl_pairs), or (-1, 0) when a body
    placement is not finite.
    """
    if not place_shapes(sh, ws, True):
        return -1, 0
    if cache.margin[0] != margin:
        cache.reach[:] = 0.0
        cache.margin[0] = margin
        cache.version[0] += 1
    lo, hi, R, p, raw = ws.lo, ws.hi, ws.R, ws.p, ws.raw
    nc, nf = 0, 0
    for k in range(pairs.a.shape[0]):
        a, b, kind = pairs.a[k], pairs.b[k], pairs.kind[k]
        if kind == HALFSPACE:
            n = (R[b, 0, 2], R[b, 1, 2], R[b, 2, 2])
            offset = v.dot(n, v.row(p, b))
            if _lowest(lo, hi, a, n) - offset > margin:
                continue
        elif not _aabb_overlap(lo, hi, a, b, margin):
            continue
        Rr, c = _reuse.relative_pose(sh, R, p, a, b) if pairs.reuse[k] else _reuse.NO_POSE
        if pairs.reuse[k] and (_reuse.stands(cache, k, Rr, c, v.norm(v.row(sh.box_half, a)))
                               or _reuse.stands_apart(cache, k, Rr, c, v.row(sh.box_center, a),
                                                      v.row(sh.box_center, b), v.norm(v.row(sh.box_half, b)))):
            nc = _reuse.emit_kept(cache, k, R, p, a, b, margin, nc, ws.point, ws.normal, ws.depth, ws.pair)
            continue
        clearance = 0.0
        if kind == HALFSPACE:
            kind_a, size_a, verts_a, Ra, pa = _shape(sh, R, p, a)
            count = halfspace_contacts(kind_a, size_a, sh.radius[a], verts_a, Ra, pa, n, offset, margin, raw)
        elif kind == SWEPT:
            a0, a1 = _segment(_shape(sh, R, p, a))
            b0, b1 = _segment(_shape(sh, R, p, b))
            count = swept_contacts(a0, a1, sh.radius[a], b0, b1, sh.radius[b], margin, raw)
        elif kind == SPHERE_BOX:
            flip = sh.kind[b] == SPHERE
            sphere, box = (b, a) if flip else (a, b)
            count = sphere_box_contacts(v.row(p, sphere), sh.radius[sphere], v.mat(R, box), v.row(p, box),
                                        v.row(sh.size, box), flip, margin, raw)
        elif kind == BOX_BOX:
            count = box_box_contacts(v.mat(R, a), v.row(p, a), v.row(sh.size, a), v.mat(R, b), v.row(p, b),
                                     v.row(sh.size, b), margin, raw, ws.polys)
        else:
            count, clearance = _convex_pair(sh, ws, k, a, b, pairs.manifold[k], margin)
        if pairs.reuse[k]:
            _reuse.keep(cache, k, Rr, c, clearance if count == 0 else (reuse_distance if count > 0 else 0.0))
        if count < 0:
            ws.fcl_pairs[nf] = k
            nf += 1
            continue
        start = nc
        nc = append_reduced(raw, count, k, nc, n_max, tol, ws.uv, ws.selected, ws.work,
                            ws.point, ws.normal, ws.depth, ws.pair)
        if pairs.reuse[k]:
            _reuse.keep_contacts(cache, k, R, p, a, b, ws.point, ws.normal, ws.depth, start, nc)
    return nc, nf


@njit(cache=True)
def world_arrays(sh, pairs, ws, cache, kept_pair, kept_rows, kept_margin, packed):
    """A world's shapes, pairs, workspace, kept results and their slots as one ``WorldArrays``
    (``detect_native_of``)."""
    return WorldArrays(sh, pairs, ws, cache, kept_pair, kept_rows, kept_margin, packed)


@njit(cache=True, nogil=True)
def detect_native_of(s, margin, n_max, tol, reuse_distance):
    """``detect_native`` on the arrays of the ``WorldArrays`` s, then, when a result kept in contact changed,
    ``pack_kept`` (while the cache is still warm; the slots have no rows where nothing can be kept)."""
    nc, nf = detect_native(*borrowed((s.sh, s.pairs, s.ws, s.cache)), margin, n_max, tol, reuse_distance)
    if nc >= 0 and s.kept_rows.shape[1] > 0 and s.packed[0] != s.cache.version[0]:
        pack_kept(s)
    return nc, nf


@njit(cache=True, nogil=True)
def pack_kept(s):
    """``_reuse.pack`` of the kept results into the slot that ``CollisionWorld.kept`` did not hand out last."""
    slot = 1 - s.packed[3]
    s.packed[2] = _reuse.pack(s.cache, s.kept_pair[slot], s.kept_rows[slot], s.kept_margin[slot])
    s.packed[0], s.packed[1] = s.cache.version[0], slot


@njit(cache=True, nogil=True)
def _convex_pair(sh, ws, k, a, b, manifold, margin):
    """(Raw contacts of a CONVEX pair from GJK on the cores, or EPA when they overlap, or -1 when FCL must decide;
    when there are none, the gap beyond the margin along the separating direction found, else 0).

    With core witness points x_A, x_B at distance d and swept radii r_A, r_B: n = (x_A - x_B)/d,
    gap s = d - r_A - r_B, surface points x_A - r_A n and x_B + r_B n; overlapping cores (EPA: depth δ, normal n,
    x_A - x_B = -δ n) have s = -δ - r_A - r_B and the same surface points.  A separating axis found by GJK is
    kept per pair and tried first at the next step (it usually still separates: two support points instead
    of a GJK run); it only ever skips pairs that are apart, so the contacts do not depend on it.
    """
    A, B = _shape(sh, ws.R, ws.p, a), _shape(sh, ws.R, ws.p, b)
    gap = obb_gap(v.transform(A[3], A[4], v.row(sh.box_center, a)), A[3], v.row(sh.box_half, a),
                  v.transform(B[3], B[4], v.row(sh.box_center, b)), B[3], v.row(sh.box_half, b), margin)
    if gap > margin:
        return 0, gap - margin
    ra, rb = sh.radius[a], sh.radius[b]
    ga, gb = _graph(sh, a), _graph(sh, b)
    gap = gap_along(A, B, v.row(ws.axis, k), ga, gb) - ra - rb
    if gap > margin:
        return 0, gap - margin
    status, d, xa, xb = gjk(A, B, margin + ra + rb, ws.simplex, ga, gb)
    if status == BEYOND:
        v.store(ws.axis, k, xa)
        return 0, d - ra - rb - margin
    if status != INTERSECTING and d - ra - rb > margin:
        v.store(ws.axis, k, v.sub(xa, xb))
        return 0, d - ra - rb - margin
    if A[0] == MESH or B[0] == MESH or status == INTERSECTING or (status == SEPARATED and d < 1e-9):
        return -1, 0.0
    if status == ENCLOSED:   # the cores overlap by ``depth`` along n: x_A - x_B = -depth n (_epa.py)
        found, depth, n, xa, xb = epa(A, B, ws.simplex, ws.epa_faces, ws.epa_normal, ws.epa_distance, ga, gb)
        if not found:
            return -1, 0.0
        s = -depth - ra - rb
        if s > margin:       # cores apart by a few nm (EPA's lone face), beyond a margin below that
            return 0, s - margin
    else:
        n = v.scale(v.sub(xa, xb), 1.0 / d)
        s = d - ra - rb
    mid = v.scale(v.add(v.axpy(-ra, n, xa), v.axpy(rb, n, xb)), 0.5)
    if manifold:
        return face_manifold(sh, a, A[3], A[4], b, B[3], B[4], n, margin, mid, -s, ws.raw, ws.polys), 0.0
    return v.emit(ws.raw, 0, mid, n, s), 0.0


@njit(cache=True, nogil=True, inline="always")
def append_reduced(raw, count, pair, nc, n_max, tol, uv, selected, work, point, normal, depth, out_pair):
    """Reduce the ``count`` raw contacts of ``pair`` (reduction.py) and append them to the output at row nc."""
    m = reduce_manifold(raw, count, n_max, tol, uv, selected, work)
    for i in range(m):
        j = selected[i]
        point[nc, 0], point[nc, 1], point[nc, 2] = raw[j, 0], raw[j, 1], raw[j, 2]
        normal[nc, 0], normal[nc, 1], normal[nc, 2] = raw[j, 3], raw[j, 4], raw[j, 5]
        depth[nc] = raw[j, 6]
        out_pair[nc] = pair
        nc += 1
    return nc


@njit(cache=True, nogil=True)
def append_fcl_contacts(sh, ws, cache, pair, a, b, count, manifold, margin, nc, n_max, tol, reuse_distance):
    """Append the ``count`` FCL contacts in ``ws.raw`` of an FCL pair, and keep them with ``reuse_distance`` as
    their reach (``cache``: ``detect_native`` kept the pair's pose); for polytopes, rebuild the face contact
    around the normal of the deepest one first (face_manifold)."""
    if manifold:
        deepest = 0
        for i in range(1, count):
            if ws.raw[i, 6] > ws.raw[deepest, 6]:
                deepest = i
        n = (ws.raw[deepest, 3], ws.raw[deepest, 4], ws.raw[deepest, 5])
        count = face_manifold(sh, a, v.mat(ws.R, a), v.row(ws.p, a), b, v.mat(ws.R, b), v.row(ws.p, b), n, margin,
                              v.row(ws.raw, deepest), ws.raw[deepest, 6], ws.raw, ws.polys)
    start = nc
    nc = append_reduced(ws.raw, count, pair, nc, n_max, tol, ws.uv, ws.selected, ws.work,
                        ws.point, ws.normal, ws.depth, ws.pair)
    _reuse.keep_contacts(cache, pair, ws.R, ws.p, a, b, ws.point, ws.normal, ws.depth, start, nc)
    cache.reach[pair] = reuse_distance
    return nc
