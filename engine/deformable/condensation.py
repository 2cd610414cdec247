"""Static condensation (Schur complement) of a stiffness matrix onto a subset of its DOFs (thesis eqs. 4.12–4.20).

Split the DOFs into kept ones c and the rest n, carrying no external force (F_n = 0):

    [K_cc K_cn] [U_c]   [F_c]
    [K_nc K_nn] [U_n] = [ 0 ]                                   (4.12, 4.18)

    K_c = K_cc − K_cn K_nn⁻¹ K_nc,   K_c U_c = F_c               (4.14, 4.20)
    U_n = −K_nn⁻¹ K_nc U_c                                       (second row of 4.19)

The thesis condenses twice, onto the surface nodes (4.14), then onto the contact nodes (4.20); Schur complements
compose (the quotient property), so condensing once onto the contact nodes gives the same K_c (tested).
U_n above is the thesis's node update (4.22), U_n = (K_nn − K_nc K_cc⁻¹ K_cn)⁻¹(−K_nc K_cc⁻¹ F_c), written with
the factorisation of K_nn the condensation already holds (both follow from 4.19; tested equal).

K_nn is factorised once by SuperLU (``scipy.sparse.linalg.splu``, symmetric minimum-degree ordering); K_nn⁻¹ is
never formed. The solves run one right-hand side at a time: SuperLU's multi-column solve is several times
slower per column (measured on a 3000-DOF sole).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu


@dataclass(frozen=True, eq=False)
class Condensation:
    """K_c on the ``keep`` DOFs and what recovers the ``rest`` from U_c (module docstring)."""

    stiffness: np.ndarray          # K_c, dense (m, m), symmetric
    keep: np.ndarray               # (m,) DOF indices c of the full matrix, in K_c's order
    rest: np.ndarray               # (r,) DOF indices n, ascending
    K_nc: sp.csc_matrix            # (r, m)
    factor: object                 # SuperLU of K_nn

    def recover(self, U_c) -> np.ndarray:
        """U_n = −K_nn⁻¹ K_nc U_c (4.19 with F_n = 0; the node update 4.22): (r,) or (r, k) for (m, k)."""
        rhs = -(self.K_nc @ U_c)
        if len(self.rest) == 0:
            return rhs
        if rhs.ndim == 1:
            return self.factor.solve(rhs)
        return np.column_stack([self.factor.solve(np.ascontiguousarray(col)) for col in rhs.T])


def factorize(K_nn):
    """SuperLU factorisation of the symmetric positive definite K_nn (minimum degree on Aᵀ + A, diagonal
    pivots). Raises ``np.linalg.LinAlgError`` when K_nn is singular (a part free to move)."""
    try:
        return splu(sp.csc_matrix(K_nn), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                    options={"SymmetricMode": True})
    except RuntimeError as exc:
        raise np.linalg.LinAlgError(f"the stiffness of the condensed-out DOFs is singular ({exc})") from None


def condense(K, keep) -> Condensation:
    """Condense the symmetric stiffness ``K`` (sparse or dense) onto the DOFs ``keep`` (eqs. 4.14/4.20)."""
    K = sp.csc_matrix(K)
    keep = np.asarray(keep, dtype=np.int64)
    rest = np.setdiff1d(np.arange(K.shape[0]), keep)
    K_nn, K_nc = K[rest][:, rest], K[rest][:, keep].tocsc()
    K_c = K[keep][:, keep].toarray()
    if len(rest):
        lu = factorize(K_nn)
        X = np.empty(K_nc.shape)
        for j in range(K_nc.shape[1]):
            X[:, j] = lu.solve(K_nc[:, j].toarray().ravel())
        K_c -= K_nc.T @ X
    else:
        lu = None
    return Condensation(0.5 * (K_c + K_c.T), keep, rest, K_nc, lu)
