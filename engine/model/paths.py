"""Resolving file references (meshes, robot files): ``package://pkg/...``, ``file://...``, absolute and relative paths.

Search order for ``package://pkg/rest``: the caller's ``package_dirs`` and ``$ARTICULA_PACKAGE_PATH`` /
``$ROS_PACKAGE_PATH`` (each a directory that contains ``pkg/`` or is ``pkg`` itself), the directories above
the robot file (a ``pkg`` directory among its ancestors or their children), then the data packages installed
with Python (``example-robot-data``, ``pybullet_data``).
"""
from __future__ import annotations

import os
import site
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _installed_roots() -> tuple:
    """Share directories of data packages installed with Python: example-robot-data ships its robots under
    ``site-packages/cmeel.prefix/share/example-robot-data``; pybullet_data is a plain package."""
    roots = [Path(p) / "cmeel.prefix" / "share" for p in site.getsitepackages() + [site.getusersitepackages()]]
    try:
        import pybullet_data
        roots.append(Path(pybullet_data.getDataPath()))
    except ImportError:  # optional outside tests; its absence only narrows the search
        pass
    return tuple(r for r in roots if r.is_dir())


def example_robot_data_dir() -> Path | None:
    """The ``robots`` directory of the installed example-robot-data package, or None."""
    for root in _installed_roots():
        if (root / "example-robot-data" / "robots").is_dir():
            return root / "example-robot-data" / "robots"
    return None


def _candidate_roots(robot_file: Path, package_dirs) -> list:
    roots = [Path(d) for d in package_dirs or ()]
    for var in ("ARTICULA_PACKAGE_PATH", "ROS_PACKAGE_PATH"):
        roots += [Path(d) for d in os.environ.get(var, "").split(os.pathsep) if d]
    roots += list(robot_file.resolve().parents)
    roots += list(_installed_roots())
    return roots


def resolve_path(filename: str, robot_file, package_dirs=()) -> Path | None:
    """The existing file a mesh or robot reference (relative to ``robot_file``) points to, or None."""
    robot_file = Path(robot_file)
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, relative = rest.partition("/")
        for root in _candidate_roots(robot_file, package_dirs):
            for candidate in (root / package / relative, root / relative if root.name == package else None):
                if candidate is not None and candidate.is_file():
                    return candidate
        return None
    if filename.startswith("file://"):
        filename = filename[len("file://"):]
    path = Path(filename)
    if not path.is_absolute():
        path = robot_file.parent / path
    return path if path.is_file() else None
