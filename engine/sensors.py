"""Built-in sensors, registered like any third-party plugin: read the simulation after each step (stage "sense").

A sensor is declared in the universe, on one body (or joint) of a multibody::

    <Sensor plugin="force-torque" target="talos" body="leg_left_6_link" name="left_ankle"/>
    <Sensor plugin="imu" target="talos" body="torso_2_link" gyro_noise="0.01" accel_bias="0.05 0 0" seed="3"/>
    <Sensor plugin="encoder" target="talos" joint="leg_left_4_joint" resolution="4.8e-5"/>

After every step ``sim.measurements[name]`` holds its signals (arrays; ``name`` defaults to target/body, or
target/joint), and the snapshot carries them for the GUI's plots; a sensor class lists them in ``signals``
(name: (unit, size)). Each sensor gives the exact value (the ground truth) and what the device would read: a
model of its calibration, offset, bias, Gaussian noise or quantisation (seed 000 §5.1.2, eqs. 5.2–5.6). The
noise of step k is drawn from ``numpy.random.default_rng((seed, k))``: a run, a replay and a restored run read
the same values, whatever came before.

* ``force-torque``: the wrench w = (f, τ) the contacts (and loop closures) apply on the body, at its origin in
  its frame — what a 6-axis F/T sensor between the body and its sole measures (seed 000 §4 reads the ankle
  sensors of HRP-2 to compute the ZMP): ``force`` (3,) N, ``torque`` (3,) N·m, exact; ``reading`` (6,), the raw
  output f_l of eq. 5.6, w = G (f_l + f_d): f_l = G⁻¹ w − f_d + ε, with ``calibration`` G (6 × 6, 36 numbers,
  or its 6 diagonal terms; identity by default), ``offset`` f_d (6 numbers) and ``noise`` ε ~ N(0, σ²) (σ: 1, 2
  (force, torque) or 6 numbers).
* ``imu``: the body's orientation and motion: ``quaternion`` (x, y, z, w) of its frame in the world,
  ``angular_velocity`` (3,) rad/s, ``linear_velocity`` (3,) m/s of its origin and ``specific_force`` (3,) m/s²
  = Rᵀ(a − g), the acceleration of its origin over the step less gravity — all exact, in the body frame — and
  the readings ``gyro`` = ω + ``gyro_bias`` + N(0, ``gyro_noise``²) and ``accelerometer`` = specific force +
  ``accel_bias`` + N(0, ``accel_noise``²) (biases 3 numbers, noises 1 or 3).
* ``encoder``: the position of a one-DOF joint ``joint``: ``position`` (rad or m), exact, and ``reading``, the
  count of ``resolution`` steps passed, floor(q / resolution) · resolution.
"""
from __future__ import annotations

import numpy as np

from engine.errors import did_you_mean
from engine.model.model import JointType
from engine.plugins import register
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
    """The key of a sensor's readings in ``sim.measurements``: its ``name``, else target/body (or joint)."""
    return name or f"{target}/{body}"


@register("force-torque")
class ForceTorqueSensor(_BodySensor):
    signals = {"force": ("N", 3), "torque": ("N m", 3), "reading": ("N, N m", 6)}

    def __init__(self, model, multibody: int, target: str, body: str, name: str | None = None, calibration=None,
                 offset=0.0, noise=0.0, seed=0.0):
        super().__init__(model, multibody, target, body, name)
        G = np.eye(6) if calibration is None else _matrix("calibration", calibration)
        if abs(np.linalg.det(G)) < 1e-12:
            raise ValueError(f"the calibration matrix G must be invertible (got {np.ravel(calibration).tolist()})")
        self.G_inv = np.linalg.inv(G)
        self.offset = _vector("offset", offset, 6, (1, 6))
        self.noise = _vector("noise", noise, 6, (1, 2, 6), spread={2: (3, 3)}, positive=True)
        self.seed = _seed(seed)

    def measure(self, sim) -> dict:
        wrench = sim.runs[self.multibody].f_contact[self.body]       # (force, moment) at the origin, body frame
        reading = self.G_inv @ wrench - self.offset + _noise(self.seed, sim.step_count, self.noise)
        return {"force": wrench[:3].copy(), "torque": wrench[3:].copy(), "reading": reading}


@register("imu")
class ImuSensor(_BodySensor):
    signals = {"quaternion": ("", 4), "angular_velocity": ("rad/s", 3), "linear_velocity": ("m/s", 3),
               "specific_force": ("m/s²", 3), "gyro": ("rad/s", 3), "accelerometer": ("m/s²", 3)}

    def __init__(self, model, multibody: int, target: str, body: str, gravity, name: str | None = None,
                 gyro_bias=0.0, gyro_noise=0.0, accel_bias=0.0, accel_noise=0.0, seed=0.0):
        super().__init__(model, multibody, target, body, name)
        self.gravity = np.asarray(gravity, float)
        self.gyro_bias = _vector("gyro_bias", gyro_bias, 3, (1, 3))
        self.accel_bias = _vector("accel_bias", accel_bias, 3, (1, 3))
        self.noise = np.concatenate([_vector("gyro_noise", gyro_noise, 3, (1, 3), positive=True),
                                     _vector("accel_noise", accel_noise, 3, (1, 3), positive=True)])
        self.seed = _seed(seed)

    def measure(self, sim) -> dict:
        R, _ = sim.body_placement(self.multibody, self.body)
        v, w = sim.body_velocity(self.multibody, self.body)           # world axes
        a, _ = sim.body_acceleration(self.multibody, self.body)
        omega, specific = R.T @ w, R.T @ (a - self.gravity)
        noise = _noise(self.seed, sim.step_count, self.noise)
        return {"quaternion": rotation_to_quaternion(R), "angular_velocity": omega, "linear_velocity": R.T @ v,
                "specific_force": specific, "gyro": omega + self.gyro_bias + noise[:3],
                "accelerometer": specific + self.accel_bias + noise[3:]}


@register("encoder")
class EncoderSensor:
    """The position of the one-DOF joint ``joint`` of a multibody, and its encoder's count (module docstring)."""

    kind = "sensor"
    stage = "sense"
    signals = {"position": ("rad or m", 1), "reading": ("rad or m", 1)}

    def __init__(self, model, multibody: int, target: str, joint: str, resolution: float,
                 name: str | None = None):
        names = [j.name for j in model.joints]
        if joint not in names:
            raise ValueError(f"'{target}' has no joint '{joint}'{did_you_mean(joint, names)}")
        j = model.joints[names.index(joint)]
        if j.type not in (JointType.REVOLUTE, JointType.PRISMATIC):
            raise ValueError(f"an encoder reads a revolute or prismatic joint; '{joint}' is {JointType(j.type).name}")
        if not (np.isfinite(resolution) and resolution > 0):
            raise ValueError(f"the encoder resolution must be finite and > 0 (got {resolution!r})")
        self.index, self.resolution, self.multibody = j.idx_q, float(resolution), multibody
        self.name = sensor_name(target, joint, name)

    def measure(self, sim) -> dict:
        q = float(sim.runs[self.multibody].q[self.index])
        return {"position": np.array([q]), "reading": np.array([np.floor(q / self.resolution) * self.resolution])}


def _noise(seed: int, step: int, sigma) -> np.ndarray:
    """N(0, σ²) per component for step ``step``, from ``default_rng((seed, step))`` (zero where σ = 0)."""
    if not sigma.any():
        return np.zeros(len(sigma))
    return sigma * np.random.default_rng((seed, step)).standard_normal(len(sigma))


def _vector(name, value, size, counts, spread=None, positive=False) -> np.ndarray:
    """A parameter of ``counts`` numbers as a (size,) vector: one number for every component, or ``spread``
    {count: (lengths)} blocks, or all of them; finite, and ≥ 0 where ``positive``."""
    x = np.atleast_1d(np.asarray(value, float))
    if x.ndim != 1 or len(x) not in counts:
        raise ValueError(f"'{name}' takes {' or '.join(map(str, counts))} numbers (got {x.tolist()})")
    if not np.all(np.isfinite(x)) or (positive and np.any(x < 0)):
        raise ValueError(f"'{name}' must be finite{' and >= 0' if positive else ''} (got {x.tolist()})")
    if len(x) == size:
        return x.copy()
    if spread and len(x) in spread:
        return np.repeat(x, spread[len(x)])
    return np.full(size, x[0])


def _matrix(name, value) -> np.ndarray:
    """A 6 × 6 matrix from 36 numbers (row after row) or its 6 diagonal terms."""
    x = np.atleast_1d(np.asarray(value, float))
    if len(x) == 6:
        x = np.diag(x)
    elif len(x) == 36:
        x = x.reshape(6, 6)
    else:
        raise ValueError(f"'{name}' takes 36 numbers (row after row) or 6 (its diagonal) (got {len(x)})")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"'{name}' must be finite (got {np.ravel(x).tolist()})")
    return x


def _seed(seed) -> int:
    if not (float(seed).is_integer() and seed >= 0):
        raise ValueError(f"'seed' must be an integer >= 0 (got {seed!r})")
    return int(seed)
