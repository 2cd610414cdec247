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


class UniverseError(ArticulaError):
    """A universe (scene) file is malformed, or refers to something that does not exist."""


class SoleError(ArticulaError):
    """A deformable sole (engine.deformable) has a bad mesh, material or boundary condition."""


class SimulationError(ArticulaError):
    """The simulation hit a non-finite value or another fault; the last good state is kept."""


def did_you_mean(word: str, choices, cutoff: float = 0.6) -> str:
    """A ' (did you mean X?)' hint for a misspelt tag or attribute, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean '{close[0]}'?)" if close else ""
