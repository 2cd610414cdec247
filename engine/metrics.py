"""Metrics of a run, registered like any plugin (kind ``metric``): what a sweep (engine/sweep.py) reports for each
of its runs. A metric is built on the Simulation before the first step, ``observe(sim)`` after every step and
``value()`` at the end; a third-party one registers with ``@engine.plugins.register("my-metric")`` and
``kind = "metric"``.

* ``peak_torso_acc`` (m/s²): the largest |Δv_z| / δt of the base's origin, world vertical, over the run — the
  thesis's impact measure (seed 000 §4.4, the drop of L2266; ``bench/soles.py drop``).
* ``max_tilt`` (deg): the largest angle between the base's z axis and the vertical — the thesis's second
  criterion of the sole study (the torso tilt).
* ``final_height`` (m): the base origin's height at the end.
* ``unconverged`` (fraction): the steps whose contact solve ended unconverged.

The base is that of the universe's first multibody on a free joint.
"""
from __future__ import annotations

import math

from engine.model.model import JointType
from engine.plugins import register


class _BaseMetric:
    kind = "metric"

    def __init__(self, sim):
        floating = [m for m, run in enumerate(sim.runs) if run.model.joints and
                    run.model.joints[0].type == JointType.FREE]
        if not floating:
            raise ValueError(f"the metric '{self.plugin_name}' needs a multibody on a free joint")
        self.run = sim.runs[floating[0]]

    def base(self):
        """(R, p) of the base body in the world, after the last refresh."""
        R, p = self.run.world_placements()
        return R[0], p[0]


@register("peak_torso_acc")
class PeakTorsoAcceleration(_BaseMetric):
    def __init__(self, sim):
        super().__init__(sim)
        self.dt, self.peak, self.last = sim.dt, 0.0, self._vz()

    def _vz(self) -> float:
        return float((self.base()[0] @ self.run.v[:3])[2])

    def observe(self, sim):
        vz = self._vz()
        self.peak = max(self.peak, abs(vz - self.last) / self.dt)
        self.last = vz

    def value(self) -> float:
        return self.peak


@register("max_tilt")
class MaxTilt(_BaseMetric):
    def __init__(self, sim):
        super().__init__(sim)
        self.tilt = 0.0

    def observe(self, sim):
        self.tilt = max(self.tilt, math.degrees(math.acos(min(1.0, max(-1.0, self.base()[0][2, 2])))))

    def value(self) -> float:
        return self.tilt


@register("final_height")
class FinalHeight(_BaseMetric):
    def observe(self, sim):
        pass

    def value(self) -> float:
        return float(self.base()[1][2])


@register("unconverged")
class Unconverged:
    kind = "metric"

    def __init__(self, sim):
        self.sim = sim

    def observe(self, sim):
        pass

    def value(self) -> float:
        counts = self.sim.contact_report()
        return counts.unconverged_steps / counts.steps if counts.steps else 0.0

