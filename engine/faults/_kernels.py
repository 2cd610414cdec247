"""numba kernels of the fault checks (driven by ``limits.py``): arrays in, no allocation."""
from __future__ import annotations

import math

from engine.dynamics._kernels.algebra import kernel


@kernel
def first_beyond(x, bound):
    """The first index i with |x_i| > bound_i or x_i not finite, else −1 (x, bound (n,))."""
    for i in range(x.shape[0]):
        if not abs(x[i]) <= bound[i]:
            return i
    return -1


@kernel
def clamp(x, bound):
    """x_i ← clamp(x_i, −bound_i, bound_i) in place; the number of entries changed (x, bound (n,), finite x)."""
    changed = 0
    for i in range(x.shape[0]):
        if x[i] > bound[i]:
            x[i] = bound[i]
            changed += 1
        elif x[i] < -bound[i]:
            x[i] = -bound[i]
            changed += 1
    return changed


@kernel
def first_non_finite(x):
    """The first flat index of a NaN or ±inf in the 1-D or 2-D array x, else −1."""
    i = 0
    for v in x.flat:
        if not math.isfinite(v):
            return i
        i += 1
    return -1
