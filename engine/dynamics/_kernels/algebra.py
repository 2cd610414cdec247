"""Inline 3-vector, 3x3 and spatial-algebra helpers on tuples for the kernels (no allocation).

A 3-vector is a 3-tuple, a 3x3 matrix a row-major 9-tuple; LLVM keeps them in registers.  A spatial motion
is the pair (linear, angular) and a spatial force (force, moment), following ``engine.spatial``.  A placement
``(R, p)`` maps b to a: x_a = R x_b + p.  A rigid-body inertia about a frame origin is (m, h = m c, Ibar)
with Ibar = I_c - m [c]x [c]x (the rotational block of ``engine.spatial.spatial_inertia``).
"""
from __future__ import annotations

from numba import njit, types
from numba.core.registry import CPUDispatcher

#: a kernel or one pass of it.  Kernels allocate nothing, so they run without numba's reference counting
#: (_nrt=False), whose incref/decref calls otherwise survive in the branches of inlined helpers; they check
#: their inputs first, so a division by zero cannot happen and needs no exception path (numpy error model).
kernel = njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
#: helpers that take arrays are inlined by numba (a call would pass every array field on the stack)
inline = njit(inline="always", cache=True, nogil=True, _nrt=False, error_model="numpy")
#: pure tuple arithmetic is compiled once and inlined by LLVM (cheaper to compile than numba inlining)
tuple_op = njit(cache=True, nogil=True, _nrt=False, error_model="numpy")

# argument types of the kernels called from Python: C-contiguous, writable
I2, F1, F2, INT, STATUS = types.int64[:, ::1], types.float64[::1], types.float64[:, ::1], types.int64, types.int64
#: the one signature each entry kernel is compiled for
SIGNATURES = {}


def entry(signature):
    """A kernel called from Python, compiled (or loaded from the cache) on first use for exactly
    ``signature`` and never for other argument types: a list or a float32 array raises TypeError instead
    of a surprise compilation, and the driver converts its inputs then (``engine.dynamics.inputs``)."""
    def wrap(f):
        dispatcher = kernel(f)
        if isinstance(dispatcher, CPUDispatcher):   # a plain function under NUMBA_DISABLE_JIT=1
            SIGNATURES[dispatcher] = signature
            dispatcher._can_compile = False         # disable_compile(), which needs one signature first
        return dispatcher
    return wrap


@inline
def split(mi, mf, nb):
    """The packed model's body rows (bi, bf) and dof rows (di, df) (``engine.dynamics.pack``)."""
    return mi[:nb], mf[:nb], mi[nb:], mf[nb:]


@tuple_op
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@tuple_op
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@tuple_op
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@tuple_op
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@tuple_op
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@tuple_op
def mv(R, x):
    """R x."""
    return (R[0] * x[0] + R[1] * x[1] + R[2] * x[2], R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
            R[6] * x[0] + R[7] * x[1] + R[8] * x[2])


@tuple_op
def mtv(R, x):
    """R^T x."""
    return (R[0] * x[0] + R[3] * x[1] + R[6] * x[2], R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
            R[2] * x[0] + R[5] * x[1] + R[8] * x[2])


@tuple_op
def mm(A, B):
    """A B."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@tuple_op
def transpose(A):
    return (A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8])


@tuple_op
def madd(A, B):
    return (A[0] + B[0], A[1] + B[1], A[2] + B[2], A[3] + B[3], A[4] + B[4], A[5] + B[5], A[6] + B[6],
            A[7] + B[7], A[8] + B[8])


@tuple_op
def rotate_sym(R, A):
    """R A R^T."""
    return mm(mm(R, A), transpose(R))


@tuple_op
def skew_mul(p, A):
    """[p]x A: the cross product of p with each column of A."""
    c0 = cross(p, (A[0], A[3], A[6]))
    c1 = cross(p, (A[1], A[4], A[7]))
    c2 = cross(p, (A[2], A[5], A[8]))
    return (c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2])


@inline
def load3(w, i, o):
    return (w[i, o], w[i, o + 1], w[i, o + 2])


@inline
def load9(w, i, o):
    return (w[i, o], w[i, o + 1], w[i, o + 2], w[i, o + 3], w[i, o + 4], w[i, o + 5], w[i, o + 6],
            w[i, o + 7], w[i, o + 8])


@inline
def store3(w, i, o, x):
    w[i, o], w[i, o + 1], w[i, o + 2] = x[0], x[1], x[2]


@inline
def store9(w, i, o, A):
    for k in range(9):
        w[i, o + k] = A[k]


@tuple_op
def quat_to_rotation(x, y, z, w):
    """Rotation of the quaternion (x, y, z, w) / |(x, y, z, w)|: exact for any non-zero quaternion."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y))


@tuple_op
def motion_to_child(R, p, vl, w):
    """X^-1 v: a twist (vl, w) of the parent frame, seen in the child frame placed at (R, p)."""
    return mtv(R, add(vl, cross(w, p))), mtv(R, w)


@tuple_op
def motion_to_parent(R, p, vl, w):
    """X v: a child-frame twist seen in the parent frame."""
    w_p = mv(R, w)
    return add(mv(R, vl), cross(p, w_p)), w_p


@tuple_op
def force_to_parent(R, p, f, n):
    """X* f: a child-frame wrench (f, n) seen in the parent frame."""
    f_p = mv(R, f)
    return f_p, add(mv(R, n), cross(p, f_p))


@tuple_op
def motion_cross(vl, w, ml, mw):
    """v x m for twists v = (vl, w), m = (ml, mw)."""
    return add(cross(w, ml), cross(vl, mw)), cross(w, mw)


@tuple_op
def force_cross(vl, w, f, n):
    """v x* f for a twist v = (vl, w) and a wrench f = (f, n)."""
    return cross(w, f), add(cross(w, n), cross(vl, f))


@tuple_op
def inertia_mul(m, h, I, vl, w):
    """(m, h, Ibar) (vl, w) = (m vl - h x w, h x vl + Ibar w)."""
    return sub(scale(m, vl), cross(h, w)), add(cross(h, vl), mv(I, w))


@inline  # too big for LLVM's inliner as a separate function
def inertia_to_parent(R, p, m, h, I):
    """A rigid-body inertia (m, h, Ibar) of the child frame, about and in the parent frame:
    h' = R h + m p and, with hr = R h and [a]x [b]x = b a^T - (a . b) 1,
    Ibar' = R Ibar R^T - [hr]x [p]x - [p]x [hr]x - m [p]x [p]x
          = R Ibar R^T - (p hr^T + hr p^T) - m p p^T + (2 hr . p + m p . p) 1."""
    hr, Ir = mv(R, h), rotate_sym(R, I)
    d = 2.0 * dot(hr, p) + m * dot(p, p)
    return add(hr, scale(m, p)), (
        Ir[0] - 2.0 * p[0] * hr[0] - m * p[0] * p[0] + d,
        Ir[1] - p[0] * hr[1] - hr[0] * p[1] - m * p[0] * p[1],
        Ir[2] - p[0] * hr[2] - hr[0] * p[2] - m * p[0] * p[2],
        Ir[3] - p[1] * hr[0] - hr[1] * p[0] - m * p[1] * p[0],
        Ir[4] - 2.0 * p[1] * hr[1] - m * p[1] * p[1] + d,
        Ir[5] - p[1] * hr[2] - hr[1] * p[2] - m * p[1] * p[2],
        Ir[6] - p[2] * hr[0] - hr[2] * p[0] - m * p[2] * p[0],
        Ir[7] - p[2] * hr[1] - hr[2] * p[1] - m * p[2] * p[1],
        Ir[8] - 2.0 * p[2] * hr[2] - m * p[2] * p[2] + d)
