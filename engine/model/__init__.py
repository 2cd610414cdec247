"""Model & loaders: robot descriptions (URDF, robot XML) compiled into flat, immutable Models."""
from __future__ import annotations

from pathlib import Path

from engine.errors import ModelError
from engine.model.data import Data
from engine.model.description import RobotDescription, compile_model
from engine.model.model import Closure, Geometry, Joint, JointType, Model, neutral
from engine.model.urdf import read_urdf


def load_model(path, floating_base: bool | None = None, package_dirs=()) -> Model:
    """Load a URDF (``.urdf``) or Articula robot XML (``.xml``) file into a compiled Model.

    ``floating_base``: True mounts the root link on a free-flyer joint (q = (x, y, z, qx, qy, qz, qw)),
    False fixes it to the world, None keeps what the file says.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError("robot file not found", str(path))
    if path.suffix.lower() not in (".urdf", ".xml"):
        raise ModelError("a robot file is a .urdf or a robot .xml", str(path), value=path.suffix)
    return compile_model(read_urdf(path, package_dirs), floating_base)


__all__ = ["Closure", "Data", "Geometry", "Joint", "JointType", "Model", "RobotDescription", "compile_model",
           "load_model", "neutral", "read_urdf"]
