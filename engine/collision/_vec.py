"""3-vector and 3x3-matrix helpers for the collision kernels, on tuples: a vector is (x, y, z), a rotation is
the tuple of its rows.  Nothing is allocated and no array is passed around in the hot loops (every array
argument of a numba call costs reference counting); ``row`` and ``mat`` read them out of arrays once.

Placements follow ``engine.spatial``: x_world = R x_local + p.
"""
from __future__ import annotations

import math

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def row(a, i):
    """Row i of an (n, 3) array, as a vector."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, nogil=True, inline="always")
def mat(R, i):
    """Matrix i of an (n, 3, 3) array, as a tuple of rows."""
    return ((R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]), (R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]),
            (R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]))


@njit(cache=True, nogil=True, inline="always")
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, nogil=True, inline="always")
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, nogil=True, inline="always")
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, nogil=True, inline="always")
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(cache=True, nogil=True, inline="always")
def axpy(s, a, b):
    """s a + b"""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@njit(cache=True, nogil=True, inline="always")
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, nogil=True, inline="always")
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True, nogil=True, inline="always")
def column(R, j):
    """Column j of R: the j-th axis of the local frame, in the world."""
    return (R[0][j], R[1][j], R[2][j])


@njit(cache=True, nogil=True, inline="always")
def rotate(R, x):
    """R x"""
    return (dot(R[0], x), dot(R[1], x), dot(R[2], x))


@njit(cache=True, nogil=True, inline="always")
def rotate_t(R, x):
    """R^T x"""
    return (R[0][0] * x[0] + R[1][0] * x[1] + R[2][0] * x[2], R[0][1] * x[0] + R[1][1] * x[1] + R[2][1] * x[2],
            R[0][2] * x[0] + R[1][2] * x[1] + R[2][2] * x[2])


@njit(cache=True, nogil=True, inline="always")
def transform(R, p, x):
    """R x + p"""
    return add(rotate(R, x), p)


@njit(cache=True, nogil=True, inline="always")
def tangent_basis(n):
    """Two unit vectors t1, t2 with (t1, t2, n) a right-handed orthonormal frame."""
    a = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
    t1 = cross(n, a)
    t1 = scale(t1, 1.0 / norm(t1))
    return t1, cross(n, t1)


@njit(cache=True, nogil=True, inline="always")
def store(out, i, x):
    out[i, 0] = x[0]
    out[i, 1] = x[1]
    out[i, 2] = x[2]


@njit(cache=True, nogil=True, inline="always")
def emit(raw, k, x, n, s):
    """Raw contact k: midpoint x, normal n, signed gap s (depth = -s) into row k of raw (K, 7); returns k + 1."""
    raw[k, 0], raw[k, 1], raw[k, 2] = x[0], x[1], x[2]
    raw[k, 3], raw[k, 4], raw[k, 5] = n[0], n[1], n[2]
    raw[k, 6] = -s
    return k + 1
