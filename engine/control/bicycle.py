"""The rider of the benchmark bicycle: PI steering and PI drive (seed 001 §3.6, Mauny 2018 Table 2.3, L1841-L1867).

    steering   e1 = f_s(t) r1d − r1,   τ1 = −(K_ps e1 + K_is ∫e1)        (signs as printed: with them the
    drive      e3 = ṙ3d − ṙ3,          τ3 = K_pd e3 + K_id ∫e3            bicycle turns; flipped, it falls)

both saturated at ±``saturation`` (130 N m). f_s ramps the steering target smoothly from 0 at t1 to 1 at t2:
f_s = u − sin(2πu)/2π, u = (t − t1)/(t2 − t1). The integrals restart at ``reset``.
"""
from __future__ import annotations

import math

import numpy as np

from engine.plugins import register


def ramp(t, t1, t2) -> float:
    """f_s: 0 before t1, u − sin(2πu)/(2π) between, 1 after t2."""
    if t <= t1:
        return 0.0
    if t >= t2:
        return 1.0
    u = (t - t1) / (t2 - t1)
    return u - math.sin(2.0 * math.pi * u) / (2.0 * math.pi)


@register("bicycle-pi")
class BicyclePI:
    kind = "controller"
    stage = "control"

    def __init__(self, model, steer="steer", drive="rear_spin", steer_target=math.pi / 36, spin_target=20.0,
                 kps=10.0, kis=35.0, kpd=20.0, kid=100.0, t1=0.0, t2=5.0, saturation=130.0):
        joints = {j.name: j for j in model.joints}
        for name in (steer, drive):
            if name not in joints:
                raise ValueError(f"no joint '{name}' (joints: {', '.join(joints)})")
        if not (t2 > t1 and saturation > 0 and min(kps, kis, kpd, kid) >= 0):
            raise ValueError(f"needs t2 > t1, saturation > 0 and gains >= 0 (got t1={t1}, t2={t2}, "
                             f"saturation={saturation}, gains {kps}, {kis}, {kpd}, {kid})")
        self.nv = model.nv
        self.steer_q, self.steer_v = joints[steer].idx_q, joints[steer].idx_v
        self.drive_v = joints[drive].idx_v
        self.r1d, self.w3d, self.t1, self.t2, self.limit = steer_target, spin_target, t1, t2, saturation
        self.kps, self.kis, self.kpd, self.kid = kps, kis, kpd, kid
        self.reset(None, None)

    def reset(self, q, v):
        self.steer_integral = self.drive_integral = 0.0
        self.t = None

    def control(self, t, q, v):
        dt = 0.0 if self.t is None else t - self.t
        self.t = t
        e1 = ramp(t, self.t1, self.t2) * self.r1d - q[self.steer_q]
        e3 = self.w3d - v[self.drive_v]
        self.steer_integral += e1 * dt
        self.drive_integral += e3 * dt
        tau = np.zeros(self.nv)
        tau[self.steer_v] = np.clip(-(self.kps * e1 + self.kis * self.steer_integral), -self.limit, self.limit)
        tau[self.drive_v] = np.clip(self.kpd * e3 + self.kid * self.drive_integral, -self.limit, self.limit)
        return tau
