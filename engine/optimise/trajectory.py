"""The optimiser's output: a trajectory file that a playback controller reads (docs/plugins.md).

``.npz``: arrays ``t`` (N+1,), ``q`` (N+1, nq), ``v`` (N+1, nv), ``tau`` (N+1, nv) — tau the generalised
actuator forces at each node, what the simulator should apply — plus ``joint_names`` (nv,), ``status`` and
``energy``.  ``.csv``: one row per node, columns ``t, q_1..q_nq, v_1..v_nv, tau_1..tau_nv`` (1-based, model
order); the header line names them.  Linear interpolation between nodes is the transcription's own
(trapezoidal: piecewise-linear v and tau).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import UniverseError


def columns(nq: int, nv: int) -> list:
    return ["t"] + [f"q_{i}" for i in range(1, nq + 1)] + [f"v_{i}" for i in range(1, nv + 1)] + \
        [f"tau_{i}" for i in range(1, nv + 1)]


def save_trajectory(result, path) -> Path:
    """Write ``result`` (collocation.Result) to ``path`` (.npz or .csv, by its suffix)."""
    path = Path(path)
    if path.suffix == ".npz":
        np.savez(path, t=result.t, q=result.q, v=result.v, tau=result.tau, joint_names=np.array(result.joint_names),
                 status=result.status, energy=result.energy)
    elif path.suffix == ".csv":
        table = np.column_stack([result.t, result.q, result.v, result.tau])
        np.savetxt(path, table, delimiter=",", header=",".join(columns(result.q.shape[1], result.v.shape[1])),
                   comments="")
    else:
        raise UniverseError("the output is a .npz or a .csv file", str(path), value=path.suffix)
    return path


def load_trajectory(path) -> dict:
    """{t, q, v, tau} of a file written by ``save_trajectory`` (``.csv``: nq = nv, the optimiser's case)."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as f:
            return {k: f[k] for k in ("t", "q", "v", "tau")}
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    n = (table.shape[1] - 1) // 3
    return {"t": table[:, 0], "q": table[:, 1:1 + n], "v": table[:, 1 + n:1 + 2 * n], "tau": table[:, 1 + 2 * n:]}
