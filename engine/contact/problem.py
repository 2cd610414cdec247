"""Constraint blocks of a collision group and their map G onto body velocities (seed 000 eqs. 3.37–3.45).

Each block (a frictional contact: 3 rows n, t1, t2; a loop closure: 3 or 5 bilateral rows) acts on one or two
bodies. For body s the block's rows see the body's spatial velocity V_s = (v_o, ω) — velocity of the body origin
and angular velocity, world axes — through a (rows, 6) map X; for a point p with frame C (rows n, t1, t2),
``X = ± C [1, −[p − o_s]×]`` (+ for body a, − for body b, so the rows measure a's velocity relative to b).
``G`` stacks the maps (rows × 6·bodies): with Ω_st = J_s M⁻¹ J_tᵀ,

    Λ = G Ω Gᵀ      (thesis eq. 3.37, Λ_kl = Σ_s Σ_t X_ks Ω_st X_ltᵀ, eq. 3.45)
    u = G V         (relative velocities of the constraint rows)
    Gᵀ f            (the wrenches, at the body origins in world axes, that the forces f exert)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.dynamics._kernels.algebra import cross, inline, kernel
from engine.spatial import skew


@dataclass
class Block:
    """A constraint block: ``rows`` rows acting on one or two (multibody, body) through (rows, 6) maps X.
    ``bias`` is added to the free velocity (target velocities, drift correction)."""

    rows: int
    bodies: list = field(default_factory=list)   # [(multibody, body, X (rows, 6))]
    bias: np.ndarray | None = None
    mu: float = 0.0
    bilateral: bool = False


def point_map(r):
    """[1, −[r]×]: the velocity of the material point at offset r from the origin, from (v_o, ω)."""
    return np.hstack([np.eye(3), -skew(r)])


def contact_block(C, point, side_a, side_b, target, mu) -> Block:
    """A frictional contact between ``side_a = (multibody, body, origin)`` and ``side_b`` (None: static or a
    fixed base) in frame ``C`` (rows n, t1, t2; n from b to a) at ``point``; its normal velocity must reach
    ``target`` (u_n⁺ ≥ target)."""
    block = Block(rows=3, bias=np.array([-target, 0.0, 0.0]), mu=mu)
    for side, sign in ((side_a, 1.0), (side_b, -1.0)):
        if side is not None:
            m, b, origin = side
            block.bodies.append((m, b, sign * C @ point_map(point - origin)))
    return block


def closure_blocks(multibody, closures, base, R_world, p_world, dt) -> list:
    """Bilateral blocks of a multibody's loop closures (seed 003 §5.A) at body placements (R_world, p_world);
    ``base`` = (R, p) is the world placement of the multibody's base frame (body −1).

    Point closure: the anchors coincide, rows = world axes, u = v_a(x_a) − v_b(x_b), corrected so that the
    drift e = x_a − x_b is removed over one step (bias e/δt). Hinge: plus the angular rows along two axes e1, e2
    orthogonal to the anchor's z axis, (ω_a − ω_b)·e_k, correcting the misalignment (z_b × z_a)·e_k / δt.
    """
    blocks = []
    for c in closures:
        ends = []
        for body, R, p in ((c.body_a, c.R_a, c.p_a), (c.body_b, c.R_b, c.p_b)):
            BR, Bp = base if body < 0 else (R_world[body], p_world[body])
            ends.append((body, BR @ R, BR @ p + Bp, Bp))
        (ba, Ra, xa, oa), (bb, Rb, xb, ob) = ends
        maps_a, maps_b = [point_map(xa - oa)], [point_map(xb - ob)]
        bias = [(xa - xb) / dt]
        if c.kind == "hinge":
            axes = Ra[:, :2].T                      # e1, e2 ⟂ z_a
            maps_a.append(np.hstack([np.zeros((2, 3)), axes]))
            maps_b.append(np.hstack([np.zeros((2, 3)), axes]))
            bias.append(axes @ np.cross(Rb[:, 2], Ra[:, 2]) / dt)
        X_a, X_b = np.vstack(maps_a), np.vstack(maps_b)
        block = Block(rows=X_a.shape[0], bias=np.concatenate(bias), bilateral=True)
        if ba >= 0:
            block.bodies.append((multibody, ba, X_a))
        if bb >= 0:
            block.bodies.append((multibody, bb, -X_b))
        blocks.append(block)
    return blocks


@kernel
def closure_rows(closure_mb, closure_body, closure_hinge, closure_R, closure_p, offset, base_R, base_p, body_R,
                 body_p, V_free, dt, closure_side, closure_X, closure_u, closure_nrows):
    """Point closure: rows u = v_a(x_a) − v_b(x_b) on the world axes, bias e/δt with e = x_a − x_b; hinge: plus
    (ω_a − ω_b)·e_k for the two axes e_k ⟂ z_a, bias (z_b × z_a)·e_k/δt (seed 003 §5.A, as
    ``problem.closure_blocks``).  Anchors (R, p) are in their body frames; body −1 is the multibody's base
    frame, which does not move (its side is static)."""
    static = offset[offset.shape[0] - 1]
    for c in range(closure_mb.shape[0]):
        m = closure_mb[c]
        rows = 5 if closure_hinge[c] else 3
        closure_nrows[c] = rows
        for s in range(2):
            for i in range(6):
                for j in range(6):
                    closure_X[c, s, i, j] = 0.0
        ends = (_closure_end(c, 0, m, closure_body, closure_R, closure_p, offset, static, base_R, base_p, body_R,
                             body_p, closure_side, closure_X),
                _closure_end(c, 1, m, closure_body, closure_R, closure_p, offset, static, base_R, base_p, body_R,
                             body_p, closure_side, closure_X))
        (xa, za, e1, e2), (xb, zb, _, _) = ends
        for i in range(3):
            closure_u[c, i] = (xa[i] - xb[i]) / dt
        if rows == 5:
            zz = cross(zb, za)
            for k in range(2):
                e = e1 if k == 0 else e2
                for s in range(2):
                    sign = closure_X[c, s, 0, 0]       # +1 (a), −1 (b) or 0 (the base)
                    for j in range(3):
                        closure_X[c, s, 3 + k, 3 + j] = sign * e[j]
                closure_u[c, 3 + k] = (zz[0] * e[0] + zz[1] * e[1] + zz[2] * e[2]) / dt
        for i in range(rows):
            for s in range(2):
                g = closure_side[c, s]
                for j in range(6):
                    closure_u[c, i] += closure_X[c, s, i, j] * V_free[g, j]


@inline
def _closure_end(c, s, m, closure_body, closure_R, closure_p, offset, static, base_R, base_p, body_R, body_p,
                 closure_side, closure_X):
    """Side s of closure c: its global body, the map rows ±[1, −[x − o]×] (zero on the base), and the world
    anchor x = B_R p + B_p with the columns (e1, e2, z) of B_R R."""
    b = closure_body[c, s]
    g = offset[m] + b if b >= 0 else static
    closure_side[c, s] = g
    BR = base_R[m] if b < 0 else body_R[g]
    Bp = base_p[m] if b < 0 else body_p[g]
    R, p = closure_R[c, s], closure_p[c, s]
    x = (BR[0, 0] * p[0] + BR[0, 1] * p[1] + BR[0, 2] * p[2] + Bp[0],
         BR[1, 0] * p[0] + BR[1, 1] * p[1] + BR[1, 2] * p[2] + Bp[1],
         BR[2, 0] * p[0] + BR[2, 1] * p[1] + BR[2, 2] * p[2] + Bp[2])
    e1 = _column(BR, R, 0)
    e2 = _column(BR, R, 1)
    z = _column(BR, R, 2)
    sign = 0.0 if b < 0 else (1.0 if s == 0 else -1.0)
    r = (x[0] - Bp[0], x[1] - Bp[1], x[2] - Bp[2])
    for i in range(3):                          # row i of [1, −[r]×] is (e_i, r × e_i)
        closure_X[c, s, i, i] = sign
    closure_X[c, s, 0, 4], closure_X[c, s, 0, 5] = sign * r[2], -sign * r[1]
    closure_X[c, s, 1, 3], closure_X[c, s, 1, 5] = -sign * r[2], sign * r[0]
    closure_X[c, s, 2, 3], closure_X[c, s, 2, 4] = sign * r[1], -sign * r[0]
    return x, z, e1, e2


@inline
def _column(BR, R, j):
    """Column j of BR R."""
    return (BR[0, 0] * R[0, j] + BR[0, 1] * R[1, j] + BR[0, 2] * R[2, j],
            BR[1, 0] * R[0, j] + BR[1, 1] * R[1, j] + BR[1, 2] * R[2, j],
            BR[2, 0] * R[0, j] + BR[2, 1] * R[1, j] + BR[2, 2] * R[2, j])

def joint_row_maps(model):
    """The joints' dry-friction rows of a model: per dof k with ``dof_friction[k] > 0`` on a joint that is not free,
    (dof, child body, parent body (−1: the base), s (6,), bound b = dof_friction[k]) with s the row k of S⁺, the
    pseudo-inverse of the joint's motion subspace S (6, nv_j) in the child's frame: q̇_k = s · V_rel for the
    velocity V_rel = S q̇_j of the child relative to its parent (``joint_rows``)."""
    from engine.model.model import JointType
    rows = []
    for j in range(model.nbodies):
        if int(model.joint_type[j]) == JointType.FREE:
            continue
        k0 = int(model.joint_idx_v[j])
        dofs = range(k0, k0 + int(model.joint_nv[j]))
        S_plus = np.linalg.pinv(np.asarray(model.dof_S[k0:dofs.stop], dtype=float).T)
        rows += [(k, j, int(model.body_parent[j]), S_plus[k - k0], float(model.dof_friction[k]))
                 for k in dofs if model.dof_friction[k] > 0.0]
    return rows


@kernel
def joint_rows(joint_mb, joint_body, joint_s, offset, body_R, body_p, V_free, side, X, u, nrows):
    """One row per joint dof with dry friction: its velocity q̇_k from the spatial velocities (v_o, ω) of the child
    c and its parent p (world axes, body origins). The child's velocity relative to the parent, at the child's
    origin in world axes, is V_c − (v_p + ω_p × d, ω_p) with d = o_c − o_p, and q̇_k = s_w · that with
    s_w = (R_c s_v, R_c s_ω) (``joint_row_maps``), so the maps are

        X_c = (s_v^w, s_ω^w),   X_p = −(s_v^w, d × s_v^w + s_ω^w)     (zero for the base, which is static),

    and the row's force is the joint's generalized force (Gᵀ f = e_k f). ``u`` = q̇_k at v_free."""
    static = offset[offset.shape[0] - 1]
    for j in range(joint_mb.shape[0]):
        m, c, p = joint_mb[j], joint_body[j, 0], joint_body[j, 1]
        gc = offset[m] + c
        gp = offset[m] + p if p >= 0 else static
        side[j, 0], side[j, 1], nrows[j] = gc, gp, 1
        for s in range(2):
            for k in range(6):
                X[j, s, 0, k] = 0.0
        R = body_R[gc]
        for i in range(3):
            X[j, 0, 0, i] = R[i, 0] * joint_s[j, 0] + R[i, 1] * joint_s[j, 1] + R[i, 2] * joint_s[j, 2]
            X[j, 0, 0, 3 + i] = R[i, 0] * joint_s[j, 3] + R[i, 1] * joint_s[j, 4] + R[i, 2] * joint_s[j, 5]
        if p >= 0:
            sv = (X[j, 0, 0, 0], X[j, 0, 0, 1], X[j, 0, 0, 2])
            d = (body_p[gc, 0] - body_p[gp, 0], body_p[gc, 1] - body_p[gp, 1], body_p[gc, 2] - body_p[gp, 2])
            ds = cross(d, sv)
            for i in range(3):
                X[j, 1, 0, i] = -sv[i]
                X[j, 1, 0, 3 + i] = -(ds[i] + X[j, 0, 0, 3 + i])
        u[j, 0] = 0.0
        for s in range(2):
            for k in range(6):
                u[j, 0] += X[j, s, 0, k] * V_free[side[j, s], k]


def joint_limit_maps(model):
    """The joints' limit rows of a model: per revolute or prismatic joint with a finite range, (dof, q index, child
    body, parent body, s (6,), lower, upper), s as in ``joint_row_maps``."""
    from engine.model.model import JointType
    rows = []
    for j in range(model.nbodies):
        kq, k = int(model.joint_idx_q[j]), int(model.joint_idx_v[j])
        if (int(model.joint_type[j]) in (JointType.REVOLUTE, JointType.PRISMATIC)
                and np.isfinite(model.q_lower[kq]) and np.isfinite(model.q_upper[kq])):
            S = np.asarray(model.dof_S[k], dtype=float)
            rows.append((k, kq, j, int(model.body_parent[j]), S / (S @ S), float(model.q_lower[kq]),
                         float(model.q_upper[kq])))
    return rows


@kernel
def limit_rows(q, lower, upper, dt, erp, slop, margin, X, u, nrows):
    """Joint limits as Signorini rows, on the maps of ``joint_rows`` (q̇ of the joint, u = q̇ at v_free): the nearer
    bound decides the row's direction, +q̇ at the lower one and −q̇ at the upper one, so that f ≥ 0 pushes the joint
    back into its range; the gap g = q − lower (or upper − q) gives the target as a contact's normal gap does
    (``_stepping_kernels.normal_target`` without restitution: −g/δt while apart, erp (−g − slop)/δt beyond). A
    row is active (``nrows`` 1) when g < ``margin`` or the free velocity would cross the bound within the step."""
    for j in range(q.shape[0]):
        below, above = q[j] - lower[j], upper[j] - q[j]
        sign, gap = (1.0, below) if below <= above else (-1.0, above)
        qdot = u[j, 0]
        if gap >= margin and gap + dt * sign * qdot > 0.0:
            nrows[j] = 0
            continue
        nrows[j] = 1
        for s in range(2):
            for k in range(6):
                X[j, s, 0, k] *= sign
        target = -gap / dt if gap > 0.0 else erp * max(-gap - slop, 0.0) / dt
        u[j, 0] = sign * qdot - target


@kernel
def table_rows(n_closures, limit_start, mb, body, hinge, R, p, offset, base_R, base_p, body_R, body_p, V_free,
               joint_body, joint_s, limit_q, lower, upper, dt, erp, slop, margin, side, X, u, nrows, active,
               active_mb):
    """The rows of ``closures.Closures``' table in one call: its loop closures (entries < n_closures,
    ``closure_rows``), the joints' friction and limit rows (``joint_rows``; from ``limit_start`` on, the limits,
    ``limit_rows`` at the joints' positions ``limit_q``), then each entry's activity (``nrows`` > 0) and its
    multibody where active (−1 elsewhere)."""
    c, lim = n_closures, limit_start
    if c:
        closure_rows(mb[:c], body, hinge, R, p, offset, base_R, base_p, body_R, body_p, V_free, dt, side[:c], X[:c],
                     u[:c], nrows[:c])
    if mb.shape[0] > c:
        joint_rows(mb[c:], joint_body, joint_s, offset, body_R, body_p, V_free, side[c:], X[c:], u[c:], nrows[c:])
    if limit_q.shape[0]:
        limit_rows(limit_q, lower, upper, dt, erp, slop, margin, X[lim:], u[lim:], nrows[lim:])
    for i in range(mb.shape[0]):
        active[i] = nrows[i] > 0
        active_mb[i] = mb[i] if active[i] else -1


def project_closures(run, closures, m, iterations=3, tol=1e-12):
    """Post-step position projection of multibody m (``run``, an ``engine.simulation.MultiBodyRun``) onto its
    loop-closure manifold (Gauss–Newton): q ← q ⊕ (−J_c⁺ e), with e the closure errors (anchor gap, hinge
    misalignment) and J_c (rows, nv) their Jacobian, until ‖e‖ < ``tol``. ``closures``: the stage's
    ``Closures`` arrays; with δt = 1 and zero velocities the rows' free velocity is the error itself. The
    velocity-level rows keep the closure to O(δt²) per step; this removes the residual drift so closed chains
    hold to machine precision over long runs."""
    from engine.dynamics import frame_jacobian
    from engine.dynamics.integrators import integrate
    model, data, c, b = run.model, run.data, closures, run.bodies
    own = slice(int(c.start[m]), int(c.start[m + 1]))
    R6 = np.kron(np.eye(2), run.instance.R)
    for _ in range(iterations):
        run.refresh()
        closure_rows(c.mb[own], c.body[own], c.hinge[own], c.R[own], c.p[own], b.offset, c.base_R, c.base_p, b.R, b.p,
                     c.still, 1.0, c.side[own], c.X[own], c.u[own], c.rows[own])
        e = np.concatenate([c.u[k, :c.rows[k]] for k in range(own.start, own.stop)])
        if np.abs(e).max() < tol:
            return
        J = np.zeros((len(e), model.nv))
        row = 0
        for k in range(own.start, own.stop):
            for s in range(2):
                if c.body[k, s] >= 0:
                    frame = model.frame_index(model.joint_name[c.body[k, s]])
                    J[row:row + c.rows[k]] += c.X[k, s, :c.rows[k]] @ R6 @ frame_jacobian(model, data, run.q, frame,
                                                                                          "local_world_aligned")
            row += c.rows[k]
        run.q[:] = integrate(model, run.q, -np.linalg.lstsq(J, e, rcond=1e-10)[0])
