"""The simulation loop (seed 000 Fig 2.3 / 3.4), in one readable function: ``Simulation._step``.

    controllers + devices write inputs (torques, external wrenches)
    → the dynamics engine (engine/engines/): with Articula's own, free dynamics (ABA with known external
      forces: gravity, actuators, user force) → collision detection → collision groups → Delassus operator per
      group → frictional contact solve → velocity update, integration on the Lie group
    → sensors
    → snapshot for viewers, recorders and the haptic loop

Every stage is timed every step (``sim.timer``). Faults never lose a run (engine/faults/): every plugin call is
guarded, so a plugin that raises or returns a non-finite value, the wrong shape or a torque beyond its effort limit
stops the step with a ``PluginError`` naming it; a non-finite value or a velocity or kinetic energy beyond its
physical bound stops it with a ``DivergenceError`` naming the stage. Either way the simulation keeps the last good
state (the one after the previous step, which passed every check), is marked ``faulted`` and refuses to step until
``reset()``, ``set_state()``, ``clear_fault()`` or ``disable_plugin()``.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from engine import engines, faults, plugins
from engine.contact import _stepping_kernels as K
from engine.contact.closures import WorldBodies
from engine.dynamics import aba, forward_kinematics, kinetic_energy, kinetic_energy_of_motion, potential_energy
from engine.dynamics.lie import integrate_kernel
from engine.errors import DivergenceError, PluginError, SimulationError, UniverseError
from engine.state import ActiveContacts, Snapshot, State, freeze
from engine.timing import StageTimer


class MultiBodyRun:
    """The mutable side of one multibody in a run: its Data, (q, v), inputs and controllers; its rows of the
    universe's ``WorldBodies`` (``R_world``, ``p_world``, ``V``, ``V_free``) are views."""

    def __init__(self, instance, universe, bodies, index):
        self.instance, self.model, self.name = instance, instance.model, instance.name
        self.data = self.model.create_data()
        self.q, self.v = instance.q0.copy(), instance.v0.copy()
        self.q_in, self.v_in = self.q.view(), self.v.view()  # what plugins read: views they cannot write
        self.q_in.flags.writeable = self.v_in.flags.writeable = False
        self.data_free = self.model.create_data()           # kinematics at the free velocity
        nb, nv = self.model.nbodies, self.model.nv
        self.tau, self.a_free = np.zeros(nv), np.zeros(nv)
        self.a = np.zeros(nv)                               # the last step's acceleration (v⁺ − v)/δt
        self.q_good, self.v_good, self.tau_good = self.q.copy(), self.v.copy(), self.tau.copy()  # the last good state
        self.kinetic = self.kinetic_next = 0.0              # kinetic energy of the last good state, of the next
        self.f_ext = np.zeros((nb, 6))                      # user/haptic wrenches, body frames
        self.f_contact = np.zeros((nb, 6))                  # contact and closure wrenches, body frames
        self.f_total = np.zeros((nb, 6))
        self.contact_flag = np.zeros(1, bool)               # ``in_contact`` (a row of the batch's, engines/free_bodies)
        self.in_contact = self.has_external = False         # f_contact, f_ext non-zero
        self.offset = int(bodies.offset[index])
        rows = bodies.rows(index)
        self.R_world, self.p_world = bodies.R[rows], bodies.p[rows]   # body frames in the world
        self.V, self.V_free = bodies.V[rows], bodies.V_free[rows]     # (v_o, w) world axes, at v and v_free
        self.V_last = np.zeros((nb, 6))                     # V before the last refresh: the previous step's
        self.bodies = bodies
        self.data_stale = False                             # data not as the dynamics stage leaves it (free_bodies)
        self.xi, self.q_next, self.scratch = np.zeros(nv), np.zeros(self.model.nq), np.zeros(8)
        m = self.model                                      # writable copies: numba's fast argument path
        self.joints = (m.joint_type.copy(), m.joint_idx_q.copy(), m.joint_idx_v.copy())
        # gravity and external forces are expressed in the multibody's base frame
        self.gravity = instance.R.T @ universe.gravity
        self.limits = faults.RunLimits(self.model, universe.limits, universe.gravity)
        base_dir = str(Path(universe.source).parent)
        self.controllers = [plugins.create(spec, model=self.model, q0=instance.q0, gravity=self.gravity,
                                           base_dir=base_dir)
                            for spec in universe.controllers if spec.target == instance.name]

    @property
    def in_contact(self) -> bool:
        """Whether the last step's contact wrenches ``f_contact`` are non-zero."""
        return bool(self.contact_flag[0])

    @in_contact.setter
    def in_contact(self, value):
        self.contact_flag[0] = value

    def world_placements(self):
        """Body frames in the world, (R (nb, 3, 3), p (nb, 3)) = (R_m, p_m) * oMi, at the last refresh."""
        return self.R_world, self.p_world

    def refresh(self):
        """Kinematics of (q, v): placements and velocities in ``data``, then in the world rows (the velocities
        they replace kept in ``V_last``)."""
        np.copyto(self.V_last, self.V)
        forward_kinematics(self.model, self.data, self.q, self.v)
        b = self.bodies
        K.world_bodies(self.data.ws, self.instance.R, self.instance.p, self.offset, b.R, b.p, b.V)

    def fresh_data(self):
        """``data`` as the dynamics stage leaves it: the kinematics and ABA's articulated inertias at the current
        (q, v) (what a Delassus operator reads; recomputed first if ``data_stale``)."""
        if self.data_stale:
            aba(self.model, self.data, self.q, self.v, self.tau, self.f_ext, gravity=self.gravity)
            self.data_stale = False
        return self.data

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
    """A running universe: ``step(n)``, ``time``, ``state``/``set_state``, ``reset``, ``snapshot``.

    ``engine``: the dynamics engine's name (engine/engines/), by default the universe's ``<Settings engine>``
    (``articula`` unless it says otherwise)."""

    def __init__(self, universe, engine: str | None = None):
        self.universe = universe
        self.dt = float(universe.time_step)
        self.bodies = WorldBodies([mb.model.nbodies for mb in universe.multibodies])
        self.runs = [MultiBodyRun(mb, universe, self.bodies, m) for m, mb in enumerate(universe.multibodies)]
        self.timer = StageTimer()
        self.external = {}        # (multibody, body) -> (wrench_world (6,), point_world (3,))
        self.engine = engines.engine_class(engine or universe.engine)(self)
        #: the free bodies the engine steps together (engines/free_bodies.py): their last good state is kept in
        #: the batch's arrays, committed in one copy; ``solo``: the other runs
        self.batch = getattr(self.engine, "free_bodies", None)
        self.solo = [run for run in self.runs if self.batch is None or run not in self.batch.runs]
        self._driven = self._driven_runs()
        self._external_on = False  # an external wrench was applied since the last step without one
        self.sensors = [self._sensor(spec) for spec in universe.sensors]
        self.sensor_target = {id(s): spec.target for s, spec in zip(self.sensors, universe.sensors)}
        self.measurements = {}    # sensor name -> {signal: array}, after each step
        self.faulted: SimulationError | None = None   # the fault that stopped the run, until cleared
        self.effort_clamps = {}   # multibody name -> number of torques (and external wrenches) clamped
        self.reset()

    @property
    def contact_stage(self):
        """Articula's contact stage (collision, groups, Delassus, solver, soles); None on another engine."""
        return getattr(self.engine, "contact_stage", None)

    # ---- state ---------------------------------------------------------------------------------------------
    def reset(self):
        for run in self.runs:
            run.q[:], run.v[:] = run.instance.q0, run.instance.v0
            run.tau[:] = 0.0          # no step taken yet: no torque applied
            for c in run.controllers:
                faults.call(c, "controller", "reset", c.reset, run.q_in, run.v_in, multibody=run.name)
        self.time, self.step_count = 0.0, 0
        self.external.clear()
        self.measurements = {}
        self.timer.reset()
        self._start_here(None)

    @property
    def state(self) -> State:
        return State.capture(self.time, self.step_count, [r.q for r in self.runs], [r.v for r in self.runs],
                             self.engine.warm_start())

    def set_state(self, state: State):
        if len(state.q) != len(self.runs):
            raise ValueError(f"state has {len(state.q)} multibodies, the universe {len(self.runs)}")
        for run, q, v in zip(self.runs, state.q, state.v):
            if q.shape != run.q.shape or v.shape != run.v.shape:
                raise ValueError(f"state shapes {q.shape}, {v.shape} do not fit '{run.instance.name}' "
                                 f"(nq={run.model.nq}, nv={run.model.nv})")
            if faults.first_non_finite(np.ascontiguousarray(q, float)) >= 0 or \
                    faults.first_non_finite(np.ascontiguousarray(v, float)) >= 0:
                raise ValueError(f"state of '{run.instance.name}' is not finite: q {q}, v {v}")
            run.q[:], run.v[:] = q, v
        self.time, self.step_count = state.t, state.step
        self._start_here(state.warm_start)

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

    # ---- faults ---------------------------------------------------------------------------------------------
    def clear_fault(self):
        """Continue after a fault: the next step starts again from the last good state."""
        self.faulted = None

    def disable_plugin(self, name: str):
        """Stop calling the controllers and sensors registered as ``name`` (a sensor also by its own name); a
        fault of plugin ``name`` is cleared (a device's session stops it itself). The contact solver cannot be
        disabled. ValueError if no plugin is called so."""
        solver = getattr(self.engine, "solver", None)
        if solver is not None and faults.plugin_name(solver) == name:
            raise ValueError(f"the contact solver '{name}' cannot be disabled: reset, or choose another <Solver> "
                             f"in the universe")
        found = False
        for run in self.runs:
            kept = [c for c in run.controllers if faults.plugin_name(c) != name]
            found |= len(kept) != len(run.controllers)
            run.controllers = kept
        kept = [s for s in self.sensors if name not in (faults.plugin_name(s), getattr(s, "name", None))]
        found |= len(kept) != len(self.sensors)
        self.sensors = kept
        self._driven = self._driven_runs()
        self.measurements = {s.name: self.measurements[s.name] for s in kept if s.name in self.measurements}
        if isinstance(self.faulted, PluginError) and self.faulted.plugin == name:
            found, self.faulted = True, None
        if not found:
            raise ValueError(f"no plugin named '{name}' is running")

    def report_fault(self, error: SimulationError) -> SimulationError:
        """Mark the simulation faulted by ``error`` raised between two steps (a lockstep device), with the step
        and time filled in; returns the error to raise. The state is the last good one."""
        if isinstance(error, PluginError):
            error = error.at(step=self.step_count + 1, time=self.time)
        self.faulted = error
        return error

    # ---- the loop --------------------------------------------------------------------------------------------
    def step(self, n: int = 1):
        """``n`` steps. A fault stops the step it happens in: the last good state is restored, ``faulted`` is set
        and the error (``PluginError``, ``DivergenceError``, ``SimulationError``) raised."""
        if self.faulted is not None:
            raise SimulationError(f"the simulation is faulted ({self.faulted}); reset(), set_state(), "
                                  f"clear_fault() or disable_plugin() first")
        for _ in range(int(n)):
            try:
                self._step()
            except BaseException as exc:  # anything, even an interrupt: back to the last good state
                self._restore()
                if not isinstance(exc, SimulationError):
                    raise
                error = self.report_fault(exc)
                if error is exc:
                    raise
                raise error from exc.__cause__

    def _step(self):
        """One time step of the AMELIF loop (seed 000 Fig 2.3 / 3.4)."""
        timer, dt = self.timer, self.dt
        timer.begin_step()
        if self._driven or self.external or self._external_on:
            with timer.stage("control"):  # controllers and devices write torques and external wrenches
                self._inputs()
        self.engine.step(dt)  # free dynamics, contacts, integration, kinematics (timed inside)
        self.time += dt
        self.step_count += 1
        if self.sensors:
            with timer.stage("sense"):
                self.measurements = {sensor.name: self._measure(sensor) for sensor in self.sensors}
        self._commit()
        timer.end_step()

    def _inputs(self):
        """Stage "control": the torques of the driven runs and the external wrenches in body frames. Skipped when
        no run is driven and no wrench is applied: the batch's torques then stay zero (``_driven_runs``)."""
        if self.batch is not None:
            self.batch.tau.fill(0.0)  # the batch's torques at once; its runs with controllers below
        for run in self._driven:
            self._control(run)
        if self.external:
            self._external_on = True
        if self._external_on:
            for index, run in enumerate(self.runs):
                self._external_to_body_frames(run, index)
            self._external_on = bool(self.external)

    def _driven_runs(self) -> list:
        """The runs ``_control`` visits: every run but a batched one without controllers or torque clamps, whose
        torque stays zero: the batch's torques, applied and last good, are zeroed here (a run no longer driven
        keeps no torque, even restored) and by every control stage."""
        if self.batch is not None:
            self.batch.tau.fill(0.0)
            self.batch.tau_good.fill(0.0)
        return [run for run in self.runs if run in self.solo or run.controllers or run.limits.clamp]

    def _control(self, run):
        """τ = Σ controllers' torques, each checked at the plugin boundary, then held to the effort limits."""
        run.tau[:] = 0.0
        limits = run.limits
        for c in run.controllers:
            out = faults.call(c, "controller", "control", c.control, self.time, run.q_in, run.v_in,
                              multibody=run.name)
            run.tau += faults.checked_array(out, c, "controller", "control", run.tau.shape, "torque", run.name)
            if limits.refuse and (i := limits.beyond_effort(run.tau)) >= 0:
                raise PluginError(f"drove the torque of {self._dof(run, i)} beyond its effort limit "
                                  f"{limits.effort[i]:g} (effort_limits=\"refuse\")", faults.plugin_name(c),
                                  "controller", "control", run.name, value=float(run.tau[i]))
        if limits.clamp and (n := limits.clamp_effort(run.tau, run.v)):
            self._count_clamps(run, n, "torques")

    def _count_clamps(self, run, n, what):
        """A warning the first time, then a count in ``effort_clamps``."""
        if run.name not in self.effort_clamps:
            warnings.warn(f"{what} of '{run.name}' clamped to their limits (effort_limits=\"clamp\"); "
                          f"Simulation.effort_clamps counts them", stacklevel=5)
        self.effort_clamps[run.name] = self.effort_clamps.get(run.name, 0) + n

    def _measure(self, sensor):
        target = self.sensor_target.get(id(sensor))
        reading = faults.call(sensor, "sensor", "sense", sensor.measure, self, multibody=target)
        return faults.checked_signals(reading, sensor, target)

    def _sensor(self, spec):
        """A sensor plugin on a body or joint of its target multibody (engine/sensors.py)."""
        names = [mb.name for mb in self.universe.multibodies]
        if spec.target not in names:
            file, _, line = (spec.source or "").rpartition(":")
            raise UniverseError(f"sensor '{spec.name}' needs a target multibody, one of {names} "
                                f"(got {spec.target!r})", file or None, int(line) if line.isdigit() else None,
                                spec.target)
        m = names.index(spec.target)
        return plugins.create(spec, model=self.runs[m].model, multibody=m, target=spec.target,
                              gravity=self.universe.gravity, base_dir=str(Path(self.universe.source).parent))

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
            w = self._limit_wrench(run, b, w)
            run.f_ext[b, :3] = R.T @ w[:3]
            run.f_ext[b, 3:] = R.T @ (w[3:] + np.cross(x - p, w[:3]))
            run.has_external = True

    def _limit_wrench(self, run, body, wrench):
        """An external wrench held to |f| ≤ f̄, |n| ≤ f̄ · 1 m (engine/faults/limits.py): scaled down, refused or
        passed as ``effort_limits`` says."""
        excess = run.limits.wrench_excess(wrench) if run.limits.policy != "ignore" else 0.0
        if excess <= 1.0:
            return wrench
        if run.limits.policy == "refuse":
            raise SimulationError(f"external wrench on body '{run.model.body_name[body]}' of '{run.name}' beyond "
                                  f"its bound {run.limits.max_force:g} N, {run.limits.max_moment:g} N m in stage "
                                  f"'control', step {self.step_count + 1} (effort_limits=\"refuse\")",
                                  value=tuple(wrench))
        self._count_clamps(run, 1, "external wrenches")
        return wrench / excess

    # ---- checks (the engine calls them on what it computes) ----------------------------------------------------
    def check_finite(self, values, stage, run, quantity):
        """A non-finite entry of ``values`` stops the step (``DivergenceError`` with the bad value itself)."""
        bad = faults.first_non_finite(values)
        if bad >= 0:
            raise DivergenceError(quantity, stage, run.name, self._good_step + 1, self._good_time, bad,
                                  float(values.reshape(-1)[bad]))

    def check_energy(self, run):
        """T⁺ = ½ v⁺ᵀ M v⁺ (from the kinematics just refreshed) beyond ``energy_jump`` (T + m g · 1 m) stops the
        step."""
        run.kinetic_next = kinetic_energy_of_motion(run.model, run.data, run.v)
        if run.kinetic_next > (bound := run.limits.energy_bound(run.kinetic)):
            raise DivergenceError("kinetic energy", "integration", run.name, self._good_step + 1, self._good_time,
                                  None, run.kinetic_next, bound)

    def check_speed(self, v, stage, run, quantity):
        """A velocity beyond its bound (or not finite) stops the step before it reaches the state."""
        i = run.limits.beyond_speed(v)
        if i >= 0:
            bound = float(run.limits.speed[i]) if np.isfinite(v[i]) else None
            raise DivergenceError(f"{quantity} of {self._dof(run, i)}", stage, run.name, self._good_step + 1,
                                  self._good_time, i, float(v[i]), bound)

    @staticmethod
    def _dof(run, i) -> str:
        return f"dof {i} (joint '{run.model.joint_name[run.model.dof_joint[i]]}')"

    def refresh_kinematics(self):
        """Placements and body velocities of the current state (read by queries, snapshots and contacts)."""
        for run in self.runs:
            run.refresh()

    def _start_here(self, warm_start):
        """The current state (reset, set_state) and ``warm_start`` become the engine's and the last good ones;
        a fault is cleared."""
        self.engine.load(warm_start)
        self.refresh_kinematics()
        for run in self.runs:
            run.kinetic_next = kinetic_energy_of_motion(run.model, run.data, run.v)
        if self.batch is not None:
            self.batch.kinetic[:] = [run.kinetic_next for run in self.batch.runs]
        self.faulted = None
        self._commit()

    def _commit(self):
        """The state after a step that passed every check becomes the last good one."""
        for run in self.solo:
            np.copyto(run.q_good, run.q)
            np.copyto(run.v_good, run.v)
            np.copyto(run.tau_good, run.tau)
            run.kinetic = run.kinetic_next
        if self.batch is not None:
            self.batch.commit()
        self._good_time, self._good_step = self.time, self.step_count
        self._good_warm, self._good_measurements = self.engine.warm_start(), self.measurements

    def _restore(self):
        """Back to the last good state: configuration, velocity, torques, time, warm start and measurements."""
        for run in self.runs:
            run.q[:], run.v[:], run.tau[:] = run.q_good, run.v_good, run.tau_good
        self.time, self.step_count = self._good_time, self._good_step
        self.engine.load(self._good_warm)
        self.measurements = self._good_measurements
        self.refresh_kinematics()

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

    def body_acceleration(self, multibody: int, body: int):
        """(linear acceleration of the body origin, angular acceleration), world axes, over the last step:
        (V(t) − V(t − δt)) / δt of the body's velocities (what an accelerometer on it integrates); zero for the
        base frame and before the first step."""
        if body < 0 or self.step_count == 0:
            return np.zeros(3), np.zeros(3)
        run = self.runs[multibody]
        a = (run.V[body] - run.V_last[body]) / self.dt
        return a[:3], a[3:]

    def body_velocity_at(self, multibody: int, body: int, point_world):
        """World linear velocity of the material point of ``body`` currently at ``point_world``."""
        v_origin, w = self.body_velocity(multibody, body)
        if body < 0:
            return v_origin
        return v_origin + np.cross(w, np.asarray(point_world, float) - self.body_placement(multibody, body)[1])

    @property
    def contacts(self) -> ActiveContacts:
        """The active contacts of the last step, world frame: point, normal (from b to a), force on a, names."""
        return self.engine.contacts()

    @property
    def solver_stats(self) -> dict:
        """Per collision group of the last step: multibodies, contacts, rows, Delassus method, iterations,
        residual, cone violation, converged; and their totals."""
        return self.engine.solver_stats()

    def contact_report(self):
        """The contact totals of the run since the last reset (``ContactCounts``: steps solved, steps left
        unconverged, contacts and self-contacts); ``contact_report().summary()`` is one line for a summary."""
        return self.engine.contact_report()

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
        frozen = freeze
        return Snapshot(
            t=self.time, step=self.step_count, q=tuple(frozen(r.q) for r in self.runs),
            v=tuple(frozen(r.v) for r in self.runs), a=tuple(frozen(r.a) for r in self.runs),
            tau=tuple(frozen(r.tau) for r in self.runs),
            base_R=tuple(frozen(r.instance.R) for r in self.runs),
            base_p=tuple(frozen(r.instance.p) for r in self.runs), body_R=tuple(frozen(R) for R, _ in placements),
            body_p=tuple(frozen(p) for _, p in placements), contacts=self.contacts, timings=dict(self.timer.last),
            energy=self.energy(), solver_stats=dict(self.solver_stats),
            external=tuple((m, b, frozen(w), frozen(x)) for (m, b), (w, x) in self.external.items()),
            measurements={name: {k: frozen(v) for k, v in reading.items()}
                          for name, reading in self.measurements.items()},
            soles=self.engine.sole_states(), closures=self.engine.closure_forces(),
            events=self.wheel_events(recent=True))

    def wheel_events(self, recent=False) -> tuple:
        """(multibody, WheelEvent) of the event-driven wheels (``<Settings events="on">``, engine/rolling/): the
        run's timeline, or the last step's (``recent``); () on an engine without them."""
        events = getattr(self.engine, "wheel_events", None)
        return events(recent) if events else ()
