"""The per-user on-disk cache: ``$ARTICULA_CACHE_DIR``, else ``$XDG_CACHE_HOME/articula`` (``~/.cache/articula``).

``articula cache info`` shows it, ``articula cache clear`` empties it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


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
    return len(files), size
