"""Forward dynamics: Featherstone's O(n) articulated-body algorithm."""
from __future__ import annotations

from engine.dynamics._kernels import aba as _k
from engine.dynamics.inputs import GRAVITY, REFUSED, RETRY, gravity_array, rerun, wrong_data


def aba(model, data, q, v, tau, f_ext=None, gravity=GRAVITY):
    """Joint accelerations ddq (nv,) under the joint forces tau (seed 000 §3.1 eq. 2.11-2.15, multi-DOF
    joints eq. 3.51-3.55): the inverse of ``rnea``, aba(q, v, rnea(q, v, a)) == a, with the same rotors,
    passive joint forces, f_ext and gravity conventions.

    Pass 1: v_i, c_i = v_i x S_i v_i, IA_i = I_i, pA_i = v_i x* I_i v_i - f_ext,i.  Pass 2 (leaves to root):
    U = IA S, D = S^T U, u = tau - S^T pA, IA_parent += X*(IA - U D^-1 U^T)X*^T,
    pA_parent += X*(pA + IA c + U D^-1 u).  Pass 3: ddq_i = D^-1 (u - U^T (X^-1 a_parent + c_i)),
    a_i = X^-1 a_parent + c_i + S ddq_i, the base accelerating at -gravity.  A geared rotor joins its joint
    as one articulated cluster (see ``engine.dynamics._kernels.aba``): exact, still O(n).
    """
    pack = data.model_pack
    if pack.owner is not model:
        wrong_data(model, data)
    fext, g = data.fext_zero if f_ext is None else f_ext, gravity_array(gravity)
    try:
        status = _k.aba(pack.mi, pack.mf, data.ws, data.wd, q, v, tau, fext, g, data.ddq)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.aba, model, (pack.mi, pack.mf, data.ws, data.wd),
              dict(q=q, v=v, tau=tau, f_ext=fext, gravity=g), (data.ddq,))
    return data.ddq.copy()
