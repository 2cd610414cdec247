"""numba's on-disk cache for the engine, invalidated when a module a kernel imports changes.

numba stamps a cached function with the content of its own file only, yet a kernel inlines helpers and
constants from other files (``algebra``, ``kinematics``, ``engine.dynamics.pack``; the contact kernels inline
the dynamics ones): editing a helper would leave stale machine code in its callers' caches.  This locator,
numba's in-tree ``__pycache__`` one for the files of the ``engine`` package, adds to the stamp a digest of
every engine module that the function's module imports, transitively (read from the import statements).

numba unpickles a cache index before it compares the stamp, so an index whose signatures name a type of a module
since removed or renamed (a StructRef's module, after switching commits) raised ModuleNotFoundError at every
import of the engine; such an index is read here as empty: a miss, rewritten by the next save.
"""
from __future__ import annotations

import ast
import hashlib
import pickle
from functools import lru_cache
from pathlib import Path

from numba.core.caching import CacheImpl, IndexDataCacheFile, InTreeCacheLocator

ROOT = Path(__file__).resolve().parents[3]   # the directory holding the engine package
ENGINE = ROOT / "engine"


def _files(module):
    """The source file of an engine module or package (empty if the name is an attribute)."""
    base = ROOT.joinpath(*module.split("."))
    return [p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()]


@lru_cache(maxsize=None)
def _imports(path):
    """Engine files imported by the file at ``path`` (one level)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("engine"):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("engine")]
        else:
            continue
        for name in names:
            found.update(_files(name))
    return frozenset(found)


@lru_cache(maxsize=None)
def dependency_digest(path):
    """sha256 over the engine files ``path`` imports, transitively, itself included."""
    seen, todo = set(), [path]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(_imports(p))
    h = hashlib.sha256()
    for p in sorted(seen):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


class EngineCacheLocator(InTreeCacheLocator):
    @classmethod
    def from_function(cls, py_func, py_file):
        if not Path(py_file).resolve().is_relative_to(ENGINE):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return super().get_source_stamp(), dependency_digest(Path(self._py_file).resolve())


if EngineCacheLocator not in CacheImpl._locator_classes:  # after NUMBA_CACHE_DIR's locator, before the rest
    CacheImpl._locator_classes.insert(1, EngineCacheLocator)


def _load_index_or_miss(self, _load_index=IndexDataCacheFile._load_index):
    """numba's ``IndexDataCacheFile._load_index``, with an index it cannot unpickle read as empty (module docstring)."""
    try:
        return _load_index(self)
    except (ImportError, AttributeError, EOFError, pickle.UnpicklingError):
        return {}


if IndexDataCacheFile._load_index.__name__ != _load_index_or_miss.__name__:
    IndexDataCacheFile._load_index = _load_index_or_miss
