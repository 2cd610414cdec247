"""Interaction: haptic devices, the haptic thread, attach and touch modes with force feedback (seed 000 §2).

    device = PhantomDevice()                 # or MouseDevice(), ScriptedDevice.from_file("session.npz")
    session = HapticSession(device, workspace_map=WorkspaceMap.y_up(p=...), safety=SafetySettings(force_gain=0.05))
    port = session.physics_port(pick, lambda key: SimulationBody(sim, *key))   # physics thread: port.update(t)
    session.start(); ...; session.stop(); session.recording.save("session.npz")

``ProcessSession`` (same interface) runs the tick in a child process, the GUI's default (``process.py``).
"""
from engine.interaction.coupling import BodyFeedback, CouplingSettings, ForceGuard, SafetySettings, coupling_gains
from engine.interaction.device import Device, DeviceError, DeviceState, Workspace, WorkspaceMap
from engine.interaction.devices import LockstepDevices, session_for, simulation_port
from engine.interaction.mailbox import Mailbox
from engine.interaction.mouse import MouseDevice
from engine.interaction.phantom import PhantomDevice
from engine.interaction.picking import BodyPicker, ray_triangles
from engine.interaction.process import ProcessSession, process_session_for
from engine.interaction.port import GraspedBody, HapticCommand, PhysicsFeedback, PhysicsPort, SimulationBody
from engine.interaction.proximity import Box, Plane, Proximity, Sphere, union
from engine.interaction.recording import SessionRecording
from engine.interaction.scripted import ScriptedDevice, load_trajectory
from engine.interaction.session import HapticSession, SessionOutput
from engine.interaction.thread import HapticThread, RateSummary
from engine.interaction.touch import GodObject, TouchSettings

__all__ = ["BodyFeedback", "BodyPicker", "Box", "CouplingSettings", "Device", "DeviceError", "DeviceState",
           "ForceGuard", "GodObject", "GraspedBody", "HapticCommand", "HapticSession", "HapticThread",
           "LockstepDevices", "Mailbox", "MouseDevice", "PhantomDevice", "PhysicsFeedback", "PhysicsPort",
           "Plane", "ProcessSession", "Proximity", "RateSummary", "SafetySettings", "ScriptedDevice",
           "SessionOutput", "SessionRecording", "SimulationBody", "Sphere", "TouchSettings", "Workspace",
           "WorkspaceMap", "coupling_gains", "load_trajectory", "process_session_for", "ray_triangles",
           "session_for", "simulation_port", "union"]
