"""The haptic thread: calls a tick at a fixed rate (1 kHz by default) with its own stop flag and period statistics.

Pacing: absolute deadlines ``t_k = t_0 + k T`` and ``time.sleep`` until the next one (CPython 3.11 sleeps with
``clock_nanosleep``, ~50-100 us late), so lateness never accumulates; when a tick is more than one period late the
schedule restarts from now instead of bursting to catch up.

The GIL and the CPU.  A tick needs the GIL.  When the physics thread holds it in Python code, a waking haptic
thread waits until the holder is asked to drop it, which CPython does after the *switch interval* (5 ms by
default); compiled kernels that release the GIL (numba ``nogil=True``) do not delay it, kernels that keep it do,
whatever the interval.  And a busy machine delays the wake-up itself.  ``bench/haptics.py`` measured, on 2 cores
shared with other jobs (load average ~4), a real attach-mode tick (~0.2 ms), medians of 3 runs of 2 s:

    physics load      switch   real-time   mean rate   p99 period
    none              5 ms     no           814 Hz      6.3 ms
    none              5 ms     yes         1000 Hz      1.0 ms
    numba nogil       0.2 ms   yes          996 Hz      1.0 ms
    numba, GIL held   0.2 ms   yes          522 Hz      7.5 ms
    pure Python       5 ms     no           226 Hz     17.2 ms
    pure Python       5 ms     yes          285 Hz     15.0 ms
    pure Python       0.2 ms   yes          969 Hz      2.6 ms
    Python + nogil    0.2 ms   yes          990 Hz      1.2 ms   (a physics step's shape)
    pure Python, haptic loop in its own process, real-time: 1000 Hz, 1.0 ms

The choice, by these numbers: the haptic thread stays in the process (it shares snapshots without copies and
owns the device), asks for SCHED_FIFO priority ``PRIORITY`` (the largest single gain on a loaded machine) and
lowers the process switch interval to ``SWITCH_INTERVAL`` while it runs (restored on stop; the Python physics
loses a little throughput to more frequent GIL hand-overs).  Physics kernels must release the GIL: no setting
rescues a kernel that keeps it.  The OpenHaptics servo callback (``phantom.py``) takes the GIL at 1 kHz too;
with the same settings it held 1000 Hz, p99 1.2 ms (pure Python load) and 1.7 ms (Python + nogil).

The whole application (``bench/haptics.py --gui``: the window rendering under Xvfb, Talos standing, the mouse
holding the box) is another matter on the same loaded machine (load average 3-4, the physics at 0.1-0.7 of
real time): the thread measured 860-970 Hz, p99 2.5-5.3 ms, while the same tick in a separate process beside
it held 1000 Hz, p99 1.01 ms.  The GUI and the physics driver run enough Python that a GIL holder preempted by
another process delays the haptic thread; there a separate haptic process is the measured remedy, and the GUI's
default (``process.py``: this thread, in a child process, exchanging through shared memory).  The thread stays
for headless and test use and as the GUI's ``backend="thread"``.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

SWITCH_INTERVAL = 2e-4
PRIORITY = 10
HISTOGRAM_EDGES_MS = (0.0, 0.5, 0.9, 1.1, 1.5, 2.0, 3.0, 5.0, 10.0, np.inf)


@dataclass(frozen=True)
class RateSummary:
    """Statistics of the measured periods: ``count`` periods, ``mean_rate`` (Hz), percentiles and ``max`` (s),
    ``histogram`` counts between ``edges`` (ms)."""
    count: int
    mean_rate: float
    p50: float
    p99: float
    max: float
    histogram: tuple
    edges: tuple = HISTOGRAM_EDGES_MS

    def table(self) -> str:
        rows = [f"{self.count} periods, mean rate {self.mean_rate:.1f} Hz, p50 {1e3 * self.p50:.3f} ms, "
                f"p99 {1e3 * self.p99:.3f} ms, max {1e3 * self.max:.3f} ms"]
        for lo, hi, n in zip(self.edges[:-1], self.edges[1:], self.histogram):
            rows.append(f"  [{lo:5.1f}, {hi:5.1f}) ms {n:7d} {'#' * int(60 * n / max(1, self.count))}")
        return "\n".join(rows)


class PeriodStats:
    """The last ``capacity`` tick periods (ns), preallocated."""

    def __init__(self, capacity: int = 1 << 16):
        self._periods = np.zeros(capacity, dtype=np.int64)
        self._n = 0

    def record(self, period_ns: int) -> None:
        self._periods[self._n % len(self._periods)] = period_ns
        self._n += 1

    def summary(self) -> RateSummary:
        p = 1e-9 * self._periods[:min(self._n, len(self._periods))].astype(float)
        if len(p) == 0:
            return RateSummary(0, 0.0, 0.0, 0.0, 0.0, (0,) * (len(HISTOGRAM_EDGES_MS) - 1))
        hist, _ = np.histogram(1e3 * p, bins=np.array(HISTOGRAM_EDGES_MS))
        return RateSummary(len(p), 1.0 / p.mean(), float(np.percentile(p, 50)), float(np.percentile(p, 99)),
                           float(p.max()), tuple(int(h) for h in hist))


class HapticThread:
    """Runs ``tick()`` every ``1 / rate`` s on a daemon thread until ``stop()``.

    An exception from ``tick`` stops the loop (never the process): it is kept in ``error`` and passed to
    ``on_error``.  ``switch_interval`` (s, None to leave it) is applied while the thread runs.  ``priority``
    (1-99, None for none) asks for SCHED_FIFO real-time scheduling of this thread, as OpenHaptics does for its
    servo thread; without the permission (CAP_SYS_NICE or an rtprio limit) the thread runs normally and
    ``realtime_error`` says why.
    """

    def __init__(self, tick, rate: float = 1000.0, *, switch_interval: float | None = SWITCH_INTERVAL,
                 priority: int | None = PRIORITY, name: str = "haptic", on_error=None):
        if not rate > 0:
            raise ValueError(f"haptic rate must be > 0 Hz (got {rate!r})")
        self.tick, self.rate, self.name, self.on_error = tick, float(rate), name, on_error
        self.switch_interval, self.priority = switch_interval, priority
        self.realtime, self.realtime_error = False, None
        self.stats = PeriodStats()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous_interval: float | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self.error, self.stats = None, PeriodStats()
        if self.switch_interval is not None:
            self._previous_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self.switch_interval, self._previous_interval))
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._previous_interval is not None:
            sys.setswitchinterval(self._previous_interval)
            self._previous_interval = None

    def _run(self) -> None:
        if self.priority is not None:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))
                self.realtime = True
            except (AttributeError, OSError) as exc:      # no permission, or not Linux: run at normal priority
                self.realtime_error = exc
        period_ns = int(round(1e9 / self.rate))
        deadline, last = time.perf_counter_ns(), None
        while not self._stop.is_set():
            now = time.perf_counter_ns()
            if last is not None:
                self.stats.record(now - last)
            last = now
            try:
                self.tick()
            except Exception as exc:  # a faulty tick stops this loop, not the application
                self.error = exc
                if self.on_error is not None:
                    self.on_error(exc)
                return
            deadline += period_ns
            delay = deadline - time.perf_counter_ns()
            if delay > 0:
                time.sleep(1e-9 * delay)
            elif delay < -period_ns:
                deadline = time.perf_counter_ns()
