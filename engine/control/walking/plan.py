"""Footstep plan of a straight walk: where each foot is, when, and the ZMP reference it implies.

Timeline (s): an initial double support of ``start``; then ``steps`` steps of ``period`` each, a single support
of ``period (1 − ds)`` (one foot swings) followed by a double support of ``period ds``; then a final double
support of ``end``.  The right foot swings first.  Each swing foot lands ``length`` ahead of the stance foot,
except the last, which lands beside it, so the feet end side by side ``(steps − 1) length`` ahead of where they
started.  The ZMP reference sits under the stance foot in single support and moves linearly from one foot to
the next in double support (Kajita et al. 2003, Fig. 5).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Footstep:
    """Step ``k`` of the plan: foot ``swing`` (0 left, 1 right) leaves ``start`` (x, y, z) at ``t_lift`` and lands
    on ``target`` at ``t_land``; the double support that follows ends at ``t_end``."""
    swing: int
    start: np.ndarray
    target: np.ndarray
    t_lift: float
    t_land: float
    t_end: float


class FootstepPlan:
    """The steps of a straight walk along +x from the feet's initial positions ``feet0`` (2, 3), z up."""

    def __init__(self, feet0, steps, length, period, ds, start, end, height):
        """``steps`` ≥ 1 steps of ``length`` m and ``period`` s (``ds`` of it in double support), ``start`` and
        ``end`` s of standing, swing apex ``height`` m."""
        rows, feet = [], np.array(feet0, float).reshape(2, 3)
        for k in range(int(steps)):
            swing = 1 if k % 2 == 0 else 0
            x = feet[1 - swing][0] + (length if k < steps - 1 else 0.0)
            t_lift = start + k * period
            rows.append((swing, x, feet[swing][1], t_lift, t_lift + period * (1 - ds), t_lift + period))
            feet[swing, 0] = x
        self._build(feet0, rows, end, height)

    @classmethod
    def from_csv(cls, path, feet0, end, height):
        """The plan of a CSV file, one step per row: ``foot`` (left or right: the foot that swings), ``x``, ``y``
        (where it lands, m, on the ground of its start), ``t_lift``, ``t_land``, ``t_end`` (s: it leaves, lands,
        and the double support after it ends). Steps follow one another (t_lift < t_land ≤ t_end ≤ next t_lift)."""
        import csv
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = {"foot", "x", "y", "t_lift", "t_land", "t_end"} - set(reader.fieldnames or ())
            if missing:
                raise ValueError(f"{path}: the footstep plan needs the columns foot, x, y, t_lift, t_land, t_end "
                                 f"(missing: {', '.join(sorted(missing))})")
            rows, previous = [], 0.0
            for n, row in enumerate(reader, start=2):
                if row["foot"].strip() not in ("left", "right"):
                    raise ValueError(f"{path}:{n}: foot must be left or right, got {row['foot']!r}")
                try:
                    x, y, t_lift, t_land, t_end = (float(row[k]) for k in ("x", "y", "t_lift", "t_land", "t_end"))
                except ValueError:
                    raise ValueError(f"{path}:{n}: x, y, t_lift, t_land, t_end must be numbers, got "
                                     f"{[row[k] for k in ('x', 'y', 't_lift', 't_land', 't_end')]}") from None
                if not previous <= t_lift < t_land <= t_end:
                    raise ValueError(f"{path}:{n}: the times must follow previous t_end ≤ t_lift < t_land ≤ t_end, "
                                     f"got {t_lift:g}, {t_land:g}, {t_end:g} after {previous:g}")
                rows.append((0 if row["foot"].strip() == "left" else 1, x, y, t_lift, t_land, t_end))
                previous = t_end
        if not rows:
            raise ValueError(f"{path}: the footstep plan has no step")
        plan = cls.__new__(cls)
        plan._build(feet0, rows, end, height)
        return plan

    def _build(self, feet0, rows, end, height):
        """The steps of ``rows`` (swing, x, y, t_lift, t_land, t_end) from the feet at ``feet0``."""
        self.feet0 = np.array(feet0, float).reshape(2, 3)
        feet, self.steps = self.feet0.copy(), []
        for swing, x, y, t_lift, t_land, t_end in rows:
            target = feet[swing].copy()
            target[:2] = x, y
            self.steps.append(Footstep(swing, feet[swing].copy(), target, t_lift, t_land, t_end))
            feet[swing] = target
        self.feet_final = feet
        self.height, self.duration = float(height), self.steps[-1].t_end + end

    def step_at(self, t):
        """The step whose single support contains t, or None (double support)."""
        for s in self.steps:
            if s.t_lift <= t < s.t_land:
                return s
        return None

    def support(self, t):
        """[(foot, position (3,))] of the feet on the ground at t."""
        feet, swing = self.feet0.copy(), None
        for s in self.steps:
            if s.t_land <= t:
                feet[s.swing] = s.target
            elif s.t_lift <= t:
                swing = s.swing
        return [(i, feet[i]) for i in range(2) if i != swing]

    def steps_taken(self, t):
        return sum(s.t_land <= t for s in self.steps)

    def zmp_knots(self, com0_xy):
        """(times, points (n, 2)) of the piecewise-linear ZMP reference, from the initial CoM to the final
        mid-feet point."""
        first = self.steps[0]
        times, points = [0.0], [np.asarray(com0_xy, float)]
        ramp = min(first.t_lift, first.t_end - first.t_land)
        stance = self.feet0[1 - first.swing, :2]
        times += [first.t_lift - ramp, first.t_lift]
        points += [points[0], stance]
        for s in self.steps:
            times.append(s.t_land)
            points.append(points[-1])                      # single support: under the stance foot
            nxt = s.target[:2] if s is not self.steps[-1] else self.feet_final[:, :2].mean(axis=0)
            times.append(s.t_end)
            points.append(nxt)                             # double support: to the next stance foot
        times.append(max(self.duration, times[-1]) + 1.0)
        points.append(points[-1])
        return np.array(times), np.array(points)

    def zmp(self, t, com0_xy):
        """The ZMP reference at times ``t`` (n,) -> (n, 2)."""
        times, points = self.zmp_knots(com0_xy)
        return np.stack([np.interp(t, times, points[:, i]) for i in range(2)], axis=1)

    def swing_target(self, s, t):
        """Position, velocity, acceleration (3,) of the swing foot of step ``s`` at t: a quintic blend
        σ(τ) = 10τ³ − 15τ⁴ + 6τ⁵ from start to target (zero speed and acceleration at both ends) plus a bump
        h (4τ(1 − τ))² in z; the target is 3 mm below the ground so the foot lands before its double support."""
        T = s.t_land - s.t_lift
        tau = min(max((t - s.t_lift) / T, 0.0), 1.0)
        sig = tau ** 3 * (10 - 15 * tau + 6 * tau ** 2)
        dsig = 30 * tau ** 2 * (1 - tau) ** 2 / T
        ddsig = 60 * tau * (1 - tau) * (1 - 2 * tau) / T ** 2
        goal = s.target - np.array([0.0, 0.0, 0.003])
        d = goal - s.start
        b = 4 * tau * (1 - tau)
        db, ddb = 4 * (1 - 2 * tau) / T, -8 / T ** 2
        bump = np.array([0.0, 0.0, self.height])
        return (s.start + sig * d + b * b * bump, dsig * d + 2 * b * db * bump,
                ddsig * d + 2 * (db * db + b * ddb) * bump)
