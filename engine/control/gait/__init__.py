"""Gait playback (seed 003 §5.D–E): a periodic gait file played with single/double-support phases, the legs
re-indexed at each step, impactless touchdowns checked, and the minimum weighted-norm torque distribution of
double support as a QP per step."""
from engine.control.gait.controller import GaitPlayback

__all__ = ["GaitPlayback"]
