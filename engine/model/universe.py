"""The Universe: everything a simulation needs — multibodies, static bodies and the scene settings.

A Universe is plain data (no engine state): it can be built from a file in a worker process, pickled, and turned
into a ``Simulation`` there. Loaders: ``engine.model.universe_xml.load_universe`` (AMELIF-style XML) and
``universe_from_urdf`` below (a URDF dropped on a ground plane).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.model.model import Geometry, Model, neutral


@dataclass(frozen=True)
class Material:
    """Contact material: Coulomb friction ``mu`` (seed 000 §3.4) and Newton restitution ``restitution``."""

    name: str
    mu: float = 0.5
    restitution: float = 0.0


@dataclass(frozen=True)
class SolverSettings:
    """Contact solver: ``nonsmooth-newton`` (default; engine/contact/newton.py) or one of the thesis's (seed 000
    §5.3) ``gauss-seidel-newton`` (AMELIFGSNEWTON), ``gauss-seidel`` (AMELIFGS), ``lemke`` (AMELIFLCP,
    ``facets`` cone facets)."""

    name: str = "nonsmooth-newton"
    tolerance: float = 1e-6
    max_iterations: int = 100
    time_budget: float | None = None   # seconds; the best iterate is returned when it runs out
    facets: int = 8
    delassus: str = "auto"             # "auto", "test-force", "chang-khatib", "thesis", "dense"
    joint_friction: str = "torque"     # the joints' dry friction μ_d: "torque" or "constraint" (rows of the solve)
    joint_limits: str = "none"         # the joints' ranges: "none" (not enforced) or "constraint" (rows of the solve)


@dataclass(frozen=True)
class ContactSettings:
    """Collision and contact options: proximity ``margin`` (m), at most ``max_points`` per pair chosen first
    among the points within ``face_tolerance`` (m) of the deepest (collision/reduction.py), and the penetration
    correction: ``baumgarte`` velocity bias ``erp * depth / dt`` beyond ``slop`` metres."""

    margin: float = 0.005
    max_points: int = 4
    face_tolerance: float = 0.001
    correction: str = "baumgarte"      # "baumgarte" or "none"
    erp: float = 0.2
    slop: float = 0.0005
    default_pairs: str = "all"         # "all" (mobile pairs, adjacent links excluded) or "none"
    include: tuple = ()                # explicit (label_a, label_b) pairs to track
    exclude: tuple = ()                # explicit (label_a, label_b) pairs to ignore


SANE_TIME_STEP = (1e-6, 0.1)   # s: a time step outside warns (too small never ends, too large explodes)

EFFORT_POLICIES = ("clamp", "refuse", "ignore", "envelope")


@dataclass(frozen=True)
class LimitSettings:
    """Effort limits and divergence bounds (``<Settings><Limits .../>``; engine/faults/limits.py).

    ``effort_limits``: a torque beyond a joint's declared effort limit (and an external force beyond
    ``wrench_factor`` × its multibody's weight) is clamped with a counted warning (``clamp``), stops the step
    (``refuse``) or passes (``ignore``); ``envelope`` clamps it to the motor's torque–speed envelope (seed 000
    eqs. 5.25–5.26; engine/faults/limits.py). A step stops with its stage named when a velocity exceeds
    ``velocity_factor`` × the joint's velocity limit (``max_speed`` m/s or rad/s where none is declared), or when
    the kinetic energy grows more than ``energy_jump`` times in one step (over a floor of the multibody's weight
    × 1 m). ``device_budget`` (s) bounds one lockstep device tick."""

    effort_limits: str = "clamp"
    velocity_factor: float = 20.0
    max_speed: float = 1000.0
    energy_jump: float = 100.0
    wrench_factor: float = 10.0
    device_budget: float = 0.1


@dataclass(frozen=True)
class Camera:
    """Camera pose in the world: it looks along its -z axis (OpenGL convention), ``R`` its orientation,
    ``target`` the point it looks at (on that axis)."""

    R: np.ndarray = field(default_factory=lambda: look_at(np.array([3.0, -3.0, 2.0]), np.zeros(3)))
    p: np.ndarray = field(default_factory=lambda: np.array([3.0, -3.0, 2.0]))
    fov: float = 45.0
    target: np.ndarray = field(default_factory=lambda: np.zeros(3))


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Orientation of a camera at ``eye`` looking at ``target`` (its -z axis) with ``up`` kept vertical."""
    back = np.asarray(eye, float) - np.asarray(target, float)
    z = back / np.linalg.norm(back)
    x = np.cross(up, z)
    if np.linalg.norm(x) < 1e-9:  # looking straight along up
        x = np.array([1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


@dataclass(frozen=True)
class Light:
    position: tuple = (0.0, 0.0, 10.0, 0.0)   # w = 0: directional
    ambient: tuple = (0.2, 0.2, 0.2, 1.0)
    diffuse: tuple = (0.8, 0.8, 0.8, 1.0)
    specular: tuple = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class PluginSpec:
    """A plugin by registered name, with its parameters and, for controllers, the multibody it drives."""

    kind: str                  # "controller", "device", "sensor", "solver", "engine", "metric"
    name: str
    params: dict = field(default_factory=dict)
    target: str | None = None
    source: str | None = None  # file:line, for error messages


@dataclass(frozen=True)
class WheelSpec:
    """A wheel rolling without slipping on the ground plane: body index, radius (m), spin axis (body frame),
    ``source`` file:line; ``project``: an initial state off the constraints is projected onto them (with a
    warning) instead of refused."""

    body: int
    radius: float
    axis: np.ndarray
    source: str = ""
    restitution: tuple = (0.0, 0.0)   # (ε_N, ε_T) of its impacts (event-driven wheels, engine/rolling/)
    project: bool = False             # a start off the constraints is projected (with a warning), not refused


@dataclass(frozen=True)
class MultiBodyInstance:
    """One multibody in the world: its Model, the placement (R, p) of its base frame, its initial state."""

    name: str
    model: Model
    R: np.ndarray
    p: np.ndarray
    q0: np.ndarray
    v0: np.ndarray
    soles: tuple = ()          # SoleSpec (engine.model.sole_xml): deformable soles under its links
    wheels: tuple = ()         # WheelSpec: wheels rolling without slipping (engine/dynamics/rolling.py)


@dataclass(frozen=True)
class StaticBody:
    """A body with zero mass (AMELIF ``Mass 0``): fixed in the world; geometries are in the world frame."""

    name: str
    geometries: tuple


@dataclass(frozen=True)
class Universe:
    source: str
    name: str = "universe"
    multibodies: tuple = ()
    statics: tuple = ()
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    time_step: float = 1e-3
    integrator: str = "semi-implicit-euler"
    engine: str = "articula"           # the dynamics engine (engine/engines/)
    wheel_events: bool = False         # wheels leave and hit the ground (engine/rolling/) instead of staying on it
    rolling_integrator: str = "rk4"    # of wheels on the ground: rk4 | abm4 (engine.dynamics.rolling)
    solver: SolverSettings = field(default_factory=SolverSettings)
    contact: ContactSettings = field(default_factory=ContactSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    materials: dict = field(default_factory=lambda: {"default": Material("default")})
    camera: Camera | None = None       # None: no <Camera>, the viewer frames the scene
    lights: tuple = (Light(),)
    controllers: tuple = ()
    devices: tuple = ()
    sensors: tuple = ()
    sources: dict = field(default_factory=dict)   # "file:line" of the settings and materials the file set:
                                                  # "engine", "integrator", "solver", "material:<name>"

    def multibody(self, name: str) -> MultiBodyInstance:
        for m in self.multibodies:
            if m.name == name:
                return m
        raise KeyError(name)

    def with_settings(self, **changes) -> "Universe":
        """A copy with other settings (e.g. ``time_step``, ``gravity``, ``solver``): used for sweeps."""
        return replace(self, **changes)


def ground_plane(name="ground", material="default") -> StaticBody:
    """A static horizontal plane z = 0 (the half-space z <= 0)."""
    plane = Geometry(name=name, body=-1, kind="plane", size=(), R=np.eye(3), p=np.zeros(3),
                     rgba=(0.55, 0.6, 0.65, 1.0), material=material)
    return StaticBody(name=name, geometries=(plane,))


def universe_from_urdf(path, floating_base: bool = True, **settings) -> Universe:
    """A URDF alone: the robot on a ground plane, floating base unless told otherwise, its base raised so that
    the lowest collision geometry of the neutral pose touches z = 0."""
    from engine.model import load_model
    model = load_model(path, floating_base=floating_base)
    q0 = neutral(model)
    height = _clearance(model, q0) if floating_base else 0.0
    if floating_base:
        q0[2] = height
    robot = MultiBodyInstance(name=model.name, model=model, R=np.eye(3), p=np.zeros(3), q0=q0,
                              v0=np.zeros(model.nv))
    return Universe(source=str(Path(path)), name=model.name, multibodies=(robot,), statics=(ground_plane(),),
                    **settings)


def _clearance(model, q) -> float:
    """Height to lift a floating robot so that its lowest geometry point (neutral pose) sits at z = 0."""
    from engine.dynamics.kinematics import forward_kinematics
    from engine.model.geometry_bounds import geometry_lowest_point
    data = model.create_data()
    forward_kinematics(model, data, q)
    lows = [geometry_lowest_point(g, data) for g in model.geometries if g.role == "collision"]
    lows = [z for z in lows if z is not None]
    return max(0.0, -min(lows)) if lows else 1.0
