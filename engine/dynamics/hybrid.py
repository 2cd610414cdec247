"""Hybrid dynamics (seed 004 §2.5, L711-L772): some joints *driven* — their accelerations prescribed, from a
trajectory or motion capture — the others *free*, their joint forces given (τ = 0 for a passive joint,
``LiaisonsPilotees``).

With the velocity coordinates split into driven d and free f, M(q) q̈ + h(q, q̇) = τ reads

    A q̈_f = B,     A = M_ff,     B = τ_f − h_f − M_fd q̈_d                      (the free rows)
    τ_d = M_dd q̈_d + M_df q̈_f + h_d                                            (the driven rows)

the seed's factorisation A(q) q̈ = B of the direct model, with det(A) returned (``CalculDeterminant``). h is
``rnea`` at zero acceleration (Coriolis, gravity, joint springs, dampers and friction, external wrenches), M is
``crba`` (rotors included). A is symmetric positive definite for a real mechanism; it becomes singular when the
free joints lose their inertia (a massless chain, a singular closed-loop parametrisation), and
``hybrid_dynamics`` warns (``SingularityWarning``) once det(A) falls below ``SINGULAR`` times the product of A's
diagonal (Hadamard's bound: 1 for a diagonal A, 0 for a singular one).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg as sl

from engine.dynamics.crba import crba
from engine.dynamics.inputs import GRAVITY
from engine.dynamics.rnea import rnea
from engine.errors import ModelWarning

SINGULAR = 1e-9


class SingularityWarning(ModelWarning):
    """det(A) of the hybrid dynamics is near zero: the free joints' accelerations are ill-determined."""


class Hybrid(NamedTuple):
    """The result of ``hybrid_dynamics``: ``qdd`` (nv,) every acceleration, ``tau`` (nv,) every joint force (the
    driven ones computed, the free ones as given), ``det_A`` and ``hadamard`` = det(A) / Π diag(A) in (0, 1]."""

    qdd: np.ndarray
    tau: np.ndarray
    det_A: float
    hadamard: float


def hybrid_dynamics(model, data, q, v, driven, qdd_driven, tau_free=None, f_ext=None, gravity=GRAVITY) -> Hybrid:
    """Accelerations and joint forces with the velocity coordinates ``driven`` (bool (nv,)) at the prescribed
    accelerations ``qdd_driven`` (their count) and the others under ``tau_free`` (their count; default 0)."""
    driven = np.asarray(driven, dtype=bool)
    if driven.shape != (model.nv,):
        raise ValueError(f"driven must be a boolean mask of the {model.nv} velocity coordinates, got {driven.shape}")
    free = ~driven
    qdd = np.zeros(model.nv)
    qdd[driven] = qdd_driven
    tau = np.zeros(model.nv)
    tau[free] = 0.0 if tau_free is None else tau_free
    M = crba(model, data, q)
    h = np.array(rnea(model, data, q, v, np.zeros(model.nv), f_ext=f_ext, gravity=gravity), dtype=float)
    A = M[np.ix_(free, free)]
    B = tau[free] - h[free] - M[np.ix_(free, driven)] @ qdd[driven]
    det_A, hadamard = 1.0, 1.0
    if free.any():
        try:
            L = sl.cholesky(A, lower=True)
            det_A = float(np.prod(np.diag(L)) ** 2)
            qdd[free] = sl.cho_solve((L, True), B)
        except sl.LinAlgError:                      # singular: the least-squares accelerations
            det_A = float(np.linalg.det(A))
            qdd[free] = np.linalg.lstsq(A, B, rcond=None)[0]
        diagonal = float(np.prod(np.diag(A)))
        hadamard = det_A / diagonal if diagonal > 0.0 else 0.0
        if hadamard < SINGULAR:
            warnings.warn(f"{model.name}: the free joints' inertia matrix is nearly singular (det A = {det_A:.3g}, "
                          f"{hadamard:.3g} of its diagonal's product): their accelerations are ill-determined",
                          SingularityWarning, stacklevel=2)
    tau[driven] = M[driven] @ qdd + h[driven]
    return Hybrid(qdd, tau, det_A, hadamard)
