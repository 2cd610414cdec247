"""The ghost: the open universe run a second time on another dynamics engine, drawn over the main run.

View ▸ Ghost engine builds a second Simulation of the universe the window opened (``Ghost``), starting from the
main simulation's state. The physics thread steps it in lockstep (the same number of steps, each after the main
one; it runs its own copies of the universe's controllers, but the forces of the mouse and the devices go to the
main run only), resets it with the main run and puts it back on the main state on every seek or ``set_state``.
A ghost that faults is dropped (``GhostDropped`` reaches the window) and the main run goes on. The viewport draws
its bodies as translucent copies of the main ones (``GhostBodies``); the status bar shows how far apart the two
runs are (``divergence``).
"""
from __future__ import annotations


import numpy as np

import engine

GHOST_ENGINES = ("articula", "pybullet")   # the View ▸ Ghost engine entries (besides None)
GHOST_ALPHA = 0.35                         # opacity of the ghost's bodies


def engine_names() -> tuple:
    """The dynamics engines a ghost can run on."""
    from engine import engines
    return tuple(engines.names())


def make_simulation(universe, engine_name: str):
    """A Simulation of ``universe`` on dynamics engine ``engine_name``."""
    return engine.Simulation(universe, engine=engine_name)


class GhostDropped(Exception):
    """The ghost engine ``name`` could not be built or faulted (``__cause__``); it is gone, the main run goes on."""

    def __init__(self, name: str, cause: BaseException):
        super().__init__(f"ghost engine '{name}' dropped: {cause or type(cause).__name__}")
        self.name = name
        self.__cause__ = cause


class Ghost:
    """A second Simulation (``sim``) of ``universe`` on engine ``name``, starting from the main run's ``state``."""

    def __init__(self, universe, name: str, state: engine.State):
        self.name = name
        self.sim = make_simulation(universe, name)
        self.follow(state)

    def follow(self, state: engine.State):
        """Take the main run's state: q, v, t and the step count, with its warm start when this engine accepts
        it (another engine's warm start is left out)."""
        try:
            self.sim.set_state(state)
        except (KeyError, TypeError, ValueError):
            self.sim.set_state(engine.State.capture(state.t, state.step, state.q, state.v))


def divergence(main, ghost) -> float:
    """max over multibodies of |p_main − p_ghost| (m) of the first body, between two Snapshots of one universe."""
    gaps = [np.linalg.norm(np.asarray(a)[0] - np.asarray(b)[0])
            for a, b in zip(main.body_p, ghost.body_p) if len(a)]
    return float(max(gaps, default=0.0))


class GhostBodies:
    """The ghost's bodies in a Viewport: its moving bodies' visual meshes again, translucent (``GHOST_ALPHA``),
    placed from the ghost's snapshot (``show``); ``remove`` takes them out of the view."""

    def __init__(self, viewport):
        self.viewport = viewport
        self.items = viewport.add_translucent_bodies(GHOST_ALPHA)   # [(BodyMeshItem, first stacked index)]

    def show(self, snapshot):
        self.viewport.place_bodies(self.items, snapshot)

    def remove(self):
        self.viewport.remove_bodies(self.items)
        self.items = []
