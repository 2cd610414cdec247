"""One collision group's constraint problem: v = W f + v_free (seed 000 eqs. 3.17–3.27).

Each constraint block (a frictional contact: 3 rows n, t1, t2; a loop closure: 3 or 5 bilateral rows) acts on one
or two bodies. For body s the block's rows see the body's spatial velocity V_s = (v_o, ω) — linear velocity of
the body origin and angular velocity, world axes — through a (rows, 6) map X; for a contact point p in frame C
(rows n, t1, t2), ``X = ± C [1, −[p − o_s]×]`` (+ for body a, − for body b, so v is the velocity of a relative
to b). With Ω_st = J_s M⁻¹ J_tᵀ the 6×6 blocks between contact bodies (``engine.contact.delassus``):

    Λ_kl = Σ_s Σ_t X_ks Ω_st X_ltᵀ          (thesis eq. 3.37 / 3.45)
    W = δt Λ,  v_free = Σ_s X_ks V_s(v + δt a_free)      (eq. 3.26)

All in the world frame. ``G`` stacks the X maps (rows × 6·bodies) so that W = δt G Ω Gᵀ and v_free = G V_free.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.spatial import skew


@dataclass
class Block:
    """A constraint block: ``rows`` rows acting on up to two (multibody, body) with their (rows, 6) maps."""

    rows: int
    bodies: list = field(default_factory=list)   # [(multibody, body, X (rows, 6))]
    bias: np.ndarray | None = None               # added to v_free (restitution, penetration, closure drift)
    mu: float = 0.0
    bilateral: bool = False


def contact_block(C, point, side_a, side_b, bias):
    """A frictional contact between ``side_a = (multibody, body, origin)`` and ``side_b`` (either may be None
    for a static body), frame ``C`` (rows n, t1, t2, n from b to a), at ``point`` (world)."""
    block = Block(rows=3, bias=bias)
    for side, sign in ((side_a, 1.0), (side_b, -1.0)):
        if side is not None:
            m, b, origin = side
            block.bodies.append((m, b, sign * C @ point_map(point - origin)))
    return block


def point_map(r):
    """[1, −[r]×]: the velocity of the material point at offset r from the origin, from (v_o, ω)."""
    return np.hstack([np.eye(3), -skew(r)])


def assemble(blocks, body_index, omega, velocities, dt):
    """W (n, n) and v_free (n,) of a group.

    ``body_index`` maps (multibody, body) to its position k among the group's contact bodies, ``omega``
    (nb, nb, 6, 6) the Ω blocks (zero between different multibodies), ``velocities`` (nb, 6) the free spatial
    velocities V_s (world axes, at body origins).
    """
    n = sum(b.rows for b in blocks)
    nb = len(body_index)
    G = np.zeros((n, 6 * nb))
    row = 0
    for block in blocks:
        for m, b, X in block.bodies:
            k = body_index[(m, b)]
            G[row:row + block.rows, 6 * k:6 * k + 6] += X
        row += block.rows
    Omega = omega.transpose(0, 2, 1, 3).reshape(6 * nb, 6 * nb)
    W = dt * (G @ Omega @ G.T)
    v_free = G @ velocities.reshape(-1)
    bias = np.concatenate([b.bias if b.bias is not None else np.zeros(b.rows) for b in blocks]) if blocks else 0.0
    return 0.5 * (W + W.T), v_free + bias, G
