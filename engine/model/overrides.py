"""Universe values addressed by a path, changed before the universe is read (``load_universe(..., overrides)``):
the parameters of a sweep (``articula sweep --param PATH=...``, engine/sweep.py).

A path is dot-separated steps. The first step is a tag, matched anywhere in the file; each following step a
child tag of the elements matched so far; a step ``Tag[key]`` keeps the elements whose ``name``, ``link`` or
``target`` attribute is ``key``. The last step is an attribute of the matched elements — or, when they have a
child of that tag, the child's text. Every match is changed, so ``Sole.Material.E`` is Young's modulus of every
sole's material and ``Sole[leg_left_6_link].Material.E`` that of the left foot's only::

    Sole.Material.E        Sole.Material.nu        Material[floor].friction        Settings.TimeStep
    Flexibility.kz         Controller[stance-pd].kp        Body[box].Mass        Solver.tolerance

The changed elements keep their line numbers, and the universe reader checks the new values as it checks the
file's own: an error names the file, the line and the value.
"""
from __future__ import annotations

import re

from engine.errors import UniverseError, did_you_mean

STEP = re.compile(r"^([A-Za-z_][\w-]*)(?:\[([^\]]+)\])?$")
KEYS = ("name", "link", "target", "plugin")


def apply_overrides(root, overrides: dict, source: str):
    """Set each ``path: value`` of ``overrides`` in the parsed universe ``root`` (an lxml element)."""
    for path, value in overrides.items():
        elements, last = _elements(root, path, source)
        text = _text(value)
        for el in elements:
            child = el.find(last)
            if child is not None:
                child.text = text
            else:
                el.set(last, text)


def _elements(root, path, source) -> tuple[list, str]:
    """The elements a path's steps but the last match, and its last step."""
    steps = str(path).split(".")
    if len(steps) < 2 or not all(steps):
        raise UniverseError(f"a parameter path is Tag[.Child…].attribute, e.g. Sole.Material.E (got {path!r})",
                            source)
    elements = None
    for k, step in enumerate(steps[:-1]):
        match = STEP.match(step)
        if not match:
            raise UniverseError(f"bad step {step!r} in the parameter path {path!r}: Tag or Tag[name]", source)
        tag, key = match.groups()
        found = list(root.iter(tag)) if elements is None else [c for el in elements for c in el.findall(tag)]
        if key is not None:
            found = [el for el in found if key in (el.get(a) for a in KEYS)]
        if not found:
            where = "the file" if elements is None else f"<{steps[k - 1]}>"
            choices = {el.tag for el in root.iter() if isinstance(el.tag, str)} if elements is None else \
                {c.tag for el in elements for c in el if isinstance(c.tag, str)}
            keyed = f" with name, link or target {key!r}" if key is not None else ""
            raise UniverseError(f"the parameter path {path!r} matches no <{tag}>{keyed} in {where}"
                                f"{did_you_mean(tag, choices)}", source)
        elements = found
    return elements, steps[-1]


def _text(value) -> str:
    return repr(float(value)) if isinstance(value, (int, float)) else str(value)
