"""Trajectory optimisation: direct collocation with CasADi + IPOPT over Articula's dynamics (seed 003 §5.F)."""
