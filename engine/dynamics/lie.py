"""Lie-group kernels of the configuration space: q ⊕ ξ, q1 ⊖ q0 and the inverse differential of exp.

Each joint's configuration lives on its own group, and the velocity v is an element of its Lie algebra
expressed in the child (body) frame, so a configuration moves by right multiplication (Pinocchio's
``integrate``/``difference``; seed 000 §3.6 on why quaternions, never Euler angles):

* revolute, prismatic: R, ``q1 = q0 + ξ``;
* spherical: SO(3) as a unit quaternion (x, y, z, w), ``quat1 = quat0 ⊗ exp(ω)``;
* free flyer: SE(3), ``M1 = M0 · exp6(v, ω)`` with ``q = (p, quat)``;
* planar: SE(2), ``M1 = M0 · exp(vx, vy, ω)`` with ``q = (x, y, cos θ, sin θ)``.

Quaternions and (cos θ, sin θ) are re-normalised after every step so rounding never accumulates.
All kernels are ``@njit(cache=True, nogil=True)``, read the model's flat joint arrays and write into an
output array the caller owns (no allocation).
"""
from __future__ import annotations

import math

from numba import njit

REVOLUTE, PRISMATIC, SPHERICAL, FREE, PLANAR = 0, 1, 2, 3, 4  # engine.model.model.JointType


@njit(cache=True, nogil=True)
def _quat_mul(a, b, out):
    """out = a ⊗ b for quaternions stored (x, y, z, w); ``out`` may not alias a or b."""
    ax, ay, az, aw = a[0], a[1], a[2], a[3]
    bx, by, bz, bw = b[0], b[1], b[2], b[3]
    out[0] = aw * bx + ax * bw + ay * bz - az * by
    out[1] = aw * by - ax * bz + ay * bw + az * bx
    out[2] = aw * bz + ax * by - ay * bx + az * bw
    out[3] = aw * bw - ax * bx - ay * by - az * bz


@njit(cache=True, nogil=True)
def _quat_exp(w, out):
    """exp(ω) = (sin(θ/2) ω/θ, cos(θ/2)), θ = |ω| (Taylor series of sin(θ/2)/θ near 0)."""
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    t = math.sqrt(t2)
    k = math.sin(0.5 * t) / t if t > 1e-4 else 0.5 - t2 / 48.0 + t2 * t2 / 3840.0
    out[0], out[1], out[2], out[3] = k * w[0], k * w[1], k * w[2], math.cos(0.5 * t)


@njit(cache=True, nogil=True)
def _quat_log(quat, out):
    """log of a unit quaternion, the shortest rotation: ω = 2 atan2(|u|, |w|) u/|u|, sign(w) folded in."""
    s = 1.0 if quat[3] >= 0.0 else -1.0
    n = math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2])
    k = 2.0 * math.atan2(n, s * quat[3]) / n if n > 0.0 else 2.0 / (s * quat[3])
    for i in range(3):
        out[i] = s * k * quat[i]


@njit(cache=True, nogil=True)
def _quat_rotate(quat, u, out, sign_w=1.0):
    """out = R(quat) u = u + 2w (r × u) + 2 r × (r × u), r the vector part; ``sign_w = -1`` gives R(quat)ᵀ u."""
    x, y, z, w = quat[0], quat[1], quat[2], sign_w * quat[3]
    cx, cy, cz = y * u[2] - z * u[1], z * u[0] - x * u[2], x * u[1] - y * u[0]
    out[0] = u[0] + 2.0 * (w * cx + y * cz - z * cy)
    out[1] = u[1] + 2.0 * (w * cy + z * cx - x * cz)
    out[2] = u[2] + 2.0 * (w * cz + x * cy - y * cx)


@njit(cache=True, nogil=True)
def _normalise(x, start, n):
    norm = 0.0
    for i in range(start, start + n):
        norm += x[i] * x[i]
    norm = math.sqrt(norm)
    for i in range(start, start + n):
        x[i] /= norm


@njit(cache=True, nogil=True)
def _se3_v(w, u, c1, c2, out):
    """out = u + c1 ω × u + c2 ω × (ω × u): V(ω) u with (c1, c2) = ((1-cos θ)/θ², (θ-sin θ)/θ³), and
    V⁻¹(ω) u with (c1, c2) = (-1/2, (1 - (θ/2) cot(θ/2))/θ²)."""
    ax, ay, az = w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2], w[0] * u[1] - w[1] * u[0]
    bx, by, bz = w[1] * az - w[2] * ay, w[2] * ax - w[0] * az, w[0] * ay - w[1] * ax
    out[0], out[1], out[2] = u[0] + c1 * ax + c2 * bx, u[1] + c1 * ay + c2 * by, u[2] + c1 * az + c2 * bz


@njit(cache=True, nogil=True)
def _se3_v_coefficients(t2):
    """((1 - cos θ)/θ², (θ - sin θ)/θ³) of V(ω), with their Taylor series near θ = 0; 1 - cos θ is written
    2 sin²(θ/2), free of cancellation (the second coefficient's rounding is damped by the |ω|² it meets)."""
    if t2 < 1e-6:
        return 0.5 - t2 / 24.0 + t2 * t2 / 720.0, 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    t = math.sqrt(t2)
    s = math.sin(0.5 * t)
    return 2.0 * s * s / t2, (t - math.sin(t)) / (t2 * t)


@njit(cache=True, nogil=True)
def _se3_vinv_coefficient(t2):
    """(1 - (θ/2) cot(θ/2))/θ² of V⁻¹(ω), with its Taylor series near θ = 0 (the cotangent from the half
    angle, so no 1 - cos θ amplifies rounding)."""
    if t2 < 1e-6:
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    x = 0.5 * math.sqrt(t2)
    return (1.0 - x * math.cos(x) / math.sin(x)) / t2


@njit(cache=True, nogil=True)
def _se2_v_coefficients(t):
    """(sin θ/θ, (1 - cos θ)/θ = 2 sin²(θ/2)/θ): V(θ) = [[A, -B], [B, A]] of SE(2)'s exp, series near 0."""
    if abs(t) < 1e-4:
        t2 = t * t
        return 1.0 - t2 / 6.0 + t2 * t2 / 120.0, t * (0.5 - t2 / 24.0)
    s = math.sin(0.5 * t)
    return math.sin(t) / t, 2.0 * s * s / t


@njit(cache=True, nogil=True)
def _integrate_free(q, k, xi, m, out, tmp):
    """(p, quat) · exp6(v, ω): p += R(quat) V(ω) v; quat ⊗= exp(ω), then ±quat, whichever is nearer quat0."""
    w = xi[m + 3:m + 6]
    c1, c2 = _se3_v_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    _se3_v(w, xi[m:m + 3], c1, c2, tmp[0:3])
    _quat_rotate(q[k + 3:k + 7], tmp[0:3], tmp[4:7])
    for i in range(3):
        out[k + i] = q[k + i] + tmp[4 + i]
    _quat_exp(w, tmp[0:4])
    _quat_mul(q[k + 3:k + 7], tmp[0:4], out[k + 3:k + 7])
    _normalise(out, k + 3, 4)
    if out[k + 3] * q[k + 3] + out[k + 4] * q[k + 4] + out[k + 5] * q[k + 5] + out[k + 6] * q[k + 6] < 0.0:
        for i in range(k + 3, k + 7):  # same hemisphere as quat0, as Pinocchio's SE(3) integrate
            out[i] = -out[i]


@njit(cache=True, nogil=True)
def _integrate_planar(q, k, xi, m, out):
    """(x, y, c, s) · exp(vx, vy, ω): p += R(θ0) V(ω) v; θ += ω."""
    A, B = _se2_v_coefficients(xi[m + 2])
    tx, ty = A * xi[m] - B * xi[m + 1], B * xi[m] + A * xi[m + 1]
    c0, s0, cw, sw = q[k + 2], q[k + 3], math.cos(xi[m + 2]), math.sin(xi[m + 2])
    out[k], out[k + 1] = q[k] + c0 * tx - s0 * ty, q[k + 1] + s0 * tx + c0 * ty
    out[k + 2], out[k + 3] = c0 * cw - s0 * sw, s0 * cw + c0 * sw
    _normalise(out, k + 2, 2)


@njit(cache=True, nogil=True)
def integrate_kernel(joint_type, idx_q, idx_v, q, xi, out, tmp):
    """out = q ⊕ ξ joint by joint (``tmp``: scratch of length >= 8)."""
    for j in range(joint_type.shape[0]):
        t, k, m = joint_type[j], idx_q[j], idx_v[j]
        if t == REVOLUTE or t == PRISMATIC:
            out[k] = q[k] + xi[m]
        elif t == SPHERICAL:
            _quat_exp(xi[m:m + 3], tmp[0:4])
            _quat_mul(q[k:k + 4], tmp[0:4], out[k:k + 4])
            _normalise(out, k, 4)
        elif t == FREE:
            _integrate_free(q, k, xi, m, out, tmp)
        else:
            _integrate_planar(q, k, xi, m, out)


@njit(cache=True, nogil=True)
def _conjugate_times(a, b, out):
    """out = a* ⊗ b (the rotation of b seen from a), a* = (-x, -y, -z, w)."""
    ax, ay, az, aw = -a[0], -a[1], -a[2], a[3]
    out[0] = aw * b[0] + ax * b[3] + ay * b[2] - az * b[1]
    out[1] = aw * b[1] - ax * b[2] + ay * b[3] + az * b[0]
    out[2] = aw * b[2] + ax * b[1] - ay * b[0] + az * b[3]
    out[3] = aw * b[3] - ax * b[0] - ay * b[1] - az * b[2]


@njit(cache=True, nogil=True)
def _difference_free(q0, q1, k, out, m, tmp):
    """log6(M0⁻¹ M1): ω = log(quat0* ⊗ quat1), v = V⁻¹(ω) R0ᵀ (p1 - p0)."""
    _conjugate_times(q0[k + 3:k + 7], q1[k + 3:k + 7], tmp[0:4])
    _quat_log(tmp[0:4], out[m + 3:m + 6])
    for i in range(3):
        tmp[i] = q1[k + i] - q0[k + i]
    _quat_rotate(q0[k + 3:k + 7], tmp[0:3], tmp[4:7], -1.0)
    w = out[m + 3:m + 6]
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    _se3_v(w, tmp[4:7], -0.5, _se3_vinv_coefficient(t2), out[m:m + 3])


@njit(cache=True, nogil=True)
def _difference_planar(q0, q1, k, out, m):
    """log(M0⁻¹ M1) on SE(2): θ = atan2 of the relative rotation, v = V(θ)⁻¹ R0ᵀ (p1 - p0)."""
    c0, s0, c1, s1 = q0[k + 2], q0[k + 3], q1[k + 2], q1[k + 3]
    t = math.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = q1[k] - q0[k], q1[k + 1] - q0[k + 1]
    px, py = c0 * dx + s0 * dy, -s0 * dx + c0 * dy
    A, B = _se2_v_coefficients(t)
    d = A * A + B * B
    out[m], out[m + 1], out[m + 2] = (A * px + B * py) / d, (-B * px + A * py) / d, t


@njit(cache=True, nogil=True)
def difference_kernel(joint_type, idx_q, idx_v, q0, q1, out, tmp):
    """out = q1 ⊖ q0, the ξ with q0 ⊕ ξ = q1 (shortest rotation), joint by joint (``tmp``: length >= 8)."""
    for j in range(joint_type.shape[0]):
        t, k, m = joint_type[j], idx_q[j], idx_v[j]
        if t == REVOLUTE or t == PRISMATIC:
            out[m] = q1[k] - q0[k]
        elif t == SPHERICAL:
            _conjugate_times(q0[k:k + 4], q1[k:k + 4], tmp[0:4])
            _quat_log(tmp[0:4], out[m:m + 3])
        elif t == FREE:
            _difference_free(q0, q1, k, out, m, tmp)
        else:
            _difference_planar(q0, q1, k, out, m)


@njit(cache=True, nogil=True)
def _bracket(joint_type, xi, w, m, out):
    """Lie bracket [ξ, w] of one joint's algebra (zero for revolute and prismatic):
    so(3): ω1 × ω2;  se(3): (ω1 × v2 - ω2 × v1, ω1 × ω2);  se(2): (ω1 J v2 - ω2 J v1, 0), J = rot(π/2)."""
    if joint_type == SPHERICAL or joint_type == FREE:
        a = m + 3 if joint_type == FREE else m  # angular part
        w1, w2 = xi[a:a + 3], w[a:a + 3]
        out[a], out[a + 1], out[a + 2] = (w1[1] * w2[2] - w1[2] * w2[1], w1[2] * w2[0] - w1[0] * w2[2],
                                          w1[0] * w2[1] - w1[1] * w2[0])
        if joint_type == FREE:
            v1, v2 = xi[m:m + 3], w[m:m + 3]
            for i in range(3):
                i1, i2 = (i + 1) % 3, (i + 2) % 3
                out[m + i] = (w1[i1] * v2[i2] - w1[i2] * v2[i1]) - (w2[i1] * v1[i2] - w2[i2] * v1[i1])
    elif joint_type == PLANAR:
        out[m] = -xi[m + 2] * w[m + 1] + w[m + 2] * xi[m + 1]
        out[m + 1] = xi[m + 2] * w[m] - w[m + 2] * xi[m]
        out[m + 2] = 0.0
    else:
        out[m] = 0.0


@njit(cache=True, nogil=True)
def dexp_inv_kernel(joint_type, idx_v, joint_nv, xi, w, out, tmp):
    """out = w + ½[ξ, w] + 1/12 [ξ, [ξ, w]]: the rate ξ' of q(t) = q0 ⊕ ξ(t) whose body velocity is w,
    i.e. dexp⁻¹ at -ξ truncated after the last term an order-4 Runge–Kutta–Munthe-Kaas step needs (the next
    one is O(|ξ|⁴)).  ``tmp``: scratch of length nv."""
    for j in range(joint_type.shape[0]):
        t, m, n = joint_type[j], idx_v[j], joint_nv[j]
        _bracket(t, xi, w, m, tmp)
        _bracket(t, xi, tmp, m, out)
        for i in range(m, m + n):
            out[i] = w[i] + 0.5 * tmp[i] + out[i] / 12.0
