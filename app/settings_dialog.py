"""Solver and integrator settings (solver, tolerance, iteration cap, time budget, time step, gravity): edited
here, applied by the main window on the next reset (a run never changes its settings midway)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6 import QtGui, QtWidgets

from engine.contact.solvers import SOLVERS
from engine.model.universe_xml import INTEGRATORS


class SettingsDialog(QtWidgets.QDialog):
    def __init__(self, universe, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Simulation settings (applied on reset)")
        solver = universe.solver
        self.solver = QtWidgets.QComboBox()
        self.solver.addItems(list(SOLVERS))
        self.solver.setCurrentText(solver.name)
        self.integrator = QtWidgets.QComboBox()
        self.integrator.addItems(list(INTEGRATORS))
        self.integrator.setCurrentText(universe.integrator)
        self.tolerance = QtWidgets.QLineEdit(f"{solver.tolerance:g}")
        self.tolerance.setValidator(QtGui.QDoubleValidator(1e-16, 1.0, 20, notation=QtGui.QDoubleValidator.Notation
                                                           .ScientificNotation))
        self.max_iterations = QtWidgets.QSpinBox(minimum=1, maximum=1_000_000, value=int(solver.max_iterations))
        self.time_budget = _number(1e3 * (solver.time_budget or 0.0), 0.0, 1e4, decimals=3, step=0.1)
        self.time_budget.setSpecialValueText("none")
        self.time_step = _number(1e3 * universe.time_step, 1e-3, 100.0, decimals=4, step=0.1)
        self.gravity = [_number(g, -1e3, 1e3, decimals=4, step=0.1) for g in universe.gravity]
        form = QtWidgets.QFormLayout(self)
        form.addRow("contact solver", self.solver)
        form.addRow("tolerance", self.tolerance)
        form.addRow("iteration cap", self.max_iterations)
        form.addRow("time budget (ms per solve)", self.time_budget)
        form.addRow("integrator", self.integrator)
        form.addRow("time step (ms)", self.time_step)
        row = QtWidgets.QHBoxLayout()
        for box in self.gravity:
            row.addWidget(box)
        form.addRow("gravity (m/s²)", row)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def applied_to(self, universe):
        """A copy of ``universe`` with the settings of the dialog."""
        budget = self.time_budget.value() * 1e-3
        solver = replace(universe.solver, name=self.solver.currentText(), tolerance=float(self.tolerance.text()),
                         max_iterations=self.max_iterations.value(), time_budget=budget if budget > 0 else None)
        return universe.with_settings(solver=solver, integrator=self.integrator.currentText(),
                                      time_step=self.time_step.value() * 1e-3,
                                      gravity=np.array([box.value() for box in self.gravity]))


def _number(value, low, high, decimals, step):
    box = QtWidgets.QDoubleSpinBox(decimals=decimals, minimum=low, maximum=high, singleStep=step)
    box.setValue(float(value))
    return box
