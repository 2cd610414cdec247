"""Built-in sensors, registered like any third-party plugin: read the simulation after each step (stage "sense").

A sensor is declared in the universe, on one body of a multibody::

    <Sensor plugin="force-torque" target="talos" body="leg_left_6_link" name="left_ankle"/>
    <Sensor plugin="imu" target="talos" body="torso_2_link"/>

After every step ``sim.measurements[name]`` holds its signals (arrays; ``name`` defaults to target/body), and
the snapshot carries them for the GUI's plots; a sensor class lists them in ``signals`` (name: (unit, size)).

* ``force-torque``: the wrench the contacts (and loop closures) apply on the body, at its origin in its frame —
  what a 6-axis F/T sensor between the body and its sole measures (seed 000 §4 reads the ankle sensors of HRP-2
  to compute the ZMP): ``force`` (3,) N, ``torque`` (3,) N·m.
* ``imu``: the body's orientation and velocity: ``quaternion`` (x, y, z, w) of its frame in the world,
  ``angular_velocity`` (3,) rad/s and ``linear_velocity`` (3,) m/s of its origin, both in the body frame.
"""
from __future__ import annotations

from engine.plugins import register
from engine.errors import did_you_mean
from engine.spatial import rotation_to_quaternion


class _BodySensor:
    """A sensor on body ``body`` (a link name) of the multibody ``multibody`` (its index, given by the engine)."""

    kind = "sensor"
    stage = "sense"

    def __init__(self, model, multibody: int, target: str, body: str, name: str | None = None):
        if body not in model.body_name:
            raise ValueError(f"'{target}' has no body '{body}'{did_you_mean(body, list(model.body_name))}")
        self.body = model.body_index(body)
        self.multibody = multibody
        self.name = sensor_name(target, body, name)


def sensor_name(target: str, body: str, name: str | None = None) -> str:
    """The key of a sensor's readings in ``sim.measurements``: its ``name``, else target/body."""
    return name or f"{target}/{body}"


@register("force-torque")
class ForceTorqueSensor(_BodySensor):
    signals = {"force": ("N", 3), "torque": ("N m", 3)}

    def measure(self, sim) -> dict:
        wrench = sim.runs[self.multibody].f_contact[self.body]       # (force, moment) at the origin, body frame
        return {"force": wrench[:3].copy(), "torque": wrench[3:].copy()}


@register("imu")
class ImuSensor(_BodySensor):
    signals = {"quaternion": ("", 4), "angular_velocity": ("rad/s", 3), "linear_velocity": ("m/s", 3)}

    def measure(self, sim) -> dict:
        R, _ = sim.body_placement(self.multibody, self.body)
        v, w = sim.body_velocity(self.multibody, self.body)           # world axes
        return {"quaternion": rotation_to_quaternion(R), "angular_velocity": R.T @ w, "linear_velocity": R.T @ v}
