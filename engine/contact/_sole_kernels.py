"""numba kernels of ``sole_geometry.py`` and ``soles.py``: the displaced nodes in the world frame and the obstacles
near them, nodes against a plane, grains (spheres) against a sole's bottom triangles, nodes against the triangles
of a static mesh; the stick-first solve of a group standing on soles."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._alart_curnier_kernels import force_norm
from engine.contact._kernels import natural_residual
from engine.contact._group_delassus_kernels import multibody_factors
from engine.dynamics._kernels.algebra import kernel


@kernel
def place_nodes(rest, U, R_body, p_body, R_sole, p_sole, margin, R, p, x, box):
    """The sole frame in the world, (R, p) = (R_b R_s, R_b p_s + p_b) for its body at (R_b, p_b) and the sole at
    (R_s, p_s) on the body; x (c, 3) = (X + U_c) Rᵀ + p, the candidate contact nodes at rest X (``rest``, c × 3)
    displaced by U_c (``U``, 3c), sole frame, in the world frame; ``box`` (2, 3): their bounds (lo, hi) grown
    by ``margin``."""
    for r in range(3):
        p[r] = p_body[r]
        for c in range(3):
            p[r] += R_body[r, c] * p_sole[c]
            R[r, c] = R_body[r, 0] * R_sole[0, c] + R_body[r, 1] * R_sole[1, c] + R_body[r, 2] * R_sole[2, c]
        box[0, r], box[1, r] = math.inf, -math.inf
    for i in range(rest.shape[0]):
        for r in range(3):
            acc = p[r]
            for k in range(3):
                acc += R[r, k] * (rest[i, k] + U[3 * i + k])
            x[i, r] = acc
            box[0, r], box[1, r] = min(box[0, r], acc - margin), max(box[1, r], acc + margin)


@kernel
def near_obstacles(box, bounds, own, near):
    """The obstacles whose bounds (o, 2, 3; lo, hi) meet ``box`` (2, 3), those with ``own`` (o,) left out (a sole
    does not meet its own robot): their indices into ``near``; returns their count."""
    k = 0
    for j in range(bounds.shape[0]):
        if own[j]:
            continue
        apart = False
        for r in range(3):
            apart = apart or bounds[j, 1, r] < box[0, r] or bounds[j, 0, r] > box[1, r]
        if not apart:
            near[k] = j
            k += 1
    return k


@kernel
def nodes_under_plane(x, normal, offset, margin, node, point, depth):
    """The nodes ``x`` (c, 3) within ``margin`` of the half-space n · x ≤ offset: their indices, the points midway
    between node and plane, and the depths into ``node``, ``point``, ``depth`` (c rows at least); returns
    their count."""
    k = 0
    for i in range(x.shape[0]):
        gap = x[i, 0] * normal[0] + x[i, 1] * normal[1] + x[i, 2] * normal[2] - offset
        if gap <= margin:
            node[k], depth[k] = i, -gap
            for r in range(3):
                point[k, r] = x[i, r] - 0.5 * gap * normal[r]
            k += 1
    return k


@kernel
def nodes_on_static_planes(near, count, plane, plane_normal, plane_offset, pair_of, x, margin, point, normal, depth,
                           pair, slot, weight):
    """When every obstacle ``near[:count]`` is a static plane (``plane[j]``, n · x ≤ offset from ``plane_normal``,
    ``plane_offset``): the node test of each in turn (``nodes_under_plane``), written from row 0 of ``point``,
    ``normal``, ``depth``, ``pair`` (``pair_of[j]``), ``slot`` (the node, thrice) and ``weight`` ((1, 0, 0));
    returns their number, or −1 (nothing written) when another obstacle is near."""
    for a in range(count):
        if not plane[near[a]]:
            return -1
    k = 0
    for a in range(count):
        j = near[a]
        found = nodes_under_plane(x, plane_normal[j], plane_offset[j], margin, slot[k:, 0], point[k:], depth[k:])
        for i in range(k, k + found):
            pair[i] = pair_of[j]
            for r in range(3):
                normal[i, r], slot[i, r], weight[i, r] = plane_normal[j, r], slot[i, 0], 0.0
            weight[i, 0] = 1.0
        k += found
    return k


@kernel
def nodes_on_near_planes(rest, U, R_body, p_body, R_sole, p_sole, margin, R, p, x, box, bounds, own, near, plane,
                         plane_normal, plane_offset, pair_of, point, normal, depth, pair, slot, weight):
    """``place_nodes``, ``near_obstacles`` and ``nodes_on_static_planes`` of one sole in one call: returns (the
    number of obstacles near it, of contacts written or −1 when one of them is not a static plane)."""
    place_nodes(rest, U, R_body, p_body, R_sole, p_sole, margin, R, p, x, box)
    count = near_obstacles(box, bounds, own, near)
    return count, nodes_on_static_planes(near, count, plane, plane_normal, plane_offset, pair_of, x, margin, point,
                                         normal, depth, pair, slot, weight)


@kernel
def soles_on_near_planes(rest, U, x, body, body_R, body_p, sole_R, sole_p, margin, R, p, box, moving, moving_body,
                         reach_centre, reach_radius, bounds, own, near, plane, plane_normal, plane_offset, pair_of,
                         point, normal, depth, pair, slot, weight, found):
    """``nodes_on_near_planes`` of every sole s (tuples ``rest``, ``U``, ``x``; on the body ``body[s]`` of
    ``body_R``, ``body_p`` at ``sole_R[s]``, ``sole_p[s]``; rows s of the other per-sole arrays) in one call, once
    the bounds of the moving obstacles ``moving`` are placed (a ball about each: ``reach_centre`` in the frame of
    its body ``moving_body``, radius ``reach_radius``): found[s] = (the number of obstacles near sole s, in
    ``near[s]``; its contacts, or −1 when an obstacle near it is not a static plane); the contacts of the soles met
    by static planes alone written one sole after the other from row 0 of ``point`` … ``weight``."""
    for k in range(moving.shape[0]):
        j, g = moving[k], moving_body[k]
        for r in range(3):
            c = body_R[g, r, 0] * reach_centre[k, 0] + body_R[g, r, 1] * reach_centre[k, 1] \
                + body_R[g, r, 2] * reach_centre[k, 2] + body_p[g, r]
            bounds[j, 0, r], bounds[j, 1, r] = c - reach_radius[k], c + reach_radius[k]
    row = 0
    for s in range(len(rest)):
        g = body[s]
        count, m = nodes_on_near_planes(rest[s], U[s], body_R[g], body_p[g], sole_R[s], sole_p[s], margin, R[s], p[s],
                                        x[s], box, bounds, own[s], near[s], plane, plane_normal, plane_offset,
                                        pair_of[s], point[row:], normal[row:], depth[row:], pair[row:], slot[row:],
                                        weight[row:])
        found[s, 0], found[s, 1] = count, m
        row += max(m, 0)


@kernel
def largest_magnitude(a):
    """max |a_i| of a vector (NaN if one is): a sole's largest node displacement (``SoleContacts._check_strain``)."""
    out = 0.0
    for i in range(a.shape[0]):
        m = abs(a[i])
        if m > out or m != m:
            out = m
    return out


@kernel
def nearest_on_triangle(a, b, c, p, out):
    """The point of triangle (a, b, c) nearest to p: its barycentric weights into ``out`` (3,) (Ericson,
    Real-Time Collision Detection, §5.1.5: the Voronoi regions of the vertices, then the edges, then the face)."""
    ab0, ab1, ab2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    ac0, ac1, ac2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    ap0, ap1, ap2 = p[0] - a[0], p[1] - a[1], p[2] - a[2]
    d1, d2 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2, ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    out[0], out[1], out[2] = 1.0, 0.0, 0.0
    if d1 <= 0.0 and d2 <= 0.0:                                  # vertex a
        return
    bp0, bp1, bp2 = p[0] - b[0], p[1] - b[1], p[2] - b[2]
    d3, d4 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2, ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:                                   # vertex b
        out[0], out[1] = 0.0, 1.0
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:                    # edge ab
        v = d1 / (d1 - d3)
        out[0], out[1] = 1.0 - v, v
        return
    cp0, cp1, cp2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    d5, d6 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2, ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:                                   # vertex c
        out[0], out[2] = 0.0, 1.0
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:                    # edge ac
        w = d2 / (d2 - d6)
        out[0], out[2] = 1.0 - w, w
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:          # edge bc
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        out[0], out[1], out[2] = 0.0, 1.0 - w, w
        return
    denom = 1.0 / (va + vb + vc)                                 # the face
    out[0], out[1], out[2] = va * denom, vb * denom, vc * denom


@kernel
def spheres_on_triangles(x, triangle, center, radius, margin, weight, best, distance, work):
    """For each sphere s: the bottom triangle ``best[s]`` (rows of ``triangle`` (t, 3) into the node positions
    ``x``) holding the point nearest to its centre, that point's ``weight[s]`` (3,) and ``distance[s]`` to the
    centre; best[s] = -1 when it is further than radius + margin. ``work``: (3,) scratch."""
    for s in range(center.shape[0]):
        best[s], distance[s] = -1, radius[s] + margin
        p = center[s]
        for t in range(triangle.shape[0]):
            a, b, c = x[triangle[t, 0]], x[triangle[t, 1]], x[triangle[t, 2]]
            nearest_on_triangle(a, b, c, p, work)
            d2 = 0.0
            for k in range(3):
                q = work[0] * a[k] + work[1] * b[k] + work[2] * c[k] - p[k]
                d2 += q * q
            d = math.sqrt(d2)
            if d < distance[s] and d > 0.0:
                best[s], distance[s] = t, d
                weight[s, 0], weight[s, 1], weight[s, 2] = work[0], work[1], work[2]


@kernel
def points_on_triangles(x, vertices, faces, normals, candidates, margin, nearest, signed, direction, work):
    """For each point x[i]: the nearest of the triangles ``candidates`` (rows of ``faces`` into ``vertices``),
    the point's signed distance ``signed[i]`` to it (negative on the side its ``normals`` row points away from:
    below a terrain) and ``direction[i]``, the unit normal from the surface to the outside at the point (the
    face's normal where the point lies on it); nearest[i] = -1 when that distance exceeds ``margin``.
    ``work``: (3,) scratch."""
    for i in range(x.shape[0]):
        nearest[i], best = -1, math.inf
        p = x[i]
        for t in candidates:
            a, b, c = vertices[faces[t, 0]], vertices[faces[t, 1]], vertices[faces[t, 2]]
            nearest_on_triangle(a, b, c, p, work)
            d2, along = 0.0, 0.0
            for k in range(3):
                q = p[k] - (work[0] * a[k] + work[1] * b[k] + work[2] * c[k])
                d2 += q * q
                along += q * normals[t, k]
            if d2 >= best * best:
                continue
            best = math.sqrt(d2)
            gap = -best if along < 0.0 else best
            nearest[i], signed[i] = t, gap
            for k in range(3):
                q = p[k] - (work[0] * a[k] + work[1] * b[k] + work[2] * c[k])
                direction[i, k] = q / gap if best > 1e-12 else normals[t, k]
        if nearest[i] >= 0 and signed[i] > margin:
            nearest[i] = -1


# ---- the stick-first solve of a group on soles (soles.py, ``SoleContacts.stick_first``) -------------------------

KEPT, PULLING, FAILED = 1, -1, 0     # what ``stick_first`` returns


@njit(cache=True, nogil=True)
def stick_first(u, X, Om, dt, r0, contact_row, index, frames, node, active, G, K_inv, block_start, block_kind,
                block_mu, tol, f, stats, U, F_node):
    """The group's forces if its active contacts stick and the others carry nothing: W_AA f_A = −u_A with
    W = D + δt X Ω Xᵀ, solved by Woodbury,

        W_AA⁻¹ = D_AA⁻¹ − D_AA⁻¹X_A (I + δtΩ X_Aᵀ D_AA⁻¹ X_A)⁻¹ δtΩ X_Aᵀ D_AA⁻¹,

    f_I = 0. Returns PULLING (and clears their ``active`` flags) if an active contact pulls (f_n < 0), KEPT if
    every force lies in its cone and the natural residual of (f, v = W f + u) over every contact is
    ≤ tol · max(‖f‖, residual of f = 0), the criterion of the nonsmooth Newton solver — a solution of the frictional
    problem, then written: the forces into f, stats as ``_stepping_kernels.solve_groups`` (one iteration,
    converged), each sole's node forces F_c = Pᵀ f (sole frame) and displacements U_c = K_c⁻¹ F_c (4.22) into
    ``F_node``, ``U`` —, FAILED otherwise (a contact would slip, or an idle one sink), writing nothing.

    δt X Ω Xᵀ is δt Λ of the group's one multibody (``_group_delassus_kernels.multibody_factors``; rank 6C, C the contact
    bodies, 12 for two feet). D is the soles' compliance, block-diagonal per sole: D_s = F K_c⁻¹[s, s] Fᵀ / δt for
    the contacts at the nodes s of sole s (4.21 as corrected, P a selection), F the contacts' frames F_i = C_i R
    (orthogonal), so D_AA⁻¹ = δt F G_A Fᵀ with G_A = (K_c⁻¹[s_A, s_A])⁻¹ — K_c itself when every candidate node
    is active, in order: no factorisation. Per sole (tuples): ``index`` its contacts (their rows ``contact_row``,
    three each, the group's from r0), ``frames`` (k, 3, 3), ``node`` their nodes, ``active`` (k,) flags, ``G``
    (3a, 3a) for the active ones in order, ``K_inv`` its K_c⁻¹ (3c, 3c); the group's blocks are these contacts.
    D_AA⁻¹ costs one BLAS product on G, v and U_c one on K_c⁻¹: never the (n, n) W."""
    n, q = X.shape
    DX, Du = np.zeros((n, q)), np.zeros(n)            # D_AA⁻¹ X, D_AA⁻¹ u: zero on the idle rows (per sole, on its
                                                      # body's columns of X only)
    for s in range(len(index)):
        F, contacts = frames[s], index[s]
        if not active[s].all():
            F, contacts = F[active[s]], contacts[active[s]]
        cols = _sole_columns(X, u, contact_row, contacts, r0)
        T = np.dot(G[s], _to_sole(F, contact_row, contacts, r0, X, u, cols))
        _to_contacts(F, contact_row, contacts, r0, T, dt, DX, Du, cols)
    A = dt * Om
    XA = np.dot(X, A)
    capacitance = np.eye(q) + np.dot(XA.T, DX)        # A symmetric: (X A)ᵀ = A Xᵀ
    z = np.linalg.solve(capacitance, np.dot(Du, XA))
    fs = np.dot(DX, z) - Du                           # f_A = −W_AA⁻¹ u_A, f_I = 0
    pulling = False
    for s in range(len(index)):
        for i in range(index[s].shape[0]):
            if active[s][i] and fs[contact_row[index[s][i]] - r0] < 0.0:
                active[s][i], pulling = False, True
    if pulling:
        return PULLING
    v = np.empty(n)                                   # v = D f + δt X Ω Xᵀ f + u, D f = F U_c[s] / δt
    forces, displacements = [], []
    for s in range(len(index)):
        Fs = _forces_to_sole(frames[s], contact_row, index[s], r0, fs)
        Us = _compliance(K_inv[s], node[s], Fs)
        forces.append(Fs)
        displacements.append(Us)
        _displacements_to_contacts(frames[s], contact_row, index[s], r0, Us, node[s], 1.0 / dt, v)
    v += np.dot(XA, np.dot(fs, X)) + u
    rho = np.empty((len(block_kind), 3))              # ρ = 1 / W_nn, W_nn = (F_i K_c⁻¹[s_i, s_i] F_iᵀ)_nn/δt + δt Λ_nn
    for s in range(len(index)):
        F, Kc = frames[s], K_inv[s]
        for i in range(F.shape[0]):
            row, d = contact_row[index[s][i]] - r0, 3 * node[s][i]
            w_nn = 0.0
            for x in range(3):
                for y in range(3):
                    w_nn += F[i, 0, x] * Kc[d + x, d + y] * F[i, 0, y]
            w_nn /= dt
            for c in range(q):
                w_nn += XA[row, c] * X[row, c]
            rho[row // 3, 0] = 1.0 / w_nn
    residual, violation = natural_residual(fs, v, block_start, block_kind, block_mu, rho)
    zero = natural_residual(np.zeros(n), u, block_start, block_kind, block_mu, rho)[0]
    if violation > 0.0 or not residual <= tol * max(force_norm(fs), zero):
        return FAILED
    f[:] = fs
    stats[0], stats[1], stats[2], stats[3], stats[4], stats[5], stats[6] = 1.0, residual, 0.0, 1.0, math.nan, 0.0, zero
    for s in range(len(index)):
        U[s][:] = displacements[s]
        F_node[s][:] = 0.0
        for i in range(node[s].shape[0]):
            for x in range(3):
                F_node[s][node[s][i], x] = forces[s][3 * i + x]
    return KEPT


@njit(cache=True, nogil=True)
def factored_stick_first(lo, hi, R_m, group_contacts, side, X_contact, contact_row, closures, closure_side, closure_X,
                         closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union, method,
                         u, dt, r0, index, frames, node, active, G, K_inv, block_start, block_kind, block_mu, tol, f,
                         stats, U, F_node):
    """The factors X, Ω of δt Λ of the group's one multibody (``_group_delassus_kernels.multibody_factors``, its
    arguments from ``lo`` to ``method``), then the first ``stick_first`` (its arguments from ``u``, ``contact_row``
    the same), in one call: returns (stick_first's code, the Delassus method, X, Ω), X and Ω for the solves that
    follow a PULLING one."""
    method, X, Om = multibody_factors(lo, hi, R_m, group_contacts, side, X_contact, contact_row, closures,
                                      closure_side, closure_X, closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y,
                                      F, A, Od, S6, path, mark, union, method, u.shape[0], r0)
    code = stick_first(u, X, Om, dt, r0, contact_row, index, frames, node, active, G, K_inv, block_start, block_kind,
                       block_mu, tol, f, stats, U, F_node)
    return code, method, X, Om


@njit(cache=True, nogil=True)
def _sole_columns(X, u, contact_row, index, r0):
    """The columns of [X u] not zero on the rows of a sole's contacts ``index`` (q: u's): the six of its body in X
    (a sole's contacts act on one body), and u."""
    q = X.shape[1]
    cols = np.empty(q + 1, np.int64)
    m = 0
    for c in range(q + 1):
        B = X[:, c] if c < q else u
        for i in range(index.shape[0]):
            r = contact_row[index[i]] - r0
            if B[r] != 0.0 or B[r + 1] != 0.0 or B[r + 2] != 0.0:
                cols[m] = c
                m += 1
                break
    return cols[:m]


@njit(cache=True, nogil=True)
def _to_sole(F, contact_row, index, r0, X, u, cols):
    """Fᵀ [X u][rows, cols] (3k, len(cols)): the rows of a sole's k contacts ``index`` (three from
    contact_row[index[i]] − r0 each) turned from their frames F (k, 3, 3) to the sole frame."""
    k, q = F.shape[0], X.shape[1]
    T = np.empty((3 * k, cols.shape[0]))
    for j in range(cols.shape[0]):
        B = X[:, cols[j]] if cols[j] < q else u
        for i in range(k):
            r = contact_row[index[i]] - r0
            for x in range(3):
                T[3 * i + x, j] = F[i, 0, x] * B[r] + F[i, 1, x] * B[r + 1] + F[i, 2, x] * B[r + 2]
    return T


@njit(cache=True, nogil=True)
def _to_contacts(F, contact_row, index, r0, T, scale, DX, Du, cols):
    """[DX Du][rows, cols] = scale · F T: ``_to_sole``'s inverse, T (3k, len(cols)) in the sole frame."""
    q = DX.shape[1]
    for i in range(F.shape[0]):
        r = contact_row[index[i]] - r0
        for a in range(3):
            for j in range(cols.shape[0]):
                value = scale * (F[i, a, 0] * T[3 * i, j] + F[i, a, 1] * T[3 * i + 1, j] + F[i, a, 2] * T[3 * i + 2, j])
                if cols[j] < q:
                    DX[r + a, cols[j]] = value
                else:
                    Du[r + a] = value


@njit(cache=True, nogil=True)
def _forces_to_sole(F, contact_row, index, r0, f):
    """Fᵀ f (3k,): the forces f on the rows of a sole's k contacts ``index`` in the sole frame."""
    out = np.empty(3 * F.shape[0])
    for i in range(F.shape[0]):
        r = contact_row[index[i]] - r0
        for x in range(3):
            out[3 * i + x] = F[i, 0, x] * f[r] + F[i, 1, x] * f[r + 1] + F[i, 2, x] * f[r + 2]
    return out


@njit(cache=True, nogil=True)
def _displacements_to_contacts(F, contact_row, index, r0, U, node, scale, v):
    """v[rows] = scale · F U_c[node]: a sole's node displacements U (3c,) at its contacts ``index`` (nodes
    ``node``), in their frames."""
    for i in range(F.shape[0]):
        r, d = contact_row[index[i]] - r0, 3 * node[i]
        for a in range(3):
            v[r + a] = scale * (F[i, a, 0] * U[d] + F[i, a, 1] * U[d + 1] + F[i, a, 2] * U[d + 2])


@njit(cache=True, nogil=True)
def _compliance(K_inv, node, F):
    """U_c = K_c⁻¹ Pᵀ F (3c,) for the forces F (3k,) at the nodes ``node`` (one BLAS product when they are every
    node in order; else the columns of those nodes, read as rows: K_c⁻¹ is symmetric)."""
    ordered = 3 * node.shape[0] == K_inv.shape[0]
    for i in range(node.shape[0]):
        ordered = ordered and node[i] == i
    if ordered:
        return np.dot(K_inv, F)
    U = np.zeros(K_inv.shape[0])
    for i in range(node.shape[0]):
        for x in range(3):
            U += F[3 * i + x] * K_inv[3 * node[i] + x]
    return U
