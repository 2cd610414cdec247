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
from engine.dynamics import aba, forward_kinematics, kinetic_energy, potential_energy
from engine.dynamics.integrators import integrate
from engine.errors import SimulationError
from engine.state import Contacts, Snapshot, State
from engine.timing import StageTimer


class MultiBodyRun:
    """The mutable side of one multibody in a run: its Data, (q, v), inputs and controllers."""

    def __init__(self, instance, universe):
        self.instance, self.model = instance, instance.model
        self.data = self.model.create_data()
        self.q, self.v = instance.q0.copy(), instance.v0.copy()
        self.tau = np.zeros(self.model.nv)
        self.f_ext = np.zeros((self.model.nbodies, 6))    # body-frame wrenches for the dynamics
        self.a_free = np.zeros(self.model.nv)
        # gravity and external forces are expressed in the multibody's base frame
        self.gravity = instance.R.T @ universe.gravity
        base_dir = str(Path(universe.source).parent)
        self.controllers = [plugins.create(spec, model=self.model, q0=instance.q0, gravity=self.gravity,
                                           base_dir=base_dir)
                            for spec in universe.controllers if spec.target == instance.name]

    def world_placements(self):
        """Body frames in the world: (R_m, p_m) * oMi."""
        R, p = self.instance.R, self.instance.p
        return R @ self.data.oMi_R, self.data.oMi_p @ R.T + p


class Simulation:
    """A running universe: ``step(n)``, ``time``, ``state``/``set_state``, ``reset``, ``snapshot``."""

    def __init__(self, universe):
        self.universe = universe
        self.dt = float(universe.time_step)
        self.runs = [MultiBodyRun(mb, universe) for mb in universe.multibodies]
        self.timer = StageTimer()
        self.external = {}        # (multibody, body) -> (wrench_world (6,), point_world (3,))
        self.contacts = Contacts()
        self.solver_stats = {}
        self.reset()

    # ---- state ---------------------------------------------------------------------------------------------
    def reset(self):
        for run in self.runs:
            run.q[:], run.v[:] = run.instance.q0, run.instance.v0
            for c in run.controllers:
                c.reset(run.q, run.v)
        self.time, self.step_count = 0.0, 0
        self.external.clear()
        self.timer.reset()
        self._refresh_kinematics()
        self._last_good = self.state

    @property
    def state(self) -> State:
        return State.capture(self.time, self.step_count, [r.q for r in self.runs], [r.v for r in self.runs])

    def set_state(self, state: State):
        if len(state.q) != len(self.runs):
            raise ValueError(f"state has {len(state.q)} multibodies, the universe {len(self.runs)}")
        for run, q, v in zip(self.runs, state.q, state.v):
            if q.shape != run.q.shape or v.shape != run.v.shape:
                raise ValueError(f"state shapes {q.shape}, {v.shape} do not fit '{run.instance.name}' "
                                 f"(nq={run.model.nq}, nv={run.model.nv})")
            run.q[:], run.v[:] = q, v
        self.time, self.step_count = state.t, state.step
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
        """One time step of the AMELIF loop (seed 000 Fig 2.3): inputs → free dynamics → integration."""
        timer, dt = self.timer, self.dt
        timer.begin_step()
        with timer.stage("control"):
            for run in self.runs:
                run.tau[:] = 0.0
                for c in run.controllers:
                    run.tau += c.control(self.time, run.q, run.v)
                self._external_to_body_frames(run, self.runs.index(run))
        with timer.stage("dynamics"):  # a_free = M^-1 (tau - b - g + J^T f_ext)   (seed 000 eq. 3.64)
            for run in self.runs:
                run.a_free[:] = aba(run.model, run.data, run.q, run.v, run.tau, run.f_ext, gravity=run.gravity)
                self._check(run.a_free, "dynamics", run)
        with timer.stage("integration"):  # semi-implicit Euler: v+ = v + dt a, q+ = q ⊕ dt v+
            for run in self.runs:
                run.v += dt * run.a_free
                run.q[:] = integrate(run.model, run.q, run.v * dt)
                self._check(run.q, "integration", run)
        self.time += dt
        self.step_count += 1
        timer.end_step()
        self._refresh_kinematics()
        self._last_good = self.state

    def _external_to_body_frames(self, run, index):
        """World wrench (f, m) at point x → body-frame wrench at the body origin: Rᵀ f, Rᵀ (m + (x − p) × f)."""
        run.f_ext[:] = 0.0
        R_world, p_world = run.world_placements()
        for (m, b), (w, x) in self.external.items():
            if m != index:
                continue
            R, p = R_world[b], p_world[b]
            run.f_ext[b, :3] = R.T @ w[:3]
            run.f_ext[b, 3:] = R.T @ (w[3:] + np.cross(x - p, w[:3]))

    def _check(self, values, stage, run):
        if not np.all(np.isfinite(values)):
            bad = int(np.flatnonzero(~np.isfinite(values))[0])
            last = self._last_good
            self.set_state(last)
            raise SimulationError(f"non-finite value in stage '{stage}' for multibody '{run.instance.name}' at "
                                  f"index {bad} (t = {last.t:.6f} s); the last good state is kept",
                                  value=float(values[bad]))

    def _refresh_kinematics(self):
        for run in self.runs:
            forward_kinematics(run.model, run.data, run.q)

    # ---- queries ----------------------------------------------------------------------------------------------
    def body_placement(self, multibody: int, body: int):
        """(R, p) of a body frame in the world; ``body == -1`` is the multibody's base frame."""
        run = self.runs[multibody]
        if body < 0:
            return run.instance.R.copy(), run.instance.p.copy()
        R, p = run.world_placements()
        return R[body], p[body]

    def body_velocity_at(self, multibody: int, body: int, point_world):
        """World linear velocity of the material point of ``body`` currently at ``point_world``."""
        run = self.runs[multibody]
        if body < 0:
            return np.zeros(3)
        forward_kinematics(run.model, run.data, run.q, run.v)
        R, p = self.body_placement(multibody, body)
        v_lin, w = R @ run.data.v[body, :3], R @ run.data.v[body, 3:]
        return v_lin + np.cross(w, np.asarray(point_world, float) - p)

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
        """An immutable copy of what viewers need (placements, contacts, timings, energy)."""
        placements = [run.world_placements() for run in self.runs]
        frozen = _freeze
        return Snapshot(
            t=self.time, step=self.step_count, q=tuple(frozen(r.q) for r in self.runs),
            v=tuple(frozen(r.v) for r in self.runs), base_R=tuple(frozen(r.instance.R) for r in self.runs),
            base_p=tuple(frozen(r.instance.p) for r in self.runs), body_R=tuple(frozen(R) for R, _ in placements),
            body_p=tuple(frozen(p) for _, p in placements), contacts=self.contacts, timings=dict(self.timer.last),
            energy=self.energy(), solver_stats=dict(self.solver_stats),
            external=tuple((m, b, frozen(w), frozen(x)) for (m, b), (w, x) in self.external.items()))


def _freeze(a):
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a
