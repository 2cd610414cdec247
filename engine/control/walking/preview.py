"""CoM pattern by preview control of the ZMP on the cart-table model (Kajita et al., "Biped walking pattern
generation by using preview control of zero-moment point", ICRA 2003, §III–IV).

State x = (c, ċ, c̈) of one horizontal axis, input the jerk u, output the ZMP p (Kajita eq. 7–8):

    x(k+1) = A x(k) + B u(k),  A = [[1, T, T²/2], [0, 1, T], [0, 0, 1]],  B = (T³/6, T²/2, T)
    p(k) = C x(k),             C = (1, 0, −z_c/g)

The controller minimises Σ Q_e e² + Δxᵀ Q_x Δx + R Δu² with e = p − p_ref (Katayama's servo form, Kajita
eq. 11–12), giving

    u(k) = −G_i Σ_{i≤k} e(i) − G_x x(k) − Σ_{j=1}^{N_L} G_d(j) p_ref(k + j)      (Kajita eq. 14)

with G_d(1) = −G_i and G_d(j) = (R + B̃ᵀPB̃)⁻¹ B̃ᵀ X(j − 1), X(1) = −Ãcᵀ P Ĩ, X(j) = Ãcᵀ X(j − 1).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import solve_discrete_are


def cart_table(T, zc, g=9.81):
    """(A, B, C) of the cart-table model, sampling period T (s), CoM height zc (m)."""
    A = np.array([[1.0, T, T * T / 2], [0.0, 1.0, T], [0.0, 0.0, 1.0]])
    B = np.array([[T ** 3 / 6], [T * T / 2], [T]])
    C = np.array([[1.0, 0.0, -zc / g]])
    return A, B, C


def preview_gains(T, zc, g=9.81, preview=1.6, Qe=1.0, R=1e-6):
    """(G_i, G_x (3,), G_d (N_L,), P): the optimal servo gains and the Riccati solution P (4, 4) of the
    augmented system x̃ = (e, Δx) (Katayama 1985, as in Kajita 2003 eq. 12–14)."""
    A, B, C = cart_table(T, zc, g)
    At = np.block([[np.eye(1), C @ A], [np.zeros((3, 1)), A]])
    Bt = np.vstack([C @ B, B])
    It = np.vstack([np.eye(1), np.zeros((3, 1))])
    Q = np.diag([Qe, 0.0, 0.0, 0.0])
    P = solve_discrete_are(At, Bt, Q, R * np.eye(1))
    K = np.linalg.solve(R + Bt.T @ P @ Bt, Bt.T)             # (R + B̃ᵀPB̃)⁻¹ B̃ᵀ
    Gi = (K @ P @ It).item()
    Gx = (K @ P @ At)[0, 1:]
    Ac = At - Bt @ K @ P @ At
    X, Gd = -Ac.T @ P @ It, np.empty(int(round(preview / T)))
    Gd[0] = -Gi
    for j in range(1, Gd.size):
        Gd[j] = (K @ X).item()
        X = Ac.T @ X
    return Gi, Gx, Gd, P


def preview_pattern(p_ref, T, zc, x0=(0.0, 0.0, 0.0), g=9.81, preview=1.6, Qe=1.0, R=1e-6):
    """CoM states (n, 3) and ZMP (n,) of one axis driven by the preview controller along the reference
    ``p_ref`` (n,) sampled every T; the reference is held at its last value beyond its end."""
    A, B, C = cart_table(T, zc, g)
    Gi, Gx, Gd, _ = preview_gains(T, zc, g, preview, Qe, R)
    n, NL = len(p_ref), Gd.size
    ref = np.concatenate([p_ref, np.full(NL + 1, p_ref[-1])])
    x, esum = np.array(x0, float), 0.0
    X, p = np.empty((n, 3)), np.empty(n)
    for k in range(n):
        X[k], p[k] = x, C[0] @ x
        esum += p[k] - ref[k]
        u = -Gi * esum - Gx @ x - Gd @ ref[k + 1:k + 1 + NL]
        x = A @ x + B[:, 0] * u
    return X, p
