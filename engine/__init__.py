"""Articula engine: the public API.

    model = engine.load_model("robot.urdf", floating_base=True)
    data = model.create_data()
    q = engine.neutral(model)
    universe = engine.load_universe("scenes/x.xml")
    sim = engine.Simulation(universe); sim.step(100)
"""
from engine.errors import ArticulaError, ModelError, SimulationError, UniverseError
from engine.model import Data, JointType, Model, load_model, neutral

__all__ = ["ArticulaError", "Data", "JointType", "Model", "ModelError", "SimulationError", "UniverseError",
           "load_model", "neutral"]
