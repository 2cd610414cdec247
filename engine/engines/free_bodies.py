"""Free rigid bodies (cubes, balls, boxes, grasped objects: one body on a free joint) advanced together.

Each multibody of a universe costs a Python pass per stage (ABA, kinematics, integration, checks: ~16 µs), which
dominates a scene of many small bodies (issue 16: 40 cubes). The free bodies of a universe are therefore stepped
by one compiled call per stage (``_free_body_kernels``: Newton–Euler about the origin, the same accelerations as
``aba`` on a one-body tree). Their runs keep their public arrays (``q``, ``v``, ``tau``, ``f_ext``,
``f_contact``, ``a``, the last good ``q_good``, ``v_good``, ``tau_good``) as views of this batch's rows, so
controllers, devices, sensors, the contact stage and the state's get/set see no difference; the Simulation
zeroes the batch's torques, and commits its good state (``commit``), in one call each. Their kinetic energies
live in the batch (``kinetic``: the last step's, ``kinetic_good``: the last good state's), not in the runs'
``kinetic`` attributes. A fault flagged by a kernel is raised by the Simulation's own checks, which
name the body, the stage and the value as for any multibody.

The contact stage writes the batch's contact wrenches and ``in_contact`` flags in one call (a batched run's
``in_contact`` reads its flag). A batched run's ``data`` (its kinematics and ABA workspace) is not
refreshed every step: ``data_stale`` says so, and the contact stage has it recomputed (``MultiBodyRun.fresh_data``)
before a Delassus operator that reads it (a free body in a group with a robot).

A world of free bodies alone (``ArticulaEngine.one_call``) takes its whole step — dynamics, collision, contacts,
integration — in one compiled call (``step``, ``_free_body_kernels.free_step``): the stages' kernels chained on the
same arrays, so the step is the same to the last bit as stage by stage.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from engine.collision._kernels import bind
from engine.collision.contacts import Contacts
from engine.engines import _free_body_kernels as K
from engine.engines._step_arrays import FIELDS
from engine.model.model import JointType


def batchable(run) -> bool:
    """A run this batch can step: one body on a free joint, no closures, soles, rotor or joint friction (the
    engine also asks for the semi-implicit Euler integrator)."""
    model = run.model
    return (model.nbodies == 1 and int(model.joint_type[0]) == JointType.FREE and not model.closures
            and not run.instance.soles
            and not (np.any(model.dof_damping) or np.any(model.dof_friction) or np.any(model.dof_stiffness)
                     or np.any(model.dof_rotor_inertia)))


class FreeBodies:
    """The free-body runs ``runs`` of a Simulation, stepped by ``dynamics(dt)`` and ``integrate(dt)``."""

    def __init__(self, sim, runs):
        self.sim, self.runs = sim, list(runs)
        k = len(self.runs)
        self.I = np.array([r.model.body_inertia[0] for r in self.runs])            # spatial inertia at the origin
        self.I_inv = np.linalg.inv(self.I)
        self.gravity = np.array([r.gravity for r in self.runs])                    # base frame
        self.base_R = np.array([r.instance.R for r in self.runs])
        self.base_p = np.array([r.instance.p for r in self.runs])
        self.row = np.array([r.offset for r in self.runs], dtype=np.int64)         # WorldBodies row of body 0
        self.multibody = np.array([sim.runs.index(r) for r in self.runs], dtype=np.int64)
        self.speed = np.array([r.limits.speed for r in self.runs])
        self.q, self.v = np.array([r.q for r in self.runs]), np.array([r.v for r in self.runs])
        self.tau, self.a, self.a_free = np.zeros((k, 6)), np.zeros((k, 6)), np.zeros((k, 6))
        self.f_ext, self.f_contact, self.V_last = np.zeros((k, 6)), np.zeros((k, 6)), np.zeros((k, 6))
        self.q_good, self.v_good, self.tau_good = self.q.copy(), self.v.copy(), self.tau.copy()
        self.in_contact, self.kinetic, self.kinetic_good = np.zeros(k, bool), np.zeros(k), np.zeros(k)
        self.energy_jump = np.array([r.limits.energy_jump for r in self.runs])    # the energy bound's terms
        self.energy_floor = np.array([r.limits.energy_floor for r in self.runs])  # (faults/limits.py)
        self.work = np.zeros((k, K.WORK))
        self._good = (self.q, self.v, self.tau, self.kinetic, self.q_good, self.v_good, self.tau_good,
                      self.kinetic_good)                   # ``commit``'s arguments
        self._commit = bind(K.commit, *self._good)
        for i, run in enumerate(self.runs):                # the runs' arrays become views of the batch's rows
            run.q, run.v, run.tau, run.a, run.a_free = self.q[i], self.v[i], self.tau[i], self.a[i], self.a_free[i]
            run.f_ext, run.f_contact, run.V_last = self.f_ext[i:i + 1], self.f_contact[i:i + 1], self.V_last[i:i + 1]
            run.q_good, run.v_good, run.tau_good = self.q_good[i], self.v_good[i], self.tau_good[i]
            run.contact_flag = self.in_contact[i:i + 1]
            run.q_in, run.v_in = run.q.view(), run.v.view()
            run.q_in.flags.writeable = run.v_in.flags.writeable = False
            run.data_stale = True

    def dynamics(self, dt):
        """a_free and V_free of every free body (stage "dynamics")."""
        b = self.sim.bodies
        for run in self.runs:
            run.data_stale = True                          # no ABA pass on their data this step
        bad = K.free_dynamics(self.I, self.I_inv, self.gravity, self.q, self.v, self.tau, self.f_ext, self.speed,
                              dt, self.row, b.R, self.a_free, b.V_free, self.work)
        if bad >= 0:                                       # the Simulation's checks name the fault
            run = self.runs[bad]
            self.sim.check_finite(run.a_free, "dynamics", run, "free acceleration")
            self.sim.check_speed(run.v + dt * run.a_free, "dynamics", run, "free velocity v + δt a_free")

    def integrate(self, dt):
        """v⁺, q⁺, the new placements and velocities, the kinetic energies (stage "integration")."""
        b = self.sim.bodies
        bad = K.free_integrate(self.I, self.I_inv, self.gravity, self.base_R, self.base_p, self.q, self.v, self.tau,
                               self.f_ext, self.f_contact, self.in_contact, self.a_free, self.speed, self.kinetic_good,
                               self.energy_floor, self.energy_jump, dt, self.row, b.R, b.p, b.V, self.V_last, self.a,
                               self.kinetic, self.work)
        if bad >= 0:
            self._integration_fault(bad)

    def _integration_fault(self, bad):
        """Body ``bad`` failed the integration's checks: the Simulation's checks name the fault."""
        run, sim = self.runs[bad], self.sim
        run.refresh()                                      # its kinematics, for the energy check's message
        run.kinetic = float(self.kinetic_good[bad])
        sim.check_finite(run.f_contact, "solver", run, "contact wrench")
        sim.check_finite(run.q, "integration", run, "configuration q")
        sim.check_speed(run.v, "integration", run, "velocity v")
        sim.check_energy(run)

    def fuse(self, stage):
        """Make ``step`` ready for the contact stage ``stage``: the arguments of ``_free_body_kernels.free_step`` that
        are the same every step (the batch's, the bodies', the stage's and its collision world's arrays and
        settings) in one ``StepArrays`` (``arrays``; under NUMBA_DISABLE_JIT, a namespace of the same fields), and
        the kernel compiled for its types (``collision._kernels.bind``: no per-call type dispatch, which costs more
        than the step on the collision world's named tuples). The structure also holds the contact stage's warm
        start and kept factor (``previous``, ``keep``: always C-contiguous arrays of the same dtypes), set by the
        call itself to the slot it wrote, and by ``step`` when the stage's changed otherwise: passed as arguments,
        their seven arrays cost ≈ 1.3 µs a call to unbox. The contact stage's own structure for its one-call solve
        (``stage.rigid_arrays``: the contact tables, groups, settings) is a field of it. ``commit`` then takes the same
        structure (``_free_body_kernels.commit_of``)."""
        b, w = self.sim.bodies, stage.world
        c = w.settings
        n = len(w.workspace.depth)                   # the contacts' rows, in two slots (``step``)
        self.out = (np.zeros((2, n, 3)), np.zeros((2, n, 3)), np.zeros((2, n)), np.zeros((2, n), np.int64),
                    np.zeros((2, n, 3)), np.zeros((2, n, 3)))      # point, normal, depth, pair, f_local, forces
        self.slot, self.views = 0, [None, None]      # the slot the next step writes; each slot's (nc, views)
        arrays = (
            self.I, self.I_inv, self.gravity, self.base_R, self.base_p, self.q, self.v, self.tau, self.f_ext,
            self.f_contact, self.in_contact, self.a_free, self.a, self.speed, self.kinetic_good, self.energy_floor,
            self.energy_jump, self.kinetic, self.row, self.V_last, self.work, b.R, b.p, b.V, b.V_free, w.shapes,
            w.pair_arrays, w.workspace, w.cache, float(c.margin), int(c.max_contacts_per_pair),
            tuple(map(float, c.reduction_tolerances)), float(c.reuse_distance), stage.rigid_arrays, *self.out,
            self.q_good, self.v_good, self.tau_good, *stage.previous, stage.keep)
        jit = hasattr(K.free_step, "overloads")
        self.arrays = K.step_arrays(*arrays) if jit else SimpleNamespace(**dict(zip(FIELDS, arrays)))
        self.warm = stage.previous, stage.keep       # the stage's warm start and factor the structure holds
        self.free_step = bind(K.free_step, self.arrays, self.sim.dt, 0)
        self._commit, self._good = bind(K.commit_of, self.arrays), (self.arrays,)     # one argument to unbox

    def step(self, dt, stage):
        """The whole step — dynamics, collision, contacts, integration — of a world of these free bodies alone, in
        one call (``_free_body_kernels.free_step``, made ready by ``fuse(stage)``), left as the readable stages
        leave it: the contact stage ``stage``'s contacts, forces, warm start, counts and group reports. A fault is
        named by the readable stage that meets it; a group too large for the kept factor's room is solved by
        ``stage._rigid_step``, which makes room.

        The contacts and their forces are views of one of two slots (``out``), written in turn: a step never
        writes the arrays of the previous step's, which are the warm start it reads and the last good state's
        (``Simulation._commit``; ``State.capture`` and ``set_warm_start`` copy them)."""
        slot = self.slot
        if stage.previous is not self.warm[0] or stage.keep is not self.warm[1]:  # a restore, a forget, _rigid_step
            K.set_warm_start(self.arrays, *stage.previous, stage.keep)
            self.warm = stage.previous, stage.keep
        keep = self.warm[1]
        status, bad, nc, ng, self_contacts, unconverged = self.free_step(self.arrays, dt, slot)
        # the runs' data_stale flags stay set: only the readable path's Delassus stage clears them, after a pass of
        # ``dynamics``, which sets them first
        if status == K.DYNAMICS_FAULT:
            self.dynamics(dt)                              # the same arithmetic: its checks raise
        if status == K.NON_FINITE:
            stage.world._raise_non_finite()
        if nc == 0:                                        # as a step without contacts leaves the stage
            if not stage.idle:
                stage._forget()
        else:
            self.slot = 1 - slot
            c, f_local, forces = self._views(slot, nc, stage)
            stage.contacts = c
            if status == K.ROOM:
                stage._rigid_step(c, dt)
                self.integrate(dt)
            else:
                stage._one_call_done(c, ng, f_local, forces, self_contacts, unconverged, ("rigid",) * ng)
                if ng:                                     # the stage's warm start is the one the call left
                    self.warm = stage.previous, keep
        if status == K.INTEGRATION_FAULT:
            self._integration_fault(bad)

    def _views(self, slot, nc, stage):
        """(Contacts, f_local, forces) of the first nc rows of slot ``slot`` (views, made once per slot and nc)."""
        views = self.views[slot]
        if views is None or views[0] != nc:
            point, normal, depth, pair, f_local, forces = (x[slot][:nc] for x in self.out)
            views = self.views[slot] = nc, Contacts(point, normal, depth, pair, stage.world.tables), f_local, forces
        return views[1:]

    def commit(self):
        """The state after a step that passed every check becomes the last good one (``Simulation._commit``)."""
        self._commit(*self._good)
