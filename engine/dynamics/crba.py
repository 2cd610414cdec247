"""The joint-space inertia (mass) matrix by the composite-rigid-body (backward) recurrence."""
from __future__ import annotations

from engine.dynamics._kernels import crba as _k
from engine.dynamics.inputs import REFUSED, RETRY, rerun, wrong_data


def crba(model, data, q):
    """M(q) (nv, nv), symmetric positive definite, rotors included (seed 002 §4, "Mampey's algorithm").

    Backward recurrence over composite inertias: Yc_i = I_i + sum over children Yc_j (seed 002 §4.1's
    mu_k, n_k, Q_k), and M[j, k] = S_j^T Yc_i S_k for every dof j on the path from body i to the root,
    written in the world frame where Yc_parent += Yc_i needs no transfer matrix (Pinocchio's choice).
    Rotors (seed 002 §4.1, g_{k-1,k} and a_kk): the carrier's inertia includes the frozen rotor, plus
    M[k, k] += alpha^2 j_m (the term the printed a_nn omits, L243) and the rotor's momentum alpha j_m eps,
    carried by the parent body, couples dof k with every dof supporting that body.

    Returns ``data.M`` itself, as Pinocchio does: no allocation; the next call overwrites it (copy to keep).
    """
    pack = data.model_pack
    if pack.owner is not model:
        wrong_data(model, data)
    M = data.M
    try:
        status = _k.crba(pack.mi, pack.mf, data.ws, data.wd, q, M)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.crba, model, (pack.mi, pack.mf, data.ws, data.wd), dict(q=q), (M,))
    return M
