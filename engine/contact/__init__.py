"""Frictional contact (seed 000 §3.4): the Coulomb cone, block Gauss–Seidel/Newton and Lemke solvers over a
given Delassus matrix W and free velocity, selected by the thesis's names, and the Delassus operation counts."""
from engine.contact.cone import (BILATERAL, CONTACT, FRICTION, LIMIT, ConstraintBlocks, CoulombCone, SolverStats,
                                 project_coulomb)
from engine.contact.gauss_seidel import contact_residual, gauss_seidel
from engine.contact.lemke import LemkeStats, faceted_lcp, frictionless_lcp, lemke
from engine.contact.opcount import (OpCount, chang_khatib_ops, cheapest_method, initial_method_ops,
                                    thesis_method_ops)
from engine.contact.solvers import SOLVERS, THESIS_NAMES, add_compliance, solve, solver_name

__all__ = ["BILATERAL", "CONTACT", "FRICTION", "LIMIT", "ConstraintBlocks", "CoulombCone", "LemkeStats", "OpCount",
           "SOLVERS", "SolverStats", "THESIS_NAMES", "add_compliance", "chang_khatib_ops", "cheapest_method",
           "contact_residual", "faceted_lcp", "frictionless_lcp", "gauss_seidel", "initial_method_ops", "lemke",
           "project_coulomb", "solve", "solver_name", "thesis_method_ops"]
