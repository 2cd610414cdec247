"""Helpers for the interaction tests: a manual clock, the fake libHD's file format and log, and a minimal
rigid-body world with the haptic part of the Simulation API (until engine.Simulation exists)."""
from __future__ import annotations

import ctypes
import pathlib
import threading
import time

import numpy as np

from engine.interaction import DeviceError, ScriptedDevice
from engine.spatial import rotation_axis_angle, skew


def cross(a, b):
    """a x b for (3,) vectors (np.cross is slow on small vectors)."""
    return skew(a) @ b


def write_fake_trajectory(path, rows) -> pathlib.Path:
    """Rows (t, x, y, z, qx, qy, qz, qw, buttons) in the fake libHD's text format."""
    np.savetxt(path, np.asarray(rows, float), header="t x y z qx qy qz qw buttons")
    return pathlib.Path(path)


def fake_forces(lib, n: int = 1 << 16) -> np.ndarray:
    """(n, 4) rows (t, fx, fy, fz) the fake device received, device frame, oldest first."""
    buf = (ctypes.c_double * (4 * n))()
    count = lib.fakehd_force_log(buf, n)
    return np.frombuffer(buf, dtype=float)[:4 * count].reshape(count, 4).copy()


class ManualClock:
    """A clock the test advances by hand."""

    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


class RigidWorld:
    """One free rigid body (multibody 0, body -1: the base) under gravity, on a table that holds its centre of
    mass at z >= ``table_z``, integrated by semi-implicit Euler at ``dt``:

        m dv/dt = m g + f,   I_w dw/dt + w x I_w w = tau_c,   I_w = R I R^T,   R <- exp([w] dt) R

    The external wrench (f, tau) at x acts at the centre of mass as tau_c = tau + (x - c) x f.  It offers the
    haptic half of the Simulation API: set_external_wrench, body_placement, body_velocity_at, body_mass.
    """

    def __init__(self, mass, half_extents, c, *, table_z=-np.inf, dt=1e-3, g=9.81):
        self.mass, self.half_extents, self.dt = mass, np.asarray(half_extents, float), dt
        h2 = (2.0 * self.half_extents) ** 2
        self.inertia = mass / 12.0 * np.diag([h2[1] + h2[2], h2[0] + h2[2], h2[0] + h2[1]])   # solid box
        self.c, self.R = np.array(c, float), np.eye(3)
        self.v, self.w = np.zeros(3), np.zeros(3)
        self.g, self.table_z, self.time = np.array([0.0, 0.0, -g]), table_z, 0.0
        self.wrench, self.point = np.zeros(6), self.c.copy()
        self.lock = threading.Lock()

    def set_external_wrench(self, multibody, body, wrench, point):
        with self.lock:
            self.wrench, self.point = np.array(wrench, float), np.array(point, float)

    def body_mass(self, multibody, body):
        return self.mass

    def body_placement(self, multibody, body):
        return self.R.copy(), self.c.copy()

    def body_velocity_at(self, multibody, body, point):
        return self.v + cross(self.w, np.asarray(point) - self.c)

    def contains(self, x) -> bool:
        return bool(np.all(np.abs(self.R.T @ (np.asarray(x) - self.c)) <= self.half_extents + 1e-9))

    def step(self):
        with self.lock:
            f, tau = self.wrench[:3], self.wrench[3:] + cross(self.point - self.c, self.wrench[:3])
        I_w = self.R @ self.inertia @ self.R.T
        self.v = self.v + self.dt * (self.g + f / self.mass)
        self.w = self.w + self.dt * np.linalg.solve(I_w, tau - cross(self.w, I_w @ self.w))
        self.c = self.c + self.dt * self.v
        if self.c[2] < self.table_z:                        # the table: z_c >= table_z, no bounce
            self.c[2], self.v[2] = self.table_z, max(self.v[2], 0.0)
        self.R = rotation_axis_angle(self.w, np.linalg.norm(self.w) * self.dt) @ self.R
        self.time += self.dt


class PhysicsLoop:
    """The physics thread of a test: ``port.update`` then ``world.step`` at ``rate`` in real time; ``pause`` stalls
    it (no step, no feedback) until ``resume``."""

    def __init__(self, world: RigidWorld, port, rate: float = 1000.0):
        self.world, self.port, self.period = world, port, 1.0 / rate
        self.running, self.stalled = threading.Event(), threading.Event()
        self.steps, self.error = 0, None
        self.thread = threading.Thread(target=self._run, name="physics", daemon=True)

    def __enter__(self):
        self.running.set()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running.clear()
        self.thread.join(2.0)

    def _run(self):
        deadline = time.monotonic()
        try:
            while self.running.is_set():
                if not self.stalled.is_set():
                    self.port.update(self.world.time)
                    self.world.step()
                    self.steps += 1
                deadline += self.period
                time.sleep(max(0.0, deadline - time.monotonic()))
        except Exception as exc:
            self.error = exc
            raise


def world_body(world: RigidWorld):
    """(pick, body) for ``HapticSession.physics_port``: the box is grasped where the proxy is inside it."""
    from engine.interaction import SimulationBody
    return (lambda x: (0, -1) if world.contains(x) else None), (lambda key: SimulationBody(world, *key))


def lockstep(session, port, world, clock, duration: float, dt: float = 1e-3):
    """Haptic tick and physics step in turn every ``dt`` (s) of the manual clock, single-threaded."""
    for _ in range(int(round(duration / dt))):
        clock.t += dt
        port.update(world.time)
        world.step()
        session.tick()


class FailingDevice(ScriptedDevice):
    """A device whose cable is pulled after ``fail_after`` reads."""

    def __init__(self, *args, fail_after: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads, self.fail_after = 0, fail_after

    def read(self):
        self.reads += 1
        if self.reads > self.fail_after:
            raise DeviceError("USB cable pulled")
        return super().read()


def wait_for(condition, timeout=30.0):
    """Poll ``condition`` until it holds: a loaded machine runs the haptic ticks late, so the tests wait for what
    they need to have happened, not for a fixed wall-clock time.  Fails if it has not happened in ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {condition.__doc__ or 'the condition'}"
        time.sleep(0.02)
