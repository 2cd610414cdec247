"""Per-stage wall-clock timing of the simulation loop (the thesis's Fig 3.8 breakdown)."""
from __future__ import annotations

import time
from contextlib import contextmanager

STAGES = ("control", "dynamics", "collision", "groups", "delassus", "solver", "integration", "sense")


class StageTimer:
    """Accumulates the time of each stage: ``last`` (the last step) and ``total`` (since reset)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.last = dict.fromkeys(STAGES, 0.0)
        self.total = dict.fromkeys(STAGES, 0.0)
        self.steps = 0

    @contextmanager
    def stage(self, name):
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self.last[name] += elapsed
            self.total[name] += elapsed

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
