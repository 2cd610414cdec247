"""Articula's own engine: the AMELIF loop of seed 000 Fig 2.3 / 3.4 between the control and the sense stages.

    free dynamics (ABA with τ, gravity and the external wrenches) → V_free
    → collision detection → collision groups → Delassus operator per group → frictional contact solve
    → velocity update, integration on the Lie group → kinematics of the new state

Free rigid bodies go through the dynamics and integration stages together (``free_bodies``), and a world of free
bodies alone through the whole step in one compiled call (``one_call``: ``FreeBodies.step``); a multibody on
wheels (``<Wheel>``) integrates its rolling dynamics (``engine.dynamics.rolling``) in the integration stage, with
its wheels always on the ground plane, or, under ``<Settings events="on">``, leaving and hitting the static
planes, boxes and meshes by the event-driven hybrid loop of ``engine.rolling.hybrid`` (seed 001 §2.7–2.9).
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np

from engine import plugins
from engine.collision._kernels import CONVEX
from engine.contact.problem import project_closures
from engine.contact.stepping import ContactStage
from engine.dynamics import aba, forward_kinematics
from engine.dynamics.closures import closed_chain_acceleration, project_velocity
from engine.dynamics.integrators import STEPPERS
from engine.dynamics.rolling import AdamsBashforthMoulton4, RollingDisks, project, rolling_dynamics, step_rolling
from engine.engines._step_arrays import MOTION_FIELDS
from engine.engines._tree_kernels import DONE, FAULT, REDO, constrained_motion, free_motion, motion_arrays
from engine.engines.free_bodies import FreeBodies, batchable
from engine.rolling.ground import Ground
from engine.rolling.hybrid import HybridWheels
from engine.errors import UniverseError
from engine.state import ActiveContacts, freeze

NO_GRAVITY = np.zeros(3)    # kinematics: body accelerations without the base's −g (as ``forward_kinematics``)


@plugins.register("articula")
class ArticulaEngine:
    """ABA, FCL and the contact solve on the exact Coulomb cone (``ContactStage``), for a ``Simulation``."""

    kind = "engine"
    name = "articula"

    def __init__(self, sim):
        self.sim = sim
        integrator = sim.universe.integrator.replace("-", "_")
        self.free_stepper = None if integrator == "semi_implicit_euler" else STEPPERS[integrator]
        self.rolling = {m: _rolling_disks(run.instance, sim.universe) for m, run in enumerate(sim.runs)
                        if run.instance.wheels}                   # multibodies on wheels: their disks
        self.wheel_inputs = {m: None for m in self.rolling}    # (q, v, τ, f) of the last step: λ when asked
        self.hybrid = {m: _hybrid_wheels(sim.runs[m], sim.universe) for m in self.rolling
                       if sim.universe.wheel_events}           # wheels that leave the ground: event-driven
        self.multistep = {m: AdamsBashforthMoulton4() for m in self.rolling
                          if sim.universe.rolling_integrator == "abm4"}    # <Settings rolling="abm4">
        batched = [m for m, run in enumerate(sim.runs) if self.free_stepper is None and batchable(run)]
        self.free_bodies = FreeBodies(sim, [sim.runs[m] for m in batched]) if batched else None
        self.trees = [(m, run) for m, run in enumerate(sim.runs) if m not in batched]   # stepped one by one
        #: trees integrated by semi-implicit Euler, neither on wheels nor closed: the integration stage in one
        #: call each (``_euler_step``); the others by ``_integrate``, then ``refresh`` and ``check_energy``
        self.euler = {m for m, run in self.trees if self.free_stepper is None and m not in self.rolling
                      and not run.model.closures}
        self.stepped = [(m, run) for m, run in self.trees if m not in self.euler]
        #: each tree's arrays for ``free_motion`` and ``constrained_motion`` (the same arrays every step)
        self.motion_arrays = {m: _motion_arrays(run, sim.bodies) for m, run in self.trees}
        self.contact_stage = stage = ContactStage(sim.universe, sim.runs, sim.bodies, sim.timer, self.free_bodies)
        #: free bodies alone, their contacts solved in one call (``rigid_only``) and detected by the compiled
        #: narrowphases alone (no pair left to FCL): the whole step in one call (``FreeBodies.step``)
        self.one_call = (self.free_bodies is not None and not self.trees and stage.rigid_only
                         and not np.any(stage.world.pair_arrays.kind == CONVEX))
        if self.one_call:
            self.free_bodies.fuse(stage)

    # ---- state ---------------------------------------------------------------------------------------------
    def load(self, warm_start):
        self.contact_stage.set_warm_start(warm_start or {})   # empty: forget the contacts and their counts
        self.wheel_inputs = dict.fromkeys(self.rolling)       # no step yet from this state: no λ
        for multistep in self.multistep.values():             # a new state: no past points
            multistep.restart()
        for m, hybrid in self.hybrid.items():                 # the contact configuration and the event log
            run = self.sim.runs[m]
            if warm_start and "wheels" in warm_start:
                hybrid.restore(warm_start["wheels"][m])
            else:                                             # a new run, or a frame read from a file
                run.q[:], run.v[:] = hybrid.start(run.q, run.v, keep_log=warm_start is not None)
        if warm_start is None:                                # a new run: wheels put on the ground
            for m, disks in self.rolling.items():
                if m not in self.hybrid:
                    run = self.sim.runs[m]
                    _check_on_the_ground(run, disks)
                    run.q[:], run.v[:] = project(run.model, run.data, run.q, run.v, disks)

    def warm_start(self):
        warm = self.contact_stage.warm_start()
        if self.hybrid:
            warm["wheels"] = {m: hybrid.configuration() for m, hybrid in self.hybrid.items()}
        return warm

    def wheel_events(self, recent=False) -> tuple:
        """(multibody name, WheelEvent) of the run so far, in time order, or of the last step (``recent``)."""
        runs = self.sim.runs
        events = [(runs[m].name, e) for m, h in self.hybrid.items() for e in (h.recent if recent else h.events)]
        return tuple(sorted(events, key=lambda x: x[1].t))

    # ---- the step ------------------------------------------------------------------------------------------
    def step(self, dt):
        sim, timer = self.sim, self.sim.timer
        if self.one_call and self.contact_stage.export is None:
            with timer.stage("solver"):   # every stage below in one call
                self.free_bodies.step(dt, self.contact_stage)
            return
        with timer.stage("dynamics"):  # a_free = M⁻¹(τ − b − g + Jᵀ f_ext), seed 000 eq. 3.64; V_free
            for m, run in self.trees:
                if m in self.rolling and self.contact_stage.idle:   # its rolling step needs no free dynamics
                    continue
                self._free_dynamics(m, run, dt)
            if self.free_bodies:
                self.free_bodies.dynamics(dt)
        self.contact_stage.step(dt)  # collision, groups, Delassus, solver (timed inside)
        with timer.stage("integration"):  # v⁺, q⁺; the kinematics of the new state, its kinetic energy
            for m, run in self.trees:
                if m in self.euler:
                    self._euler_step(m, run, dt)
                else:
                    self._integrate(m, run, dt)
            for _, run in self.stepped:
                run.refresh()
            for _, run in self.stepped:
                sim.check_energy(run)
            if self.free_bodies:
                self.free_bodies.integrate(dt)

    def _free_dynamics(self, m, run, dt):
        """a_free and V_free in one call (``_tree_kernels.free_motion``); if it refuses its inputs or finds a fault,
        the readable steps, whose checks raise."""
        sim = self.sim
        if free_motion(self.motion_arrays[m], dt) == DONE:
            return
        run.a_free[:] = aba(run.model, run.data, run.q, run.v, run.tau, run.f_ext, gravity=run.gravity)
        sim.check_finite(run.a_free, "dynamics", run, "free acceleration")
        run.free_velocities(dt)
        sim.check_speed(run.xi, "dynamics", run, "free velocity v + δt a_free")

    def _euler_step(self, m, run, dt):
        """``_integrate`` (semi-implicit Euler), ``refresh`` and ``check_energy`` of a tree in one call
        (``_tree_kernels.constrained_motion``); where it stops, the readable steps take over."""
        sim = self.sim
        stage = self.contact_stage                       # its one-call step only reads the free dynamics' ABA
        status, T = constrained_motion(self.motion_arrays[m], run.in_contact, stage.tree_only and stage.export is None,
                                       dt)
        if status == REDO:                               # nothing done yet
            self._integrate(m, run, dt)
        elif status == FAULT:                            # q⁺ or v⁺: the checks raise
            sim.check_finite(run.q, "integration", run, "configuration q")
            sim.check_speed(run.v, "integration", run, "velocity v")
        if status != DONE:
            run.refresh()
            sim.check_energy(run)
            return
        run.kinetic_next = T
        if T > run.limits.energy_bound(run.kinetic):
            sim.check_energy(run)

    def _integrate(self, m, run, dt):
        """Constrained: v⁺ = v + δt a(τ, f_ext + f_contact) (= v_free + δt M⁻¹Jᵀf, one more ABA pass, seed 000
        §3.3), q⁺ = q ⊕ δt v⁺. Free of contacts this step: the universe's integrator (semi-implicit Euler:
        v⁺ = v_free, q⁺ = q ⊕ δt v⁺); with another integrator, a closed chain touching nothing integrates its
        constrained dynamics (``dynamics.closures``: energy-conserving where the time-stepping dissipates)."""
        sim = self.sim
        np.copyto(run.a, run.v)
        if m in self.rolling:
            self._roll(m, run, dt)
        elif run.model.closures and self.free_stepper is not None and not self._touching(m):
            self._integrate_closed_chain(m, run, dt)
        elif run.in_contact or self.free_stepper is None:
            if run.in_contact:
                sim.check_finite(run.f_contact, "solver", run, "contact wrench")
                np.add(run.f_ext, run.f_contact, out=run.f_total)
                run.v += dt * aba(run.model, run.data, run.q, run.v, run.tau, run.f_total, gravity=run.gravity)
            else:
                run.v += dt * run.a_free
            run.advance(dt)
            if run.model.closures:
                project_closures(run, self.contact_stage.closures, m)
        else:
            q, v = self.free_stepper(run.model, run.data, run.q, run.v, run.tau, dt, run.f_ext, run.gravity)
            run.q[:], run.v[:] = q, v
        sim.check_finite(run.q, "integration", run, "configuration q")
        sim.check_speed(run.v, "integration", run, "velocity v")
        np.subtract(run.v, run.a, out=run.a)
        run.a /= dt

    def _roll(self, m, run, dt):
        """A multibody on wheels: the rolling dynamics (``engine.dynamics.rolling``: RK4, then the projection
        onto the ground), under its torques, user and contact wrenches; the new state and those inputs are kept,
        and the wheels' ground forces λ there solved only when ``contacts()`` asks (one KKT solve less a step)."""
        disks = self.rolling[m]
        f = np.add(run.f_ext, run.f_contact, out=run.f_total) if run.in_contact else run.f_ext
        if m in self.hybrid:
            run.q[:], run.v[:] = self.hybrid[m].step(run.q, run.v, run.tau, f, self.sim.time, dt)
            return
        stepper = self.multistep[m].step if m in self.multistep else step_rolling
        q, v = stepper(run.model, run.data, run.q, run.v, run.tau, dt, disks, run.gravity, f)
        run.q[:], run.v[:] = q, v
        self.wheel_inputs[m] = (q, v, run.tau.copy(), f.copy())

    def wheel_forces(self, m):
        """λ (wheels, 3): the ground's force on each wheel of multibody m at the end of the last step (base
        frame), the KKT solve of ``rolling_dynamics`` under that step's torques and wrenches (the event-driven
        loop's own, with a wheel in the air at zero); zero before one."""
        if m in self.hybrid:
            return self.hybrid[m].force
        run, disks = self.sim.runs[m], self.rolling[m]
        if self.wheel_inputs[m] is None:
            return np.zeros((len(disks.bodies), 3))
        q, v, tau, f = self.wheel_inputs[m]
        return rolling_dynamics(run.model, run.data, q, v, tau, disks, run.gravity, f)[1].reshape(-1, 3)

    def _touching(self, m) -> bool:
        """Whether multibody m is in a collision contact this step (loop closures aside)."""
        c = self.contact_stage.contacts
        return c is not None and len(c) > 0 and bool(np.any((c.multibody_a == m) | (c.multibody_b == m)))

    def _integrate_closed_chain(self, m, run, dt):
        """The universe's integrator on a = closed_chain_acceleration(q, v) (I.16), then q and v projected back
        onto the closures (Gauss–Newton on the positions, the kinetic-metric projection on the velocities)."""
        q, v = self.free_stepper(run.model, run.data, run.q, run.v, run.tau, dt, run.f_ext, run.gravity,
                                 acceleration=closed_chain_acceleration)
        run.q[:] = q
        project_closures(run, self.contact_stage.closures, m)
        run.v[:] = project_velocity(run.model, run.data, run.q, v)

    # ---- reports -------------------------------------------------------------------------------------------
    def contacts(self) -> ActiveContacts:
        stage = self.contact_stage
        c = stage.contacts
        rows = []
        if c is not None and len(c):
            name = stage.object_name
            rows.append((c.point, c.normal, stage.forces, c.depth, c.mu, tuple(name(i) for i in c.object_a),
                         tuple(name(i) for i in c.object_b)))
        for m, disks in self.rolling.items():                 # the wheels on the ground: no slip (μ = ∞)
            rows.append(self._wheel_contacts(m, disks))
        if not rows:
            return ActiveContacts()
        columns = list(zip(*rows))
        return ActiveContacts(*(freeze(np.concatenate(x)) for x in columns[:5]), sum(columns[5], ()),
                              sum(columns[6], ()))

    def _wheel_contacts(self, m, disks):
        """The wheels on the ground (all of them, or the hybrid loop's contact configuration): point, normal,
        force λ, world axes."""
        run = self.sim.runs[m]
        R, p = run.instance.R, run.instance.p
        forward_kinematics(run.model, run.data, run.q)
        wheels = tuple(range(len(disks.bodies)))
        if m in self.hybrid:
            wheels, disks = self.hybrid[m].on_ground()
        k = len(wheels)
        if k == 0:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros(0), (), ()
        C = np.vstack([d.contact_points(run.model, run.data)[0] for d in getattr(disks, "disks", [disks])])
        names = tuple(f"{run.name}/{run.model.body_name[self.rolling[m].bodies[w]]}" for w in wheels)
        grounds = tuple(d.ground for d in getattr(disks, "disks", [disks] * k))
        return (C @ R.T + p, disks.normals() @ R.T, self.wheel_forces(m)[list(wheels)] @ R.T, np.zeros(k),
                np.full(k, np.inf), names, grounds)

    def solver_stats(self) -> dict:
        reports = self.contact_stage.reports
        return {"groups": reports, "iterations": sum(r.iterations for r in reports),
                "residual": max((r.residual for r in reports), default=0.0),
                "delassus": "+".join(sorted({r.delassus for r in reports})),
                "unconverged_steps": self.contact_stage.counts.unconverged_steps}

    def contact_report(self):
        return self.contact_stage.counts

    def sole_states(self) -> tuple:
        soles = self.contact_stage.soles
        return soles.states() if soles else ()

    def closure_forces(self) -> tuple:
        """The closures' forces of the last step: rows of the contact solve (engine/contact/problem.py
        ``closure_blocks``: a point closure's 3 rows are the world axes, a hinge's 2 more its e1, e2)."""
        cl, runs = self.contact_stage.closures, self.sim.runs
        names = [c.name for run in runs for c in run.model.closures]
        return tuple((int(cl.mb[c]), names[c], freeze(cl.force[c])) for c in range(cl.n_closures))

    @property
    def solver(self):
        """The contact-solver plugin (it cannot be disabled while the run goes on)."""
        return getattr(self.contact_stage, "plugin", None)


def _motion_arrays(run, bodies):
    """The arrays of ``_tree_kernels.free_motion`` and ``constrained_motion`` for ``run`` as one ``MotionArrays``
    (under NUMBA_DISABLE_JIT, a namespace of the same fields)."""
    data, pack = run.data, run.data.model_pack
    arrays = (pack.mi, pack.mf, data.ws, data.wd, run.data_free.ws, run.q, run.v, run.tau, run.f_ext, run.f_contact,
              run.f_total, run.gravity, data.ddq, run.a_free, NO_GRAVITY, data.v_zero, *run.joints, run.xi, run.q_next,
              run.scratch, run.limits.speed, run.a, run.instance.R, run.instance.p, run.offset, bodies.R, bodies.p,
              bodies.V, bodies.V_free, run.V_last)
    if not hasattr(motion_arrays, "overloads"):
        return SimpleNamespace(**dict(zip(MOTION_FIELDS, arrays)))
    return motion_arrays(*arrays)


def _hybrid_wheels(run, universe) -> HybridWheels:
    """A multibody's wheels on every static plane, box and mesh of the universe, in its base frame."""
    instance = run.instance
    ground = Ground.from_statics(universe.statics, instance.R, instance.p, universe.source)
    w = instance.wheels
    return HybridWheels(run.model, [x.body for x in w], [x.radius for x in w], [x.axis for x in w],
                        [run.model.body_name[x.body] for x in w], [x.restitution for x in w], ground,
                        run.gravity, instance.name, [x.source for x in w])


def _rolling_disks(instance, universe) -> RollingDisks:
    """The wheels of a multibody on the universe's ground (its first static plane), in the multibody's base frame."""
    planes = [(st.name, g) for st in universe.statics for g in st.geometries if g.kind == "plane"]
    if not planes:
        raise UniverseError(f"the wheels of '{instance.name}' need a ground: a static <Body> with a <Plane/>",
                            instance.wheels[0].source.rpartition(":")[0] or universe.source)
    ground, plane = planes[0]
    R, p = instance.R, instance.p
    return RollingDisks(bodies=tuple(w.body for w in instance.wheels), radii=tuple(w.radius for w in instance.wheels),
                        axes=tuple(tuple(w.axis) for w in instance.wheels), up=R.T @ plane.R[:, 2],
                        origin=R.T @ (plane.p - p), ground=ground)


ON_THE_GROUND = 1e-6    # m, m/s: an initial state further off its wheels' constraints is refused (or projected)


def _check_on_the_ground(run, disks):
    """The initial state on its wheels' constraints: each contact point at the ground's height (Φ = 0) and not
    moving (J v = 0), to ``ON_THE_GROUND``; beyond, a UniverseError naming the worst wheel's <Wheel> line and its
    (Φ, |J v|), or, if a <Wheel> says project="true", a warning (``project`` then moves the state)."""
    wheels = run.instance.wheels
    phi = disks.altitudes(run.model, run.data, run.q)
    slip = np.linalg.norm((disks.jacobian(run.model, run.data, run.q) @ run.v).reshape(-1, 3), axis=1)
    k = int(np.argmax(np.maximum(np.abs(phi), slip)))
    if max(abs(phi[k]), slip[k]) <= ON_THE_GROUND:
        return
    file, _, line = wheels[k].source.rpartition(":")
    message = (f"the initial state of '{run.name}' is off its wheels' constraints: the contact point of "
               f"'{run.model.body_name[disks.bodies[k]]}' is {phi[k]:.3g} m above the ground and moves at "
               f"{slip[k]:.3g} m/s (tolerance {ON_THE_GROUND:g})")
    if any(w.project for w in wheels):
        warnings.warn(f"{file}:{line}: {message}; projected onto them (project=\"true\")", stacklevel=2)
        return
    raise UniverseError(f"{message}; add project=\"true\" to a <Wheel> to put it on the ground (the nearest "
                        f"configuration, the nearest velocity in kinetic energy)", file or None,
                        int(line) if line.isdigit() else None, (float(phi[k]), float(slip[k])))
