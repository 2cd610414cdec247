"""Articula engine: the public API.

    model = engine.load_model("robot.urdf", floating_base=True)
    data = model.create_data()
    q = engine.neutral(model)
    universe = engine.load_universe("scenes/x.xml")
    sim = engine.Simulation(universe); sim.step(100)
"""
import os

# One BLAS thread: the matrices here are small (tens of rows) and OpenBLAS's thread start-up costs ~20x the
# product on a 2-core machine (a 160x48x160 product: 12 ms threaded, 0.5 ms single-threaded).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from engine.errors import ArticulaError, ModelError, SimulationError, UniverseError
from engine.model import Data, JointType, Model, load_model, neutral

__all__ = ["ArticulaError", "Data", "JointType", "Model", "ModelError", "SimulationError", "UniverseError",
           "load_model", "neutral"]
