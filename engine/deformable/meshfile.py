"""Reading a sole mesh a user brings (.msh from Gmsh, .vtu, or any volume format meshio reads).

``read_mesh(path)`` keeps the file's linear tetrahedra (meshio's ``tetra`` cells). Each tetrahedron's material
is the rank of its region tag among the file's sorted tags, the region being the cell data ``material`` if
present, else Gmsh's physical group (``gmsh:physical``), else one region for all: with Gmsh physical volumes 1
(top layer) and 2 (pads), ``materials[0]`` is the top layer's. ``mesh_regions(path)`` lists the tags in that
order. Coordinates are taken in metres (``scale`` converts, e.g. 0.001 for a file in millimetres).

A file that cannot be read, holds no tetrahedron (a surface mesh) or only quadratic ones, or fails the checks
of ``engine.deformable.mesh`` raises ``SoleError`` naming the file (and ``file``/``line``, the universe element
that refers to it).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.deformable.mesh import SoleMesh, sole_mesh
from engine.errors import SoleError

REGION_KEYS = ("material", "gmsh:physical")


def read_mesh(path, scale: float = 1.0, file=None, line=None) -> SoleMesh:
    """The checked ``SoleMesh`` of the file ``path`` (module docstring)."""
    if not (np.isfinite(scale) and scale > 0):
        raise SoleError(f"sole mesh {str(path)!r}: scale must be finite and > 0", file or str(path), line, scale)
    x, tets, region, source = _read(path, file, line)
    material = np.unique(region, return_inverse=True)[1].ravel()
    return sole_mesh(x * scale, tets, material, source=source, file=file, line=line)


def mesh_regions(path) -> list:
    """The region tags of ``path`` in material order (``materials[i]`` is for tag ``mesh_regions(path)[i]``)."""
    return np.unique(_read(path, None, None)[2]).tolist()


def _read(path, file, line):
    import meshio

    source = str(path)
    loc = (file or source, line)
    if not Path(path).is_file():
        raise SoleError(f"sole mesh {source!r}: no such file", *loc, source)
    data = _meshio_read(meshio, Path(path), loc)
    types = [block.type for block in data.cells]
    blocks = [i for i, t in enumerate(types) if t == "tetra"]
    if not blocks:
        hint = " (quadratic tetrahedra: save linear ones)" if "tetra10" in types else \
            " (a surface mesh? mesh its volume, e.g. gmsh -3)"
        raise SoleError(f"sole mesh {source!r} has no linear tetrahedron{hint}", *loc, sorted(set(types)))
    tets = np.vstack([data.cells[i].data for i in blocks])
    key = next((k for k in REGION_KEYS if k in data.cell_data), None)
    region = (np.concatenate([np.asarray(data.cell_data[key][i]).ravel() for i in blocks]) if key
              else np.zeros(len(tets), np.int64))
    return np.asarray(data.points, dtype=np.float64), tets, region, source


def _meshio_read(meshio, path: Path, loc):
    """meshio's reader for the file's extension (Gmsh's first for .msh), called directly: ``meshio.read`` prints
    and calls sys.exit when a file fails to parse."""
    formats = meshio.extension_to_filetypes.get(path.suffix.lower(), [])
    readers = [getattr(meshio, f) for f in sorted(formats, key=lambda f: f != "gmsh") if hasattr(meshio, f)]
    if not readers:
        raise SoleError(f"sole mesh {str(path)!r}: unknown mesh format {path.suffix!r} (use .msh or .vtu)", *loc,
                        path.suffix)
    errors = []
    for reader in readers:
        try:
            return reader.read(str(path))
        except Exception as exc:      # each meshio reader fails with its own exception type
            errors.append(f"as {reader.__name__.split('.')[-1]}: {str(exc) or type(exc).__name__}")
    raise SoleError(f"sole mesh {str(path)!r} could not be read ({'; '.join(errors)})", *loc, str(path))
