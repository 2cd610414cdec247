"""The contact stages of one time step (seed 000 §3.1–§3.4): detection → groups → Λ → solve → contact wrenches.

Velocity-level time stepping (Moreau–Jean; thesis eqs. 3.17–3.27), forces f held over the step:

    v⁺ = v_free + δt M⁻¹ Jᵀ f,     u⁺ = W f + u_free,     W = δt Λ,     u_free = J v_free

per collision group, with f in the Coulomb cones and Signorini's condition on the normal rows shifted by a
target velocity (``normal_target``: restitution, proximity gap, penetration correction). Loop closures are
bilateral rows of the same solve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.collision.filters import PairFilter
from engine.collision.world import CollisionSettings, CollisionWorld
from engine.contact.cone import ConstraintBlocks
from engine.contact.delassus import choose_method, delassus
from engine.contact.frames import contact_frames
from engine.contact.groups import collision_groups
from engine.contact.problem import closure_blocks, constraint_map, contact_block
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
        self.warm = {}                    # (pair, cell) -> last local force, the solver's warm start
        self.contacts = None
        self.forces = np.zeros((0, 3))    # world force on body a of each contact
        self.reports = ()

    def step(self, dt):
        for run in self.runs:
            run.f_contact[:] = 0.0
        with self.timer.stage("collision"):
            self.world.update([run.world_placements() for run in self.runs])
            contacts = self.world.detect()
        with self.timer.stage("groups"):
            groups = collision_groups(len(self.runs), contacts.multibody_a, contacts.multibody_b)
            grouped = {m for members, _ in groups for m in members}
            groups += [([m], np.zeros(0, int)) for m in self.closure_members if m not in grouped]
        self.contacts, self.forces = contacts, np.zeros((len(contacts), 3))
        warm, reports = {}, []
        for members, indices in groups:
            reports.append(self._solve_group(members, indices, contacts, dt, warm))
        self.warm, self.reports = warm, tuple(reports)

    def _solve_group(self, members, indices, contacts, dt, warm):
        with self.timer.stage("delassus"):
            blocks, keys, frames = self._blocks(members, indices, contacts, dt)
            bodies = sorted({(m, b) for block in blocks for m, b, _ in block.bodies})
            G = constraint_map(blocks, {mb: k for k, mb in enumerate(bodies)})
            W, methods = self._delassus(members, bodies, G, dt)
            V_free = np.concatenate([self.runs[m].V_free[b] for m, b in bodies]) if bodies else np.zeros(0)
            u_free = G @ V_free + np.concatenate([b.bias for b in blocks])
        with self.timer.stage("solver"):
            layout = ConstraintBlocks.from_blocks([b.rows for b in blocks], [b.bilateral for b in blocks],
                                                  [b.mu for b in blocks])
            f0 = np.concatenate([self.warm.get(k, np.zeros(b.rows)) for k, b in zip(keys, blocks)])
            f, stats = solve(self.universe.solver.name, W, u_free, layout, self.universe.solver, f0=f0)
        for k, (key, block, start) in enumerate(zip(keys, blocks, np.cumsum([0] + [b.rows for b in blocks]))):
            warm[key] = f[start:start + block.rows]
            if k < len(indices):
                self.forces[indices[k]] = frames[k].T @ f[start:start + 3]
        self._apply(G.T @ f, bodies)
        return GroupReport(tuple(members), len(indices), len(f), methods, stats.iterations, stats.residual,
                           stats.cone_violation, stats.converged)

    def _blocks(self, members, indices, contacts, dt):
        """Contact blocks (with their target normal velocity) then closure blocks, and their warm-start keys."""
        frames = contact_frames(contacts.normal[indices])
        sides = [(self._side(contacts.multibody_a[i], contacts.body_a[i], contacts.point[i]),
                  self._side(contacts.multibody_b[i], contacts.body_b[i], contacts.point[i])) for i in indices]
        u_now = np.array([n[0] @ (_velocity(a, False) - _velocity(b, False)) for n, (a, b) in zip(frames, sides)])
        u_free = np.array([n[0] @ (_velocity(a, True) - _velocity(b, True)) for n, (a, b) in zip(frames, sides)])
        target = normal_target(contacts.depth[indices], u_now, u_free, contacts.restitution[indices], dt,
                               self.universe.contact)
        blocks = [contact_block(frames[k], contacts.point[i], _strip(sides[k][0]), _strip(sides[k][1]), target[k],
                                float(contacts.mu[i])) for k, i in enumerate(indices)]
        keys = [(int(contacts.pair[i]), *np.floor(contacts.point[i] / 0.01).astype(int)) for i in indices]
        for m in members:
            run = self.runs[m]
            closures = closure_blocks(m, run.model.closures, (run.instance.R, run.instance.p),
                                      *run.world_placements(), dt)
            blocks += closures
            keys += [("closure", m, k) for k in range(len(closures))]
        return blocks, keys, frames

    def _side(self, multibody, body, point):
        """(multibody, body, origin, V, V_free, point) of a mobile contact side; None for static or fixed base."""
        if multibody < 0 or body < 0:
            return None
        run = self.runs[multibody]
        return int(multibody), int(body), run.world_placements()[1][body], run.V[body], run.V_free[body], point

    def _delassus(self, members, bodies, G, dt):
        """W = δt G Ω Gᵀ summed over the group's multibodies (Ω is zero between two multibodies)."""
        W = np.zeros((G.shape[0], G.shape[0]))
        methods = set()
        for m in members:
            run = self.runs[m]
            mine = [k for k, (mm, _) in enumerate(bodies) if mm == m]
            if not mine:
                continue
            body_ids = [bodies[k][1] for k in mine]
            method = self.universe.solver.delassus
            method = choose_method(run.model, body_ids) if method == "auto" else method
            methods.add(method)
            R6 = np.kron(np.eye(2), run.instance.R)                 # world axes of (v, ω) from base axes
            cols = np.concatenate([np.arange(6 * k, 6 * k + 6) for k in mine])
            Gm = G[:, cols]
            rows = np.flatnonzero(np.any(Gm != 0.0, axis=1))
            per_row = [[(b, (Gm[r, 6 * j:6 * j + 6] @ R6)[None, :]) for j, b in enumerate(body_ids)
                        if np.any(Gm[r, 6 * j:6 * j + 6])] for r in rows]
            W[np.ix_(rows, rows)] += dt * delassus(run.model, run.data, run.q, per_row, method)
        return 0.5 * (W + W.T), "+".join(sorted(methods))

    def _apply(self, wrenches, bodies):
        """World wrenches Gᵀ f at the body origins → body-frame wrenches for the velocity update."""
        for k, (m, b) in enumerate(bodies):
            run = self.runs[m]
            R = run.world_placements()[0][b]
            run.f_contact[b, :3] += R.T @ wrenches[6 * k:6 * k + 3]
            run.f_contact[b, 3:] += R.T @ wrenches[6 * k + 3:6 * k + 6]


def _velocity(side, free):
    """World velocity of the contact point on a side (zero for a static side)."""
    if side is None:
        return np.zeros(3)
    _, _, origin, V, V_free, point = side
    v = V_free if free else V
    return v[:3] + np.cross(v[3:], point - origin)


def _strip(side):
    return None if side is None else side[:3]


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
