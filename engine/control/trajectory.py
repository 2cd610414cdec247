"""Joint trajectories read from a CSV file: a header ``t, <joint name>, ...`` then one row per time."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import UniverseError, did_you_mean


class JointTrajectory:
    """Piecewise-linear q_ref(t) for some 1-DOF joints of a model (held constant outside the time range)."""

    def __init__(self, model, path):
        path = Path(path)
        try:
            with path.open() as fh:
                header = [h.strip() for h in fh.readline().split(",")]
            table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        except (OSError, ValueError) as exc:
            raise UniverseError(f"cannot read trajectory: {exc}", str(path)) from None
        if header[0] != "t" or table.shape[1] != len(header):
            raise UniverseError("a trajectory CSV starts with a header 't, joint, ...' matching its columns",
                                str(path), 1, header)
        if not np.all(np.isfinite(table)) or np.any(np.diff(table[:, 0]) <= 0.0):
            raise UniverseError("trajectory times must be finite and increasing", str(path))
        names = [j.name for j in model.joints]
        self.idx_q, self.idx_v = [], []
        for name in header[1:]:
            if name not in names:
                raise UniverseError(f"trajectory column is not a joint{did_you_mean(name, names)}", str(path), 1, name)
            joint = model.joint(name)
            if joint.nq != 1:
                raise UniverseError("trajectories drive 1-DOF joints only", str(path), 1, name)
            self.idx_q.append(joint.idx_q)
            self.idx_v.append(joint.idx_v)
        self.t, self.values = table[:, 0], table[:, 1:]

    def __call__(self, t, q_ref):
        """Write q_ref(t) into the driven entries of ``q_ref``."""
        for k, idx in enumerate(self.idx_q):
            q_ref[idx] = np.interp(t, self.t, self.values[:, k])
