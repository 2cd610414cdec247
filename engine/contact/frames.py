"""Contact frames: per contact an orthonormal basis (n, t1, t2), stored as the rows of a (3, 3) matrix C so that
local = C @ world (seed 000 eq. 3.27: [v_n; v_t1; v_t2])."""
from __future__ import annotations

import numpy as np


def contact_frames(normals: np.ndarray) -> np.ndarray:
    """(nc, 3, 3) frames C with rows (n, t1, t2), right-handed; t1 is n × e where e is the world axis least
    aligned with n, so the frame is a deterministic function of n."""
    n = np.asarray(normals, dtype=float).reshape(-1, 3)
    axis = np.eye(3)[np.argmin(np.abs(n), axis=1)]
    t1 = np.cross(n, axis)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    t2 = np.cross(n, t1)
    return np.stack([n, t1, t2], axis=1)
