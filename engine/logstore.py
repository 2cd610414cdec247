"""A time-series log streamed to disk in chunks that survive a kill: what the headless runner writes.

While a run goes on, rows are buffered in memory and written every ``flush_seconds`` of wall time (and whenever
the buffer fills) as one ``.npy`` chunk in the folder ``PREFIX.part/``. Each chunk, and the column list written
first, goes to a temporary name and is renamed with ``os.replace``: a file under its final name is always
complete, so a run killed at any moment (even SIGKILL) leaves the chunks written so far, readable with
``read_log(prefix)``. ``close()`` then writes ``PREFIX.npz`` and ``PREFIX.csv`` the same way (temporary name,
rename) and removes the folder; a kill during that write leaves either the previous complete file or the new
one, and the chunks until the rename of the last file.

Why chunked ``.npy`` and not HDF5 or Zarr: numpy writes and reads them with no new dependency, a chunk is
never modified after its rename (HDF5 files can be left unreadable by a kill during a write unless SWMR and
careful flushing are used), and the reader needs only ``np.load``.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

FORMAT = "articula-log-1"


def output_paths(prefix) -> tuple:
    """(PREFIX.npz, PREFIX.csv, PREFIX.part, PREFIX.log): ``prefix`` is a prefix, never split at a dot (a run
    named ``name_1.4`` writes ``name_1.4.npz``); a trailing ``.npz`` or ``.csv`` is taken as ours and dropped."""
    prefix = str(prefix)
    for ext in (".npz", ".csv"):
        if prefix.endswith(ext):
            prefix = prefix[:-len(ext)]
    return tuple(Path(prefix + ext) for ext in (".npz", ".csv", ".part", ".log"))


def _atomic_write(path: Path, write):
    """``write(file)`` into ``path`` through a temporary file in the same folder, fsynced, then renamed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class StreamedLog:
    """Rows of ``len(columns)`` floats appended during a run, on disk every ``flush_seconds`` at most."""

    def __init__(self, prefix, columns, flush_seconds: float = 1.0, buffer_rows: int = 4096):
        self.npz, self.csv, self.part, _ = output_paths(prefix)
        self.columns = list(columns)
        self.flush_seconds = float(flush_seconds)
        self.buffer = np.empty((int(buffer_rows), len(self.columns)))
        self.rows = 0                  # rows in the buffer
        self.chunks = 0                # chunks on disk
        for old in (self.npz, self.csv):           # a previous run's output under the same prefix is replaced
            old.unlink(missing_ok=True)
        self.part.mkdir(parents=True, exist_ok=True)
        for old in self.part.glob("*.npy"):
            old.unlink()
        header = json.dumps({"format": FORMAT, "columns": self.columns}).encode()
        _atomic_write(self.part / "columns.json", lambda f: f.write(header))
        self.last_flush = time.monotonic()

    def append(self, row):
        self.buffer[self.rows] = row
        self.rows += 1
        if self.rows == len(self.buffer) or time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def flush(self):
        """Write the buffered rows as the next chunk (nothing when the buffer is empty)."""
        if self.rows:
            rows = self.buffer[:self.rows].copy()
            _atomic_write(self.part / f"{self.chunks:06d}.npy", lambda f: np.save(f, rows))
            self.chunks += 1
            self.rows = 0
        self.last_flush = time.monotonic()

    def close(self, extra=None):
        """Flush, then write PREFIX.npz (``columns``, ``data`` and the named arrays ``extra(table)``) and
        PREFIX.csv atomically, and remove the chunk folder. Returns the table."""
        self.flush()
        table = _read_chunks(self.part, len(self.columns))
        arrays = {"format": np.array(FORMAT), "columns": np.array(self.columns), "data": table,
                  **(extra(table) if extra else {})}
        _atomic_write(self.npz, lambda f: np.savez(f, **arrays))
        _atomic_write(self.csv, lambda f: np.savetxt(f, table, delimiter=",", header=",".join(self.columns),
                                                     comments=""))
        shutil.rmtree(self.part, ignore_errors=True)
        return table


def _read_chunks(part: Path, ncols: int) -> np.ndarray:
    chunks = [np.load(p) for p in sorted(part.glob("[0-9]*.npy"))]
    return np.concatenate(chunks) if chunks else np.zeros((0, ncols))


def read_log(prefix) -> tuple:
    """(columns, table) of a run: the final PREFIX.npz if it was written, else the chunks a killed run left.
    FileNotFoundError when neither exists."""
    npz, _, part, _ = output_paths(prefix)
    if npz.is_file():
        with np.load(npz) as f:
            return [str(c) for c in f["columns"]], f["data"]
    header = part / "columns.json"
    if not header.is_file():
        raise FileNotFoundError(f"no log at {npz} nor chunks in {part}")
    columns = json.loads(header.read_text())["columns"]
    return columns, _read_chunks(part, len(columns))
