"""The physics thread: owns the Simulation, steps it at its fixed time step, publishes immutable snapshots.

Pacing only decides *when* the next fixed step runs (real time, ×N, or as fast as possible), never how long
it is, so N steps give the same state whatever the speed or the drawing rate. The view reads the newest
``Frame`` from a lock-protected latest-value slot (``LatestSlot``) at its own rate and never waits for the
physics; commands from the GUI (play, pause, step, reset, seek, ...) are queued and run between two steps.
A ``SimulationError`` (or any other exception) pauses the run on the last good state, is published in
``errors`` and keeps the recording (steps 0 … k − 1 when step k faults). A fault (a ``PluginError`` naming the
plugin, a ``DivergenceError`` naming the stage) leaves the Simulation ``faulted``: ``reset()``, ``resume()``
(continue from the last good state) or ``disable_plugin(name)`` (then continue) go on.
``set_ghost(name)`` runs a second Simulation on another engine in lockstep (``app.ghost``); each Frame carries
its snapshot; a ghost that faults is dropped (a ``GhostDropped`` in ``errors``) and the main run goes on.
"""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, replace

from app.ghost import Ghost, GhostDropped

PUBLISH_PERIOD = 1.0 / 120.0   # s of wall clock between two published frames while playing
MAX_LAG = 0.1                  # s: further behind real time, the pacing gives up catching up (RTF < 1)
MAX_LEAD = 0.004               # s: the pacing sleeps only once this far ahead of the wall clock (every sleep
                               # costs up to a thread switch interval to take the GIL back from the drawing)


@dataclass(frozen=True)
class Frame:
    """What the view reads: a Snapshot, whether the run is playing, the measured real-time factor, and the ghost
    engine's Snapshot and name (None without a ghost)."""

    snapshot: object
    playing: bool
    real_time_factor: float
    ghost: object = None
    ghost_engine: str | None = None


class LatestSlot:
    """A single value under a lock: ``put`` replaces it, ``get`` returns (version, value) without waiting
    for anything but the few instructions of the other side's ``put``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._value, self._version = None, 0

    def put(self, value):
        with self._lock:
            self._value, self._version = value, self._version + 1

    def get(self):
        with self._lock:
            return self._version, self._value


class PhysicsThread(threading.Thread):
    """Runs ``simulation`` in its own thread. ``speed`` is a real-time multiple, or None for as fast as
    possible. ``recorder`` (optional) receives every step (see ``app.recording.Recorder``)."""

    def __init__(self, simulation, recorder=None, speed: float | None = 1.0):
        super().__init__(name="articula-physics", daemon=True)
        self._sim = simulation
        self.recorder = recorder
        self.latest = LatestSlot()
        self.errors: queue.Queue = queue.Queue()
        self.speed = speed
        self.playing = False
        self.stop_at_step = None           # pause when the step count reaches it
        self._commands: queue.Queue = queue.Queue()
        self._stopping = threading.Event()
        self._anchor = (0.0, 0.0)          # (wall clock, simulated time) the pacing counts from
        self._window: deque = deque(maxlen=64)  # (wall clock, simulated time) samples for the RTF
        self._rtf = 0.0
        self._shown = (None, None, None, None)   # contacts, external inputs, τ and sensor readings shown instead
                                                   # of the simulation's
        self.inputs = ()                   # f(simulation) run before each step: device ports (replace, never mutate)
        self.ghost = None                  # app.ghost.Ghost stepped after each step, or None
        if recorder is not None and not len(recorder):
            recorder.append(simulation)
        self._publish()

    # ---- commands (any thread) ------------------------------------------------------------------------
    def submit(self, fn) -> Future:
        """Run ``fn(simulation)`` in the physics thread between two steps; its result comes in the Future."""
        future = Future()
        self._commands.put((fn, future))
        return future

    def play(self, stop_at_step: int | None = None):
        return self.submit(lambda sim: self._set_playing(True, stop_at_step))

    def pause(self):
        return self.submit(lambda sim: self._set_playing(False))

    def step(self, n: int = 1):
        """Pause and advance exactly ``n`` fixed steps."""
        def run(sim):
            self._set_playing(False)
            for _ in range(int(n)):
                self._advance_one()
        return self.submit(run)

    def reset(self):
        def run(sim):
            self._set_playing(False)
            sim.reset()
            if self.ghost is not None:
                self.ghost.sim.reset()
            self._shown = (None, None, None, None)
            if self.recorder is not None:
                self.recorder.clear()
                self.recorder.append(sim)
        return self.submit(run)

    def resume(self):
        """Continue after a fault: clear it and play on from the last good state."""
        def run(sim):
            sim.clear_fault()
            self._set_playing(True)
        return self.submit(run)

    def disable_plugin(self, name: str):
        """Stop calling plugin ``name`` (its fault is cleared) and play on."""
        def run(sim):
            sim.disable_plugin(name)
            self._set_playing(True)
        return self.submit(run)

    def set_speed(self, speed: float | None):
        def run(sim):
            self.speed = speed
            self._reanchor()
        return self.submit(run)

    def set_state(self, state, contacts=None, external=None, tau=None, measurements=None):
        """Pause and show ``state`` (a joint slider, a scrub of the timeline): the next play continues from it.
        ``contacts``/``external``/``tau``/``measurements`` replace the snapshot's (a recorded frame carries its
        own)."""
        def run(sim):
            self._set_playing(False)
            sim.set_state(state)
            if self.ghost is not None:
                self.ghost.follow(sim.state)
            self._shown = (contacts, external, tau, measurements)
        return self.submit(run)

    def set_ghost(self, engine_name: str | None):
        """Run a ghost on ``engine_name`` from the current state (None: no ghost). One that cannot be built is
        reported as a ``GhostDropped`` in ``errors``."""
        def run(sim):
            self.ghost = None
            if engine_name is not None:
                try:
                    self.ghost = Ghost(sim.universe, engine_name, sim.state)
                except Exception as exc:  # a universe the engine refuses, a missing engine: the main run goes on
                    self._fail(GhostDropped(engine_name, exc))
        return self.submit(run)

    def set_recorder(self, recorder):
        def run(sim):
            self.recorder = recorder
        return self.submit(run)

    def stop(self, timeout: float = 5.0):
        """End the thread (after the step in progress) and wait for it."""
        self._stopping.set()
        self._commands.put((None, None))
        if self.is_alive():
            self.join(timeout)

    # ---- the loop (physics thread) ---------------------------------------------------------------------
    def run(self):
        while not self._stopping.is_set():
            self._run_commands(block=not self.playing)
            if self.playing and not self._stopping.is_set():
                self._play_for(PUBLISH_PERIOD)

    def _run_commands(self, block: bool):
        try:
            fn, future = self._commands.get(timeout=0.05) if block else self._commands.get_nowait()
        except queue.Empty:
            return
        while fn is not None:
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(self._sim)
                except Exception as exc:  # reported to the caller and to the log; the thread lives on
                    self._publish()
                    future.set_exception(exc)
                    self._fail(exc)
                else:
                    self._publish()          # before the result: a caller that waits then sees the new frame
                    future.set_result(result)
            try:
                fn, future = self._commands.get_nowait()
            except queue.Empty:
                return

    def _play_for(self, duration: float):
        """Step for about ``duration`` seconds of wall clock, keeping to the speed, then publish."""
        start = time.perf_counter()
        sim = self._sim
        while self.playing and (now := time.perf_counter()) - start < duration:
            if self.speed is not None:
                due = self._anchor[0] + (sim.time - self._anchor[1]) / self.speed   # wall time of this state
                if due > now + MAX_LEAD:
                    time.sleep(min(due - now, start + duration - now))
                    continue
                if due < now - MAX_LAG:
                    self._reanchor()
            try:
                self._advance_one()
            except Exception as exc:  # a fault and any bug: pause on the last good state, show, keep the recording
                self._set_playing(False)
                self._fail(exc)
        self._window.append((time.perf_counter(), sim.time))
        self._publish()

    def _advance_one(self):
        sim = self._sim
        for write in self.inputs:          # devices write their inputs first (seed 000 Fig 2.3)
            write(sim)
        sim.step(1)
        if self.ghost is not None:
            self._step_ghost()
        self._shown = (None, None, None, None)
        if self.recorder is not None:
            self.recorder.append(sim)
        if self.stop_at_step is not None and sim.step_count >= self.stop_at_step:
            self._set_playing(False)

    def _step_ghost(self):
        try:
            self.ghost.sim.step(1)
        except Exception as exc:  # a fault (SimulationError) or a bug of the other engine: drop the ghost only
            self._fail(GhostDropped(self.ghost.name, exc))
            self.ghost = None

    def _set_playing(self, on: bool, stop_at_step: int | None = None):
        if on and self.recorder is not None:
            self.recorder.truncate_after(self._sim.step_count)   # playing from a scrubbed state forks the run
        self.playing, self.stop_at_step = on, (stop_at_step if on else None)
        self._window.clear()
        self._reanchor()

    def _reanchor(self):
        self._anchor = (time.perf_counter(), self._sim.time)

    def _fail(self, exc):
        self.errors.put(exc)

    def _publish(self):
        snapshot = self._sim.snapshot()
        contacts, external, tau, measurements = self._shown
        if contacts is not None or external is not None or tau or measurements is not None:
            snapshot = replace(snapshot, contacts=snapshot.contacts if contacts is None else contacts,
                               external=snapshot.external if external is None else external,
                               tau=tau or snapshot.tau,
                               measurements=snapshot.measurements if measurements is None else measurements)
        if len(self._window) >= 2:
            (w0, t0), (w1, t1) = self._window[0], self._window[-1]
            self._rtf = (t1 - t0) / (w1 - w0) if w1 > w0 else self._rtf
        ghost = self.ghost
        self.latest.put(Frame(snapshot, self.playing, self._rtf if self.playing else 0.0,
                              None if ghost is None else ghost.sim.snapshot(), None if ghost is None else ghost.name))
