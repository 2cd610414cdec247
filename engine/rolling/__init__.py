"""Wheels that leave and hit the ground: gaps to the static ground, impacts, the event-driven hybrid loop
(seed 001 §2.7–2.9; issue 12 part 3). The rolling constraint itself is engine/dynamics/rolling.py."""
