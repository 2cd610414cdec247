"""numba kernels of the controllers (driven by the plugins of this folder): arrays in, the torque out."""
from __future__ import annotations

from numba import njit

from engine.dynamics.lie import difference_kernel


@njit(cache=True, nogil=True)
def stance_torque(joint_type, idx_q, idx_v, q, v, q_ref, tau_s, kp, kd, limit, mask, error, scratch, tau):
    """``StancePD.control``: τ = τ_s + kp (q_ref ⊖ q) − kd v, held in [−limit, limit], times ``mask`` (0 on the
    passive dofs), into ``tau`` (no new array: returning one costs ≈ 1 µs of boxing); q_ref ⊖ q left in ``error``
    (``difference_kernel``, scratch ``scratch``)."""
    difference_kernel(joint_type, idx_q, idx_v, q, q_ref, error, scratch)
    for k in range(v.shape[0]):
        x = tau_s[k] + kp[k] * error[k] - kd[k] * v[k]
        tau[k] = min(max(x, -limit[k]), limit[k]) * mask[k]
