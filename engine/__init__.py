"""Articula engine: the public API.

    model = engine.load_model("robot.urdf", floating_base=True)
    data = model.create_data()
    q = engine.neutral(model)
    universe = engine.load_universe("scenes/x.xml")
    sim = engine.Simulation(universe); sim.step(100)
"""
import os

from threadpoolctl import threadpool_limits

# One BLAS thread. The matrices here are small (tens of rows) and OpenBLAS's thread start-up costs ~20x the
# product on a 2-core machine (a 160x48x160 product: 12 ms threaded, 0.5 ms single-threaded). And threaded
# OpenBLAS is not reproducible: the walk on flexible ankles, run 4 times at once, ended 0.18 apart in q after
# 1.5 s. The variable covers BLAS libraries loaded from now on (and child processes); threadpool_limits those a
# script loaded before importing engine (numpy first, as most do).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
threadpool_limits(1, user_api="blas")

from engine.dynamics import (aba, centroidal_momentum, com, com_jacobian, crba, forward_kinematics,  # noqa: E402
                             frame_jacobian, frame_placement, kinetic_energy, point_jacobian, potential_energy, rnea)
from engine.dynamics.integrators import difference, integrate  # noqa: E402
from engine.dynamics.linearize import linearize  # noqa: E402
from engine.errors import (ArticulaError, DivergenceError, ModelError, PluginError, SimulationError,  # noqa: E402
                           UniverseError)
from engine.model import Data, JointType, Model, load_model, neutral  # noqa: E402
from engine.model.universe import Universe, universe_from_urdf  # noqa: E402
from engine.model.universe_xml import load_universe  # noqa: E402
from engine.simulation import Simulation  # noqa: E402
from engine.state import Snapshot, State  # noqa: E402

__all__ = ["ArticulaError", "Data", "DivergenceError", "JointType", "Model", "ModelError", "PluginError",
           "Simulation", "SimulationError", "Snapshot", "State", "Universe", "UniverseError", "aba",
           "centroidal_momentum", "com", "com_jacobian", "crba", "difference", "forward_kinematics",
           "frame_jacobian", "frame_placement", "integrate", "kinetic_energy", "linearize", "load_model",
           "load_universe", "neutral", "point_jacobian", "potential_energy", "rnea", "universe_from_urdf"]
