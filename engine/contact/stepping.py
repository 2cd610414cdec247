"""The contact stages of one time step (seed 000 §3.1–§3.4): detection → groups → Λ → solve → contact wrenches.

Velocity-level time stepping (Moreau–Jean; thesis eqs. 3.17–3.27), forces f held over the step:

    v⁺ = v_free + δt M⁻¹ Jᵀ f,     u⁺ = W f + u_free,     W = δt Λ,     u_free = J v_free

per collision group, with f in the Coulomb cones and Signorini's condition on the normal rows shifted by a
target velocity (``normal_target``: restitution, proximity gap, penetration correction). Loop closures are
bilateral rows of the same solve. Everything is arrays, filled by the kernels of ``_stepping_kernels``: per
contact the maps X_a, X_b (3, 6) from the two bodies' spatial velocities (world axes, at the body origins; see
``problem.py``); per group its rows, its W = δt Σ_m Λ_m (Λ_m by the Delassus kernels of ``delassus.py``, one
kernel call per multibody of the group) and its solve (all groups in one kernel call); then Gᵀf back to the
bodies. Warm starts follow a contact by its pair and its nearest previous point. A group whose targets cannot
all be met (a box wedged between parallel opposite faces: no velocity leaves both) fails to converge; it is
solved again with its positive targets dropped, so forces stay finite and its residual is reported.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np

from engine import faults, plugins
from engine.collision._kernels import bind
from engine.collision.filters import PairFilter
from engine.collision.world import CollisionSettings, CollisionWorld
from engine.contact import _group_delassus_kernels as D
from engine.contact import _stepping_kernels as K
from engine.contact._rigid_arrays import FIELDS as RIGID_FIELDS
from engine.contact._rigid_kernels import rigid_arrays, rigid_contacts
from engine.contact._tree_arrays import FIELDS as TREE_FIELDS
from engine.contact._tree_kernels import tree_arrays, tree_contacts
from engine.contact.closures import Closures, WorldBodies
from engine.contact._linalg_kernels import REUSE_ROWS, no_keep
from engine.contact.cone import ConstraintBlocks
from engine.contact.conic import ProblemExport
from engine.contact.delassus import BlockMaps, delassus, workspace
from engine.contact.gauss_seidel import contact_residual, gauss_seidel_blocks, residual_of
from engine.contact.groups import contact_groups, group_layout, unassembled
from engine.contact.newton import nonsmooth_newton_blocks
from engine.contact.soles import SoleContacts
from engine.contact.solvers import SOLVERS, solve, solver_name
from engine.errors import UniverseError
from engine.dynamics.pack import DF_FRIC
from engine.model.model import JointType
from engine.model.universe import PluginSpec

WARM_RADIUS = 0.01   # m: a contact takes the last force of the previous contact of its pair within this distance
REUSE_SLOP = 0.05    # a pair's contacts are reused while it moves less than 0.05 slop: depths off by < slop / 10
NO_FORCES = np.zeros((0, 3))   # no contact: empty arrays, shared (nothing can be written into them)
NO_PREVIOUS = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)))
METHODS = {D.THESIS: "thesis", D.CHANG_KHATIB: "chang-khatib", D.TEST_FORCE: "test-force",
           D.JOINT_SPACE: "joint-space"}
SOLVER_CODES = {"gauss-seidel": K.GAUSS_SEIDEL, "gauss-seidel-newton": K.GAUSS_SEIDEL_NEWTON,
                "nonsmooth-newton": K.NONSMOOTH_NEWTON}
METHOD_CODES = {"auto": D.AUTO, "thesis": D.THESIS, "chang-khatib": D.CHANG_KHATIB, "test-force": D.TEST_FORCE}


@dataclass(frozen=True)
class GroupReport:
    """One collision group of a step: its multibodies, contacts, constraint rows, Delassus method(s), and the
    solve's iterations, natural residual (N), cone violation (N) and convergence."""

    multibodies: tuple
    contacts: int
    rows: int
    delassus: str
    iterations: int
    residual: float
    violation: float
    converged: bool


@dataclass
class ContactCounts:
    """Totals of a run since the last reset: ``steps`` that solved a contact problem, of which
    ``unconverged_steps`` left at least one group above its tolerance (the best iterate was used), the
    ``contacts`` summed over those steps, of which ``self_contacts`` between two bodies of the same multibody,
    and the most contacts of one step."""

    steps: int = 0
    unconverged_steps: int = 0
    contacts: int = 0
    self_contacts: int = 0
    max_contacts: int = 0

    def add(self, contacts: int, self_contacts: int, unconverged: bool):
        self.steps += 1
        self.unconverged_steps += unconverged
        self.contacts += contacts
        self.self_contacts += self_contacts
        if contacts > self.max_contacts:
            self.max_contacts = contacts

    def summary(self) -> str:
        """One line for a run summary."""
        if not self.steps:
            return "contacts: none"
        return (f"contacts: {self.steps} steps solved, {self.unconverged_steps} unconverged "
                f"({self.unconverged_steps / self.steps:.1%}); {self.contacts / self.steps:.1f} contacts per step "
                f"({self.self_contacts / max(self.contacts, 1):.0%} self-contacts), at most {self.max_contacts}")


class ContactStage:
    """Owns the CollisionWorld and the warm starts; ``step`` leaves the contact wrenches in ``run.f_contact``."""

    def __init__(self, universe, runs, bodies: WorldBodies, timer, free_bodies=None):
        self.universe, self.runs, self.bodies, self.timer = universe, runs, bodies, timer
        self.free_bodies = free_bodies           # the engine's batch of free rigid bodies (their wrenches in one call)
        batched = set(free_bodies.multibody.tolist()) if free_bodies else set()
        self.trees = [(m, run) for m, run in enumerate(runs) if m not in batched]
        c = universe.contact
        self.world = CollisionWorld(universe.multibodies, universe.statics, universe.materials,
                                    CollisionSettings(margin=c.margin, max_contacts_per_pair=c.max_points,
                                                      face_tolerance=c.face_tolerance,
                                                      reuse_distance=REUSE_SLOP * c.slop,
                                                      filter=_pair_filter(universe)),
                                    placements=(bodies.R[:-1], bodies.p[:-1]))   # every body but the static row
        self.closures = Closures(runs, universe.solver.joint_friction == "constraint",
                                 universe.solver.joint_limits == "constraint")
        cl = self.closures
        for m, run in enumerate(runs):           # the joints' dry friction: rows of the solve, no longer a torque
            run.data.model_pack.df[cl.joint_dof[cl.joint_start[m]:cl.joint_start[m + 1]], DF_FRIC] = 0.0
        specs = [(m, spec) for m, mb in enumerate(universe.multibodies) for spec in mb.soles]
        self.soles = SoleContacts(specs, self.world, bodies, c.margin) if specs else None
        self.solver = solver_name(universe.solver.name)
        self.plugin = None if self.solver in SOLVERS else plugins.create(
            PluginSpec("solver", self.solver, source=universe.source), settings=universe.solver)
        if len(self.closures) and self.solver == "lemke":
            raise UniverseError("the Lemke solver takes unilateral contacts only, and this universe has loop "
                                "closures or joint-friction rows; choose nonsmooth-newton, gauss-seidel-newton or "
                                "gauss-seidel", universe.source, value=universe.solver.name)
        self.export = None           # a conic.ProblemExport writing every group's problem (``export_problems``)
        self.erp = c.erp if c.correction == "baumgarte" else 0.0
        self.method = universe.solver.delassus
        self.work = [workspace(run.model, run.data) for run in runs]     # Delassus workspaces, one per multibody
        self.rigid = np.array([_free_rigid_body(run) for run in runs], dtype=bool).reshape(-1)
        self.body_inverse_factor = np.zeros((len(bodies.R), 6, 6))    # L, L Lᵀ = M⁻¹ (body frame) of the rigid ones
        for m in np.flatnonzero(self.rigid):
            M_inv = np.linalg.inv(runs[m].model.body_inertia[0])
            self.body_inverse_factor[bodies.offset[m]] = np.linalg.cholesky(M_inv)
        self.sole_free = np.array([not mb.soles for mb in universe.multibodies], dtype=bool).reshape(-1)
        #: a solver of ``solve_groups`` (no plugin, not Lemke) without a time budget, which the paths below reuse
        plain = self.solver in SOLVER_CODES and self.plugin is None and universe.solver.time_budget is None
        #: soles, a Delassus method that factors Λ (``_stick_first``) and a plain solver: a group standing on soles
        #: alone first tries the stick-first solve
        self.stick = plain and self.soles is not None and self.method in ("auto", "thesis", "chang-khatib")
        self.factor = np.empty((0, 2), np.int64), np.empty((0, 2, 6))     # B of the rigid groups (``_delassus``)
        n = len(runs)
        self.parent, self.group_of = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.member_start, self.members = np.zeros(n + 1, np.int64), np.zeros(n, np.int64)
        #: no pair of objects can touch, no sole, no closure or joint row: every step is contactless (a bicycle on
        #: its <Wheel>s alone), so ``step`` has nothing to do
        self.idle = not len(self.world.pairs) and self.soles is None and not len(self.closures)
        #: free rigid bodies alone (every multibody in the engine's batch), no closure or sole, the default Delassus
        #: method and a plain solver: groups to wrenches in one compiled call (``_rigid_step``)
        self.rigid_only = (plain and free_bodies is not None and not self.trees and not len(self.closures)
                           and self.soles is None and self.method == "auto")
        #: one articulated multibody (a robot on the ground), no sole, a Delassus method of ``multibody_delassus``
        #: and a plain solver: rows to wrenches in one compiled call (``_tree_step``)
        self.tree_only = (plain and len(runs) == 1 and len(self.trees) == 1 and not self.rigid[0]
                          and self.soles is None and self.method != "dense")
        self.contact_start, self.row_start, self.stats = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64), \
            np.zeros((n, 7))                     # ``_rigid_step``'s groups: their contacts, rows and solves
        if self.rigid_only:                      # ``rigid_contacts``' arguments that are the same every step
            self.rigid_arrays = self._rigid_arrays()
            self.rigid_contacts = self._bind(rigid_contacts, self.rigid_arrays)
        if self.tree_only:                       # ``tree_contacts``' arguments that are the same every step
            self.tree_arrays = self._tree_arrays()
            self.tree_contacts = self._bind(tree_contacts, self.tree_arrays)
        self.previous = self.contacts = None     # nothing forgotten yet: ``reset`` below forgets
        self.reset()

    def reset(self):
        """Forget the contacts, the warm starts, the narrowphase results kept for reuse and the run's ``counts``."""
        self.counts = ContactCounts()
        self.world.restore()
        self._forget()

    def _forget(self):
        """Forget the contacts and the warm starts (a step without contacts; the run's ``counts`` stay). Nothing to
        do where they are forgotten already and no step or restore has set them since (each sets ``previous`` to
        new arrays; soles aside, which a contactless step may move): a body in flight steps without it (and, in
        ``FreeBodies.step``, without loading the same empty warm start again)."""
        if self.previous is NO_PREVIOUS and self.contacts is None and self.soles is None:
            return
        self.keep = no_keep()            # the linear solves' kept factor (``_linalg_kernels.kept_solve``)
        self.contacts, self._groups, self._reports = None, None, ()
        self.forces = NO_FORCES                              # world force on body a of each contact
        self.previous = NO_PREVIOUS                          # pair, point, local force
        self.closures.force[:] = 0.0
        if self.soles:
            self.soles.relax()

    def warm_start(self) -> dict:
        """The warm start of the next solve: the last contacts' pairs, points and local forces and the kept factor
        of the linear solves (``_linalg_kernels.kept_solve``) by reference (arrays the next step does not write: each
        step makes new ones, or the free bodies' one-call step writes the other of two slots), copies of the closure
        forces, the soles' node displacements and the narrowphase results kept for reuse (``world.kept``). With the
        configuration, it makes a restored run continue exactly as the original. ``Simulation`` keeps it after every
        step (its last good state); ``State.capture`` copies it."""
        pair, point, force = self.previous
        f = self.closures.force                         # (an empty array, no closure: nothing to copy)
        warm = {"pair": pair, "point": point, "force": force, "closure_force": f.copy() if len(f) else f,
                "sole_displacement": self.soles.displacements() if self.soles else [], "factor": self.keep[:2]}
        kept = self.world.kept()
        if kept:                                        # (no merge when empty: with the literal, half the time)
            warm.update(kept)
        return warm

    def set_warm_start(self, warm: dict):
        """Restore a ``warm_start()``; an empty dict forgets the warm start."""
        if not warm:
            self.reset()
            return
        self.previous = (np.array(warm["pair"], np.int64, order="C"), np.array(warm["point"], float, order="C"),
                         np.array(warm["force"], float, order="C"))    # the types ``FreeBodies.step`` is bound to
        self.closures.force[:] = warm["closure_force"]
        L, meta = warm.get("factor", no_keep()[:2])      # the same solves as the original
        self.keep = (np.ascontiguousarray(L, float), np.ascontiguousarray(meta, np.int64)) + no_keep()[2:]
        self.world.restore(warm)
        if self.soles:
            self.soles.set_displacements(warm.get("sole_displacement"))

    def step(self, dt):
        """Detection → groups → Λ → solve → ``run.f_contact`` for the step δt (each stage timed)."""
        if self.idle:                                    # as a contactless step leaves it: reset, no wrench
            return
        with self.timer.stage("collision"):
            self.world.update()                          # its placements are the bodies' rows
            c = self.world.detect()
            if self.soles:
                c = self.soles.detect(c)
            self.contacts = c
        if len(c) == 0 and not len(self.closures):
            self._forget()
            self._apply(0)
            return
        if self.rigid_only and self.export is None:
            with self.timer.stage("solver"):             # groups, Delassus and solve in one call
                self._rigid_step(c, dt)
            return
        if self.tree_only and self.export is None:
            with self.timer.stage("solver"):             # groups, Delassus and solve in one call
                self._tree_step(c, dt)
            return
        stick = self.stick and self.export is None
        with self.timer.stage("groups"):                 # the warm starts after the stick-first solve, which needs none
            a, ng = self._layout(c, dt, warm=not stick)
        if ng == 0:                                      # no moving body touches, no limit is near
            self._forget()
            self._apply(0)
            return
        if self.soles:
            with self.timer.stage("delassus"):           # the soles' frames and free-velocity shift
                self.soles.shift(a, dt)
        solved = self._stick_first(a, ng, dt) if stick else {}
        if stick:                                        # the other groups' warm starts
            done = np.fromiter(solved, np.int64, len(solved))
            with self.timer.stage("groups"):
                K.warm_start_rows(ng, done, a["contact_start"], a["contacts"], a["contact_row"], c.pair, c.point,
                                  *self.previous, WARM_RADIUS, a["f"])
        with self.timer.stage("delassus"):
            if solved:                                   # the groups solved stick-first have no W
                unassembled(ng, a["row_start"], done, a["w_start"])
            W = np.zeros(a["w_start"][ng])
            methods = self._delassus(a, W, ng, dt, solved)
            if self.soles:
                self.soles.add_compliance(a, W, dt)
        with self.timer.stage("solver"):
            stats = self._solve_groups(a, W, ng, solved)
            cl = self.closures
            f_local = np.empty((len(c), 3))
            self.forces = np.empty((len(c), 3))
            K.scatter(a["f"], a["contact_row"], a["C"], a["side"], a["X"], a["closure_row"], cl.rows, cl.side, cl.X,
                      f_local, self.forces, cl.force, self.bodies.wrench)
            self._apply(ng)
            if self.soles:
                self.soles.update(f_local)
        self.previous = (c.pair, c.point, f_local)
        t = c.tables
        self.counts.add(len(c), K.self_contacts(c.pair, t.pair_object, t.object_multibody),
                        any(not s[3] for s in stats))
        self._groups = (ng, self.member_start.copy(), self.members.copy(), a["contact_start"], a["row_start"],
                        methods, stats)

    def _rigid_step(self, c, dt):
        """Groups → W → solve → wrenches of the contacts ``c`` between free rigid bodies (``rigid_only``), in one
        call (``_rigid_kernels.rigid_contacts``: the kernels of ``_layout``, ``_delassus``, ``_solve_groups``,
        ``scatter`` and ``_apply``, the same arithmetic)."""
        f_local, forces = np.empty((len(c), 3)), np.empty((len(c), 3))
        rows = 1
        while rows:                                      # rows: room for the largest group's factor, then again
            ng, rows, self_contacts, unconverged = self.rigid_contacts(
                self.rigid_arrays, c.point, c.normal, c.depth, c.pair, *self.previous, dt, self.keep, f_local, forces)
            if rows:
                self._room_for_factor(rows)
        self._one_call_done(c, ng, f_local, forces, self_contacts, unconverged, ("rigid",) * ng)

    def _room_for_factor(self, rows):
        """A kept-factor buffer (``keep``) for ``rows`` rows."""
        self.keep = self.keep[:2] + (np.empty(rows * rows), np.zeros(rows + 1, np.int64))

    def _one_call_done(self, c, ng, f_local, forces, self_contacts, unconverged, methods):
        """After a one-call step (``_rigid_step``, ``_tree_step``; ``ng`` groups, 0: nothing touches): the kept
        factor, the forces, the warm start, the counts and the group reports, as ``step`` leaves them. The group
        reports are read from the one call's arrays themselves (no copy): only the next step writes them, and it
        replaces the reports."""
        if ng == 0:
            self._forget()
            self._apply(0)
            return
        if len(self.keep[2]):                            # without room for a factor, the solves kept none
            self._keep_factor()
        self.forces, self.previous = forces, (c.pair, c.point, f_local)
        self.counts.add(len(c), self_contacts, unconverged > 0)
        self._groups = (ng, self.member_start, self.members, self.contact_start, self.row_start, methods, self.stats)

    def _tree_arrays(self):
        """The arguments of ``tree_contacts`` that are the same every step — the contact tables, arrays and settings
        of the bodies, the groups, the closures' rows and the one multibody (its base placement, ABA and Delassus
        workspaces, contact wrenches and flag) — as one ``TreeArrays`` (under NUMBA_DISABLE_JIT, a namespace of the
        same fields)."""
        b, cl, (_, run), work, s = self.bodies, self.closures, self.trees[0], self.work[0], self.universe.solver
        t = self.world.tables
        arrays = (t.pair_object, t.object_multibody, t.object_body, t.pair_mu, t.pair_restitution, b.offset, b.R, b.p,
                  b.V, b.V_free, b.wrench, self.parent, self.group_of, self.member_start, self.members,
                  self.contact_start, self.row_start, cl.active_mb, cl.start, cl.joint_start, cl.limit_start, cl.rows,
                  cl.kind, cl.bound, cl.side, cl.X, cl.u, cl.force, run.instance.R, run.data.model_pack.bi,
                  run.data.model_pack.df, run.data.ws, run.data.wd, work.Sw, work.Uw, work.y, work.F, work.A, work.Od,
                  work.S6, work.path, work.mark, work.union, run.f_contact, run.contact_flag, self.erp,
                  self.universe.contact.slop, WARM_RADIUS, METHOD_CODES[self.method], SOLVER_CODES[self.solver],
                  s.tolerance, s.max_iterations, self.stats)
        if not hasattr(tree_arrays, "overloads"):
            return SimpleNamespace(**dict(zip(TREE_FIELDS, arrays)))
        return tree_arrays(*arrays)

    def _rigid_arrays(self):
        """The arguments of ``rigid_contacts`` that are the same every step — the contact tables (contiguous copies:
        every world then compiles, and caches, the same kernel), the bodies', groups' and the free bodies' batch's
        arrays, the settings — as one ``RigidArrays`` (under NUMBA_DISABLE_JIT, a namespace of the same fields)."""
        t, b, batch, s = self.world.tables, self.bodies, self.free_bodies, self.universe.solver
        tables = (np.array(x) for x in (t.pair_object, t.object_multibody, t.object_body, t.pair_mu,
                                        t.pair_restitution))
        arrays = (*tables, b.offset, b.R, b.p, b.V, b.V_free, b.wrench, self.body_inverse_factor, self.parent,
                  self.group_of, self.member_start, self.members, self.contact_start, self.row_start, batch.row,
                  batch.multibody, batch.f_contact, batch.in_contact, float(self.erp), float(self.universe.contact.slop),
                  WARM_RADIUS, SOLVER_CODES[self.solver], float(s.tolerance), int(s.max_iterations), self.stats)
        if not hasattr(rigid_arrays, "overloads"):
            return SimpleNamespace(**dict(zip(RIGID_FIELDS, arrays)))
        return rigid_arrays(*arrays)

    @staticmethod
    def _bind(kernel, arrays):
        """``kernel`` (``rigid_contacts``, ``tree_contacts``) compiled for its argument types
        (``collision._kernels.bind``: no per-call type dispatch, ≈ 2 µs on the ``keep`` tuple and the structure
        ``arrays``). The arguments that change are always of these types: the contacts are
        ``CollisionWorld.detect``'s C-contiguous copies, the warm start and ``keep`` C-contiguous arrays of fixed
        dtypes (``set_warm_start``, ``_forget``, ``_keep_factor``, ``_room_for_factor`` make them so), the forces
        new C-contiguous arrays, δt a float."""
        index, points = np.zeros(0, np.int64), np.zeros((0, 3))
        return bind(kernel, arrays, points, points, np.zeros(0), index, index, points, points, 0.0, no_keep(), points,
                    points)

    def _tree_step(self, c, dt):
        """Groups → W → solve → wrenches of the contacts ``c`` and closure rows of the one articulated multibody
        (``tree_only``), in one call (``_tree_kernels.tree_contacts``: the kernels of ``_layout``, ``_delassus``,
        ``_solve_groups``, ``scatter`` and ``_apply``, the same arithmetic)."""
        cl = self.closures
        if len(cl):
            cl.update(self.runs, self.bodies, dt, self.universe.contact)
        self.trees[0][1].fresh_data()
        f_local, forces = np.empty((len(c), 3)), np.empty((len(c), 3))
        rows = 1
        while rows:                                      # rows: room for the largest group's factor, then again
            ng, rows, code, self_contacts, unconverged = self.tree_contacts(
                self.tree_arrays, c.point, c.normal, c.depth, c.pair, *self.previous, dt, self.keep, f_local, forces)
            if rows:
                self._room_for_factor(rows)
        self._one_call_done(c, ng, f_local, forces, self_contacts, unconverged, (METHODS.get(code, "none"),))

    def object_name(self, i: int) -> str:
        """The name of object i of the contacts' tables (the world's objects, then the soles' links)."""
        if i < len(self.world.objects):
            return self.world.object_name(i)
        return self.soles.object_names[i - len(self.world.objects)]

    @property
    def reports(self) -> tuple:
        """A ``GroupReport`` per collision group of the last step (built on first access)."""
        if self._groups is not None:
            ng, ms, members, cs, rs, methods, stats = self._groups
            self._reports = tuple(GroupReport(tuple(members[ms[g]:ms[g + 1]].tolist()), int(cs[g + 1] - cs[g]),
                                              int(rs[g + 1] - rs[g]), methods[g], int(s[0]), float(s[1]),
                                              float(s[2]), bool(s[3])) for g, s in zip(range(ng), stats))
            self._groups = None
        return self._reports

    def _layout(self, c, dt, warm=True):
        """Contact rows, closure rows, groups, their row/block layout, free velocities and warm starts (the contacts'
        zero unless ``warm``)."""
        nc, b, cl, t = len(c), self.bodies, self.closures, c.tables
        a = dict(side=np.empty((nc, 2), np.int64), side_mb=np.empty((nc, 2), np.int64), C=np.empty((nc, 3, 3)),
                 X=np.empty((nc, 2, 3, 6)), u=np.empty((nc, 3)), target=np.empty(nc), mu=np.empty(nc),
                 contact_row=np.empty(nc, np.int64), contact_start=np.empty(len(self.runs) + 1, np.int64),
                 contacts=np.empty(nc, np.int64), closure_row=np.empty(len(cl), np.int64))
        s = self.universe.contact
        K.contact_rows(c.point, c.normal, c.depth, c.pair, t.pair_object, t.object_multibody, t.object_body,
                       t.pair_mu, t.pair_restitution, b.offset, b.p, b.V, b.V_free, dt, self.erp, s.slop, a["side"],
                       a["side_mb"], a["C"], a["X"], a["u"], a["target"], a["mu"])
        cl.update(self.runs, b, dt, self.universe.contact)
        ng = contact_groups(a["side_mb"], cl.active_mb, self.parent, self.group_of, self.member_start, self.members,
                            a["contact_start"], a["contacts"])
        nrows, nblocks = 3 * nc + (int(cl.rows.sum()) if len(cl) else 0), nc + len(cl)
        a.update(row_start=np.empty(ng + 1, np.int64), block_offset=np.empty(ng + 1, np.int64),
                 block_start=np.empty(nblocks + ng, np.int64), block_kind=np.empty(nblocks, np.int64),
                 block_mu=np.empty(nblocks), w_start=np.empty(ng + 1, np.int64))
        group_layout(ng, self.member_start, self.members, a["contact_start"], a["contacts"], a["mu"], cl.start,
                     cl.joint_start, cl.limit_start, cl.rows, cl.kind, cl.bound, a["contact_row"], a["closure_row"],
                     a["row_start"], a["block_offset"], a["block_start"], a["block_kind"], a["block_mu"], a["w_start"])
        f0 = np.zeros((nc, 3))
        if warm:
            K.warm_start(c.pair, c.point, *self.previous, WARM_RADIUS, f0)
        a["u_all"], a["f"] = np.empty(nrows), np.empty(nrows)
        K.gather(a["contact_row"], a["u"], f0, a["closure_row"], cl.rows, cl.u, cl.force, a["u_all"], a["f"])
        return a, ng

    def _stick_first(self, a, ng, dt) -> dict:
        """{g: (Delassus method, stats)} of the groups solved by the stick-first solve of their soles (one multibody
        standing on soles alone, every contact sticking: ``SoleContacts.stick_first``), their Λ left unassembled
        as X Ω Xᵀ (``_group_delassus_kernels.multibody_factors``) and their forces in a["f"]; the other groups take
        the assembled W and the solver."""
        solved = {}
        for g in range(ng):
            members = self.members[self.member_start[g]:self.member_start[g + 1]]
            if len(members) != 1 or self.rigid[members[0]]:
                continue
            terms = self.soles.stick_terms(a, g)
            if terms is None:
                continue
            with self.timer.stage("solver"):             # Λ's factors and the solve: one call
                factor_terms = (self._delassus_terms(a, g, members[0]) + self._delassus_work(members[0])
                                + (METHOD_CODES[self.method],))
                result = self.soles.stick_first(a, g, terms, factor_terms, dt, self.universe.solver.tolerance)
            if result is not None:
                solved[g] = METHODS[result[0]], result[1]
        return solved

    def _delassus(self, a, W, ng, dt, solved=()):
        """W of every group but those ``solved`` stick-first; the groups of free rigid bodies alone (cubes, boxes,
        balls: ``auto`` method) in one kernel call (``rigid_delassus``, which also leaves their factors W = B Bᵀ in
        a["B_col"], a["B_val"], a["B_width"] for the solver; not for a group with a sole, whose compliance W then
        gains), the others multibody by multibody, a group on one multibody (no sole) with its joint-space factor
        (``_tree_factors``) unless a rigid group has its factor in these arrays. Returns each group's method(s)."""
        start, members = self.member_start[:ng], self.members[:self.member_start[ng]]
        rigid = np.logical_and.reduceat(self.rigid[members], start) if ng else start
        nrows = int(a["row_start"][ng])
        if len(self.factor[0]) < nrows:                  # room for B, kept from step to step
            self.factor = np.empty((2 * nrows, 2), np.int64), np.empty((2 * nrows, 2, 6))
        a["B_col"], a["B_val"], a["B_width"] = self.factor[0][:nrows], self.factor[1][:nrows], np.zeros(ng, np.int64)
        if self.method == "auto" and rigid.any():
            D.rigid_delassus(rigid, self.member_start, self.members, self.bodies.offset, a["contact_start"],
                             a["contacts"], a["side"], a["X"], a["contact_row"], a["row_start"], a["w_start"],
                             self.bodies.R, self.body_inverse_factor, W, dt, a["B_col"], a["B_val"], a["B_width"])
            if self.soles:
                a["B_width"][~np.logical_and.reduceat(self.sole_free[members], start)] = 0
        else:
            rigid = np.zeros(ng, dtype=bool)
        factors = {}
        methods = [solved[g][0] if g in solved else "rigid" if rigid[g] else self._group_delassus(a, W, g, dt, factors)
                   for g in range(ng)]
        if factors and not a["B_width"].any():
            self._tree_factors(a, factors)
        return methods

    def _group_delassus(self, a, W, g, dt, factors):
        """W_g += δt Λ_m for each multibody m of group g (Λ_m by ``engine.contact.delassus``, in base axes); a group
        on one multibody without a sole leaves its factor W_g = B Bᵀ (``multibody_delassus_factor``) in factors[g]."""
        r0, n, w0 = int(a["row_start"][g]), int(a["row_start"][g + 1] - a["row_start"][g]), int(a["w_start"][g])
        members = self.members[self.member_start[g]:self.member_start[g + 1]]
        methods = set()
        for m in members:
            terms = self._delassus_terms(a, g, m)
            if self.method == "dense":
                methods.add(self._dense_delassus(self.runs[m], terms, self.work[m].mark, W, w0, n, r0, dt))
                continue
            work = self._delassus_work(m)
            if len(members) == 1 and self.sole_free[m]:
                code, *factor = D.multibody_delassus_factor(*terms, *work, METHOD_CODES[self.method], W, w0, n, r0,
                                                            dt, D.TREE_FACTOR_ROWS)
                if factor[2]:
                    factors[g] = factor
            else:
                code = D.multibody_delassus(*terms, *work, METHOD_CODES[self.method], W, w0, n, r0, dt)
            if code:
                methods.add(METHODS[code])
        return "+".join(sorted(methods)) or "none"

    @staticmethod
    def _tree_factors(a, factors):
        """The factors {g: (B_col, B_val, width)} of ``_group_delassus`` into a["B_col"], a["B_val"] (rows as
        the stacked vectors, −1 past a row's columns) and a["B_width"], for the solver."""
        nrows, K = len(a["u_all"]), max(B_col.shape[1] for B_col, _, _ in factors.values())
        a["B_col"], a["B_val"] = np.full((nrows, K), -1, np.int64), np.zeros((nrows, K, 1))
        for g, (B_col, B_val, width) in factors.items():
            rows = slice(int(a["row_start"][g]), int(a["row_start"][g + 1]))
            a["B_col"][rows, :B_col.shape[1]], a["B_val"][rows, :B_col.shape[1]] = B_col, B_val
            a["B_width"][g] = width

    def _delassus_terms(self, a, g, m) -> tuple:
        """The blocks of group g acting on multibody m, as ``_group_delassus_kernels.multibody_terms`` takes them: its
        bodies, base rotation, the group's contacts and m's active closure/joint rows."""
        rows, cl = self.bodies.rows(m), self.closures
        contacts = a["contacts"][a["contact_start"][g]:a["contact_start"][g + 1]]
        return (rows.start, rows.stop, self.runs[m].instance.R, contacts, a["side"], a["X"], a["contact_row"],
                cl.of(m), cl.side, cl.X, cl.rows, a["closure_row"])

    def _delassus_work(self, m) -> tuple:
        """Multibody m's ABA results at this q (``fresh_data``) and Delassus workspace, as
        ``_group_delassus_kernels.multibody_delassus`` takes them."""
        data, work = self.runs[m].fresh_data(), self.work[m]
        return (data.model_pack.bi, data.model_pack.df, data.ws, data.wd, work.Sw, work.Uw, work.y, work.F, work.A,
                work.Od, work.S6, work.path, work.mark, work.union)

    def _dense_delassus(self, run, terms, mark, W, w0, n, r0, dt):
        """The dense reference J M⁻¹ Jᵀ (``delassus(..., "dense")``) of one multibody of a group."""
        nt = 2 * (len(terms[3]) + len(terms[7]))
        term_block, term_body, term_contact = (np.empty(nt, np.int64) for _ in range(3))
        term_X, block_row, block_term = np.empty((nt, 6, 6)), np.empty(nt + 1, np.int64), np.empty(nt + 1, np.int64)
        bodies, row_map = np.empty(run.model.nbodies, np.int64), np.empty(3 * nt, np.int64)
        nt, nb, nbodies = D.multibody_terms(*terms, mark, term_block, term_body, term_X, block_row, block_term, bodies,
                                            term_contact, row_map)
        if nt:
            maps = BlockMaps(block_row[:nb + 1], block_term[:nb + 1], term_block[:nt], term_body[:nt], term_X[:nt],
                             bodies[:nbodies], term_contact[:nt])
            W_m = delassus(run.model, run.fresh_data(), run.q, maps, "dense")
            D.add_delassus(W, w0, n, r0, row_map[:maps.nrows], W_m, dt)
        return "dense"

    def export_problems(self, directory):
        """From the next step on, write every group's contact problem, as handed to the solver, to
        ``directory`` (``engine.contact.conic.ProblemExport``: step{k}_group{g}.npz, k counting the solves)."""
        self.export = ProblemExport(directory)

    def _solve_groups(self, a, W, ng, solved=()):
        """Every group's frictional contact problem but those ``solved`` stick-first (their stats kept), forces
        left in a["f"]; (iterations, residual, violation, converged) per group. A group whose solve fails (not
        converged, and not even half-way from the zero force in residual) is solved again without its positive
        normal targets (``drop_positive_targets``; the one-call stages: ``_stepping_kernels.solve_and_retry``)."""
        if self.export is not None:
            for g in range(ng):
                self.export.write(self.counts.steps, g, *self._problem(a, W, g))
        stats, g0 = [], 0
        for g1 in sorted(solved) + [ng]:                 # the runs of groups between those solved
            if g1 > g0:
                stats += self._solve_range(a, W, g0, g1).tolist()
            if g1 < ng:
                stats.append(solved[g1][1].tolist())
            g0 = g1 + 1
        for g, (_, residual, _, converged, _, _, zero) in enumerate(stats):
            if not converged and residual > 0.5 * zero:
                contacts = a["contacts"][a["contact_start"][g]:a["contact_start"][g + 1]]
                K.drop_positive_targets(contacts, a["contact_row"], a["target"], a["u_all"], a["f"])
                stats[g] = self._solve_range(a, W, g, g + 1)[0].tolist()
        return [(int(s[0]), s[1], s[2], bool(s[3])) for s in stats]

    def _solve_range(self, a, W, g0, g1):
        """Groups g0 … g1 − 1; stats as ``_stepping_kernels.solve_groups``. Gauss–Seidel without a time budget:
        one kernel call for them all."""
        settings, stats = self.universe.solver, np.empty((g1 - g0, 7))
        if self.solver == "lemke" or self.plugin is not None or settings.time_budget is not None:
            for g in range(g0, g1):
                stats[g - g0] = self._solve(a, W, g)
            return stats
        rows = int(np.diff(a["row_start"][g0:g1 + 1]).max())
        if rows >= REUSE_ROWS and rows * rows > len(self.keep[2]):    # room for the largest group's factor
            self._room_for_factor(rows)
        K.solve_groups(W, a["w_start"][g0:g1 + 1], a["u_all"], a["f"], a["row_start"][g0:g1 + 1],
                       a["block_offset"][g0:g1 + 1], a["block_start"][g0:], a["block_kind"], a["block_mu"],
                       SOLVER_CODES[self.solver], settings.tolerance, settings.max_iterations, stats, self.keep,
                       a["B_col"], a["B_val"], a["B_width"][g0:g1])
        self._keep_factor()
        return stats

    def _keep_factor(self):
        """After a solve: a new factor in ``keep`` becomes the kept one, never written again (warm starts refer to
        it); a forgotten one is dropped."""
        L_new, meta_new = self.keep[2:]
        kept = meta_new[0]
        if kept > 0:
            self.keep = L_new, meta_new, np.empty(len(L_new)), np.zeros(len(meta_new), np.int64)
        elif kept < 0:
            self.keep = (np.zeros(0), np.zeros(1, np.int64)) + self.keep[2:]
            meta_new[0] = 0

    def _problem(self, a, W, g):
        """(W, u, ConstraintBlocks, f0) of group g: its problem as the solvers receive it (views)."""
        s, e = int(a["row_start"][g]), int(a["row_start"][g + 1])
        b0, b1 = int(a["block_offset"][g]), int(a["block_offset"][g + 1])
        blocks = ConstraintBlocks(a["block_start"][b0 + g:b1 + g + 1].copy(), a["block_kind"][b0:b1].copy(),
                                  a["block_mu"][b0:b1].copy())
        return W[a["w_start"][g]:a["w_start"][g + 1]].reshape(e - s, e - s), a["u_all"][s:e], blocks, a["f"][s:e]

    def _solve(self, a, W, g):
        """Group g alone (Lemke, a solver plugin, or an iterative solver with a time budget), its force left in
        a["f"]."""
        Wg, u, blocks, f = self._problem(a, W, g)
        b0, b1 = int(a["block_offset"][g]), int(a["block_offset"][g + 1])
        start, kind, mu = a["block_start"][b0 + g:b1 + g + 1], a["block_kind"][b0:b1], a["block_mu"][b0:b1]
        settings = self.universe.solver
        if self.solver == "lemke":
            f[:], stats = solve(self.solver, Wg, u, blocks, settings)
        elif self.plugin is not None:
            f[:], stats = self._plugin_solve(Wg, u, blocks, f.copy(), g)
        elif self.solver == "nonsmooth-newton":
            rows = slice(int(a["row_start"][g]), int(a["row_start"][g + 1]))
            factor = a["B_col"][rows], a["B_val"][rows], int(a["B_width"][g])
            _, stats = nonsmooth_newton_blocks(Wg, u, start, kind, mu, f, settings.tolerance, settings.max_iterations,
                                               settings.time_budget, factor=factor)
        else:
            _, stats = gauss_seidel_blocks(Wg, u, start, kind, mu, f, settings.tolerance, settings.max_iterations,
                                           settings.time_budget, self.solver == "gauss-seidel-newton")
        zero = np.nan if stats.converged else contact_residual(Wg, u, np.zeros(len(u)), blocks)[0]
        return stats.iterations, stats.residual, stats.cone_violation, stats.converged, 0.0, 0.0, zero

    def _plugin_solve(self, W, u, blocks, f0, g):
        """A solver plugin's (f, SolverStats) for group g, guarded (engine/faults), the residual and cone
        violation measured here."""
        group = "+".join(self.runs[m].name for m in self.members[self.member_start[g]:self.member_start[g + 1]])
        f, stats = faults.call(self.plugin, "solver", "solver", self.plugin.solve, W.copy(), u.copy(), blocks, f0,
                               multibody=group)
        f = faults.checked_array(f, self.plugin, "solver", "solver", u.shape, "contact force", group)
        residual, violation = residual_of(W, u, f, blocks)
        return f, replace(stats, residual=residual, cone_violation=violation)

    def _apply(self, ng):
        """Contact wrenches (world axes, body origins) → body frames ``run.f_contact`` of the grouped multibodies;
        ``run.in_contact`` says whether any is non-zero (for the batch of free bodies, its ``in_contact[i]``; all
        of them in one kernel call)."""
        b, batch = self.bodies, self.free_bodies
        if batch:
            K.free_body_wrenches(b.wrench, b.R, batch.row, batch.multibody, self.group_of, ng, batch.f_contact,
                                 batch.in_contact)
        for m, run in self.trees:
            if ng and self.group_of[m] >= 0:
                run.in_contact = K.body_wrenches(b.wrench, b.R, b.offset[m], run.f_contact)
            elif run.in_contact:
                run.f_contact[:] = 0.0
                run.in_contact = False


def _free_rigid_body(run) -> bool:
    """A multibody that is one body on a free joint, without closures: its Λ is X M⁻¹ Xᵀ in closed form."""
    model = run.model
    return model.nbodies == 1 and int(model.joint_type[0]) == JointType.FREE and not model.closures


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
