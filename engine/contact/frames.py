"""Contact frames: per contact an orthonormal basis (n, t1, t2), stored as the rows of a (3, 3) matrix C so that
local = C @ world (seed 000 eq. 3.27: [v_n; v_t1; v_t2]).  ``contact_frame`` is the numba form used by the
contact stage's kernels; ``contact_frames`` applies it to an array of normals."""
from __future__ import annotations

import math

import numpy as np

from engine.dynamics._kernels.algebra import cross, kernel, tuple_op


def contact_frames(normals) -> np.ndarray:
    """(nc, 3, 3) frames C for unit normals (nc, 3): rows (n, t1, t2), see ``contact_frame``."""
    n = np.ascontiguousarray(normals, dtype=float).reshape(-1, 3)
    C = np.empty((len(n), 3, 3))
    frames(n, C)
    return C


@tuple_op
def contact_frame(n):
    """Rows (n, t1, t2), right-handed: t1 = n × e/‖n × e‖ with e the world axis least aligned with n (the first
    one on ties), t2 = n × t1 — a deterministic function of n."""
    a0, a1, a2 = abs(n[0]), abs(n[1]), abs(n[2])
    e = (1.0, 0.0, 0.0) if a0 <= a1 and a0 <= a2 else ((0.0, 1.0, 0.0) if a1 <= a2 else (0.0, 0.0, 1.0))
    t = cross(n, e)
    k = 1.0 / math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    t1 = (k * t[0], k * t[1], k * t[2])
    return n, t1, cross(n, t1)


@kernel
def frames(normal, C):
    """C[i] = ``contact_frame(normal[i])`` for every contact."""
    for i in range(normal.shape[0]):
        rows = contact_frame((normal[i, 0], normal[i, 1], normal[i, 2]))
        for r in range(3):
            for c in range(3):
                C[i, r, c] = rows[r][c]
