"""Dynamics engines: the part of a step between the controllers and the sensors (issue 15, part 1).

``Simulation`` (engine/simulation.py) owns everything that does not depend on the physics: the runs (Model,
Data, q, v, τ, controllers), external wrenches, sensors, faults, the state's get/set, queries and snapshots. An
engine advances (q, v) of every run by one step δt from the torques ``run.tau`` and body wrenches ``run.f_ext``
the control stage wrote, and reports the contacts. Two ship:

* ``articula`` (engine/engines/articula.py): ABA free dynamics, FCL collision, the contact solve on the exact
  Coulomb cone, FEM soles, closures, integration on the Lie group (seed 000 Fig 2.3);
* ``pybullet`` (engine/engines/pybullet.py): the same universe on Bullet's Featherstone multibodies and its
  sequential-impulse contact solver; what Bullet cannot represent is refused when the Simulation is built.

Choose one with ``<Settings engine="pybullet"/>``, ``Simulation(universe, engine="pybullet")`` or
``articula run --engine pybullet``. Third-party engines register as plugins of kind ``"engine"``.

The protocol (``Engine``), in the order the Simulation calls it::

    Engine(sim)              built once, after sim.runs; may refuse the universe (UniverseError)
    load(warm_start)         the runs' (q, v) are the state from now on, with this warm_start() (or None)
    step(dt)                 advance every run: q, v, f_contact (body frames), then sim.refresh_kinematics()
    warm_start()             what load() needs besides (q, v) to continue exactly (None if nothing)
    contacts()               ActiveContacts of the last step (engine/state.py)
    solver_stats()           dict: per-group reports and totals (iterations, residual, unconverged_steps)
    contact_report()         totals since the last load(None) (.summary() is one line)
    sole_states()            deformed soles for the viewers (() without soles)
    closure_forces()         per loop closure (multibody, name, (6,) force): the cut force λ on body a at its
                             anchor, world axes, then a hinge's two moments (N m) along its e1, e2 (seed 003 §5.B)
"""
from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from engine import plugins
from engine.errors import did_you_mean

DEFAULT = "articula"


@runtime_checkable
class Engine(Protocol):
    kind: ClassVar[str]           # "engine"
    name: ClassVar[str]

    def load(self, warm_start) -> None: ...

    def step(self, dt: float) -> None: ...

    def warm_start(self): ...

    def contacts(self): ...

    def solver_stats(self) -> dict: ...

    def contact_report(self): ...

    def sole_states(self) -> tuple: ...

    def closure_forces(self) -> tuple: ...


def names() -> list:
    """The engines a universe can name (built-ins and installed plugins)."""
    return plugins.available("engine")


def engine_class(name: str):
    """The engine registered as ``name``; ValueError with a did-you-mean otherwise."""
    known = names()
    if name not in known:
        raise ValueError(f"unknown engine '{name}'{did_you_mean(name, known)}; available: {', '.join(known)}")
    return plugins.get("engine", name)
