"""Errors raised on bad input. Each names the file, the line and the offending value."""
from __future__ import annotations

import difflib


class ArticulaError(Exception):
    """Base class: ``file``, ``line`` and ``value`` locate the fault (any may be None)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, value=None):
        self.message, self.file, self.line, self.value = message, file, line, value
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        shown = f" (got {value!r})" if value is not None else ""
        super().__init__(f"{where}{message}{shown}")


class ModelError(ArticulaError):
    """A robot description (URDF or robot XML) is malformed or physically impossible."""


class ModelWarning(UserWarning):
    """A robot description loads, but something in it is suspicious (the message names file, line and value)."""


class UniverseError(ArticulaError):
    """A universe (scene) file is malformed, or refers to something that does not exist."""


class SoleError(ArticulaError):
    """A deformable sole (engine.deformable) has a bad mesh, material or boundary condition."""


class SimulationError(ArticulaError):
    """The simulation hit a non-finite value or another fault; the last good state is kept."""


def _where(stage, multibody, step, time) -> str:
    """'stage 'control', multibody 'arm', step 100 (t = 0.099000 s)': the parts that are known."""
    parts = [f"stage '{stage}'"] if stage else []
    if multibody is not None:
        parts.append(f"multibody '{multibody}'")
    if step is not None:
        parts.append(f"step {step}" + (f" (t = {time:.6f} s)" if time is not None else ""))
    return ", ".join(parts)


class PluginError(SimulationError):
    """A plugin failed at its boundary: it raised, returned a non-finite value, the wrong shape, a value beyond
    its bounds, or overran its time budget. ``plugin`` (its registered name), ``kind`` (controller, sensor,
    solver, device), ``stage``, ``multibody``, ``step`` (the step being computed: the last good state is the one
    after step − 1) and ``time`` (s, at the start of that step) locate it; ``value`` or ``shape`` is the offending
    output. The simulation keeps its last good state and is marked faulted (``Simulation.faulted``)."""

    def __init__(self, detail: str, plugin: str, kind: str, stage: str, multibody: str | None = None,
                 step: int | None = None, time: float | None = None, value=None, shape=None):
        self.detail, self.plugin, self.kind, self.stage = detail, plugin, kind, stage
        self.multibody, self.step, self.time, self.shape = multibody, step, time, shape
        shown = f" (shape {shape})" if shape is not None else ""
        super().__init__(f"{kind} plugin '{plugin}' failed in {_where(stage, multibody, step, time)}: "
                         f"{detail}{shown}", value=value)

    def at(self, multibody=None, step=None, time=None) -> "PluginError":
        """The same error with the context only the simulation knows filled in (fields already set are kept)."""
        return PluginError(self.detail, self.plugin, self.kind, self.stage,
                           self.multibody if self.multibody is not None else multibody,
                           self.step if self.step is not None else step,
                           self.time if self.time is not None else time, self.value, self.shape)


class DivergenceError(SimulationError):
    """A stage produced a non-finite value or one beyond its physical bound (``quantity`` at ``index`` is
    ``value``, the bound ``bound``): the step stops before the state becomes garbage and the last good state (the
    one after ``step`` − 1, which passed these checks) is kept."""

    def __init__(self, quantity: str, stage: str, multibody: str, step: int, time: float, index: int, value,
                 bound=None):
        self.quantity, self.stage, self.multibody, self.step, self.time = quantity, stage, multibody, step, time
        self.index, self.bound = index, bound
        what = "non-finite" if bound is None else f"beyond its bound {bound:.6g}"
        at = f" at index {index}" if index is not None else ""
        super().__init__(f"{quantity} {what} in {_where(stage, multibody, step, time)}{at}; the "
                         f"last good state (step {step - 1}) is kept", value=value)


def did_you_mean(word: str, choices, cutoff: float = 0.6) -> str:
    """A ' (did you mean X?)' hint for a misspelt tag or attribute, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean '{close[0]}'?)" if close else ""
