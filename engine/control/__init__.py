"""Built-in controllers, registered like any third-party plugin: joint PD (posture or trajectory), computed
torque (rotor-aware or rotor-blind), gravity compensation, standing posture control, driven joints (hybrid
dynamics), the joint servo of seed 000 eq. 5.8, the walking controller (``walk``), the bicycle's rider
(``bicycle-pi``), a scripted push on a floating base (``push``) the playback of a periodic biped gait (``gait``) and
of an optimiser's trajectory (``replay``)."""
from engine.control.bicycle import BicyclePI
from engine.control.computed_torque import ComputedTorque
from engine.control.driven import DrivenJoints
from engine.control.gait import GaitPlayback
from engine.control.gravity import GravityCompensation
from engine.control.pd import JointPD
from engine.control.push import Push
from engine.control.replay import TrajectoryReplay
from engine.control.servo import JointServo
from engine.control.stance import StancePD
from engine.control.trajectory import JointTrajectory
from engine.control.walking import Walk

__all__ = ["BicyclePI", "ComputedTorque", "DrivenJoints", "GaitPlayback", "GravityCompensation", "JointPD",
           "JointServo", "Push", "JointTrajectory", "StancePD", "TrajectoryReplay", "Walk"]
