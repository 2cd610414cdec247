"""The property inspector: what the scene tree selection is (mass, inertia, pose, joint q/v/τ, contact forces,
plugin parameters), refreshed from the newest snapshot, and joint sliders that set a posture while paused."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from app.signals import contact_forces_on
from engine import JointType

SLIDER_STEPS = 1000


def _fmt(x) -> str:
    return np.array2string(np.asarray(x, float), precision=4, suppress_small=True, max_line_width=80) \
        if np.ndim(x) else f"{float(x):.6g}"


class InspectorDock(QtWidgets.QDockWidget):
    """``posture_changed(multibody, joint_index_q, value)`` is emitted when a slider moves."""

    posture_changed = QtCore.Signal(int, int, float)

    def __init__(self, parent=None):
        super().__init__("Inspector", parent)
        self.setObjectName("inspector")
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Property", "Value"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.sliders_box = QtWidgets.QGroupBox("Posture (while paused)")
        self.sliders_layout = QtWidgets.QFormLayout(self.sliders_box)
        scroll = QtWidgets.QScrollArea(widgetResizable=True)
        scroll.setWidget(self.sliders_box)
        splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(scroll)
        self.setWidget(splitter)
        self.universe, self.selection, self.sliders = None, None, {}
        self._live_rows = {}

    def set_universe(self, universe):
        self.universe = universe
        self.show_selection(None)

    def show_selection(self, selection, snapshot=None):
        """Fill the table with the static properties of ``selection`` and make the posture sliders of its
        multibody."""
        self.selection = selection
        rows, self._live_rows = self._static_rows(selection), {}
        self.table.setRowCount(0)
        for name, value in rows:
            self._add_row(name, value)
        self._build_sliders(selection.multibody if selection is not None else -1)
        if snapshot is not None:
            self.update_frame(snapshot, playing=False)

    def update_frame(self, snapshot, playing: bool):
        """Refresh the live rows (pose, q, v, τ, contact forces) and the sliders from ``snapshot``."""
        for name, value in self._live_values(snapshot):
            if name not in self._live_rows:
                self._live_rows[name] = self._add_row(name, "")
            self.table.item(self._live_rows[name], 1).setText(value)
        self.sliders_box.setEnabled(not playing)
        for (m, k), (slider, lo, hi) in self.sliders.items():
            if not slider.isSliderDown():
                slider.blockSignals(True)
                slider.setValue(int(round((snapshot.q[m][k] - lo) / (hi - lo) * SLIDER_STEPS)))
                slider.blockSignals(False)

    def _add_row(self, name, value) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QtWidgets.QTableWidgetItem(name))
        self.table.setItem(row, 1, QtWidgets.QTableWidgetItem(value))
        return row

    def _static_rows(self, sel) -> list:
        u = self.universe
        if sel is None or u is None:
            return []
        if sel.kind == "universe":
            return [("source", str(u.source)), ("gravity", _fmt(u.gravity)), ("time step", f"{u.time_step:g} s"),
                    ("integrator", u.integrator), ("solver", f"{u.solver.name}, tol {u.solver.tolerance:g}, "
                                                             f"{u.solver.max_iterations} it"),
                    ("materials", ", ".join(f"{k} (mu {v.mu:g})" for k, v in u.materials.items()))]
        if sel.kind in ("controllers", "devices", "sensors"):
            spec = getattr(u, sel.kind)[sel.index]
            return [("plugin", spec.name), ("kind", spec.kind), ("target", str(spec.target))] + \
                [(k, str(v)) for k, v in spec.params.items()]
        if sel.kind == "static":
            body = u.statics[sel.index]
            return [("static body", body.name)] + [(g.name, f"{g.kind} {_fmt(g.size)} at {_fmt(g.p)}")
                                                    for g in body.geometries]
        mb = u.multibodies[sel.multibody]
        model = mb.model
        if sel.kind == "multibody":
            return [("multibody", mb.name), ("source", model.source), ("mass", f"{model.total_mass:.6g} kg"),
                    ("nq, nv", f"{model.nq}, {model.nv}"), ("bodies", str(model.nbodies)),
                    ("base position", _fmt(mb.p))]
        b = sel.index
        rows = [("body", model.body_name[b]), ("mass", f"{model.body_mass[b]:.6g} kg"),
                ("centre of mass (body)", _fmt(model.body_com[b])), ("inertia at CoM", _fmt(model.body_inertia_com[b])),
                ("parent", model.body_name[model.body_parent[b]] if model.body_parent[b] >= 0 else "base")]
        if sel.kind == "joint":
            k = model.joint_idx_q[b]
            rows = [("joint", model.joint_name[b]), ("type", JointType(model.joint_type[b]).name.lower()),
                    ("axis", _fmt(model.joint_axis[b])),
                    ("limits", _fmt([model.q_lower[k], model.q_upper[k]]))] + rows[:1]
        return rows

    def _live_values(self, snapshot) -> list:
        sel, u = self.selection, self.universe
        if sel is None or sel.kind not in ("body", "joint", "multibody"):
            return []
        m = sel.multibody
        if sel.kind == "multibody":
            return [("q", _fmt(snapshot.q[m])), ("v", _fmt(snapshot.v[m])), ("τ", _fmt(snapshot.tau[m]))]
        model, b = u.multibodies[m].model, sel.index
        iq, nq = model.joint_idx_q[b], model.joint_nq[b]
        iv, nv = model.joint_idx_v[b], model.joint_nv[b]
        rows = [("joint q", _fmt(snapshot.q[m][iq:iq + nq])), ("joint v", _fmt(snapshot.v[m][iv:iv + nv])),
                ("joint τ", _fmt(snapshot.tau[m][iv:iv + nv]))]
        if sel.kind == "body":
            fn, ft = contact_forces_on(snapshot.contacts, f"{u.multibodies[m].name}/{model.body_name[b]}")
            rows += [("position (world)", _fmt(snapshot.body_p[m][b])),
                     ("rotation (world)", _fmt(snapshot.body_R[m][b])),
                     ("contact force normal / tangential", f"{fn:.4g} N / {ft:.4g} N")]
        return rows

    def _build_sliders(self, m: int):
        while self.sliders_layout.rowCount():
            self.sliders_layout.removeRow(0)
        self.sliders = {}
        if m < 0:
            return
        model = self.universe.multibodies[m].model
        for joint in model.joints:
            if joint.type not in (JointType.REVOLUTE, JointType.PRISMATIC):
                continue
            lo, hi = float(model.q_lower[joint.idx_q]), float(model.q_upper[joint.idx_q])
            if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
                lo, hi = (-np.pi, np.pi) if joint.type == JointType.REVOLUTE else (-1.0, 1.0)
            slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, maximum=SLIDER_STEPS)
            slider.valueChanged.connect(
                lambda value, k=joint.idx_q, lo=lo, hi=hi: self.posture_changed.emit(
                    m, k, lo + (hi - lo) * value / SLIDER_STEPS))
            self.sliders[(m, joint.idx_q)] = (slider, lo, hi)
            self.sliders_layout.addRow(joint.name, slider)
