"""The simulation loop (seed 000 Fig 2.3 / 3.4), in one readable function: ``Simulation._step``.

    controllers + devices write inputs (torques, external wrenches)
    → free dynamics (ABA with known external forces: gravity, actuators, user force)
    → collision detection → collision groups → Delassus operator per group → frictional contact solve
    → velocity update, integration on the Lie group
    → snapshot for viewers, recorders and the haptic loop

Every stage is timed every step (``sim.timer``). A non-finite value stops the step with a ``SimulationError``
naming the stage and the multibody; the last good state is kept.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine import plugins
from engine.contact import _stepping_kernels as K
from engine.contact.problem import project_closures
from engine.contact.stepping import ContactStage, WorldBodies
from engine.dynamics import aba, forward_kinematics, kinetic_energy, potential_energy
from engine.dynamics.closures import closed_chain_acceleration, project_velocity
from engine.dynamics.integrators import STEPPERS
from engine.dynamics.lie import integrate_kernel
from engine.errors import SimulationError, UniverseError
from engine.state import ActiveContacts, Snapshot, State
from engine.timing import StageTimer


class MultiBodyRun:
    """The mutable side of one multibody in a run: its Data, (q, v), inputs and controllers; its rows of the
    universe's ``WorldBodies`` (``R_world``, ``p_world``, ``V``, ``V_free``) are views."""

    def __init__(self, instance, universe, bodies, index):
        self.instance, self.model = instance, instance.model
        self.data = self.model.create_data()
        self.q, self.v = instance.q0.copy(), instance.v0.copy()
        self.q_good, self.v_good = self.q.copy(), self.v.copy()   # the last good state (restored on a fault)
        self.data_free = self.model.create_data()           # kinematics at the free velocity
        nb, nv = self.model.nbodies, self.model.nv
        self.tau, self.a_free = np.zeros(nv), np.zeros(nv)
        self.f_ext = np.zeros((nb, 6))                      # user/haptic wrenches, body frames
        self.f_contact = np.zeros((nb, 6))                  # contact and closure wrenches, body frames
        self.f_total = np.zeros((nb, 6))
        self.in_contact = self.has_external = False         # f_contact, f_ext non-zero
        self.offset = int(bodies.offset[index])
        rows = bodies.rows(index)
        self.R_world, self.p_world = bodies.R[rows], bodies.p[rows]   # body frames in the world
        self.V, self.V_free = bodies.V[rows], bodies.V_free[rows]     # (v_o, w) world axes, at v and v_free
        self.bodies = bodies
        self.xi, self.q_next, self.scratch = np.zeros(nv), np.zeros(self.model.nq), np.zeros(8)
        m = self.model                                      # writable copies: numba's fast argument path
        self.joints = (m.joint_type.copy(), m.joint_idx_q.copy(), m.joint_idx_v.copy())
        # gravity and external forces are expressed in the multibody's base frame
        self.gravity = instance.R.T @ universe.gravity
        base_dir = str(Path(universe.source).parent)
        self.controllers = [plugins.create(spec, model=self.model, q0=instance.q0, gravity=self.gravity,
                                           base_dir=base_dir)
                            for spec in universe.controllers if spec.target == instance.name]

    def world_placements(self):
        """Body frames in the world, (R (nb, 3, 3), p (nb, 3)) = (R_m, p_m) * oMi, at the last refresh."""
        return self.R_world, self.p_world

    def refresh(self):
        """Kinematics of (q, v): placements and velocities in ``data``, then in the world rows."""
        forward_kinematics(self.model, self.data, self.q, self.v)
        b = self.bodies
        K.world_bodies(self.data.ws, self.instance.R, self.instance.p, self.offset, b.R, b.p, b.V)

    def free_velocities(self, dt):
        """V_free: the body velocities at v_free = v + δt a_free (seed 000 §3.3), world axes."""
        np.multiply(self.a_free, dt, out=self.xi)
        self.xi += self.v
        forward_kinematics(self.model, self.data_free, self.q, self.xi)
        K.world_velocities(self.data_free.ws, self.offset, self.bodies.R, self.bodies.V_free)

    def advance(self, dt):
        """q ← q ⊕ δt v on the configuration Lie group."""
        np.multiply(self.v, dt, out=self.xi)
        integrate_kernel(*self.joints, self.q, self.xi, self.q_next, self.scratch)
        self.q[:] = self.q_next


class Simulation:
    """A running universe: ``step(n)``, ``time``, ``state``/``set_state``, ``reset``, ``snapshot``."""

    def __init__(self, universe):
        self.universe = universe
        self.dt = float(universe.time_step)
        self.bodies = WorldBodies([mb.model.nbodies for mb in universe.multibodies])
        self.runs = [MultiBodyRun(mb, universe, self.bodies, m) for m, mb in enumerate(universe.multibodies)]
        self.timer = StageTimer()
        self.external = {}        # (multibody, body) -> (wrench_world (6,), point_world (3,))
        self.contact_stage = ContactStage(universe, self.runs, self.bodies, self.timer)
        self.sensors = [self._sensor(spec) for spec in universe.sensors]
        self.measurements = {}    # sensor name -> {signal: array}, after each step
        integrator = universe.integrator.replace("-", "_")
        self.free_stepper = None if integrator == "semi_implicit_euler" else STEPPERS[integrator]
        self.reset()

    # ---- state ---------------------------------------------------------------------------------------------
    def reset(self):
        for run in self.runs:
            run.q[:], run.v[:] = run.instance.q0, run.instance.v0
            run.tau[:] = 0.0          # no step taken yet: no torque applied
            for c in run.controllers:
                c.reset(run.q, run.v)
        self.time, self.step_count = 0.0, 0
        self.external.clear()
        self.contact_stage.reset()
        self.measurements = {}
        self.timer.reset()
        self._refresh_kinematics()

    @property
    def state(self) -> State:
        return State.capture(self.time, self.step_count, [r.q for r in self.runs], [r.v for r in self.runs],
                             self.contact_stage.warm_start())

    def set_state(self, state: State):
        if len(state.q) != len(self.runs):
            raise ValueError(f"state has {len(state.q)} multibodies, the universe {len(self.runs)}")
        for run, q, v in zip(self.runs, state.q, state.v):
            if q.shape != run.q.shape or v.shape != run.v.shape:
                raise ValueError(f"state shapes {q.shape}, {v.shape} do not fit '{run.instance.name}' "
                                 f"(nq={run.model.nq}, nv={run.model.nv})")
            run.q[:], run.v[:] = q, v
        self.time, self.step_count = state.t, state.step
        self.contact_stage.set_warm_start(state.warm_start)
        self._refresh_kinematics()

    # ---- inputs --------------------------------------------------------------------------------------------
    def set_external_wrench(self, multibody: int, body: int, wrench_world, point_world):
        """Apply (force, moment) ``wrench_world`` at ``point_world`` on a body until changed or cleared."""
        wrench, point = np.asarray(wrench_world, float), np.asarray(point_world, float)
        if wrench.shape != (6,) or point.shape != (3,) or not (np.all(np.isfinite(wrench)) and
                                                              np.all(np.isfinite(point))):
            raise ValueError(f"external wrench must be finite (6,) at a finite (3,) point, got {wrench}, {point}")
        if not (0 <= multibody < len(self.runs) and 0 <= body < self.runs[multibody].model.nbodies):
            raise ValueError(f"no body {body} in multibody {multibody}")
        self.external[(multibody, body)] = (wrench.copy(), point.copy())

    def clear_external_wrenches(self):
        self.external.clear()

    # ---- the loop --------------------------------------------------------------------------------------------
    def step(self, n: int = 1):
        for _ in range(int(n)):
            self._step()

    def _step(self):
        """One time step of the AMELIF loop (seed 000 Fig 2.3 / 3.4)."""
        timer, dt = self.timer, self.dt
        timer.begin_step()
        with timer.stage("control"):  # controllers and devices write torques and external wrenches
            for index, run in enumerate(self.runs):
                run.tau[:] = 0.0
                for c in run.controllers:
                    run.tau += c.control(self.time, run.q, run.v)
                self._check(run.tau, "control", run)
                self._external_to_body_frames(run, index)
        with timer.stage("dynamics"):  # a_free = M⁻¹(τ − b − g + Jᵀ f_ext), seed 000 eq. 3.64; V_free
            for run in self.runs:
                run.a_free[:] = aba(run.model, run.data, run.q, run.v, run.tau, run.f_ext, gravity=run.gravity)
                self._check(run.a_free, "dynamics", run)
                run.free_velocities(dt)
        self.contact_stage.step(dt)  # collision, groups, Delassus, solver (timed inside)
        with timer.stage("integration"):
            for m, run in enumerate(self.runs):
                self._integrate(m, run, dt)
        self.time += dt
        self.step_count += 1
        self._refresh_kinematics()
        if self.sensors:
            with timer.stage("sense"):
                for sensor in self.sensors:
                    self.measurements[sensor.name] = sensor.measure(self)
        timer.end_step()

    def _sensor(self, spec):
        """A sensor plugin on a body of its target multibody (engine/sensors.py)."""
        names = [mb.name for mb in self.universe.multibodies]
        if spec.target not in names:
            file, _, line = (spec.source or "").rpartition(":")
            raise UniverseError(f"sensor '{spec.name}' needs a target multibody, one of {names} "
                                f"(got {spec.target!r})", file or None, int(line) if line.isdigit() else None,
                                spec.target)
        m = names.index(spec.target)
        return plugins.create(spec, model=self.runs[m].model, multibody=m, target=spec.target)

    def _integrate(self, m, run, dt):
        """Constrained: v⁺ = v + δt a(τ, f_ext + f_contact) (= v_free + δt M⁻¹Jᵀf, one more ABA pass, seed 000
        §3.3), q⁺ = q ⊕ δt v⁺. Free of contacts this step: the universe's integrator (semi-implicit Euler:
        v⁺ = v_free, q⁺ = q ⊕ δt v⁺); with another integrator, a closed chain touching nothing integrates its
        constrained dynamics (``dynamics.closures``: energy-conserving where the time-stepping dissipates)."""
        if run.model.closures and self.free_stepper is not None and not self._touching(m):
            self._integrate_closed_chain(m, run, dt)
        elif run.in_contact or self.free_stepper is None:
            if run.in_contact:
                self._check(run.f_contact, "solver", run)
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
        self._check(run.v, "integration", run)
        self._check(run.q, "integration", run)

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

    def _external_to_body_frames(self, run, index):
        """World wrench (f, m) at point x → body-frame wrench at the body origin: Rᵀ f, Rᵀ (m + (x − p) × f)."""
        if run.has_external:
            run.f_ext[:] = 0.0
        run.has_external = False
        if not self.external:
            return
        R_world, p_world = run.world_placements()
        for (m, b), (w, x) in self.external.items():
            if m != index:
                continue
            R, p = R_world[b], p_world[b]
            run.f_ext[b, :3] = R.T @ w[:3]
            run.f_ext[b, 3:] = R.T @ (w[3:] + np.cross(x - p, w[:3]))
            run.has_external = True

    def _check(self, values, stage, run):
        if K.all_finite(values):
            return
        values = values.ravel()
        bad = int(np.flatnonzero(~np.isfinite(values))[0])
        for r in self.runs:
            r.q[:], r.v[:] = r.q_good, r.v_good
        self.time, self.step_count = self._good_time, self._good_step
        self._refresh_kinematics()
        raise SimulationError(f"non-finite value in stage '{stage}' for multibody '{run.instance.name}' at "
                              f"index {bad} (t = {self.time:.6f} s); the last good state is kept",
                              value=float(values[bad]))

    def _refresh_kinematics(self):
        """Placements and body velocities of the current state (read by queries, snapshots and contacts); the
        current state becomes the last good one."""
        for run in self.runs:
            run.refresh()
            run.q_good[:], run.v_good[:] = run.q, run.v
        self._good_time, self._good_step = self.time, self.step_count

    # ---- queries ----------------------------------------------------------------------------------------------
    def body_placement(self, multibody: int, body: int):
        """(R, p) of a body frame in the world; ``body == -1`` is the multibody's base frame."""
        run = self.runs[multibody]
        if body < 0:
            return run.instance.R.copy(), run.instance.p.copy()
        R, p = run.world_placements()
        return R[body].copy(), p[body].copy()

    def placements(self):
        """World placements of every body, per multibody: ([R (nb, 3, 3), ...], [p (nb, 3), ...]) — the form of
        a Snapshot's ``body_R``, ``body_p`` (views: read them before the next step)."""
        placements = [run.world_placements() for run in self.runs]
        return [R for R, _ in placements], [p for _, p in placements]

    def body_velocity(self, multibody: int, body: int):
        """(linear velocity of the body origin, angular velocity), world axes; zero for the base frame."""
        if body < 0:
            return np.zeros(3), np.zeros(3)
        V = self.runs[multibody].V[body]
        return V[:3].copy(), V[3:].copy()

    def body_velocity_at(self, multibody: int, body: int, point_world):
        """World linear velocity of the material point of ``body`` currently at ``point_world``."""
        v_origin, w = self.body_velocity(multibody, body)
        if body < 0:
            return v_origin
        return v_origin + np.cross(w, np.asarray(point_world, float) - self.body_placement(multibody, body)[1])

    @property
    def contacts(self) -> ActiveContacts:
        """The active contacts of the last step, world frame: point, normal (from b to a), force on a, names."""
        stage = self.contact_stage
        c = stage.contacts
        if c is None or len(c) == 0:
            return ActiveContacts()
        name = stage.world.object_name
        return ActiveContacts(point=_freeze(c.point), normal=_freeze(c.normal), force=_freeze(stage.forces),
                              depth=_freeze(c.depth), mu=_freeze(c.mu), body_a=tuple(name(i) for i in c.object_a),
                              body_b=tuple(name(i) for i in c.object_b))

    @property
    def solver_stats(self) -> dict:
        """Per collision group of the last step: multibodies, contacts, rows, Delassus method, iterations,
        residual, cone violation, converged; and their totals."""
        reports = self.contact_stage.reports
        return {"groups": reports, "iterations": sum(r.iterations for r in reports),
                "residual": max((r.residual for r in reports), default=0.0),
                "delassus": "+".join(sorted({r.delassus for r in reports}))}

    def body_mass(self, multibody: int, body: int) -> float:
        return float(self.runs[multibody].model.body_mass[body])

    def energy(self):
        """(kinetic, potential) energy in J, summed over multibodies (potential measured in the world frame)."""
        kinetic = potential = 0.0
        for run in self.runs:
            kinetic += kinetic_energy(run.model, run.data, run.q, run.v)
            potential += potential_energy(run.model, run.data, run.q, gravity=run.gravity)
            potential -= run.model.total_mass * float(self.universe.gravity @ run.instance.p)
        return kinetic, potential

    def snapshot(self) -> Snapshot:
        """An immutable copy of what viewers need (placements, torques applied, contacts, timings, energy)."""
        placements = [run.world_placements() for run in self.runs]
        frozen = _freeze
        return Snapshot(
            t=self.time, step=self.step_count, q=tuple(frozen(r.q) for r in self.runs),
            v=tuple(frozen(r.v) for r in self.runs), tau=tuple(frozen(r.tau) for r in self.runs),
            base_R=tuple(frozen(r.instance.R) for r in self.runs),
            base_p=tuple(frozen(r.instance.p) for r in self.runs), body_R=tuple(frozen(R) for R, _ in placements),
            body_p=tuple(frozen(p) for _, p in placements), contacts=self.contacts, timings=dict(self.timer.last),
            energy=self.energy(), solver_stats=dict(self.solver_stats),
            external=tuple((m, b, frozen(w), frozen(x)) for (m, b), (w, x) in self.external.items()),
            measurements={name: {k: frozen(v) for k, v in reading.items()}
                          for name, reading in self.measurements.items()})


def _freeze(a):
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a
