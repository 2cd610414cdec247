"""Comma-separated files of numbers with a header line (gait files, motion-capture markers): read with every fault
named by file and line."""
from __future__ import annotations

import numpy as np

from engine.errors import UniverseError


def read_lines(path, what: str) -> tuple:
    """(the header's column names, the non-empty lines after it) of ``path``; ``what`` names the file's kind in
    the error if it cannot be read."""
    try:
        with path.open() as fh:
            header = [h.strip() for h in fh.readline().split(",")]
            return header, [line for line in fh if line.strip()]
    except OSError as exc:
        raise UniverseError(f"cannot read {what}: {exc}", str(path)) from None


def numbers(path, lines, columns: int, what: str, missing: bool = False) -> np.ndarray:
    """The lines as a (rows, ``columns``) table; a line that does not hold ``columns`` numbers (empty cells read
    as NaN where ``missing``) is an error naming its line (the header is line 1)."""
    table = np.empty((len(lines), columns))
    for r, line in enumerate(lines):
        cells = [c.strip() for c in line.split(",")]
        try:
            if len(cells) != columns:
                raise ValueError
            table[r] = [float(c) if c or not missing else np.nan for c in cells]
        except ValueError:
            raise UniverseError(f"a {what} row holds {columns} numbers" + (" or empty cells" if missing else ""),
                                str(path), r + 2, line.strip()) from None
    return table
