"""A small on-disk store of named numpy arrays, keyed by a content hash (the sole's precomputed matrices).

    key(*parts)        sha256 of FORMAT and the parts (arrays: dtype, shape and bytes; numbers, strings, tuples)
    get(key)           {name: array} or None (missing, or unreadable: then recomputed)
    put(key, arrays)   written to a temporary file, then os.replace'd: a reader never sees half a file
    directory()        $ARTICULA_CACHE_DIR/fem, else ~/.cache/articula/fem
    clear()            removes every entry

An entry is one uncompressed ``.npz`` named by its key. Nothing is ever stale: a change to the mesh, the
materials, the node selections or the format (``FORMAT``) gives another key. A failed write only warns.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np

FORMAT = 1   # bump when what is stored, or how it is computed, changes


class CacheWarning(UserWarning):
    """The cache could not be written (the result is still returned, only recomputed next time)."""


def directory() -> Path:
    """Where entries live: ``$ARTICULA_CACHE_DIR/fem`` or ``~/.cache/articula/fem``."""
    root = os.environ.get("ARTICULA_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "articula") / "fem"


def key(*parts) -> str:
    """The hex sha256 of ``FORMAT`` and ``parts``, each hashed with its type so that no two differ silently."""
    digest = hashlib.sha256(f"articula-fem-{FORMAT}".encode())
    for part in parts:
        _feed(digest, part)
    return digest.hexdigest()


def _feed(digest, part):
    if isinstance(part, np.ndarray):
        a = np.ascontiguousarray(part)
        digest.update(f"a{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    elif isinstance(part, (tuple, list)):
        digest.update(f"t{len(part)}".encode())
        for item in part:
            _feed(digest, item)
    elif isinstance(part, np.generic):
        _feed(digest, part.item())
    elif isinstance(part, (str, int, float, bool, type(None))):
        digest.update(f"{type(part).__name__}:{part!r};".encode())
    else:
        raise TypeError(f"cannot hash {type(part).__name__} into a cache key")


def get(entry: str) -> dict | None:
    """The arrays stored under ``entry``, or None."""
    path = directory() / f"{entry}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile):
        return None


def put(entry: str, arrays: dict) -> None:
    """Store ``arrays`` ({name: array}) under ``entry``, atomically."""
    folder = directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{entry}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
            os.replace(tmp, folder / f"{entry}.npz")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        warnings.warn(f"FEM cache not written in {folder}: {exc}", CacheWarning, stacklevel=2)


def clear() -> None:
    """Remove every entry (and any temporary file left by a killed writer)."""
    folder = directory()
    if folder.is_dir():
        for path in folder.iterdir():
            if path.suffix in (".npz", ".tmp"):
                path.unlink(missing_ok=True)
