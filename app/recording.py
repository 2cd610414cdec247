"""Recording a run: a ring buffer of states, contact forces and device inputs; .npz files; video export.

Every ``stride``-th step the physics thread appends the Simulation's State (with whatever the engine keeps in
it, warm starts and plugin states, so that a run resumed from a recorded frame continues as the original did;
only the contact solver's kept matrix factor and the narrowphase's kept contacts are left out, so the solves of a
large compliant contact group there start afresh and agree with the original to the solver's tolerance, and the
pairs in contact are detected afresh, within the reuse distance of the original's contacts),
its contacts and the external wrenches the user or a device applied. The buffer keeps the newest ``capacity``
frames, each with the torques τ the controllers applied. A recording saved to .npz holds plain arrays (per
multibody q, v and τ; contacts and the contact solver's warm starts padded to the largest count of a frame) and
loads back into the same frames (plugin states are not saved: a loaded recording replays, and a run resumed
from it starts its plugins afresh).

Haptic devices (issue 7 item 5): the ``SessionRecording`` of each device session attached with
``attach_device`` is saved with the frames, one row per haptic tick (device trajectory, buttons, forces sent to
the device, wrench on the body, and the simulation time ``sim_t`` that aligns it with the frames), as arrays
``device<k>_<column>`` named by ``device_names``; ``devices()`` gives them back, and ``<Device plugin="scripted"
file="run.npz"/>`` replays a device of a saved recording.
"""
from __future__ import annotations

import json
import shutil
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.rolling.hybrid import WheelEvent
from engine.state import ActiveContacts, State

FORMAT = "articula-recording-1"


@dataclass(frozen=True)
class RecordedFrame:
    state: State
    contacts: ActiveContacts
    external: tuple    # (multibody, body, wrench_world (6,), point_world (3,)) applied during the step
    tau: tuple = ()    # per multibody (nv,): the torques the controllers applied during the step
    measurements: dict = field(default_factory=dict)   # sensor name -> {signal: array}, after the step
    events: tuple = ()  # (multibody, WheelEvent) of the event-driven wheels during the step (engine/rolling/)


class Recorder:
    """Thread-safe ring buffer of ``RecordedFrame``s (the physics thread writes, the GUI reads)."""

    def __init__(self, capacity: int = 20000, stride: int = 1, autosave: "Autosave | None" = None):
        if capacity < 1 or stride < 1:
            raise ValueError(f"a recorder needs capacity >= 1 and stride >= 1, got {capacity}, {stride}")
        self.capacity, self.stride = int(capacity), int(stride)
        self.autosave = autosave       # every recorded state also streamed to disk (a crash loses ≤ 1 s)
        self._frames: deque = deque(maxlen=self.capacity)
        self._events: list = []        # (step, t, multibody, WheelEvent) of the run, in time order
        self._lock = threading.Lock()
        self._devices: dict = {}       # name -> [SessionRecording, first row of this run]
        self._loaded_devices: dict = {}  # name -> columns, from a file

    def append(self, sim):
        """Record the simulation's current step (every ``stride``-th step, and always step 0); its discrete
        events (``events``) at every step."""
        events = sim.wheel_events(recent=True)
        if events:
            with self._lock:
                self._events += [(sim.step_count, e.t, m, e) for m, e in events]
        if sim.step_count % self.stride:
            return
        external = tuple((m, b, w.copy(), x.copy()) for (m, b), (w, x) in sim.external.items())
        tau = tuple(run.tau.copy() for run in sim.runs)
        state = sim.state
        for key in ("factor", "kept_pair", "kept_rows", "kept_margin"):   # a large matrix, the narrowphase's kept
            state.warm_start.pop(key, None)      # contacts: not kept in 20000 frames (engine/contact/stepping.py)
        with self._lock:
            self._frames.append(RecordedFrame(state, sim.contacts, external, tau, sim.measurements, events))
        if self.autosave is not None:
            self.autosave.append(sim)

    def clear(self):
        with self._lock:
            self._frames.clear()
            self._events.clear()
            for entry in self._devices.values():
                entry[1] = len(entry[0])

    # ---- devices ----------------------------------------------------------------------------------------
    def attach_device(self, name: str, recording):
        """Save the rows ``recording`` (a ``SessionRecording``) gets from now on with this recording."""
        with self._lock:
            self._devices[str(name)] = [recording, len(recording)]

    def devices(self) -> dict:
        """{device name: columns (``SessionRecording.arrays``)}: the rows of this run, none older than the
        oldest frame kept."""
        with self._lock:
            first = self._frames[0].state.t if self._frames else -np.inf
            attached = {name: (rec, start) for name, (rec, start) in self._devices.items()}
            out = dict(self._loaded_devices)
        for name, (recording, start) in attached.items():
            columns = recording.arrays_since(start)
            keep = ~(columns["sim_t"] < first)
            out[name] = {k: a[keep] for k, a in columns.items()}
            if len(out[name]["t"]):
                out[name]["t"] = out[name]["t"] - out[name]["t"][0]
        return out

    def __len__(self):
        return len(self._frames)

    def frame(self, index: int) -> RecordedFrame:
        with self._lock:
            return self._frames[index]

    def frames(self) -> list:
        with self._lock:
            return list(self._frames)

    def events(self) -> tuple:
        """(t, multibody, WheelEvent) of the discrete events of the recorded run (engine/rolling/), in time
        order, none before the oldest frame kept."""
        with self._lock:
            first = self._frames[0].state.t if self._frames else np.inf
            return tuple((t, m, e) for _, t, m, e in self._events if t >= first)

    def span(self) -> tuple:
        """(time of the oldest frame, time of the newest), (0, 0) when empty."""
        with self._lock:
            return (self._frames[0].state.t, self._frames[-1].state.t) if self._frames else (0.0, 0.0)

    def times(self) -> np.ndarray:
        with self._lock:
            return np.array([f.state.t for f in self._frames])

    def index_at(self, t: float) -> int:
        """Index of the last frame recorded at or before time ``t`` (0 when ``t`` is before the first)."""
        return max(int(np.searchsorted(self.times(), t, side="right")) - 1, 0)

    def truncate_after(self, step: int):
        """Forget the frames after ``step`` (the run goes on from an earlier frame: its future changes)."""
        with self._lock:
            while self._frames and self._frames[-1].state.step > step:
                self._frames.pop()
            self._events = [e for e in self._events if e[0] <= step]

    # ---- files -----------------------------------------------------------------------------------------
    def save(self, path, source: str = "", multibodies=()):
        """Write the frames to a compressed .npz (``multibodies``: names, for the reader)."""
        frames = self.frames()
        if not frames:
            raise ValueError("the recording is empty: nothing to save")
        arrays = {"format": FORMAT, "source": str(source), "multibodies": np.array(list(multibodies), dtype=str),
                  "t": np.array([f.state.t for f in frames]), "step": np.array([f.state.step for f in frames])}
        for m in range(len(frames[0].state.q)):
            arrays[f"q{m}"] = np.stack([f.state.q[m] for f in frames])
            arrays[f"v{m}"] = np.stack([f.state.v[m] for f in frames])
            arrays[f"tau{m}"] = np.stack([f.tau[m] for f in frames])
        arrays.update(_contact_arrays([f.contacts for f in frames]))
        arrays.update(_warm_start_arrays([f.state.warm_start for f in frames]))
        arrays.update(_external_arrays([f.external for f in frames]))
        arrays.update(_measurement_arrays([f.measurements for f in frames]))
        with self._lock:
            arrays.update(_event_arrays(self._events))
        devices = self.devices()
        arrays["device_names"] = np.array(list(devices), dtype=str)
        for k, columns in enumerate(devices.values()):
            arrays.update({f"device{k}_{name}": a for name, a in columns.items()})
        np.savez_compressed(path, **arrays)

    @staticmethod
    def load(path, capacity: int | None = None) -> "Recorder":
        """The frames of a .npz written by ``save``; ``ValueError`` naming the file if it is not one."""
        path = Path(path)
        try:
            data = np.load(path, allow_pickle=False)
            if str(data["format"]) != FORMAT:
                raise ValueError(f"format {str(data['format'])!r}, expected {FORMAT!r}")
            frames = _frames_from(data)
            devices = device_arrays(data)
            events = _events_from(data)
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}: not an Articula recording ({exc})") from exc
        recorder = Recorder(capacity or max(len(frames), 1))
        recorder._frames.extend(replace(f, events=tuple((m, e) for step, _, m, e in events if step == f.state.step))
                                for f in frames)           # each frame's own step's events, as ``append`` keeps them
        recorder._events = events
        recorder._loaded_devices = devices
        return recorder


def device_arrays(data) -> dict:
    """{device name: {column: array}} of a saved recording (files without devices give {})."""
    names = [str(s) for s in data["device_names"]] if "device_names" in data.files else []
    return {name: {key[len(f"device{k}_"):]: data[key] for key in data.files if key.startswith(f"device{k}_")}
            for k, name in enumerate(names)}


def _contact_arrays(contacts) -> dict:
    """Contacts of every frame padded to the largest count; body names as indices into ``contact_names``."""
    n = max([len(c) for c in contacts] + [0])
    names = sorted({name for c in contacts for name in c.body_a + c.body_b})
    index = {name: i for i, name in enumerate(names)}
    out = {"contact_count": np.array([len(c) for c in contacts]), "contact_names": np.array(names, dtype=str)}
    for field, width in (("point", 3), ("normal", 3), ("force", 3), ("depth", 0), ("mu", 0)):
        padded = np.zeros((len(contacts), n, width) if width else (len(contacts), n))
        for k, c in enumerate(contacts):
            padded[k, :len(c)] = getattr(c, field)
        out[f"contact_{field}"] = padded
    for side in ("body_a", "body_b"):
        padded = np.full((len(contacts), n), -1)
        for k, c in enumerate(contacts):
            padded[k, :len(c)] = [index[name] for name in getattr(c, side)]
        out[f"contact_{side}"] = padded
    return out


def _warm_start_arrays(warm_starts) -> dict:
    """The contact solver's warm start of every frame (State.warm_start), padded like the contacts."""
    if not all(warm_starts):
        return {}
    n = max(len(w["pair"]) for w in warm_starts)
    out = {"warm_count": np.array([len(w["pair"]) for w in warm_starts]),
           "warm_pair": np.full((len(warm_starts), n), -1), "warm_point": np.zeros((len(warm_starts), n, 3)),
           "warm_force": np.zeros((len(warm_starts), n, 3)),
           "warm_closure_force": np.stack([w["closure_force"] for w in warm_starts]),
           "warm_sole_sizes": np.array([len(U) for U in warm_starts[0].get("sole_displacement", [])], dtype=int),
           "warm_sole_displacement": np.stack([np.concatenate([np.zeros(0)] + list(w.get("sole_displacement", [])))
                                               for w in warm_starts])}
    for k, w in enumerate(warm_starts):
        c = len(w["pair"])
        out["warm_pair"][k, :c], out["warm_point"][k, :c], out["warm_force"][k, :c] = w["pair"], w["point"], w["force"]
    return out


def _warm_start(data, k) -> dict:
    if "warm_count" not in data.files:
        return {}
    c = int(data["warm_count"][k])
    soles = []
    if "warm_sole_sizes" in data.files and len(data["warm_sole_sizes"]):
        sizes = np.cumsum(data["warm_sole_sizes"])[:-1]
        soles = [U.copy() for U in np.split(data["warm_sole_displacement"][k], sizes)]
    return dict(pair=data["warm_pair"][k, :c].copy(), point=data["warm_point"][k, :c].copy(),
                force=data["warm_force"][k, :c].copy(), closure_force=data["warm_closure_force"][k].copy(),
                sole_displacement=soles)


def _external_arrays(externals) -> dict:
    frames, n = len(externals), max([len(e) for e in externals] + [0])
    out = {"external_count": np.array([len(e) for e in externals]), "external_body": np.full((frames, n, 2), -1),
           "external_wrench": np.zeros((frames, n, 6)), "external_point": np.zeros((frames, n, 3))}
    for k, entries in enumerate(externals):
        for j, (m, b, w, x) in enumerate(entries):
            out["external_body"][k, j] = (m, b)
            out["external_wrench"][k, j], out["external_point"][k, j] = w, x
    return out


class _Loaded(dict):
    """Every array of an .npz read once (an NpzFile decompresses an array at each access), with its ``files``."""

    @property
    def files(self):
        return list(self)


def _frames_from(data) -> list:
    data = _Loaded((key, data[key]) for key in data.files)
    nmb = len([k for k in data.files if k.startswith("q") and k[1:].isdigit()])
    names = [str(s) for s in data["contact_names"]]
    frames = []
    for k in range(len(data["t"])):
        state = State.capture(data["t"][k], data["step"][k], [data[f"q{m}"][k] for m in range(nmb)],
                              [data[f"v{m}"][k] for m in range(nmb)], _warm_start(data, k))
        tau = tuple(data[f"tau{m}"][k].copy() for m in range(nmb) if f"tau{m}" in data.files)
        nc = int(data["contact_count"][k])
        contacts = ActiveContacts(*(_frozen(data[f"contact_{f}"][k, :nc]) for f in ("point", "normal", "force", "depth",
                                                                              "mu")),
                            body_a=tuple(names[i] for i in data["contact_body_a"][k, :nc]),
                            body_b=tuple(names[i] for i in data["contact_body_b"][k, :nc]))
        ne = int(data["external_count"][k])
        external = tuple((int(m), int(b), data["external_wrench"][k, j].copy(), data["external_point"][k, j].copy())
                         for j, (m, b) in enumerate(data["external_body"][k, :ne]))
        frames.append(RecordedFrame(state, contacts, external, tau, _measurements(data, k)))
    return frames


def _event_arrays(events) -> dict:
    """The run's wheel events (step, t, multibody, WheelEvent): "event_step", "event_t", "event_multibody" and
    "event_fields", each event's fields as JSON (floats written by repr: read back to the bit); none in a recording
    without events (files from before they were saved read as having none)."""
    fields = [json.dumps(dict(kind=e.kind, wheel=e.wheel, cause=e.cause, on_ground=list(e.on_ground),
                              predictions=[[list(w), np.asarray(lam).tolist(), bool(ok)]
                                           for w, lam, ok in e.predictions],
                              kinetic=list(e.kinetic), residual=e.residual)) for _, _, _, e in events]
    return {"event_step": np.array([s for s, _, _, _ in events], np.int64),
            "event_t": np.array([t for _, t, _, _ in events], float),
            "event_multibody": np.array([m for _, _, m, _ in events], dtype=str),
            "event_fields": np.array(fields, dtype=str)}


def _events_from(data) -> list:
    if "event_t" not in data.files:
        return []
    events = []
    for step, t, m, text in zip(data["event_step"], data["event_t"], data["event_multibody"], data["event_fields"]):
        f = json.loads(str(text))
        predictions = tuple((tuple(w), np.array(lam, float).reshape(-1, 3), ok) for w, lam, ok in f["predictions"])
        event = WheelEvent(float(t), f["kind"], f["wheel"], f["cause"], tuple(f["on_ground"]), predictions,
                           tuple(f["kinetic"]), f["residual"])
        events.append((int(step), float(t), str(m), event))
    return events


SENSOR_PREFIX = "sensor/"   # arrays "sensor/<name>/<signal>" (frames, size), NaN in frames without the reading


def _measurement_arrays(measurements) -> dict:
    """The sensors' readings of every frame, one array per sensor signal."""
    keys = {(name, signal): np.size(value) for m in measurements for name, reading in m.items()
            for signal, value in reading.items()}
    out = {}
    for (name, signal), size in keys.items():
        a = np.full((len(measurements), size), np.nan)
        for k, m in enumerate(measurements):
            if name in m and signal in m[name]:
                a[k] = np.ravel(m[name][signal])
        out[f"{SENSOR_PREFIX}{name}/{signal}"] = a
    return out


def _measurements(data, k) -> dict:
    out = {}
    for key in data.files:
        if key.startswith(SENSOR_PREFIX) and not np.isnan(data[key][k]).all():
            name, _, signal = key[len(SENSOR_PREFIX):].rpartition("/")
            out.setdefault(name, {})[signal] = _frozen(data[key][k])
    return out


def _frozen(a):
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


# ---- video ------------------------------------------------------------------------------------------------
def video_unavailable(path) -> str | None:
    """Why a video cannot be written to ``path``, in plain words, or None when it can.

    GIF goes through imageio's Pillow plugin; MP4 (and other movie formats) need ffmpeg, which imageio runs
    through the ``imageio-ffmpeg`` package (it ships the binary; ``IMAGEIO_FFMPEG_EXE`` may name another)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gif":
        return None
    if suffix not in (".mp4", ".avi", ".mkv", ".mov", ".webm"):
        return f"cannot write a video as '{suffix or path}': use .mp4 or .gif"
    try:
        import imageio_ffmpeg
        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        exe = None
    if exe is None or not (Path(exe).is_file() or shutil.which(exe)):
        return ("MP4 video export needs ffmpeg, which was not found: install it with "
                "'pip install imageio-ffmpeg', or export a .gif instead")
    return None


def write_video(path, images, fps: float):
    """Write RGB(A) uint8 images (h, w, 3|4) as a video; ``RuntimeError`` with the reason when unavailable."""
    reason = video_unavailable(path)
    if reason:
        raise RuntimeError(reason)
    import imageio.v2 as imageio
    kwargs = {"duration": 1000.0 / fps, "loop": 0} if Path(path).suffix.lower() == ".gif" else {"fps": fps}
    with imageio.get_writer(str(path), **kwargs) as writer:
        for image in images:
            writer.append_data(np.ascontiguousarray(image[..., :3]))


class Autosave:
    """Every state the recorder takes (t, step, then q, v and τ of each multibody), streamed to
    ``folder/NAME.part/`` in chunks at least every second (engine/logstore.py: a kill or a crash of the GUI
    leaves complete chunks, read back with ``engine.logstore.read_log(folder / NAME)``); ``close()`` writes
    ``NAME.npz`` and ``NAME.csv`` and keeps the ``KEEP`` newest sessions of the folder."""

    KEEP = 10

    def __init__(self, folder, name, sim):
        from engine.logstore import StreamedLog
        columns = ["t", "step"]
        for part in ("q", "v", "tau"):
            for run in sim.runs:
                n = run.model.nq if part == "q" else run.model.nv
                columns += [f"{run.instance.name}.{part}{i}" for i in range(n)]
        self.folder = Path(folder)
        self.stream = StreamedLog(self.folder / name, columns)
        self.row = np.zeros(len(columns))

    def append(self, sim):
        row, k = self.row, 2
        row[0], row[1] = sim.time, sim.step_count
        for x in [r.q for r in sim.runs] + [r.v for r in sim.runs] + [r.tau for r in sim.runs]:
            row[k:k + len(x)] = x
            k += len(x)
        self.stream.append(row)

    def close(self):
        self.stream.close()
        sessions = sorted(self.folder.glob("*.npz"), key=lambda p: p.stat().st_mtime)
        for old in sessions[:-self.KEEP]:
            old.unlink(missing_ok=True)
            old.with_suffix(".csv").unlink(missing_ok=True)
