"""An engine comparison as a PNG (``articula compare``): four panels against time, one colour per engine — the
base trajectory of the first multibody (x solid, y dashed, z dotted), the contact normal force summed over the
multibodies, the total energy and the wall time of each step (log scale); drawn by pyqtgraph offscreen, so it
needs no window nor display."""
from __future__ import annotations

import os

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
WIDTH, HEIGHT = 1200, 900


def write_plot(path, comparison):
    """``comparison``: an ``engine.compare.Comparison``."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"    # an inherited "xcb" would abort without a display
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter
    from PySide6 import QtCore
    app = pg.mkQApp()
    layout = pg.GraphicsLayoutWidget()
    layout.setBackground("w")
    base = comparison.multibodies[0] if comparison.multibodies else "none"
    panels = [layout.addPlot(row, col, title=title) for (row, col), title in zip(
        ((0, 0), (0, 1), (1, 0), (1, 1)),
        (f"base trajectory of {base} (x solid, y dashed, z dotted)", "contact normal force, all multibodies",
         "total energy (kinetic + potential)", "wall time of each step (log scale)"))]
    for item, label in zip(panels, ("position (m)", "force (N)", "energy (J)", "step time (µs)")):
        item.setLabel("left", label)
        item.setLabel("bottom", "time (s)")
        for side in ("left", "bottom"):
            item.getAxis(side).enableAutoSIPrefix(False)
        item.addLegend(offset=(10, 10))
    panels[3].setLogMode(y=True)                    # the first steps (compiling, first contacts) are 100× longer
    styles = (QtCore.Qt.PenStyle.SolidLine, QtCore.Qt.PenStyle.DashLine, QtCore.Qt.PenStyle.DotLine)
    for i, s in enumerate(comparison.series):
        colour = COLOURS[i % len(COLOURS)]
        pen = pg.mkPen(colour, width=2)
        for axis, style in enumerate(styles if len(comparison.multibodies) else ()):
            panels[0].plot(s.t, s.base_p[:, 0, axis], pen=pg.mkPen(colour, width=2, style=style),
                           name=s.label if axis == 0 else None)
        panels[1].plot(s.t, s.contact_force.sum(axis=1), pen=pen, name=s.label)
        panels[2].plot(s.t, s.energy, pen=pen, name=s.label)
        panels[3].plot(s.t[1:], s.step_time[1:] * 1e6, pen=pen, name=s.label)   # row 0: no step
    layout.resize(WIDTH, HEIGHT)
    layout.show()                                   # laid out (offscreen without a display), then drawn
    app.processEvents()
    exporter = ImageExporter(layout.scene())
    exporter.parameters()["width"] = WIDTH
    exporter.export(str(path))
    layout.close()
