"""Narrowphase results kept per pair and reused while the pair barely moves (issue 16: a robot lying on the floor
runs GJK, EPA and face clipping on hulls of hundreds of vertices every step for bodies that did not move).

The result of a pair marked ``reuse`` (CONVEX pairs, and a convex hull or a mesh against a plane) is kept with
the pose of A's bounding box in B's frame at that step,

    R = R_Bᵀ R_A,   c = R_Bᵀ (R_A c_A + p_A − p_B)          (c_A: the box centre in A's frame).

A point y of A's box (|y − c_A| ≤ ρ_A = |h_A|, the half diagonal) has since moved, relative to B, by at most

    δ = |c − c₀| + ‖R − R₀‖_F ρ_A                         (|(R − R₀) u| ≤ ‖R − R₀‖₂ |u| ≤ ‖R − R₀‖_F |u|),

and the result stands while δ < ``reach``:

* **apart** (no contact): reach = the gap beyond the margin along the separating direction the test found (an
  OBB axis, the kept axis, GJK's), fixed in B's frame. A moving by less keeps that gap above the margin, so
  "no contact" is what the narrowphase would find: reusing it changes nothing. (A plane's pairs apart are not
  kept: the bounding-box test that skips them is cheaper than the check.)
* **in contact**: reach = ``reuse_distance``. Each contact is kept as A's surface point in A's frame, B's in
  B's frame and the normal in B's frame, and re-expressed with the new poses: x_A = R_A y_A + p_A,
  x_B = R_B y_B + p_B, n = R_B n_B, depth = (x_B − x_A)·n, point = (x_A + x_B)/2 (contacts.py). Each witness
  point has moved by at most δ and the pair's true depth by at most δ too (it is 1-Lipschitz in the
  displacement), so a depth is off by less than 2 reuse_distance; a contact whose gap now exceeds the margin is
  dropped, as the narrowphase drops it.

``reach`` 0: not kept, test the pair. Results hold for one margin: another margin forgets them all.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from engine.collision import _vec as v


class PairCache(NamedTuple):
    """The kept result of each pair (P pairs, N contacts at most per pair)."""

    reach: np.ndarray         # (P,) m: relative displacement of A under which the result stands (0: none kept)
    R: np.ndarray             # (P, 3, 3) R_Bᵀ R_A when kept
    c: np.ndarray             # (P, 3) A's box centre in B's frame when kept
    count: np.ndarray         # (P,) contacts kept
    point_a: np.ndarray       # (P, N, 3) A's surface point, in A's frame
    point_b: np.ndarray       # (P, N, 3) B's surface point, in B's frame
    normal: np.ndarray        # (P, N, 3) normal (B to A), in B's frame
    margin: np.ndarray        # (1,) the margin the results were found with
    version: np.ndarray       # (1,) counts the changes of the results kept in contact (what ``pack`` gives)


def pair_cache(npairs: int, n_max: int) -> PairCache:
    return PairCache(reach=np.zeros(npairs), R=np.zeros((npairs, 3, 3)), c=np.zeros((npairs, 3)),
                     count=np.zeros(npairs, dtype=np.int64), point_a=np.zeros((npairs, n_max, 3)),
                     point_b=np.zeros((npairs, n_max, 3)), normal=np.zeros((npairs, n_max, 3)),
                     margin=np.zeros(1), version=np.zeros(1, dtype=np.int64))


NO_POSE = (((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), (0.0, 0.0, 0.0))   # of a pair that keeps nothing


@njit(cache=True, nogil=True, inline="always")
def relative_pose(sh, R, p, a, b):
    """(R_Bᵀ R_A, R_Bᵀ (R_A c_A + p_A − p_B)): A's bounding box in B's frame."""
    Ra, Rb, pb = v.mat(R, a), v.mat(R, b), v.row(p, b)
    Rr = (v.rotate_t(Rb, v.column(Ra, 0)), v.rotate_t(Rb, v.column(Ra, 1)), v.rotate_t(Rb, v.column(Ra, 2)))
    return ((Rr[0][0], Rr[1][0], Rr[2][0]), (Rr[0][1], Rr[1][1], Rr[2][1]), (Rr[0][2], Rr[1][2], Rr[2][2])), \
        v.rotate_t(Rb, v.sub(v.transform(Ra, v.row(p, a), v.row(sh.box_center, a)), pb))


@njit(cache=True, nogil=True)
def stands(cache, k, Rr, c, rho):
    """True when pair k's kept result stands: δ = |c − c₀| + ‖R − R₀‖_F ρ_A < reach."""
    if cache.reach[k] <= 0.0:
        return False
    return v.norm(v.sub(c, v.row(cache.c, k))) + _turned(cache, k, Rr) * rho < cache.reach[k]


@njit(cache=True, nogil=True)
def stands_apart(cache, k, Rr, c, centre_a, centre_b, rho_b):
    """True when pair k's result is kept apart and B's box has moved relative to A by less than its reach: B's box
    centre c_B in A's frame, Rᵀ (c_B − t) with t = c − R c_A (A's origin in B's frame; c_A, c_B the box centres in
    their own frames), has moved by |Rᵀ(c_B − t) − R₀ᵀ(c_B − t₀)| and a point of the box by at most that plus
    ‖R − R₀‖_F ρ_B. The gap between A and B moves by no more than this either (it is 1-Lipschitz in the
    displacement of one body relative to the other, whichever is held fixed), so a pair kept apart stays beyond
    the margin while min(δ_A, δ_B) < reach: a small body B against a large A (an arm against the torso) is not
    tested again each time A turns slightly."""
    if cache.reach[k] <= 0.0 or cache.count[k] > 0:
        return False
    R0 = v.mat(cache.R, k)
    now = v.rotate_t(Rr, v.sub(centre_b, v.sub(c, v.rotate(Rr, centre_a))))
    kept = v.rotate_t(R0, v.sub(centre_b, v.sub(v.row(cache.c, k), v.rotate(R0, centre_a))))
    return v.norm(v.sub(now, kept)) + _turned(cache, k, Rr) * rho_b < cache.reach[k]


@njit(cache=True, nogil=True, inline="always")
def _turned(cache, k, Rr):
    """‖R − R₀‖_F of pair k's kept rotation."""
    rotation = 0.0
    for i in range(3):
        for j in range(3):
            rotation += (Rr[i][j] - cache.R[k, i, j]) ** 2
    return np.sqrt(rotation)


@njit(cache=True, nogil=True)
def keep(cache, k, Rr, c, reach):
    """Keep pair k's pose (R_Bᵀ R_A, c) with its ``reach``; no contact (``keep_contacts`` adds them)."""
    if cache.reach[k] > 0.0 and cache.count[k] > 0:      # a result kept in contact replaced
        cache.version[0] += 1
    cache.reach[k] = reach
    for i in range(3):
        for j in range(3):
            cache.R[k, i, j] = Rr[i][j]
    v.store(cache.c, k, c)
    cache.count[k] = 0


@njit(cache=True, nogil=True)
def keep_contacts(cache, k, R, p, a, b, point, normal, depth, start, stop):
    """Keep the contacts ``start:stop`` of the output (pair k's) in the frames of shapes a and b."""
    Ra, pa, Rb, pb = v.mat(R, a), v.row(p, a), v.mat(R, b), v.row(p, b)
    for i in range(start, stop):
        x, n, h = v.row(point, i), v.row(normal, i), 0.5 * depth[i]
        j = i - start
        v.store(cache.point_a[k], j, v.rotate_t(Ra, v.sub(v.axpy(-h, n, x), pa)))
        v.store(cache.point_b[k], j, v.rotate_t(Rb, v.sub(v.axpy(h, n, x), pb)))
        v.store(cache.normal[k], j, v.rotate_t(Rb, n))
    cache.count[k] = stop - start
    if stop > start:
        cache.version[0] += 1


@njit(cache=True, nogil=True)
def emit_kept(cache, k, R, p, a, b, margin, nc, point, normal, depth, out_pair):
    """Pair k's kept contacts at the current poses, appended to the output from row nc (those whose gap now
    exceeds the margin dropped); returns the new count."""
    Ra, pa, Rb, pb = v.mat(R, a), v.row(p, a), v.mat(R, b), v.row(p, b)
    for j in range(cache.count[k]):
        xa = v.transform(Ra, pa, v.row(cache.point_a[k], j))
        xb = v.transform(Rb, pb, v.row(cache.point_b[k], j))
        n = v.rotate(Rb, v.row(cache.normal[k], j))
        d = v.dot(v.sub(xb, xa), n)
        if d < -margin:
            continue
        v.store(point, nc, v.scale(v.add(xa, xb), 0.5))
        v.store(normal, nc, n)
        depth[nc] = d
        out_pair[nc] = k
        nc += 1
    return nc


@njit(cache=True, nogil=True)
def pack(cache, pairs, rows, margin):
    """The pairs kept in contact (reach > 0, count > 0) and their rows flat, written from the top of ``pairs``
    (≥ m,) and ``rows`` (≥ m, 14 + 9 N): reach, R (9), c (3), count, point_a (3 N), point_b (3 N), normal (3 N),
    and the margin they hold for to ``margin`` (1,) (``unpack`` reverses it); returns their number m."""
    n = cache.point_a.shape[1]
    i = 0
    for k in range(cache.reach.shape[0]):
        if cache.reach[k] > 0.0 and cache.count[k] > 0:
            pairs[i] = k
            rows[i, 0], rows[i, 10:13], rows[i, 13] = cache.reach[k], cache.c[k], cache.count[k]
            rows[i, 1:10] = cache.R[k].ravel()
            rows[i, 14:14 + 3 * n] = cache.point_a[k].ravel()
            rows[i, 14 + 3 * n:14 + 6 * n] = cache.point_b[k].ravel()
            rows[i, 14 + 6 * n:] = cache.normal[k].ravel()
            i += 1
    margin[0] = cache.margin[0]
    return i


def unpack(cache, pairs, rows):
    """Forget every kept result, then take back those ``pack`` gave."""
    n = cache.point_a.shape[1]
    cache.version[0] += 1
    cache.reach[:] = 0.0
    cache.reach[pairs], cache.c[pairs], cache.count[pairs] = rows[:, 0], rows[:, 10:13], rows[:, 13]
    cache.R[pairs] = rows[:, 1:10].reshape(-1, 3, 3)
    for field, start in ((cache.point_a, 14), (cache.point_b, 14 + 3 * n), (cache.normal, 14 + 6 * n)):
        field[pairs] = rows[:, start:start + 3 * n].reshape(-1, n, 3)
