"""Devices as plugins, and the haptic sessions of the devices a universe declares (issue 7 item 1).

``mouse``, ``phantom`` and ``scripted`` are registered in the plugin registry (kind "device"); a third-party
device registers the same way (entry point ``articula.plugins``) and implements ``engine.interaction.Device``.
A universe declares them with ``<Device plugin="..." .../>``; the attributes below configure the session, the
others go to the device's constructor::

    <Device plugin="phantom" mode="attach" stiffness="400" force_gain="0.05" origin="0.75 0.2 0.9"/>
    <Device plugin="scripted" file="session.npz" frame="world"/>

    mode        attach | touch                   stiffness   k_p (N/m)        damping   k_v (N s/m; default
    force_gain  scale of the device force        rate        haptic rate (Hz)           sqrt(2 m k_p), eq. 3.63)
    origin      world point of the device origin scale       device motion scale
    frame       y-up (OpenHaptics' frame; the phantom's default) | world

In touch mode ``stiffness`` and ``damping`` are the contact's, k_c and b_c (``TouchSettings``, 800 N/m and
2 N s/m by default), and the god-object moves on the universe's collision geometry (``SceneProximity``).

The GUI runs each session on its own haptic thread with its port on the physics thread; headless,
``LockstepDevices`` ticks them in step with the simulation on simulated time, so a replay is deterministic.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine import plugins
from engine.errors import PluginError, UniverseError
from engine.interaction.coupling import CouplingSettings, SafetySettings
from engine.interaction.device import WorkspaceMap
from engine.interaction.mouse import MouseDevice
from engine.interaction.phantom import PhantomDevice
from engine.interaction.picking import BodyPicker
from engine.interaction.port import SimulationBody
from engine.interaction.scene_proximity import SceneProximity
from engine.interaction.scripted import ScriptedDevice
from engine.interaction.session import MODES, HapticSession
from engine.interaction.touch import TouchSettings

SESSION_PARAMS = ("mode", "stiffness", "damping", "force_gain", "rate", "origin", "scale", "frame")
FRAMES = ("y-up", "world")
GUI_ONLY = ("mouse",)


def scripted(file: str, base_dir: str = ".", device: str | None = None, max_force: float = np.inf,
             clock=time.monotonic) -> ScriptedDevice:
    """``<Device plugin="scripted" file="..."/>``: replays a ``.npz`` or ``.csv`` trajectory, or the device named
    ``device`` of a saved simulation recording (relative paths from the universe file's folder)."""
    path = Path(file) if Path(file).is_absolute() else Path(base_dir) / file
    return ScriptedDevice.from_file(path, device, max_force=max_force, clock=clock)


scripted.kind, scripted.stage = "device", "haptic"
for _name, _factory in (("mouse", MouseDevice), ("phantom", PhantomDevice), ("scripted", scripted)):
    plugins.register(_name)(_factory)


def _fail(spec, message, value=None):
    file, _, line = (spec.source or "").rpartition(":")
    raise UniverseError(f"device '{spec.name}': {message}", file or None, int(line) if line.isdigit() else None,
                        value)


def _number(spec, key, default, count=1):
    raw = spec.params.get(key)
    if raw is None:
        return default
    try:
        values = np.array([float(x) for x in str(raw).replace(",", " ").split()])
    except ValueError:
        values = np.array([])
    if len(values) != count or not np.all(np.isfinite(values)):
        _fail(spec, f"'{key}' needs {count} finite number(s)", raw)
    return values if count > 1 else float(values[0])


def device_spec(spec):
    """The ``<Device>`` spec without the session's attributes: what the device plugin's constructor gets."""
    return replace(spec, params={k: v for k, v in spec.params.items() if k not in SESSION_PARAMS})


def session_settings(spec) -> dict:
    """``HapticSession`` keyword arguments (mode, workspace_map, coupling, safety, rate) of a ``<Device>`` spec;
    bad values raise ``UniverseError`` naming the scene file and line."""
    mode = spec.params.get("mode", "attach")
    if mode not in MODES:
        _fail(spec, f"mode must be one of {MODES}", mode)
    frame = spec.params.get("frame", "y-up" if spec.name == "phantom" else "world")
    if frame not in FRAMES:
        _fail(spec, f"frame must be one of {FRAMES}", frame)
    origin, scale = _number(spec, "origin", np.zeros(3), 3), _number(spec, "scale", 1.0)
    try:
        workspace_map = (WorkspaceMap.y_up(origin, scale) if frame == "y-up" else
                         WorkspaceMap(np.eye(3), origin, scale))
        if mode == "touch":                          # stiffness and damping of the contact rendered
            rendering = dict(touch=TouchSettings(stiffness=_number(spec, "stiffness", TouchSettings.stiffness),
                                                 damping=_number(spec, "damping", TouchSettings.damping)))
        else:                                        # of the spring-damper to the grasped point
            rendering = dict(coupling=CouplingSettings(k_p=_number(spec, "stiffness", CouplingSettings.k_p),
                                                       k_v=_number(spec, "damping", None)))
        return dict(mode=mode, workspace_map=workspace_map, **rendering,
                    safety=SafetySettings(force_gain=_number(spec, "force_gain", 1.0)),
                    rate=_number(spec, "rate", None))
    except ValueError as exc:
        _fail(spec, str(exc))


def session_for(spec, base_dir=".", clock=time.monotonic, proximity=None) -> HapticSession:
    """The ``HapticSession`` of a ``<Device>`` spec (a ``PluginSpec`` of kind "device"); the device is created,
    not started.  Bad parameters raise ``UniverseError`` naming the scene file and line."""
    device = plugins.create(device_spec(spec), base_dir=str(base_dir), clock=clock)
    settings = session_settings(spec)
    try:
        return HapticSession(device, **settings, proximity=proximity, clock=clock)
    except ValueError as exc:
        _fail(spec, str(exc))


def simulation_port(session: HapticSession, sim, tolerance: float = 0.01):
    """The session's physics port on an ``engine.Simulation``: it grasps the body the proxy is in."""
    return session.physics_port(BodyPicker(sim, tolerance), lambda key: SimulationBody(sim, *key))


class LockstepDevices:
    """Headless: the universe's devices (all but the GUI-only mouse), on the simulation's clock.

    ``before_step()`` runs each session's haptic tick and then its port, once per physics step, before it
    (seed 000 Fig 2.3: devices write their inputs first); ``stop()`` ends them. A device whose tick raises
    (a ``DeviceError`` too) or takes longer than the universe's ``device_budget`` lets go of its body and raises a
    ``PluginError`` naming it, and the simulation is marked faulted; it is not ticked again (continue with
    ``sim.clear_fault()`` or ``sim.disable_plugin(name)``). A tick that never returns cannot be interrupted here;
    the GUI's haptic thread runs apart, and its port's watchdog releases the body.
    """

    def __init__(self, sim):
        self.sim = sim
        base_dir = Path(sim.universe.source).parent
        self.sessions, self.ports, self.names = [], [], []
        for spec in sim.universe.devices:
            if spec.name in GUI_ONLY:
                warnings.warn(f"device '{spec.name}' needs the GUI: ignored in a headless run", stacklevel=2)
                continue
            touch = session_settings(spec)["mode"] == "touch"
            scene = SceneProximity(sim.universe, sim.placements) if touch else None
            session = session_for(spec, base_dir, clock=lambda: self.sim.time, proximity=scene)
            self.ports.append(simulation_port(session, sim))
            session.start(threaded=False)
            self.sessions.append(session)
            self.names.append(spec.name)

    def before_step(self) -> None:
        budget = self.sim.universe.limits.device_budget
        for session, port, name in zip(self.sessions, self.ports, self.names):
            try:
                if session.fault is None:
                    start = time.perf_counter()
                    session.tick()
                    if (elapsed := time.perf_counter() - start) > budget:
                        raise PluginError(f"its tick took {elapsed:.3f} s, beyond the time budget {budget:g} s "
                                          f"(<Limits device_budget>)", name, "device", "haptic", value=elapsed)
                port.update(self.sim.time)       # the device's wrench on its body (set_external_wrench checks it)
            except PluginError as error:
                self._fail(session, port, error)
            except Exception as exc:
                self._fail(session, port, PluginError(f"raised {type(exc).__name__}: {exc}", name, "device",
                                                      "haptic"), exc)

    def _fail(self, session, port, error, cause=None):
        """Stop ticking the device, let go of its body, mark the simulation faulted and raise."""
        error = session.thread.error = self.sim.report_fault(error)
        session.release()
        port.update(self.sim.time)
        raise error from cause

    def stop(self) -> None:
        for session in self.sessions:
            session.stop()
