"""The timing panel: time per step spent in each stage of the loop (dynamics, collision, groups, Λ, solver,
integration), as the thesis's Fig 3.8, next to the real-time budget (one time step of wall clock)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

SMOOTHING = 0.1   # exponential moving average of the per-step stage times shown
LABELS = {"delassus": "Λ (Delassus)"}


class TimingDock(QtWidgets.QDockWidget):
    def __init__(self, parent=None):
        super().__init__("Timing", parent)
        self.setObjectName("timing")
        self.plot = pg.PlotWidget(background=(30, 33, 40))
        self.plot.setLabel("bottom", "time per step", "ms")
        self.plot.showGrid(x=True, alpha=0.3)
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.6, width=[], brush=(90, 160, 230))
        self.budget = pg.InfiniteLine(angle=90, pen=pg.mkPen((230, 120, 90), width=2, style=pg.QtCore.Qt.DashLine))
        self.plot.addItem(self.bars)
        self.plot.addItem(self.budget)
        self.summary = QtWidgets.QLabel()
        widget = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(widget)
        layout.addWidget(self.plot)
        layout.addWidget(self.summary)
        self.setWidget(widget)
        self.stages, self.mean, self.time_step = [], None, 1e-3

    def set_time_step(self, dt: float):
        self.time_step = dt
        self.budget.setValue(1e3 * dt)
        self.mean = None

    def update_frame(self, snapshot, real_time_factor: float):
        """Fold the snapshot's last-step stage times into the running means and redraw."""
        timings = {k: v for k, v in snapshot.timings.items() if k != "total"}
        if not timings:
            return
        if list(timings) != self.stages or self.mean is None:
            self.stages, self.mean = list(timings), np.array(list(timings.values()))
            axis = self.plot.getAxis("left")
            axis.setTicks([[(i, LABELS.get(s, s)) for i, s in enumerate(self.stages)]])
        self.mean += SMOOTHING * (np.array(list(timings.values())) - self.mean)
        ms = 1e3 * self.mean
        self.bars.setOpts(x0=np.zeros(len(ms)), y=np.arange(len(ms)), width=ms, height=0.6)
        total = ms.sum()
        unconverged = snapshot.solver_stats.get("unconverged_steps", 0)
        self.summary.setText(f"step {total:.3f} ms of a {1e3 * self.time_step:g} ms budget "
                             f"({total / (1e3 * self.time_step):.0%}); real-time factor {real_time_factor:.2f}; "
                             + ", ".join(f"{LABELS.get(s, s)} {100 * v / total:.0f}%" for s, v in
                                         zip(self.stages, ms) if total > 0 and v > 0)
                             + f"; contact solves unconverged: {unconverged} steps")
