"""Fault isolation and divergence detection: the plugin boundary (``guard``) and the physical bounds of a step
(``limits``). The simulation loop (engine/simulation.py) uses both; a fault keeps the last good state."""
from engine.faults._kernels import first_non_finite
from engine.faults.guard import call, checked_array, checked_signals, plugin_name
from engine.faults.limits import RunLimits

__all__ = ["RunLimits", "call", "checked_array", "checked_signals", "first_non_finite", "plugin_name"]
