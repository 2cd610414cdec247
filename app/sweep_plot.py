"""A sweep's first metric over its grid as a PNG (``articula sweep --plot``): a heat map with its colour bar for
two parameters, a curve for one; drawn by pyqtgraph offscreen, so it needs no window nor display. The cells of
the heat map are evenly spaced between the first and last values of each parameter (as start:stop:count gives
them)."""
from __future__ import annotations

import os

import numpy as np


def write_plot(path, result):
    """``result``: an ``engine.sweep.SweepResult``; ValueError for more than two parameters."""
    if len(result.names) > 2:
        raise ValueError(f"--plot draws one or two parameters, not {len(result.names)}")
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"    # an inherited "xcb" would abort without a display
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter
    from PySide6 import QtCore
    app = pg.mkQApp()
    metric, values = result.metric_names[0], result.metrics[:, 0]
    layout = pg.GraphicsLayoutWidget()
    layout.setBackground("w")
    item = layout.addPlot(0, 0, title=f"{metric} over the sweep's grid")
    for side, name in zip(("bottom", "left"), result.names):
        item.setLabel(side, name)
        item.getAxis(side).enableAutoSIPrefix(False)
    if len(result.names) == 1:
        item.plot(result.grid[:, 0], values, pen=pg.mkPen("k", width=2), symbol="o", symbolBrush="b")
        item.setLabel("left", metric)
    else:
        xs, ys = np.unique(result.grid[:, 0]), np.unique(result.grid[:, 1])
        image = pg.ImageItem(values.reshape(len(xs), len(ys)))
        dx = (xs[-1] - xs[0]) / max(len(xs) - 1, 1) or 1.0
        dy = (ys[-1] - ys[0]) / max(len(ys) - 1, 1) or 1.0
        image.setRect(QtCore.QRectF(xs[0] - dx / 2, ys[0] - dy / 2, len(xs) * dx, len(ys) * dy))
        item.addItem(image)
        finite = values[np.isfinite(values)]
        bar = pg.ColorBarItem(values=(float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0),
                              colorMap=pg.colormap.get("viridis"), label=metric, interactive=False)
        bar.setImageItem(image)
        layout.addItem(bar, 0, 1)
    layout.resize(900, 650)
    layout.show()                                   # laid out (offscreen without a display), then drawn
    app.processEvents()
    exporter = ImageExporter(layout.scene())
    exporter.parameters()["width"] = 900
    exporter.export(str(path))
    layout.close()
