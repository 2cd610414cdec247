"""Per-stage wall-clock timing of the simulation loop (the thesis's Fig 3.8 breakdown)."""
from __future__ import annotations

from time import perf_counter

STAGES = ("control", "dynamics", "collision", "groups", "delassus", "solver", "integration", "sense")
ZERO = dict.fromkeys(STAGES, 0.0)


class StageTimer:
    """Accumulates the time of each stage: ``last`` (the last step) and ``total`` (since reset); the same two
    dicts for the timer's life, so that its stage contexts hold them."""

    def __init__(self):
        self.last, self.total = dict(ZERO), dict(ZERO)
        self._stages = {name: _Stage(self, name) for name in STAGES}
        self.steps = 0

    def reset(self):
        self.last.update(ZERO)
        self.total.update(ZERO)
        self.steps = 0

    def stage(self, name):
        """``with timer.stage(name):`` adds the block's wall time to ``name`` (one context per stage, reused:
        stages do not nest)."""
        return self._stages[name]

    def begin_step(self):
        self.last.update(ZERO)

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

    __slots__ = ("last", "total", "name", "start")

    def __init__(self, timer, name):
        self.last, self.total, self.name = timer.last, timer.total, name

    def __enter__(self):
        self.start = perf_counter()

    def __exit__(self, *exc):
        elapsed = perf_counter() - self.start
        self.last[self.name] += elapsed
        self.total[self.name] += elapsed
        return False
