"""The scene tree: universe ▸ multibodies ▸ links and joints, static bodies, controllers, devices, sensors,
lights and camera. Selecting an entry emits ``selected(Selection)`` for the inspector and the viewport."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from PySide6 import QtCore, QtWidgets

from engine import JointType


@dataclass(frozen=True)
class Selection:
    """``kind``: "universe", "multibody", "body", "joint", "static", "controllers", "devices" or "sensors";
    ``multibody`` and ``index`` locate it (a body or joint index in its multibody, a static body's or a
    plugin's index in its list)."""

    kind: str
    multibody: int = -1
    index: int = -1


class SceneTreeDock(QtWidgets.QDockWidget):
    selected = QtCore.Signal(object)

    def __init__(self, parent=None):
        super().__init__("Scene", parent)
        self.setObjectName("scene")
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderLabels(["Name", "Type"])
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)   # no cut names or types
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.setWidget(self.tree)

    def set_universe(self, universe):
        self.tree.clear()
        root = self._item(self.tree, universe.name, "universe", Selection("universe"))
        for m, mb in enumerate(universe.multibodies):
            kind = "floating" if mb.model.nbodies and mb.model.joint_type[0] == JointType.FREE else "fixed base"
            node = self._item(root, mb.name, f"multibody ({kind})", Selection("multibody", m))
            links = self._item(node, "links", f"{mb.model.nbodies}")
            for b, name in enumerate(mb.model.body_name):
                self._item(links, name, f"{mb.model.body_mass[b]:.3g} kg", Selection("body", m, b))
            joints = self._item(node, "joints", f"{len(mb.model.joints)}")
            for joint in mb.model.joints:
                self._item(joints, joint.name, JointType(joint.type).name.lower(), Selection("joint", m, joint.body))
        statics = self._item(root, "static bodies", f"{len(universe.statics)}")
        for k, body in enumerate(universe.statics):
            kinds = Counter(g.kind for g in body.geometries)
            self._item(statics, body.name, ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in kinds.items()),
                       Selection("static", -1, k))
        for title in ("controllers", "devices", "sensors"):
            specs = getattr(universe, title)
            group = self._item(root, title, f"{len(specs)}")
            for k, spec in enumerate(specs):
                target = f" → {spec.target}" if spec.target else ""
                self._item(group, spec.name, f"{spec.kind}{target}", Selection(title, -1, k))
        lights = self._item(root, "lights", f"{len(universe.lights)}")
        for k, light in enumerate(universe.lights):
            self._item(lights, f"light {k}", "directional" if light.position[3] == 0 else "positional")
        camera = universe.camera
        self._item(root, "camera", "framed (no <Camera>)" if camera is None else f"fov {camera.fov:g}°")
        self.tree.expandToDepth(1)
        self._fit_width()

    def _fit_width(self):
        """Widen the dock to show both columns whole (at most a third of the main window's width)."""
        window = self.parentWidget()
        if not isinstance(window, QtWidgets.QMainWindow) or self.isFloating():
            return
        header = self.tree.header()
        needed = header.length() + self.tree.verticalScrollBar().sizeHint().width() + 2 * self.tree.frameWidth() + 4
        if needed > self.width():
            window.resizeDocks([self], [min(needed, window.width() // 3)], QtCore.Qt.Orientation.Horizontal)

    def _item(self, parent, name, kind, selection=None):
        item = QtWidgets.QTreeWidgetItem(parent, [name, kind])
        item.setData(0, QtCore.Qt.ItemDataRole.UserRole, selection)
        return item

    def _on_selection(self):
        items = self.tree.selectedItems()
        selection = items[0].data(0, QtCore.Qt.ItemDataRole.UserRole) if items else None
        self.selected.emit(selection)
