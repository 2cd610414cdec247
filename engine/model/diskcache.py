"""The per-user on-disk cache: ``$ARTICULA_CACHE_DIR``, else ``$XDG_CACHE_HOME/articula`` (``~/.cache/articula``).

What is slow to compute from a file and the same every time (a mesh's convex decomposition; later an FEM sole's
condensed stiffness) is kept there as named arrays, one ``.npz`` per entry, under a key that digests the file's
content (not its name or date: a copied or re-cloned file hits, an edited one misses), the parameters and the
entry's ``FORMAT``. An entry is written to a temporary name and renamed, so a reader never sees half of one; an
unreadable or stale entry (truncated, another format) is discarded, recomputed and rewritten, with one log line.
A cache folder that cannot be written falls back to memory for the process, with one warning.
``articula cache info`` shows the folder, ``articula cache clear`` empties it.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

FORMAT = "articula-cache-1"
log = logging.getLogger("engine.cache")
_memory: dict = {}            # (namespace, key) -> arrays, when the folder cannot be written
_read_only_warned = set()


def directory() -> Path:
    """The cache folder (not created here)."""
    if os.environ.get("ARTICULA_CACHE_DIR"):
        return Path(os.environ["ARTICULA_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "articula"


def clear() -> tuple:
    """Remove every cached file; returns (files, bytes) removed."""
    root = directory()
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    size = sum(p.stat().st_size for p in files)
    shutil.rmtree(root, ignore_errors=True)
    _memory.clear()
    return len(files), size


def file_digest(path) -> str:
    """sha256 of a file's content (memoised per path, size and modification time)."""
    st = Path(path).stat()
    return _digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=None)
def _digest(path, size, mtime):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def key(*parts) -> str:
    """A cache key from strings, numbers and tuples (with ``FORMAT``)."""
    return hashlib.sha256(repr((FORMAT,) + parts).encode()).hexdigest()[:40]


def _path(namespace, k) -> Path:
    return directory() / namespace / f"{k}.npz"


def load(namespace: str, k: str, required=()) -> dict | None:
    """The arrays stored under (``namespace``, ``k``), or None (a bad entry, or one lacking an array named in
    ``required``, is removed, with a log line)."""
    if (namespace, k) in _memory:
        return _memory[(namespace, k)]
    path = _path(namespace, k)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {name: f[name] for name in f.files}
        if str(arrays.pop("__format__", "")) != FORMAT or not set(required) <= arrays.keys():
            raise ValueError("written by another version")
        return arrays
    except Exception as exc:       # truncated zip, bad header, another format: recompute
        log.warning("cache entry %s is unreadable (%s: %s); discarded and rebuilt", path, type(exc).__name__, exc)
        path.unlink(missing_ok=True)
        return None


def save(namespace: str, k: str, arrays: dict):
    """Store ``arrays`` (name -> ndarray) under (``namespace``, ``k``), atomically; in memory if the folder
    cannot be written."""
    path = _path(namespace, k)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, __format__=np.array(FORMAT), **arrays)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if path.parent not in _read_only_warned:
            _read_only_warned.add(path.parent)
            warnings.warn(f"cache folder {path.parent} cannot be written ({exc.strerror}); results are kept in "
                          f"memory for this process only (set ARTICULA_CACHE_DIR to a writable folder)")
        _memory[(namespace, k)] = dict(arrays)
