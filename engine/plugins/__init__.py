"""Plugin registry: the AMELIF "modules" as small Protocols, registered by name.

Built-ins register themselves with ``@register``; third-party plugins are found through the Python entry-point
group ``articula.plugins`` (``pip install my-controller`` is enough)::

    [project.entry-points."articula.plugins"]
    my-pd = "my_package.controllers:MyPD"      # the class declares kind = "controller"

A universe refers to plugins by name with parameters (``<Controller plugin="my-pd" kp="100"/>``). A scene never
imports code from an arbitrary path unless the user passes ``--trust-scene-plugins`` (scenes are data, plugins
are code): see ``import_plugin_module``.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
from importlib import metadata
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from engine.errors import UniverseError, did_you_mean

KINDS = ("controller", "device", "sensor", "solver", "engine", "collision", "metric")
ENTRY_POINT_GROUP = "articula.plugins"
_registry: dict = {kind: {} for kind in KINDS}
_entry_points_loaded = False


@runtime_checkable
class Controller(Protocol):
    """Writes joint torques for one multibody, before the free dynamics (stage "control")."""

    kind: ClassVar[str]
    stage: ClassVar[str]

    def reset(self, q: np.ndarray, v: np.ndarray) -> None: ...

    def control(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Sensor(Protocol):
    """Reads the simulation after a step (stage "sense") and returns named signals; ``sim.measurements[name]``
    keeps them. Built-ins in engine/sensors.py."""

    kind: ClassVar[str]
    stage: ClassVar[str]
    signals: ClassVar[dict]          # signal name -> (unit, size), what measure returns

    def measure(self, sim) -> dict: ...


@runtime_checkable
class ContactSolver(Protocol):
    """Solves v = W f + v_free with f in the friction cones, one collision group at a time (stage "solver").

    Named in the universe as ``<Solver name="..."/>``; constructed with ``settings`` (the SolverSettings) if it
    asks for them. ``blocks`` is a ``ConstraintBlocks`` (contact and bilateral rows, μ per contact), ``f0`` the
    warm start; returns (f, ``SolverStats``) — the engine measures the residual and cone violation itself."""

    kind: ClassVar[str]
    stage: ClassVar[str]

    def solve(self, W, v_free, blocks, f0): ...


def register(name: str):
    """Class decorator registering a plugin under ``name`` for its declared ``kind``."""
    def decorate(cls):
        kind = getattr(cls, "kind", None)
        if kind not in KINDS:
            raise TypeError(f"plugin {cls.__name__} must declare kind in {KINDS}, not {kind!r}")
        cls.plugin_name = name
        _registry[kind][name] = cls
        return cls
    return decorate


def _load_entry_points():
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken third-party package must not stop the simulator
            import warnings
            warnings.warn(f"plugin '{ep.name}' ({ep.value}) failed to load: {exc}", stacklevel=2)
            continue
        register(ep.name)(cls)


def available(kind: str) -> list:
    _load_builtins()
    _load_entry_points()
    return sorted(_registry[kind])


def get(kind: str, name: str, source: str | None = None):
    """The registered class; an unknown name raises ``UniverseError`` with a "did you mean" hint."""
    names = available(kind)
    if name not in _registry[kind]:
        file, _, line = (source or "").rpartition(":")
        raise UniverseError(f"no {kind} plugin named '{name}'{did_you_mean(name, names)}; available: "
                            f"{', '.join(names) or 'none'}", file or None, int(line) if line.isdigit() else None,
                            name)
    return _registry[kind][name]


def create(spec, **context):
    """Instantiate ``spec`` (a PluginSpec) with its parameters converted to numbers where they are numbers.

    ``context`` holds what the engine offers (``model``, ``q0``, ``gravity``, ``base_dir``); a plugin receives the
    items its constructor names. Unknown parameters are errors naming the scene file and line.
    """
    cls = get(spec.kind, spec.name, spec.source)
    signature = inspect.signature(cls)
    context = {k: v for k, v in context.items() if k in signature.parameters}  # take what the class asks for
    accepted = [p for p in signature.parameters if p not in context]
    params = {}
    for key, raw in spec.params.items():
        if key not in signature.parameters:
            file, _, line = (spec.source or "").rpartition(":")
            raise UniverseError(f"{spec.kind} '{spec.name}' has no parameter '{key}'{did_you_mean(key, accepted)}",
                                file or None, int(line) if line.isdigit() else None, key)
        params[key] = _convert(raw)
    try:
        return cls(**context, **params)
    except (TypeError, ValueError) as exc:
        file, _, line = (spec.source or "").rpartition(":")
        raise UniverseError(f"{spec.kind} '{spec.name}': {exc}", file or None,
                            int(line) if line.isdigit() else None) from None


def _convert(raw: str):
    parts = raw.replace(",", " ").split()
    try:
        numbers = [float(x) for x in parts]
    except ValueError:
        return raw
    return numbers[0] if len(numbers) == 1 else np.array(numbers)


def import_plugin_module(module: str | None = None, path=None):
    """Import trusted plugin code (a module name or a .py file) so that its ``@register`` calls run."""
    try:
        if module:
            importlib.import_module(module)
        elif path is not None:
            spec = importlib.util.spec_from_file_location(f"articula_scene_plugin_{abs(hash(str(path)))}", path)
            if spec is None or not path.is_file():
                raise FileNotFoundError(str(path))
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as exc:
        raise UniverseError(f"plugin code failed to import: {type(exc).__name__}: {exc}",
                            value=module or str(path)) from None


def _load_builtins():
    import engine.analysis.mocap  # noqa: F401  (registers the mocap marker sensor)
    import engine.contact.conic  # noqa: F401  (registers the clarabel contact solver)
    import engine.control  # noqa: F401  (registers the built-in controllers)
    import engine.engines.articula  # noqa: F401  (registers Articula's own dynamics engine)
    import engine.engines.pybullet  # noqa: F401  (registers the pybullet engine; pybullet loads when used)
    import engine.interaction.devices  # noqa: F401  (registers the built-in devices)
    import engine.metrics  # noqa: F401  (registers the built-in run metrics of sweeps)
    import engine.object_constraints  # noqa: F401  (registers the object-constraints sensor of the box lift)
    import engine.sensors  # noqa: F401  (registers the built-in sensors)
