"""The rows of the contact solve besides the contacts, and the world's body arrays they and the contacts act on.

``WorldBodies``: every body of the universe in world-frame arrays (placements, velocities, wrenches), filled by
the dynamics and read by the contact stage (``stepping.py``). ``Closures``: the rows each multibody brings to the
same solve — its loop closures, its joints' dry friction (``<Solver joint_friction="constraint">``) and limits
(``<Solver joint_limits="constraint">``) — as arrays, their maps and free velocities updated each step
(``problem.py``'s kernels).
"""
from __future__ import annotations

import numpy as np

from engine.collision._kernels import bind
from engine.contact._kernels import BILATERAL, FRICTION, LIMIT
from engine.contact.problem import joint_limit_maps, joint_row_maps, table_rows

LIMIT_MARGIN = 2e-2  # rad or m: a joint this close to a bound has its limit row (wide: impacts are fast)


class WorldBodies:
    """Every body of the universe in world-frame arrays, global index g = offset[m] + b; the last row stands for
    the static side (a static body, a fixed base) and stays zero.  R (n, 3, 3), p (n, 3): placements; V, V_free
    (n, 6): spatial velocities (v_o, ω) of the body origins in world axes at v and at v_free; wrench (n, 6): the
    contact and closure wrenches (f, n_o) of the last step, world axes, at the body origins."""

    def __init__(self, nbodies):
        self.offset = np.cumsum([0] + list(nbodies)).astype(np.int64)
        n = int(self.offset[-1]) + 1
        self.R, self.p = np.zeros((n, 3, 3)), np.zeros((n, 3))
        self.V, self.V_free, self.wrench = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))

    def rows(self, m) -> slice:
        return slice(int(self.offset[m]), int(self.offset[m + 1]))


class Closures:
    """The rows each multibody brings to the solve besides its contacts, as arrays: first its loop closures
    (``problem.closure_rows``; entry c < ``n_closures`` belongs to multibody ``mb[c]``, those of multibody m are
    ``start[m]:start[m + 1]``); then, when the solver takes the joints' dry friction (``<Solver
    joint_friction="constraint">``), one row per dof with friction (``problem.joint_rows``; those of multibody m
    are ``joint_start[m]:joint_start[m + 1]``, their dofs ``joint_dof``, bounds ``bound``); then, when it takes
    the joints' limits (``<Solver joint_limits="constraint">``), one row per limited joint (``problem.limit_rows``;
    ``limit_start``), active (``rows`` 1) only near a bound. ``force`` keeps the last force of each; ``still``: a
    zero velocity for every body (closure rows then measure the closure error, ``project_closures``)."""

    def __init__(self, runs, joint_friction=False, joint_limits=False):
        items = [(m, c) for m, run in enumerate(runs) for c in run.model.closures]
        joints = [(m, *row) for m, run in enumerate(runs) if joint_friction for row in joint_row_maps(run.model)]
        limits = [(m, *row) for m, run in enumerate(runs) if joint_limits for row in joint_limit_maps(run.model)]
        self.n_closures, n_rows = len(items), len(items) + len(joints)
        self.mb = np.array([m for m, _ in items] + [j[0] for j in joints + limits], dtype=np.int64)
        self.start = np.searchsorted(self.mb[:len(items)], np.arange(len(runs) + 1)).astype(np.int64)
        self.joint_start = len(items) + np.searchsorted(self.mb[len(items):n_rows], np.arange(len(runs) + 1))
        self.limit_start = n_rows + np.searchsorted(self.mb[n_rows:], np.arange(len(runs) + 1))
        self.body = np.array([(c.body_a, c.body_b) for _, c in items], dtype=np.int64).reshape(-1, 2)
        self.hinge = np.array([c.kind == "hinge" for _, c in items], dtype=np.bool_)
        self.R = np.array([(c.R_a, c.R_b) for _, c in items], dtype=float).reshape(-1, 2, 3, 3)
        self.p = np.array([(c.p_a, c.p_b) for _, c in items], dtype=float).reshape(-1, 2, 3)
        self.joint_dof = np.array([-1] * len(items) + [j[1] for j in joints + limits], dtype=np.int64)
        self.joint_body = np.array([(j[2], j[3]) for j in joints] + [(j[3], j[4]) for j in limits],
                                   dtype=np.int64).reshape(-1, 2)
        self.joint_s = np.array([j[4] for j in joints] + [j[5] for j in limits], dtype=float).reshape(-1, 6)
        self.limit_q = np.zeros(len(limits))
        self.limited = [(m, np.array([j[2] for j in limits if j[0] == m], dtype=np.int64),   # (run, q indices,
                         self.limit_q[self.limit_start[m] - n_rows:self.limit_start[m + 1] - n_rows])   # their q)
                        for m in range(len(runs)) if self.limit_start[m + 1] > self.limit_start[m]]
        self.lower = np.array([j[6] for j in limits], dtype=float)
        self.upper = np.array([j[7] for j in limits], dtype=float)
        self.kind = np.array([BILATERAL] * len(items) + [FRICTION] * len(joints) + [LIMIT] * len(limits), np.int64)
        self.bound = np.array([0.0] * len(items) + [j[5] for j in joints] + [0.0] * len(limits), dtype=float)
        self.base_R = np.array([run.instance.R for run in runs], dtype=float).reshape(-1, 3, 3)
        self.base_p = np.array([run.instance.p for run in runs], dtype=float).reshape(-1, 3)
        n = len(self.mb)
        self.side, self.X = np.zeros((n, 2), np.int64), np.zeros((n, 2, 6, 6))
        self.u, self.rows, self.force = np.zeros((n, 6)), np.zeros(n, np.int64), np.zeros((n, 6))
        self.active, self.active_mb = np.zeros(n, bool), np.full(n, -1, np.int64)
        self.entries = [np.r_[self.start[m]:self.start[m + 1], self.joint_start[m]:self.joint_start[m + 1],
                              self.limit_start[m]:self.limit_start[m + 1]].astype(np.int64) for m in range(len(runs))]
        self.still = np.zeros((int(sum(run.model.nbodies for run in runs)) + 1, 6))   # zero velocities
        self._table_rows = None                                # ``table_rows`` bound on the first update

    def __len__(self):
        return len(self.mb)

    def update(self, runs, bodies, dt, settings):
        """Every row's maps X and free velocity u at the bodies' placements and free velocities, the limit rows'
        targets and activity at the runs' q (``settings``: the universe's ContactSettings), in one compiled call
        (``problem.table_rows``, bound to this table's and ``bodies``' arrays on the first step: no per-call type
        dispatch of its 28 arguments)."""
        for m, index, q in self.limited:
            np.take(runs[m].q, index, out=q)
        erp = settings.erp if settings.correction == "baumgarte" else 0.0
        args = (self.n_closures, int(self.limit_start[0]), self.mb, self.body, self.hinge, self.R, self.p,
                bodies.offset, self.base_R, self.base_p, bodies.R, bodies.p, bodies.V_free, self.joint_body,
                self.joint_s, self.limit_q, self.lower, self.upper, float(dt), float(erp), float(settings.slop),
                LIMIT_MARGIN, self.side, self.X, self.u, self.rows, self.active, self.active_mb)
        if self._table_rows is None:
            self._table_rows = bind(table_rows, *args)
        self._table_rows(*args)

    def of(self, m) -> np.ndarray:
        """The active entries of multibody m: its closures, its joints' friction rows and active limits."""
        entries = self.entries[m]
        return entries[self.active[entries]]
