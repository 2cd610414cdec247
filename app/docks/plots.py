"""Live plots of the signals the user ticks (joint q/v/τ, contact forces per body, energy, centre of mass,
ZMP, the run's real-time factor), sampled from the frames the view receives; pause, zoom (mouse wheel / drag on
the plot) and CSV export of what is plotted. A scene opens with ``DEFAULT_SIGNALS`` ticked, and with its
soles' compression and normal force and the vertical acceleration of their robots' centre of mass. Each unit has its
own plot (a unitless signal too), stacked, sharing the time axis.
"""
from __future__ import annotations

import csv
from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from app.signals import Signal, catalogue

HISTORY = 6000          # samples kept per signal
REDRAW_EVERY = 6        # frames between two redraws of the curves (~10 Hz at 60 frames per second)
BACKGROUND = (30, 33, 40)
# the run's real-time factor is measured by the physics thread, not held by a snapshot: add_sample receives it
REAL_TIME_FACTOR = Signal("run", "real-time factor", "", lambda snapshot: float("nan"))
DEFAULT_SIGNALS = ("energy/total", REAL_TIME_FACTOR.key, "contact/count")


class PlotsDock(QtWidgets.QDockWidget):
    def __init__(self, parent=None):
        super().__init__("Plots", parent)
        self.setObjectName("plots")
        self.filter = QtWidgets.QLineEdit(placeholderText="filter signals…")
        self.tree = QtWidgets.QTreeWidget(headerHidden=True)
        self.plot = pg.GraphicsLayoutWidget()
        self.plot.setBackground(BACKGROUND)
        self.rows = {}                                  # plot row key (unit, or signal key) -> PlotItem
        self.pause_button = QtWidgets.QPushButton("Pause", checkable=True)
        clear_button, export_button = QtWidgets.QPushButton("Clear"), QtWidgets.QPushButton("Export CSV…")
        left = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(left)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree)
        buttons = QtWidgets.QHBoxLayout()
        for button in (self.pause_button, clear_button, export_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        splitter = QtWidgets.QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.plot)
        splitter.setSizes([220, 600])
        self.setWidget(splitter)
        self.filter.textChanged.connect(self._apply_filter)
        self.tree.itemChanged.connect(self._on_check)
        clear_button.clicked.connect(self.clear)
        export_button.clicked.connect(self._export_dialog)
        self.signals, self.series, self.curves = {}, {}, {}   # curves: key -> PlotDataItem
        self.times: deque = deque(maxlen=HISTORY)
        self._frames = 0

    def set_universe(self, universe):
        self.tree.blockSignals(True)
        self.tree.clear()
        self.signals = {s.key: s for s in [REAL_TIME_FACTOR] + catalogue(universe)}
        groups = {}
        for key, signal in self.signals.items():
            parent = self.tree
            for depth, part in enumerate(signal.group.split("/")):
                path = "/".join(signal.group.split("/")[:depth + 1])
                if path not in groups:
                    groups[path] = QtWidgets.QTreeWidgetItem(parent, [part])
                parent = groups[path]
            leaf = QtWidgets.QTreeWidgetItem(parent, [f"{signal.name} [{signal.unit}]" if signal.unit else signal.name])
            leaf.setData(0, QtCore.Qt.ItemDataRole.UserRole, key)
            leaf.setCheckState(0, QtCore.Qt.CheckState.Unchecked)
        self.tree.blockSignals(False)
        self.series, self.curves = {}, {}
        self._layout_rows()
        self.times.clear()
        soles = [key for key in self.signals if key.startswith("sole/") and key.endswith(("compression max",
                                                                                            "normal force"))]
        impacts = {f"{key.split('/')[1]}/centre of mass/acceleration z" for key in soles}   # what soles absorb
        for key in DEFAULT_SIGNALS + tuple(soles) + tuple(sorted(impacts & set(self.signals))):
            self.select(key)
        for item in self._leaves():         # the ticked signals' groups open
            if item.checkState(0) == QtCore.Qt.CheckState.Checked:
                item.parent().setExpanded(True)

    def select(self, key: str, on: bool = True):
        """Tick (or untick) the signal ``key`` ("group/name")."""
        for item in self._leaves():
            if item.data(0, QtCore.Qt.ItemDataRole.UserRole) == key:
                item.setCheckState(0, QtCore.Qt.CheckState.Checked if on else QtCore.Qt.CheckState.Unchecked)
                return
        raise KeyError(f"no signal {key!r}")

    def add_sample(self, snapshot, real_time_factor: float = float("nan")):
        """Append the ticked signals' values at ``snapshot.t`` (a time going backwards starts afresh);
        ``real_time_factor`` is the run's, measured by the physics thread."""
        if self.pause_button.isChecked() or not self.series:
            return
        if self.times and snapshot.t < self.times[-1]:
            self.clear()
        if self.times and snapshot.t == self.times[-1]:
            return
        self.times.append(snapshot.t)
        for key, values in self.series.items():
            values.append(real_time_factor if key == REAL_TIME_FACTOR.key else self.signals[key].value(snapshot))
        self._frames += 1
        if self._frames % REDRAW_EVERY == 0:
            self.redraw()

    def redraw(self):
        t = np.fromiter(self.times, float)
        for key, values in self.series.items():
            y = np.fromiter(values, float)
            self.curves[key].setData(t[len(t) - len(y):], y)

    def clear(self):
        self.times.clear()
        for key in self.series:
            self.series[key] = deque(maxlen=HISTORY)
        self.redraw()

    def export_csv(self, path):
        """Write time and every plotted signal (empty cells before a signal was ticked)."""
        t = list(self.times)
        keys = list(self.series)
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["t [s]"] + [f"{k} [{self.signals[k].unit}]" for k in keys])
            columns = [[""] * (len(t) - len(self.series[k])) + list(self.series[k]) for k in keys]
            for row in zip(t, *columns):
                writer.writerow(row)

    def _export_dialog(self):
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export plotted signals", "signals.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)

    def _on_check(self, item, column):
        key = item.data(0, QtCore.Qt.ItemDataRole.UserRole)
        if key is None:
            return
        if item.checkState(0) == QtCore.Qt.CheckState.Checked and key not in self.series:
            self.series[key] = deque(maxlen=HISTORY)
        elif item.checkState(0) != QtCore.Qt.CheckState.Checked and key in self.series:
            del self.series[key]
        else:
            return
        self._layout_rows()
        self.redraw()

    def _layout_rows(self):
        """One plot per unit of the ticked signals (per signal when it has no unit), in ticking order, the
        time axis shown and shared below the last one."""
        self.plot.clear()
        self.rows, self.curves = {}, {}
        for n, key in enumerate(self.series):
            signal = self.signals[key]
            row = signal.unit or key
            if row not in self.rows:
                plot = self.plot.addPlot(row=len(self.rows), col=0)
                plot.addLegend(offset=(5, 5), brush=(*BACKGROUND, 190))
                plot.showGrid(x=True, y=True, alpha=0.3)
                plot.setLabel("left", units=signal.unit or None)
                if self.rows:
                    plot.setXLink(next(iter(self.rows.values())))
                self.rows[row] = plot
            pen = pg.mkPen(pg.intColor(n, hues=9), width=2)
            self.curves[key] = self.rows[row].plot([], [], pen=pen, name=key)
        for k, plot in enumerate(self.rows.values()):
            last = k == len(self.rows) - 1
            plot.showAxis("bottom", last)
            if last:
                plot.setLabel("bottom", "time", "s")

    def _leaves(self):
        iterator = QtWidgets.QTreeWidgetItemIterator(self.tree)
        while iterator.value():
            item = iterator.value()
            if item.data(0, QtCore.Qt.ItemDataRole.UserRole) is not None:
                yield item
            iterator += 1

    def _apply_filter(self, text):
        text = text.lower()
        for item in self._leaves():
            key = item.data(0, QtCore.Qt.ItemDataRole.UserRole).lower()
            item.setHidden(bool(text) and text not in key)
