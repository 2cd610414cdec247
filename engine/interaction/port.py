"""The physics end of a haptic session: grasp, apply the haptic wrench, publish the grasped body.

``PhysicsPort.update`` runs on the physics thread once per step, before the step.  It reads the newest
``HapticCommand``: on the rising edge of the grasp button it asks ``pick(proxy)`` for the body under the proxy and
keeps the grasped material point (body frame); while the command is fresh it applies the command's wrench at the
grasped point (attach) or at the god-object (touch) — a known external wrench of the free dynamics, seed 000
eq. 3.64 q'' = M^-1 (tau - b - g) + M^-1 J_e^T f_e; a command older than ``watchdog`` applies nothing.  It then
publishes a ``PhysicsFeedback``: the simulation's heartbeat and the grasped body's state.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Hashable, Protocol

import numpy as np

from engine.interaction.coupling import BodyFeedback
from engine.interaction.mailbox import Mailbox


@dataclass(frozen=True)
class HapticCommand:
    """Haptic -> physics: the proxy placement (world), whether the grasp button is held, the wrench (6,) to apply
    at ``point`` (world), and the touched ``body`` (touch mode; None in attach mode: the grasped body)."""
    proxy_R: np.ndarray | None
    proxy_p: np.ndarray | None
    grasp: bool
    wrench: np.ndarray
    point: np.ndarray
    body: Hashable | None = None


@dataclass(frozen=True)
class PhysicsFeedback:
    """Physics -> haptic: simulation time and the grasped body (None when nothing is grasped)."""
    t: float
    body: BodyFeedback | None


class GraspedBody(Protocol):
    """What the coupling needs from a body of the simulation (world frame, SI)."""
    mass: float

    def placement(self): ...                                       # -> (R (3, 3), p (3,))

    def velocity_at(self, point) -> np.ndarray: ...                # velocity of the material point at ``point``

    def apply_wrench(self, wrench, point) -> None: ...             # (f, tau) (6,) at ``point``, held until changed


class SimulationBody:
    """``GraspedBody`` of body ``body`` of multibody ``multibody`` of an ``engine.Simulation`` (its haptic API:
    ``body_mass``, ``body_placement``, ``body_velocity_at``, ``set_external_wrench``)."""

    def __init__(self, sim, multibody: int, body: int):
        self.sim, self.multibody, self.body = sim, multibody, body
        self.mass = float(sim.body_mass(multibody, body))

    def placement(self):
        return self.sim.body_placement(self.multibody, self.body)

    def velocity_at(self, point) -> np.ndarray:
        return np.asarray(self.sim.body_velocity_at(self.multibody, self.body, point))

    def apply_wrench(self, wrench, point) -> None:
        self.sim.set_external_wrench(self.multibody, self.body, wrench, point)


def angular_velocity(body: GraspedBody, x) -> np.ndarray:
    """w from the rigid velocity field v(x + e_i) - v(x) = w x e_i:
    w = ((w x e_2)_z, (w x e_3)_x, (w x e_1)_y)."""
    v0 = body.velocity_at(x)
    d = [body.velocity_at(x + e) - v0 for e in np.eye(3)]
    return np.array([d[1][2], d[2][0], d[0][1]])


class PhysicsPort:
    """Built by ``HapticSession.physics_port``; call ``update(t)`` on the physics thread before each step."""

    def __init__(self, commands: Mailbox, feedback: Mailbox, pick: Callable[[np.ndarray], Hashable | None],
                 body: Callable[[Hashable], GraspedBody], *, watchdog: float = 0.04, clock=time.monotonic):
        self.commands, self.feedback, self.pick, self.body = commands, feedback, pick, body
        self.watchdog, self._clock = watchdog, clock
        self._grasp: tuple | None = None          # (key, GraspedBody, point in the body frame, grasp id)
        self._grasps = 0
        self._was_grasping = False
        self._pushed: tuple | None = None         # (key, GraspedBody) holding the haptic wrench

    def update(self, t: float = 0.0) -> None:
        letter = self.commands.get()
        cmd: HapticCommand | None = letter.value
        grasping = cmd is not None and cmd.grasp
        if grasping and not self._was_grasping and cmd.proxy_p is not None:
            self._start_grasp(cmd.proxy_p)
        if not grasping:
            self._grasp = None
        self._was_grasping = grasping
        fresh = cmd is not None and self._clock() - letter.stamp <= self.watchdog
        key, point = None, None
        if fresh and cmd.body is not None:
            key, point = cmd.body, cmd.point
        elif fresh and self._grasp is not None:
            key, point = self._grasp[0], self._grasped_point()
        if self._pushed is not None and self._pushed[0] != key:
            self._pushed[1].apply_wrench(np.zeros(6), np.zeros(3))
            self._pushed = None
        if key is not None:
            if self._pushed is None:
                self._pushed = (key, self._grasp[1] if cmd.body is None else self.body(key))
            self._pushed[1].apply_wrench(cmd.wrench, point)
        self.feedback.put(PhysicsFeedback(t, self._body_feedback()))

    def _start_grasp(self, proxy_p) -> None:
        key = self.pick(np.asarray(proxy_p, float))
        if key is None:
            return
        grasped = self.body(key)
        R, p = grasped.placement()
        self._grasps += 1
        self._grasp = (key, grasped, R.T @ (proxy_p - p), self._grasps)

    def _grasped_point(self) -> np.ndarray:
        R, p = self._grasp[1].placement()
        return R @ self._grasp[2] + p

    def _body_feedback(self) -> BodyFeedback | None:
        if self._grasp is None:
            return None
        _, grasped, _, grasp_id = self._grasp
        R, _ = grasped.placement()
        x = self._grasped_point()
        return BodyFeedback(grasp_id, R, x, grasped.velocity_at(x), angular_velocity(grasped, x), grasped.mass)
