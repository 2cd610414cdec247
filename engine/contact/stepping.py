"""The contact stages of one time step (seed 000 §3.1–§3.4): detection → groups → Λ → solve → contact wrenches.

Velocity-level time stepping (Moreau–Jean; thesis eqs. 3.17–3.27), forces f held over the step:

    v⁺ = v_free + δt M⁻¹ Jᵀ f,     u⁺ = W f + u_free,     W = δt Λ,     u_free = J v_free

per collision group, with f in the Coulomb cones and Signorini's condition on the normal rows shifted by a
target velocity (``normal_target``: restitution, proximity gap, penetration correction). Loop closures are
bilateral rows of the same solve. Contacts are handled as arrays: per contact, the maps X_a, X_b (3, 6) from the
two bodies' spatial velocities (world axes, at the body origins; see ``problem.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.collision.filters import PairFilter
from engine.collision.world import CollisionSettings, CollisionWorld
from engine.contact.cone import ConstraintBlocks
from engine.contact.delassus import BlockMaps, delassus, workspace
from engine.contact.frames import contact_frames
from engine.contact.groups import collision_groups
from engine.contact.problem import closure_blocks
from engine.contact.solvers import solve, solver_name
from engine.errors import UniverseError


@dataclass(frozen=True)
class GroupReport:
    multibodies: tuple
    contacts: int
    rows: int
    delassus: str
    iterations: int
    residual: float
    violation: float
    converged: bool


def normal_target(depth, u_before, u_free, restitution, dt, settings):
    """The normal velocity each contact must reach at least, u_n⁺ ≥ target.

    * gap g = −depth > 0 (a proximity contact, seen one step early): target = −g/δt — the bodies may approach
      until they touch, not further;
    * penetration beyond ``slop``: target = erp (depth − slop)/δt — pushed back out (Baumgarte-like bias,
      ``correction="baumgarte"``);
    * Newton restitution (seed 000 eq. 3.5, v⁺ = −e v⁻): when the contact is touching or closes within the step
      (g + δt u_free ≤ 0) at a speed u_n⁻ < −v_min, target = max(target, −e u_n⁻); slower impacts are inelastic
      so that resting contacts do not jitter (v_min = 2 · 9.81 m/s² · δt, two steps of free fall).
    """
    target = np.where(depth < 0.0, depth / dt, 0.0)
    if settings.correction == "baumgarte":
        target = target + settings.erp * np.maximum(depth - settings.slop, 0.0) / dt
    closing = (depth >= 0.0) | (dt * u_free <= depth)
    bounce = closing & (u_before < -2.0 * 9.81 * dt) & (restitution > 0.0)
    return np.where(bounce, np.maximum(target, -restitution * u_before), target)


class ContactStage:
    """Owns the CollisionWorld and the warm starts; ``step`` leaves the contact wrenches in ``run.f_contact``."""

    def __init__(self, universe, runs, timer):
        self.universe, self.runs, self.timer = universe, runs, timer
        c = universe.contact
        self.world = CollisionWorld(universe.multibodies, universe.statics, universe.materials,
                                    CollisionSettings(margin=c.margin, max_contacts_per_pair=c.max_points,
                                                      filter=_pair_filter(universe)))
        self.closure_members = [m for m, run in enumerate(runs) if run.model.closures]
        if self.closure_members and solver_name(universe.solver.name) == "lemke":
            raise UniverseError("the Lemke solver takes unilateral contacts only, and this universe has loop "
                                "closures; choose gauss-seidel-newton or gauss-seidel", universe.source,
                                value=universe.solver.name)
        self.offset = np.cumsum([0] + [run.model.nbodies for run in runs])   # global body index = offset[m] + b
        n = int(self.offset[-1]) + 1                                          # + a zero row for static sides
        self.origin, self.V, self.V_free = np.zeros((n, 3)), np.zeros((n, 6)), np.zeros((n, 6))
        self.wrench = np.zeros((n, 6))
        self.warm = {}                    # (pair, cell) or ("closure", m, k) -> last force, the warm start
        self.contacts = None
        self.forces = np.zeros((0, 3))    # world force on body a of each contact
        self.reports = ()

    def step(self, dt):
        for run in self.runs:
            run.f_contact[:] = 0.0
        with self.timer.stage("collision"):
            self.world.update([run.world_placements() for run in self.runs])
            c = self.contacts = self.world.detect()
        self.forces = np.zeros((len(c), 3))
        if len(c) == 0 and not self.closure_members:
            self.reports, self.warm = (), {}
            return
        with self.timer.stage("groups"):
            ma, mb = c.multibody_a, c.multibody_b
            groups = collision_groups(len(self.runs), ma, mb)
            grouped = {m for members, _ in groups for m in members}
            groups += [([m], np.zeros(0, int)) for m in self.closure_members if m not in grouped]
            arrays = self._contact_arrays(c, dt)
        self.wrench[:] = 0.0
        warm, reports = {}, []
        for members, indices in groups:
            reports.append(self._solve_group(members, indices, arrays, dt, warm))
        self._apply()
        self.warm, self.reports = warm, tuple(reports)

    def _contact_arrays(self, c, dt):
        """Per contact: global body indices, frames, maps X_a/X_b (world), free velocities and targets."""
        for m, run in enumerate(self.runs):
            s = slice(self.offset[m], self.offset[m + 1])
            self.origin[s], self.V[s], self.V_free[s] = run.world_placements()[1], run.V, run.V_free
        static = len(self.origin) - 1
        ga = np.where((c.multibody_a >= 0) & (c.body_a >= 0), self.offset[np.maximum(c.multibody_a, 0)] + c.body_a,
                      static)
        gb = np.where((c.multibody_b >= 0) & (c.body_b >= 0), self.offset[np.maximum(c.multibody_b, 0)] + c.body_b,
                      static)
        C = contact_frames(c.normal)
        X_a, X_b = _point_maps(C, c.point - self.origin[ga]), -_point_maps(C, c.point - self.origin[gb])
        X_a[ga == static] = 0.0
        X_b[gb == static] = 0.0
        u_now = np.einsum("kij,kj->ki", X_a, self.V[ga]) + np.einsum("kij,kj->ki", X_b, self.V[gb])
        u_free = np.einsum("kij,kj->ki", X_a, self.V_free[ga]) + np.einsum("kij,kj->ki", X_b, self.V_free[gb])
        target = normal_target(c.depth, u_now[:, 0], u_free[:, 0], c.restitution, dt, self.universe.contact)
        u_free[:, 0] -= target
        keys = [(int(p), *cell) for p, cell in zip(c.pair, np.floor(c.point / 0.01).astype(int).tolist())]
        return dict(ga=ga, gb=gb, C=C, X_a=X_a, X_b=X_b, u_free=u_free, keys=keys, mu=c.mu, static=static)

    def _solve_group(self, members, indices, a, dt, warm):
        with self.timer.stage("delassus"):
            closures = [(m, closure_blocks(m, self.runs[m].model.closures, (self.runs[m].instance.R,
                                                                           self.runs[m].instance.p),
                                           *self.runs[m].world_placements(), dt)) for m in members]
            closures = [(m, k, b) for m, blocks in closures for k, b in enumerate(blocks)]
            rows = [3] * len(indices) + [b.rows for _, _, b in closures]
            start = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
            W = np.zeros((start[-1], start[-1]))
            methods = [self._add_delassus(W, m, indices, closures, start, dt, a) for m in members]
            u_free = np.concatenate([a["u_free"][indices].ravel()] + [self._closure_velocity(m, b)
                                                                      for m, _, b in closures])
            keys = [a["keys"][i] for i in indices] + [("closure", m, k) for m, k, _ in closures]
        with self.timer.stage("solver"):
            layout = ConstraintBlocks.from_blocks(rows, [False] * len(indices) + [True] * len(closures),
                                                  np.concatenate([a["mu"][indices], np.zeros(len(closures))]))
            f0 = np.concatenate([_warm(self.warm, k, r) for k, r in zip(keys, rows)])
            f, stats = solve(self.universe.solver.name, 0.5 * (W + W.T), u_free, layout, self.universe.solver, f0=f0)
        for k, r, s in zip(keys, rows, start):
            warm[k] = f[s:s + r]
        fc = f[:3 * len(indices)].reshape(-1, 3)
        self.forces[indices] = np.einsum("kji,kj->ki", a["C"][indices], fc)
        np.add.at(self.wrench, a["ga"][indices], np.einsum("kij,ki->kj", a["X_a"][indices], fc))
        np.add.at(self.wrench, a["gb"][indices], np.einsum("kij,ki->kj", a["X_b"][indices], fc))
        for (m, _, b), s in zip(closures, start[len(indices):]):
            for mm, body, X in b.bodies:
                self.wrench[self.offset[mm] + body] += X.T @ f[s:s + b.rows]
        return GroupReport(tuple(members), len(indices), len(f), "+".join(sorted(set(methods))), stats.iterations,
                           stats.residual, stats.cone_violation, stats.converged)

    def _add_delassus(self, W, m, indices, closures, start, dt, a):
        """W[rows, rows] += δt Λ_m over the blocks touching multibody m (Λ_m by ``engine.contact.delassus``,
        in base axes: X_base = X_world diag(R_m, R_m))."""
        run, lo, hi = self.runs[m], self.offset[m], self.offset[m + 1]
        term_block, term_body, term_X, block_rows, block_start = [], [], [], [], []
        for k, i in enumerate(indices):
            for g, X in ((a["ga"][i], a["X_a"][i]), (a["gb"][i], a["X_b"][i])):
                if lo <= g < hi:
                    if not block_start or block_start[-1] != start[k]:
                        block_rows.append(3)
                        block_start.append(start[k])
                    term_block.append(len(block_rows) - 1)
                    term_body.append(g - lo)
                    term_X.append(np.vstack([X, np.zeros((3, 6))]))
        for (mm, _, b), s in zip(closures, start[len(indices):]):
            if mm == m:
                block_rows.append(b.rows)
                block_start.append(s)
                for _, body, X in b.bodies:
                    term_block.append(len(block_rows) - 1)
                    term_body.append(body)
                    term_X.append(np.vstack([X, np.zeros((6 - b.rows, 6))]))
        if not term_block:
            return "none"
        R6 = np.kron(np.eye(2), run.instance.R)
        maps = BlockMaps.from_arrays(term_block, term_body, np.array(term_X) @ R6, block_rows)
        Lam = delassus(run.model, run.data, run.q, maps, self.universe.solver.delassus, reuse_aba=True)
        rows = np.concatenate([np.arange(s, s + r) for s, r in zip(block_start, block_rows)])
        W[np.ix_(rows, rows)] += dt * Lam
        return workspace(run.model, run.data).method

    def _closure_velocity(self, m, block):
        """u_free of a closure block: its maps applied to the free body velocities, plus the drift bias."""
        u = block.bias.copy()
        for mm, body, X in block.bodies:
            u += X @ self.V_free[self.offset[mm] + body]
        return u

    def _apply(self):
        """World wrenches at the body origins → body-frame contact wrenches for the velocity update."""
        for m, run in enumerate(self.runs):
            w = self.wrench[self.offset[m]:self.offset[m + 1]]
            if np.any(w):
                R = run.world_placements()[0]
                run.f_contact[:, :3] = np.einsum("bji,bj->bi", R, w[:, :3])
                run.f_contact[:, 3:] = np.einsum("bji,bj->bi", R, w[:, 3:])


def _point_maps(C, r):
    """X = C [1, −[r]×] (k, 3, 6): frame rows applied to the velocity of the point at offset r."""
    X = np.empty((len(C), 3, 6))
    X[:, :, :3] = C
    # row i of −C [r]× is −c_iᵀ [r]× = (r × c_i)ᵀ
    X[:, :, 3:] = np.cross(r[:, None, :], C)
    return X


def _warm(previous, key, rows):
    f = previous.get(key)
    return f if f is not None and len(f) == rows else np.zeros(rows)


def _pair_filter(universe) -> PairFilter:
    """The universe's CollisionPairs as object-name patterns (a bare multibody label means all its links)."""
    multibodies = {m.name for m in universe.multibodies}

    def pattern(label):
        return f"{label}/*" if label in multibodies else label

    c = universe.contact
    include = tuple((pattern(a), pattern(b)) for a, b in c.include)
    exclude = tuple((pattern(a), pattern(b)) for a, b in c.exclude)
    if c.default_pairs == "none":
        exclude = (("*", "*"),) + exclude
    return PairFilter(include=include, exclude=exclude)
