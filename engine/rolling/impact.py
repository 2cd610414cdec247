"""Impacts of wheels on the ground (seed 001 §2.7; Mauny 2018 §3.10–3.12, Remark 3.6).

ℂ_I (3 rows per contact, its frame (N, T, B): normal, rolling direction, lateral) maps the generalized velocity V
to the contact points' velocities γ. The impulsive dynamics (3.17): 𝕄(V₊ − V₋) = ℂ_Iᵀ Λ, ℂ_I V₊ = −E ℂ_I V₋,
E = diag(ε_N, ε_T, ε_T) per contact (Newton restitution, 3.12–3.13).

    complete (any E):  Λ = −(ℂ_I 𝕄⁻¹ ℂ_Iᵀ)⁻¹ (I + E) ℂ_I V₋                        (3.23)
                       V₊ = V₋ + 𝕄⁻¹ ℂ_Iᵀ Λ                                          (3.24a)
    reduced (E = 0):   V₊ = H₊ (H₊ᵀ 𝕄 H₊)⁻¹ H₊ᵀ 𝕄 V₋      (3.28a with V₋ = H₋ V_r₋, V₊ = H₊ V_r₊; ℂ₊ H₊ = 0)
                       Λ = (ℂ_I ℂ_Iᵀ)⁻¹ ℂ_I 𝕄 (V₊ − V₋)                              (3.30)

Predict / correct (Remark 3.6, Test 4): predict that every contact persists; while some Λ_N < 0, drop the contact
with the most negative one and solve again. Each prediction is returned, the rejected ones too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIGN_TOL = 1e-12      # Λ_N ≥ −SIGN_TOL (1 + |Λ|) counts as non-negative


@dataclass(frozen=True)
class Impact:
    """One solve of the impact law: the ``contacts`` kept (wheel indices), V₊, and Λ (per contact (N, T, B),
    N s); ``accepted`` when every Λ_N ≥ 0."""

    contacts: tuple
    v: np.ndarray
    impulse: np.ndarray
    accepted: bool


def contact_frame(N, a):
    """(3, 3) rows N, T = a × N/|a × N| (the rolling direction), B = N × T: a contact's frame in the base axes."""
    T = np.cross(a, N)
    T /= np.linalg.norm(T)
    return np.array([N, T, np.cross(N, T)])


def complete_impact(M, C, E, v):
    """(V₊, Λ) by the complete method for any restitution E (3.23/3.24)."""
    Minv_CT = np.linalg.solve(M, C.T)
    impulse = -np.linalg.solve(C @ Minv_CT, (np.eye(len(C)) + E) @ (C @ v))
    return v + Minv_CT @ impulse, impulse


def plastic_impact(M, C, v):
    """(V₊, Λ) by the reduced plastic law (3.28) and the impulse recovery (3.30); H₊ an orthonormal basis of
    ker ℂ_I (numerically, digest §6 item 1)."""
    _, s, Vt = np.linalg.svd(C)
    H = Vt[np.count_nonzero(s > 1e-12 * s[0]):].T
    v_plus = H @ np.linalg.solve(H.T @ M @ H, H.T @ M @ v)
    return v_plus, np.linalg.solve(C @ C.T, C @ M @ (v_plus - v))


def predict_correct(M, rows, restitution, v, contacts):
    """The impacts tried on ``contacts`` (wheel indices, the colliding ones and those already on the ground),
    ``rows`` {wheel: (3, nv) ℂ rows in its contact frame}, ``restitution`` {wheel: (ε_N, ε_T)}: the list of
    predictions, the last one accepted (or with no contact left)."""
    tried, contacts = [], tuple(contacts)
    while contacts:
        C = np.vstack([rows[w] for w in contacts])
        eps = [restitution[w] for w in contacts]
        if all(e == (0.0, 0.0) for e in eps):
            v_plus, impulse = plastic_impact(M, C, v)
        else:
            E = np.diag(np.concatenate([(e_n, e_t, e_t) for e_n, e_t in eps]))
            v_plus, impulse = complete_impact(M, C, E, v)
        normal = impulse[0::3]
        accepted = bool(np.all(normal >= -SIGN_TOL * (1.0 + np.abs(impulse).max())))   # rounding of a zero Λ_N
        tried.append(Impact(contacts, v_plus, impulse.reshape(-1, 3), accepted))
        if tried[-1].accepted:
            return tried
        contacts = contacts[:int(np.argmin(normal))] + contacts[int(np.argmin(normal)) + 1:]
    tried.append(Impact((), v.copy(), np.zeros((0, 3)), True))
    return tried
