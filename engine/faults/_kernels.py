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
def clamp_envelope(x, v, bound, speed):
    """x_i ← x_i held in the torque–speed envelope of a motor (seed 000 eqs. 5.25–5.26): |x_i| ≤ bound_i and
    |v_i / speed_i + x_i / bound_i| ≤ 1, i.e. x_i ∈ [−bound_i min(1, 1 + v_i/speed_i), bound_i min(1, 1 −
    v_i/speed_i)] (no speed bound where speed_i is infinite), in place; the number of entries changed."""
    changed = 0
    for i in range(x.shape[0]):
        s = v[i] / speed[i] if math.isfinite(speed[i]) else 0.0
        upper = bound[i] * min(1.0, 1.0 - s)
        lower = -bound[i] * min(1.0, 1.0 + s)
        if x[i] > upper:
            x[i] = upper
            changed += 1
        elif x[i] < lower:
            x[i] = lower
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
