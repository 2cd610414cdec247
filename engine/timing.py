"""Per-stage wall-clock timing of the simulation loop (the thesis's Fig 3.8 breakdown)."""
from __future__ import annotations

import time

STAGES = ("control", "dynamics", "collision", "groups", "delassus", "solver", "integration", "sense")


class StageTimer:
    """Accumulates the time of each stage: ``last`` (the last step) and ``total`` (since reset)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.last = dict.fromkeys(STAGES, 0.0)
        self.total = dict.fromkeys(STAGES, 0.0)
        self.steps = 0
        self._stages = {name: _Stage(self, name) for name in STAGES}

    def stage(self, name):
        """``with timer.stage(name):`` adds the block's wall time to ``name`` (one context per stage, reused:
        stages do not nest)."""
        return self._stages[name]

    def begin_step(self):
        for k in self.last:
            self.last[k] = 0.0

    def end_step(self):
        self.steps += 1

    def summary(self) -> dict:
        """Mean seconds per step for each stage, and their sum as ``total``."""
        n = max(self.steps, 1)
        mean = {k: v / n for k, v in self.total.items()}
        mean["total"] = sum(mean.values())
        return mean


class _Stage:
    """The context of ``StageTimer.stage``: a plain class, a third of the cost of a generator-based one (the
    loop enters seven stages a step)."""

    __slots__ = ("timer", "name", "start")

    def __init__(self, timer, name):
        self.timer, self.name = timer, name

    def __enter__(self):
        self.start = time.perf_counter()

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.start
        self.timer.last[self.name] += elapsed
        self.timer.total[self.name] += elapsed
        return False
