"""Motion-capture markers played against the simulated model (seed 004 §5.9, §2.8: markers at 100 Hz played at
the simulation's 1 kHz; Eq. 70, the identification cost).

A marker file is a CSV: a header ``t, <marker>_x, <marker>_y, <marker>_z, ...`` (world coordinates, m), one row
per sample; an empty cell or ``nan`` is a missing marker.  Each marker is compared with the model frame of the
same name (or the one ``frames`` maps it to).  Between samples the positions are interpolated linearly; a
marker missing at either neighbouring sample is missing there too.  Gaps (runs of missing samples) are
reported when the file is read — ``MarkerGapWarning`` and ``MarkerTrajectories.gaps`` — and filled (linearly,
between the samples that bound them) only on request (``interpolate``).

Eq. 70 sums the squared distances over the samples i and markers k,
f1 = Σ_i Σ_k ‖O0L_k,EM(i) − O0L_k,S(i)‖²; the sensor ``mocap`` reports at every step the RMS distance of the
visible markers, sqrt(Σ_k ‖d_k‖² / n), the cost Eq. 70 accumulated over the steps so far, and its RMS over the
run, sqrt(f1 / Σ_i n_i) (the seed's fit: 1.6 cm) — sums since the start, restarted by a reset or a restored state.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from engine.csvfile import numbers, read_lines
from engine.errors import UniverseError, did_you_mean
from engine.plugins import register
from engine.sensors import sensor_name


SAME_TIME = 1e-9           # a fraction of the sampling interval: closer to a sample than this is at it


class MarkerGapWarning(UserWarning):
    """A marker file has missing samples (the message lists each gap)."""


class MarkerTrajectories:
    """``t`` (N,), ``names`` (k markers), ``X`` (N, k, 3) with NaN where a marker is missing, ``gaps``: a list of
    (marker, first missing time, last missing time, filled) — filled when ``interpolate`` bridged it."""

    def __init__(self, path, interpolate=False):
        self.path = str(path)
        self.t, self.names, self.X = _read(Path(path))
        self.gaps = []
        for k, name in enumerate(self.names):
            missing = np.isnan(self.X[:, k]).any(axis=1)
            for start, stop in _runs(missing):
                inside = start > 0 and stop < len(self.t)
                filled = bool(interpolate and inside)
                if filled:
                    a, b = start - 1, stop
                    w = ((self.t[start:stop] - self.t[a]) / (self.t[b] - self.t[a]))[:, None]
                    self.X[start:stop, k] = (1 - w) * self.X[a, k] + w * self.X[b, k]
                self.gaps.append((name, float(self.t[start]), float(self.t[stop - 1]), filled))
        if self.gaps:
            listed = "; ".join(f"{n} {a:g}-{b:g} s{' (interpolated)' if f else ''}" for n, a, b, f in self.gaps)
            warnings.warn(f"{self.path}: markers missing: {listed}", MarkerGapWarning, stacklevel=2)

    def at(self, t):
        """Marker positions (k, 3) at time t, linear between samples (NaN where missing or outside the file)."""
        if not self.t[0] <= t <= self.t[-1]:
            return np.full((len(self.names), 3), np.nan)
        i = min(int(np.searchsorted(self.t, t, side="right")) - 1, len(self.t) - 2)
        w = (t - self.t[i]) / (self.t[i + 1] - self.t[i])
        if min(w, 1.0 - w) < SAME_TIME:                 # at a sample (to rounding): its value, seen or missing
            return self.X[i + int(round(w))].copy()
        return (1 - w) * self.X[i] + w * self.X[i + 1]


def marker_distances(markers, model_points):
    """‖O0L_k,EM − O0L_k,S‖ per marker (k,), NaN where the marker is missing."""
    return np.linalg.norm(np.asarray(markers) - np.asarray(model_points), axis=1)


@register("mocap")
class MocapMarkers:
    """Markers of a file played against frames of the multibody ``target`` (module docstring)."""

    kind = "sensor"
    stage = "sense"
    signals = {"rms": ("m", 1), "run_rms": ("m", 1), "cost": ("m²", 1), "visible": ("", 1)}

    def __init__(self, model, multibody: int, target: str, base_dir=".", file=None, frames=None,
                 interpolate=0.0, name=None):
        if file is None:
            raise ValueError('needs file="markers.csv" (a header "t, <marker>_x, <marker>_y, <marker>_z, ...")')
        self.markers = MarkerTrajectories(Path(base_dir) / file, interpolate=bool(interpolate))
        mapping = dict(pair.split(":") for pair in str(frames).split()) if frames else {}
        names = list(model.frame_name)
        self.frames = []
        for marker in self.markers.names:
            frame = mapping.get(marker, marker)
            if frame not in names:
                raise UniverseError(f"marker '{marker}' has no frame '{frame}' on '{target}'"
                                    f"{did_you_mean(frame, names)}", self.markers.path, 1, marker)
            self.frames.append(model.frame_index(frame))
        self.body = model.frame_body[self.frames]
        self.point = model.frame_p[self.frames]
        self.multibody, self.name = multibody, sensor_name(target, "mocap", name)
        self.cost, self.count, self.step = 0.0, 0, -1

    def measure(self, sim) -> dict:
        if sim.step_count <= self.step:                 # a reset or a restored state: the sums start again
            self.cost, self.count = 0.0, 0
        self.step = sim.step_count
        R, p = sim.runs[self.multibody].world_placements()
        model_points = np.einsum("kij,kj->ki", R[self.body], self.point) + p[self.body]
        d = marker_distances(self.markers.at(sim.time), model_points)
        seen = d[~np.isnan(d)]
        self.cost += float(seen @ seen)
        self.count += len(seen)
        rms = float(np.sqrt(seen @ seen / len(seen))) if len(seen) else float("nan")
        run_rms = float(np.sqrt(self.cost / self.count)) if self.count else float("nan")
        return {"rms": np.array([rms]), "run_rms": np.array([run_rms]), "cost": np.array([self.cost]),
                "visible": np.array([float(len(seen))])}


def _runs(mask):
    """(start, stop) of each run of True in a boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
    return list(zip(edges[::2], edges[1::2]))


def _read(path):
    header, rows = read_lines(path, "markers")
    columns = header[1:]
    names = [c[:-2] for c in columns[::3]]
    if header[0] != "t" or len(columns) % 3 or not columns or columns != [f"{n}_{a}" for n in names for a in "xyz"]:
        raise UniverseError("a marker CSV's header is 't, <marker>_x, <marker>_y, <marker>_z, ...'", str(path), 1,
                            ", ".join(header))
    table = numbers(path, rows, len(header), "marker", missing=True)
    for r, line in enumerate(rows):
        if not np.isfinite(table[r, 0]) or np.isinf(table[r, 1:]).any():
            raise UniverseError("a marker time must be finite and positions finite or missing", str(path), r + 2,
                                line.strip())
    bad = np.flatnonzero(np.diff(table[:, 0]) <= 0.0)
    if len(table) < 2 or bad.size:
        raise UniverseError("marker times must increase (two samples at least)", str(path),
                            int(bad[0]) + 3 if bad.size else None)
    return table[:, 0], names, table[:, 1:].reshape(len(table), -1, 3)
