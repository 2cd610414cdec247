"""State (what a run needs to continue: recorded, replayed, restored) and Snapshot (what a viewer reads)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def freeze(a) -> np.ndarray:
    """A read-only copy of ``a`` (its dtype kept): what snapshots hand out."""
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def _frozen(a) -> np.ndarray:
    return freeze(np.asarray(a, dtype=float))


@dataclass(frozen=True)
class State:
    """Time, step count, per-multibody (q, v), the contact solver's warm start and plugin states."""

    t: float
    step: int
    q: tuple
    v: tuple
    warm_start: dict = field(default_factory=dict)
    plugins: dict = field(default_factory=dict)

    @staticmethod
    def capture(t, step, qs, vs, warm_start=None, plugins=None) -> "State":
        """A State of copies: (q, v) frozen, the warm start's arrays copied (the engine's may be its own)."""
        warm = {k: x.copy() if isinstance(x, np.ndarray) else x for k, x in (warm_start or {}).items()}
        return State(float(t), int(step), tuple(_frozen(q) for q in qs), tuple(_frozen(v) for v in vs), warm,
                     dict(plugins or {}))


@dataclass(frozen=True)
class ActiveContacts:
    """Active contacts in the world frame: ``point``, ``normal`` (unit, from body b to body a) and the force
    applied on body a (``force``, (nc, 3)); ``body_a``/``body_b`` are readable names."""

    point: np.ndarray = field(default_factory=lambda: _frozen(np.zeros((0, 3))))
    normal: np.ndarray = field(default_factory=lambda: _frozen(np.zeros((0, 3))))
    force: np.ndarray = field(default_factory=lambda: _frozen(np.zeros((0, 3))))
    depth: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(0)))
    mu: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(0)))
    body_a: tuple = ()
    body_b: tuple = ()

    def __len__(self):
        return len(self.point)


@dataclass(frozen=True)
class SoleState:
    """A deformable sole after a step: ``R``, ``p`` its frame in the world; ``displacement`` (c, 3) and
    ``force`` (c, 3) of its candidate contact nodes, sole frame (m, N). ``engine.deformable.Sole.displacement``
    recovers every node from the first (4.22); the contact pressure of a node is its normal force over its area."""

    R: np.ndarray
    p: np.ndarray
    displacement: np.ndarray
    force: np.ndarray


@dataclass(frozen=True)
class Snapshot:
    """An immutable picture of the simulation after a step, safe to hand to another thread."""

    t: float
    step: int
    q: tuple
    v: tuple
    tau: tuple           # per multibody (nv,): joint torques the controllers applied during the last step
    base_R: tuple
    base_p: tuple
    body_R: tuple        # per multibody (nb, 3, 3): body frames in the world
    body_p: tuple        # per multibody (nb, 3)
    contacts: ActiveContacts
    timings: dict
    energy: tuple        # (kinetic, potential) J, summed over multibodies
    solver_stats: dict
    external: tuple = ()  # (multibody, body, wrench_world (6,), point_world (3,)) user/haptic forces
    measurements: dict = field(default_factory=dict)   # sensor name -> {signal: read-only array}
    soles: tuple = ()    # per sole (SoleSpec order): SoleState
    a: tuple = ()        # per multibody (nv,): the last step's acceleration (v − v_previous) / δt
    closures: tuple = ()  # per loop closure (multibody, name, (6,)): λ on body a, world axes (N); hinge moments
    events: tuple = ()   # (multibody, engine.rolling.hybrid.WheelEvent) of the last step: lift-offs, collisions
