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


def constraint_map(blocks, body_index) -> np.ndarray:
    """G (rows, 6 · bodies): the blocks' maps placed at the columns of their bodies (``body_index`` maps
    (multibody, body) to a position)."""
    G = np.zeros((sum(b.rows for b in blocks), 6 * len(body_index)))
    row = 0
    for block in blocks:
        for m, b, X in block.bodies:
            k = body_index[(m, b)]
            G[row:row + block.rows, 6 * k:6 * k + 6] += X
        row += block.rows
    return G


def project_closures(run, integrate, iterations=3, tol=1e-12):
    """Post-step position projection of a multibody onto its loop-closure manifold (Gauss–Newton):
    q ← q ⊕ (−J_c⁺ e), with e the closure errors (anchor gap, hinge misalignment) and J_c (rows, nv) their
    Jacobian, until ‖e‖ < ``tol``. The velocity-level rows keep the closure to O(δt²) per step; this removes
    the residual drift so closed chains hold to machine precision over long runs."""
    from engine.dynamics import forward_kinematics, frame_jacobian
    model, data = run.model, run.data
    R6 = np.kron(np.eye(2), run.instance.R)
    for _ in range(iterations):
        forward_kinematics(model, data, run.q)
        blocks = closure_blocks(0, model.closures, (run.instance.R, run.instance.p), *run.world_placements(), 1.0)
        e = np.concatenate([b.bias for b in blocks])            # with dt = 1 the bias is the error itself
        if np.abs(e).max() < tol:
            return
        J = np.zeros((len(e), model.nv))
        row = 0
        for b in blocks:
            for _, body, X in b.bodies:
                frame = model.frame_index(model.joint_name[body])
                J[row:row + b.rows] += X @ R6 @ frame_jacobian(model, data, run.q, frame, "local_world_aligned")
            row += b.rows
        run.q[:] = integrate(model, run.q, -np.linalg.lstsq(J, e, rcond=1e-10)[0])
