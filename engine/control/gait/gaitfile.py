"""A gait file: one period of joint trajectories, from a CSV or an optimiser's ``.npz`` (``articula optimise``).

* CSV: a header ``t, q_1, ..., q_n`` then one row per sample, optionally followed by ``v_1, ..., v_n`` (the
  velocity coordinates) and ``tau_1, ..., tau_n`` (the joint forces the optimiser found; kept for comparison,
  not applied).  q_i are the model's configuration coordinates in its order (``model.joints[j].idx_q``).
* NPZ: arrays ``t`` (N,), ``q`` (N, nq), optionally ``v`` (N, nv) and ``tau`` (N, nv), and ``joint_names``
  (nv,), which must then be the model's, coordinate by coordinate (other arrays, such as the optimiser's
  ``status`` and ``energy``, are ignored).

Times are seconds from the start of the period, increasing.  The trajectory is interpolated by a cubic spline
(Hermite on the given velocities when ``v`` is there), so q̇ and q̈ follow from it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.interpolate import CubicHermiteSpline, CubicSpline

from engine.csvfile import numbers, read_lines
from engine.errors import UniverseError


class GaitFile:
    """``t`` (N,), ``q`` (N, nq), ``v`` and ``tau`` (N, nv) or None, and the spline ``q(t)`` (``q(t, 1)``,
    ``q(t, 2)`` its derivatives) over one period ``[0, period]``."""

    def __init__(self, model, path):
        path = Path(path)
        self.path = str(path)
        if path.suffix == ".npz":
            self.t, self.q, self.v, self.tau = _read_npz(path, model)
        else:
            self.t, self.q, self.v, self.tau = _read_csv(path, model.nq, model.nv)
        if self.q.shape[1] != model.nq:
            raise UniverseError(f"the gait has {self.q.shape[1]} configuration columns, '{model.name}' has "
                                f"nq = {model.nq}", self.path, value=self.q.shape[1])
        for name, a in (("v", self.v), ("tau", self.tau)):
            if a is not None and a.shape != (len(self.t), model.nv):
                raise UniverseError(f"'{name}' must be ({len(self.t)}, {model.nv})", self.path, value=a.shape)
        if len(self.t) < 2:
            raise UniverseError("a gait needs at least two samples", self.path, value=len(self.t))
        bad = np.flatnonzero(np.diff(self.t) <= 0.0)
        if bad.size:
            line = int(bad[0]) + 3 if path.suffix != ".npz" else None       # the CSV line of the later sample
            raise UniverseError("gait times must increase", self.path, line, float(self.t[bad[0] + 1]))
        if model.nq != model.nv:
            raise UniverseError("gait files drive models whose q and v have the same size (1-DOF joints)",
                                self.path, value=(model.nq, model.nv))
        self.period = float(self.t[-1] - self.t[0])
        t = self.t - self.t[0]
        self.spline = (CubicSpline(t, self.q, axis=0) if self.v is None
                       else CubicHermiteSpline(t, self.q, self.v, axis=0))

    def __call__(self, s, order=0):
        """q, q̇ or q̈ (``order``) at time s ∈ [0, period] of the period."""
        return self.spline(np.clip(s, 0.0, self.period), order)


def _read_npz(path, model):
    try:
        with np.load(path) as f:
            arrays = {k: np.asarray(f[k], float) for k in ("t", "q", "v", "tau") if k in f.files}
            names = [str(n) for n in f["joint_names"]] if "joint_names" in f.files else None
    except (OSError, ValueError) as exc:
        raise UniverseError(f"cannot read gait: {exc}", str(path)) from None
    for key in ("t", "q"):
        if key not in arrays:
            raise UniverseError("a gait .npz needs arrays 't' and 'q' (and optionally 'v', 'tau')", str(path),
                                value=key)
    for key, a in arrays.items():
        if not np.all(np.isfinite(a)):
            raise UniverseError(f"gait array '{key}' has a non-finite value", str(path), value=key)
    ours = [model.joint_name[j] for j in model.dof_joint]
    if names is not None and names != ours:
        wrong = next((a, b) for a, b in zip(names + [None] * len(ours), ours + [None] * len(names)) if a != b)
        raise UniverseError(f"the gait's joint_names are not '{model.name}''s coordinates {ours}", str(path),
                            value=wrong[0])
    return arrays["t"].reshape(-1), np.atleast_2d(arrays["q"]), arrays.get("v"), arrays.get("tau")


def _read_csv(path, nq, nv):
    header, rows = read_lines(path, "gait")
    expected = ["t"] + [f"q_{i}" for i in range(1, nq + 1)]
    velocities, forces = [f"v_{i}" for i in range(1, nv + 1)], [f"tau_{i}" for i in range(1, nv + 1)]
    if header[:nq + 1] != expected or header[nq + 1:] not in ([], velocities, velocities + forces, forces):
        raise UniverseError(f"a gait CSV's header is 't, q_1..q_{nq}' then optionally 'v_1..v_{nv}' and "
                            f"'tau_1..tau_{nv}'", str(path), 1, ", ".join(header))
    table = numbers(path, rows, len(header), "gait")
    for r in range(len(table)):
        bad = np.flatnonzero(~np.isfinite(table[r]))
        if bad.size:
            raise UniverseError(f"non-finite '{header[bad[0]]}'", str(path), r + 2, table[r, bad[0]])
    v = table[:, nq + 1:nq + 1 + nv] if "v_1" in header else None
    tau = table[:, -nv:] if "tau_1" in header else None
    return table[:, 0], table[:, 1:nq + 1], v, tau
