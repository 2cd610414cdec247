"""The hybrid (rigid + deformation) contact model of a sole: what the contact stage adds per collision group
(seed 000 §3.8–3.9, thesis §4.3.4 and §4.5, eqs. 4.15–4.32).

A contact point p_i lies on a sole triangle of candidate nodes (n₁, n₂, n₃); its force is spread on them with
weights d_j (Σ d_j = 1, p_i = Σ d_j n_j, eqs. 4.23–4.25), the rows of the distribution matrix P being
P_i = [d₁I₃ d₂I₃ d₃I₃] at the triangle's slots (4.27–4.29). The node forces are F_c = Pᵀ f, the contact nodes move
by U_c = K_c⁻¹ F_c (4.22), the point by P U_c, and one explicit Euler step of that deformation (4.17) turns the
rigid model v = Λ f + v_free (4.15) into

    v = (Λ + P K_c⁻¹ Pᵀ / δt) f + (v_free − P U_cᵗ / δt) = W f + V_free        (4.21, 4.32)

an additive block on W and a shift of the free velocity, solved by the unchanged Gauss–Seidel/Newton or Lemke
solvers. ``compliance`` returns both; ``node_forces`` gives F_c = Pᵀ f after the solve.

Where the thesis's printed equations are corrected (see also shared/seeds/000_amelif.md §3.8–3.9):

* 4.21, 4.30 and 4.32 print U̇_cᵗ/δt in V_free; 4.17 (U̇_c = (U_c^{t+δt} − U_cᵗ)/δt) gives U_cᵗ/δt.
* 4.17 prints U_sᵗ (the surface nodes) for the previous displacement of the *contact* nodes U_cᵗ.
* 4.23 prints f_p = Σ d_j f_nj and 4.26 f_p = P_iᵀ F_n; consistent with 4.27–4.31 is the transpose,
  F_n = P_iᵀ f_p (f_nj = d_j f_p, so Σ_j f_nj = f_p and the point moves by P U).
* 4.25 finds d by inverting the 3 × 3 matrix of node coordinates: that is the barycentric solution only when p
  lies in the triangle's plane and the plane misses the origin (the thesis's condition, "coordinates not zero",
  is not the right one). Here d are the true barycentric coordinates of p's projection on the plane.

A sole that is body b of a contact (rather than a) keeps the same W block; its V_free shift changes sign.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Weights(NamedTuple):
    """The distribution P of k contact points: ``slot`` (k, 3) contact-node slots, ``d`` (k, 3) weights."""

    slot: np.ndarray
    d: np.ndarray


def barycentric(corners, point) -> np.ndarray:
    """(k, 3) barycentric coordinates of the projection of ``point`` (k, 3) on the plane of each triangle
    ``corners`` (k, 3, 3): p' = Σ d_j n_j with Σ d_j = 1 (eq. 4.24, solved by least squares in the plane)."""
    a = corners[:, 0]
    e1, e2, r = corners[:, 1] - a, corners[:, 2] - a, point - a
    g11, g12, g22 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
    r1, r2 = (e1 * r).sum(1), (e2 * r).sum(1)
    det = g11 * g22 - g12 * g12
    beta, gamma = (g22 * r1 - g12 * r2) / det, (g11 * r2 - g12 * r1) / det
    return np.column_stack([1.0 - beta - gamma, beta, gamma])


def contact_weights(sole, triangle, point, U_c=None, tol: float = 1e-6) -> Weights:
    """Weights of contact points ``point`` (k, 3, sole frame) on the sole's contact triangles ``triangle`` (k,)
    (indices into ``sole.contact_triangle``), the nodes displaced by ``U_c`` (3c,) when given. A point may lie
    outside its triangle by ``tol`` (relative: a weight ≥ −tol), its weights then clipped; further is a
    ``ValueError``."""
    slot = sole.contact_triangle[np.asarray(triangle)]
    nodes = sole.mesh.node_position[sole.contact_node]
    if U_c is not None:
        nodes = nodes + np.reshape(U_c, (-1, 3))
    d = barycentric(nodes[slot], np.asarray(point, dtype=np.float64).reshape(-1, 3))
    outside = np.flatnonzero(d.min(axis=1) < -tol)
    if len(outside):
        i = outside[0]
        raise ValueError(f"contact point {i} {np.asarray(point)[i].tolist()} lies outside its sole triangle "
                         f"{int(np.asarray(triangle)[i])} (barycentric weights {d[i].tolist()})")
    d = np.clip(d, 0.0, None)
    return Weights(slot, d / d.sum(axis=1, keepdims=True))


def distribution_matrix(weights: Weights, n_slots: int) -> np.ndarray:
    """The dense (3k, 3·n_slots) matrix P of eqs. 4.27–4.29 (for checks; ``compliance`` never forms it)."""
    k = len(weights.slot)
    P = np.zeros((k, 3, n_slots, 3))
    for j in range(3):
        P[np.arange(k), :, weights.slot[:, j], :] += weights.d[:, j, None, None] * np.eye(3)
    return P.reshape(3 * k, 3 * n_slots)


def compliance(sole, weights: Weights, dt: float, U_c, frames=None) -> tuple[np.ndarray, np.ndarray]:
    """(P K_c⁻¹ Pᵀ / δt, −P U_cᵗ / δt): the block added to the group's W and the shift of its free velocity
    (eq. 4.32), k contact points → (3k, 3k), (3k,). ``U_c`` (3c,) is the contact nodes' displacement U_cᵗ.
    With ``frames`` (k, 3, 3), each point's rows (n, t₁, t₂) in the sole frame, both are in the contact
    frames: C P K_c⁻¹ Pᵀ Cᵀ / δt and −C P U_cᵗ / δt."""
    slot, d = weights.slot, weights.d
    k, c = len(slot), len(sole.contact_node)
    pair = (slot[:, :, None, None] * c + slot[None, None, :, :]).ravel()          # node pairs (s_ia, s_lb)
    blocks = sole.compliance_blocks.reshape(-1, 3, 3).take(pair, axis=0).reshape(k, 3, k, 3, 3, 3)
    W = np.einsum("lb,ilbxy->ilxy", d, np.einsum("ia,ialbxy->ilbxy", d, blocks))   # Σ_ab d_ia d_lb K_c⁻¹[s_ia, s_lb]
    moved = np.einsum("ia,iax->ix", d, np.reshape(U_c, (-1, 3))[slot])              # P U_cᵗ
    if frames is not None:
        W = frames[:, None] @ W @ np.swapaxes(frames, 1, 2)[None]                    # C_i W_il C_lᵀ
        moved = (frames @ moved[:, :, None])[:, :, 0]
    block = W.transpose(0, 2, 1, 3)
    return block.reshape(3 * k, 3 * k) / dt, -moved.ravel() / dt


def node_forces(weights: Weights, f, n_slots: int, frames=None) -> np.ndarray:
    """F_c = Pᵀ f (3·n_slots,): the contact forces ``f`` (3k,; in the contact frames when ``frames`` is given)
    spread on the contact nodes (f_nj = d_j f_p), to update U_c = K_c⁻¹ F_c (4.22)."""
    f = np.reshape(f, (-1, 3))
    if frames is not None:
        f = np.einsum("ipx,ip->ix", frames, f)
    F = np.zeros((n_slots, 3))
    np.add.at(F, weights.slot, weights.d[:, :, None] * f[:, None, :])
    return F.ravel()
