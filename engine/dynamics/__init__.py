"""Free dynamics of a kinematic tree: kinematics, inverse and forward dynamics, mass matrix, Jacobians.

Conventions are ``engine.spatial``'s (Pinocchio's).  Each algorithm is a free function over
``(model, data, ...)``, a readable driver over a numba kernel in ``engine.dynamics._kernels``.
"""
from engine.dynamics.aba import aba
from engine.dynamics.centroidal import (centroidal_momentum, com, com_jacobian, kinetic_energy,
                                       kinetic_energy_of_motion, potential_energy)
from engine.dynamics.crba import crba
from engine.dynamics.inputs import GRAVITY
from engine.dynamics.jacobians import (frame_jacobian, frame_jacobian_dot_v, point_classical_acceleration,
                                       point_jacobian)
from engine.dynamics.kinematics import forward_kinematics, frame_placement
from engine.dynamics.rnea import rnea

__all__ = ["GRAVITY", "aba", "centroidal_momentum", "com", "com_jacobian", "crba", "forward_kinematics",
           "frame_jacobian", "frame_jacobian_dot_v", "frame_placement", "kinetic_energy", "kinetic_energy_of_motion",
           "point_classical_acceleration", "point_jacobian", "potential_energy", "rnea"]
