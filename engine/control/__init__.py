"""Built-in controllers, registered like any third-party plugin: joint PD (posture or trajectory), gravity
compensation and standing posture control."""
from engine.control.gravity import GravityCompensation
from engine.control.pd import JointPD
from engine.control.stance import StancePD
from engine.control.trajectory import JointTrajectory

__all__ = ["GravityCompensation", "JointPD", "JointTrajectory", "StancePD"]
