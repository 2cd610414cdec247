"""An optimal-control problem file (TOML, read with ``tomllib``): what ``articula optimise`` solves.

Every key is checked against the schema below; an unknown key, a wrong type or a non-physical value raises a
``UniverseError`` naming the file, the line and the key (docs/plugins.md, "Trajectory optimisation").

    multibody = "five_bar"          # the multibody of the scene (default: the scene's only one)
    duration = 0.42                 # s, fixed final time
    intervals = 40                  # collocation intervals (trapezoidal)
    [cost]      effort = 1.0        # μ_c: ½ μ_c ∫ Σ ξ_i (γ_i u_i)² dt      (seed 003 II.5-II.6)
                force = 1e-4        # μ_f: the same on closure and contact forces
                energy = 0.0        # ∫ Σ √((q̇_i u_i)² + ε²) dt, the smoothed J_e (II.5's rejected criterion)
                energy_smoothing = 0.1   # ε, W
                rate = 0.0          # μ_d: ½ μ_d ∫ Σ ξ (γ u̇)² + Σ λ̇² dt (J_d, II.5): no zig-zag between nodes
    [actuators.j1]  weight = 1.0  scale = 1.0  max_torque = 80.0  max_speed = 8.0   (ξ, γ, |τ| ≤ τ_M and
                    |q̇/q̇_M + τ/τ_M| ≤ 1: seed 000 eqs. 5.25-5.26);  axis = [0, -1, 0] for a closure torque
    [start.q] / [start.v] / [end.q] / [end.v]   joint = value (SI) for 1-dof joints; unnamed ones are free
    [periodic]  q = { end_joint = "start_joint" }, offset = { joint = value }: end = start (re-indexed)
    [[contact]]  frame = "right_foot"  mu = 0.5  min_normal = 0.0  (at = [x, y, z]: default where it starts)
    [[clearance]]  frame = "left_foot"  min_height = 0.01   (interior nodes: z ≥ min_height, base frame)
    [solver]    max_iterations = 500  tolerance = 1e-8  friction_speed = 0.01 (dry friction's tanh, rad/s)
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.errors import UniverseError, did_you_mean

NUMBER = (int, float)
ACTUATOR_KEYS = {"weight": NUMBER, "scale": NUMBER, "max_torque": NUMBER, "max_speed": NUMBER, "axis": list}
SCHEMA = {
    "multibody": str, "duration": NUMBER, "intervals": int,
    "cost": {"effort": NUMBER, "force": NUMBER, "energy": NUMBER, "energy_smoothing": NUMBER, "rate": NUMBER},
    "actuators": {"*": ACTUATOR_KEYS},
    "start": {"q": {"*": NUMBER}, "v": {"*": NUMBER}},
    "end": {"q": {"*": NUMBER}, "v": {"*": NUMBER}},
    "periodic": {"q": {"*": str}, "offset": {"*": NUMBER}},
    "contact": [{"frame": str, "mu": NUMBER, "min_normal": NUMBER, "at": list}],
    "clearance": [{"frame": str, "min_height": NUMBER}],
    "solver": {"max_iterations": int, "tolerance": NUMBER, "friction_speed": NUMBER},
    "smooth_step": {"joint": str, "duration": list, "peak_time": list, "peak_deg": list, "end_deg": NUMBER,
                    "gap": NUMBER, "turn_joint": str, "turn_deg": list, "intervals": list, "smoothing": NUMBER},
}

SMOOTH_STEP_KEYS = {"multibody", "smooth_step", "start", "solver"}


@dataclass(frozen=True)
class Actuator:
    """One control u: a joint's torque (force), or a torque about ``axis`` (base frame) between the two bodies
    of a point closure.  ξ = ``weight``, γ = ``scale`` (seed 003 II.6)."""
    name: str
    weight: float = 1.0
    scale: float = 1.0
    max_torque: float = math.inf
    max_speed: float = math.inf
    axis: tuple | None = None


@dataclass(frozen=True)
class SmoothStep:
    """Seed 004's gesture synthesis (engine/optimise/smooth_step.py): ``joint`` driven by two smooth steps,
    0 → φ_M over [0, t_M], φ_M → ``end`` over [t_M, t_f]; boxes (lo, hi) on t_f (``duration``), t_M
    (``peak_time``) and φ_M (``peak``, rad); t_f − t_M ≥ ``gap``; ``turn`` bounds θ(t_f) − θ(0) of ``turn_joint``
    (rad); ``intervals`` (N₁, N₂) per phase; |C| smoothed by ``smoothing`` (N m)."""
    joint: str
    duration: tuple
    peak_time: tuple
    peak: tuple
    turn_joint: str
    turn: tuple
    end: float = 0.0
    gap: float = 0.0
    intervals: tuple = (40, 40)
    smoothing: float = 0.1
    max_iterations: int = 500
    tolerance: float = 1e-8


@dataclass(frozen=True)
class Problem:
    source: str
    duration: float
    intervals: int = 40
    multibody: str | None = None
    effort: float = 1.0
    force: float = 1e-4
    energy: float = 0.0
    energy_smoothing: float = 0.1
    rate: float = 0.0
    actuators: tuple = ()
    start_q: dict = field(default_factory=dict)
    start_v: dict = field(default_factory=dict)
    end_q: dict = field(default_factory=dict)
    end_v: dict = field(default_factory=dict)
    periodic_q: dict = field(default_factory=dict)
    periodic_offset: dict = field(default_factory=dict)
    contacts: tuple = ()      # dicts: frame, mu, min_normal, at
    clearances: tuple = ()    # dicts: frame, min_height
    max_iterations: int = 500
    tolerance: float = 1e-8
    friction_speed: float = 0.01     # v_s: dry friction q_s sign(q̇) as q_s tanh(q̇ / v_s), rad/s or m/s
    smooth_step: SmoothStep | None = None
    lines: dict = field(default_factory=dict, repr=False)   # dotted key -> line, for later errors

    def error(self, message, key, value=None):
        """A UniverseError at the line of ``key`` (dotted)."""
        return UniverseError(f"'{key}': {message}", self.source, self.lines.get(key), value)


def key_lines(text: str) -> dict:
    """{dotted key: line} of a TOML text: tables, arrays of tables (indexed), keys and inline-table keys."""
    lines, prefix, counts = {}, "", {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if m := re.fullmatch(r"\[\[\s*([^\]]+?)\s*\]\]", line):
            name = m.group(1)
            counts[name] = counts.get(name, -1) + 1
            prefix = f"{name}.{counts[name]}"
            lines.setdefault(prefix, number)
        elif m := re.fullmatch(r"\[\s*([^\]]+?)\s*\]", line):
            prefix = m.group(1).replace('"', "")
            lines.setdefault(prefix, number)
        elif m := re.match(r'([\w"-]+)\s*=\s*(.*)', line):
            key = f"{prefix}.{m.group(1).strip(chr(34))}" if prefix else m.group(1).strip('"')
            lines.setdefault(key, number)
            for inner in re.findall(r"[{,]\s*([\w-]+)\s*=", m.group(2)):
                lines.setdefault(f"{key}.{inner}", number)
    return lines


def _check(data, schema, path, source, lines):
    """Walk ``data`` against ``schema``: unknown keys and wrong types raise with the key's line."""
    def fail(message, key, value=None):
        raise UniverseError(f"'{key}': {message}", source, lines.get(key), value)
    if isinstance(schema, list):
        if not isinstance(data, list):
            fail("expected an array of tables [[...]]", path)
        for i, item in enumerate(data):
            _check(item, schema[0], f"{path}.{i}", source, lines)
        return
    if not isinstance(data, dict):
        fail("expected a table", path)
    for key, value in data.items():
        full = f"{path}.{key}" if path else key
        expected = schema.get(key, schema.get("*"))
        if expected is None:
            known = [k for k in schema if k != "*"]
            fail(f"unknown key{did_you_mean(key, known)} (known here: {', '.join(sorted(known))})", full)
        if isinstance(expected, (dict, list)):
            _check(value, expected, full, source, lines)
        elif isinstance(value, bool) or not isinstance(value, expected):
            names = "a number" if expected is NUMBER else f"a {getattr(expected, '__name__', expected)}"
            fail(f"expected {names}", full, value)


def load_problem(path) -> Problem:
    """The Problem of a TOML file, every key checked (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise UniverseError("problem file not found", str(path))
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise UniverseError(f"malformed TOML: {exc}", str(path), int(line.group(1)) if line else None) from None
    lines = key_lines(text)
    _check(data, SCHEMA, "", str(path), lines)
    step = data.get("smooth_step")
    if "duration" not in data and step is None:
        raise UniverseError("missing key 'duration' (s)", str(path))
    cost, solver, periodic = data.get("cost", {}), data.get("solver", {}), data.get("periodic", {})
    problem = Problem(
        source=str(path), duration=float(data.get("duration", math.inf)), intervals=data.get("intervals", 40),
        multibody=data.get("multibody"), **{k: float(v) for k, v in cost.items()},
        actuators=tuple(Actuator(name, **{k: tuple(v) if k == "axis" else float(v) for k, v in spec.items()})
                        for name, spec in data.get("actuators", {}).items()),
        start_q=data.get("start", {}).get("q", {}), start_v=data.get("start", {}).get("v", {}),
        end_q=data.get("end", {}).get("q", {}), end_v=data.get("end", {}).get("v", {}),
        periodic_q=periodic.get("q", {}), periodic_offset=periodic.get("offset", {}),
        contacts=tuple(data.get("contact", ())), clearances=tuple(data.get("clearance", ())),
        max_iterations=solver.get("max_iterations", 500), tolerance=float(solver.get("tolerance", 1e-8)),
        friction_speed=float(solver.get("friction_speed", 0.01)), lines=lines)
    if step is not None:
        for key in set(data) - SMOOTH_STEP_KEYS:
            raise problem.error("not used by a [smooth_step] problem (it has no actuators, costs or end state "
                                "of its own)", key)
        return replace(problem, duration=math.nan, smooth_step=_smooth_step(problem, step, solver))
    _check_values(problem)
    return problem


def _smooth_step(problem, step, solver) -> SmoothStep:
    """The [smooth_step] table: every box a (lo, hi) pair with lo <= hi, angles given in degrees."""
    for key in ("joint", "duration", "peak_time", "peak_deg", "turn_joint", "turn_deg"):
        if key not in step:
            raise problem.error("missing in [smooth_step]", f"smooth_step.{key}")

    def box(key, scale=1.0):
        lo_hi = step[key]
        if len(lo_hi) != 2 or not all(isinstance(x, NUMBER) for x in lo_hi) or not lo_hi[0] <= lo_hi[1]:
            raise problem.error("a box is [low, high] with low <= high", f"smooth_step.{key}", lo_hi)
        return (lo_hi[0] * scale, lo_hi[1] * scale)
    intervals = step.get("intervals", [40, 40])
    if len(intervals) != 2 or not all(isinstance(n, int) and n >= 2 for n in intervals):
        raise problem.error("two interval counts (phase 1, phase 2), each >= 2", "smooth_step.intervals", intervals)
    if box("duration")[0] <= 0 or box("peak_time")[0] <= 0:
        raise problem.error("times must be > 0", "smooth_step.duration")
    rad = math.pi / 180.0
    return SmoothStep(joint=step["joint"], duration=box("duration"), peak_time=box("peak_time"),
                      peak=box("peak_deg", rad), turn_joint=step["turn_joint"], turn=box("turn_deg", rad),
                      end=step.get("end_deg", 0.0) * rad, gap=float(step.get("gap", 0.0)),
                      intervals=tuple(intervals), smoothing=float(step.get("smoothing", 0.1)),
                      max_iterations=solver.get("max_iterations", 500),
                      tolerance=float(solver.get("tolerance", 1e-8)))


def _check_values(p: Problem):
    """Non-physical values: a non-positive duration, fewer than 2 intervals, negative weights or limits."""
    if not (math.isfinite(p.duration) and p.duration > 0):
        raise p.error("the duration must be a positive number of seconds", "duration", p.duration)
    if p.intervals < 2:
        raise p.error("at least 2 collocation intervals", "intervals", p.intervals)
    for key in ("effort", "force", "energy", "rate"):
        if getattr(p, key) < 0:
            raise p.error("a cost weight must be >= 0", f"cost.{key}", getattr(p, key))
    if not p.friction_speed > 0:
        raise p.error("the dry friction's smoothing speed must be > 0", "solver.friction_speed", p.friction_speed)
    if p.energy_smoothing <= 0:
        raise p.error("the smoothing of |q̇ u| must be > 0 (W)", "cost.energy_smoothing", p.energy_smoothing)
    if not p.actuators:
        raise p.error("no [actuators.NAME] table: nothing to optimise", "actuators")
    for a in p.actuators:
        for key in ("weight", "scale", "max_torque", "max_speed"):
            if not getattr(a, key) > 0:
                raise p.error("must be > 0", f"actuators.{a.name}.{key}", getattr(a, key))
        if a.axis is not None and (len(a.axis) != 3 or not math.isclose(math.hypot(*a.axis), 1.0, rel_tol=1e-9)):
            raise p.error("a closure torque's axis is a unit 3-vector", f"actuators.{a.name}.axis", a.axis)
    for i, c in enumerate(p.contacts):
        if "frame" not in c:
            raise p.error("a [[contact]] needs a frame", f"contact.{i}")
        if not c.get("mu", 1.0) > 0 or c.get("min_normal", 0.0) < 0:
            raise p.error("mu must be > 0 and min_normal >= 0", f"contact.{i}", (c.get("mu"), c.get("min_normal")))
    for i, c in enumerate(p.clearances):
        if "frame" not in c or "min_height" not in c:
            raise p.error("a [[clearance]] needs a frame and a min_height (m)", f"clearance.{i}")
