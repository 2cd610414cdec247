"""The panels a user reads first: the scene tree shows its columns whole, the log is readable at every level, and
the plot pane opens with the default signals (energy, real-time factor, contact count) plotted."""
import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from app import DEFAULT_SCENE
from app.docks.log import COLORS
from app.docks.plots import DEFAULT_SIGNALS, REAL_TIME_FACTOR
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

WCAG_AA = 4.5   # minimum contrast ratio of body text (WCAG 2.x, success criterion 1.4.3)


def relative_luminance(color: QtGui.QColor) -> float:
    """WCAG 2.x relative luminance of an sRGB colour."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in (color.redF(), color.greenF(), color.blueF()))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: QtGui.QColor, b: QtGui.QColor) -> float:
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_scene_tree_shows_names_and_types_whole(qapp, window):
    settle(qapp, window)
    tree = window.scene_dock.tree
    header = tree.header()
    for column in (0, 1):
        assert header.sectionSize(column) >= tree.sizeHintForColumn(column)
    assert header.length() <= tree.viewport().width()          # both columns fit the dock
    table = tree.findItems("table", QtCore.Qt.MatchFlag.MatchExactly | QtCore.Qt.MatchFlag.MatchRecursive)[0]
    assert table.text(1) == "box ×5"                            # the table's five boxes, counted


def test_every_log_level_reads_on_the_log_background(qapp, window):
    view = window.log.view
    base = view.palette().color(QtGui.QPalette.ColorRole.Base)
    assert contrast(view.palette().color(QtGui.QPalette.ColorRole.Text), base) >= WCAG_AA
    for level, color in COLORS.items():
        assert contrast(QtGui.QColor(color), base) >= WCAG_AA, level


def test_a_scene_opens_with_energy_real_time_factor_and_contact_count_plotted(qapp, window):
    assert window.open_scene(DEFAULT_SCENE), window.log.text()
    settle(qapp, window)
    plots = window.plots
    assert list(plots.series) == list(DEFAULT_SIGNALS)
    assert len(plots.rows) == 3                                 # J, and one plot per unitless signal
    window.play_pause()
    wait(qapp, lambda: window.frame.snapshot.t > 0.05 and len(plots.times) > 3)
    window.play_pause()
    wait(qapp, lambda: not window.physics.playing)
    settle(qapp, window)
    snapshot = window.frame.snapshot
    assert plots.times[-1] == snapshot.t
    assert plots.series["energy/total"][-1] == sum(snapshot.energy)
    assert plots.series["contact/count"][-1] == len(snapshot.contacts)
    played = [x for x, t in zip(plots.series[REAL_TIME_FACTOR.key], plots.times) if t > 0.0]
    assert played and all(np.isfinite(played)) and max(played) > 0.0
    window.physics.reset().result(30)
    settle(qapp, window)
