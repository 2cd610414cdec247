"""Menus and the playback toolbar of the main window (File, Simulation, View), with their shortcuts."""
from __future__ import annotations

from functools import partial

from PySide6 import QtCore, QtGui, QtWidgets

from app.ghost import GHOST_ENGINES, engine_names
from app.overlays import Overlays
from app.recording import video_unavailable
from app.soles_view import MAGNIFICATIONS

APP_SHORTCUT = QtCore.Qt.ShortcutContext.ApplicationShortcut   # also when the 3D view has the focus
GLYPH_SIZES = (("Small", 0.5), ("Medium", 1.0), ("Large", 2.0), ("Huge", 4.0))   # x the scene-scaled radius
SPEEDS = (("×0.1", 0.1), ("×0.25", 0.25), ("×0.5", 0.5), ("real time", 1.0), ("×2", 2.0), ("×4", 4.0),
          ("×10", 10.0), ("as fast as possible", None))


class Actions:
    """The window's actions, built by ``build_menus``: ``play`` (checkable), ``step``, ``reset``,
    ``speed_box``, ``recent_menu``, ``ghost`` (ghost engine name or None -> its checkable entry) and the view
    toggles."""

    def __init__(self, window):
        self.window = window
        self.recent_menu = None
        self.ghost = {}

    def update_recent(self, paths):
        self.recent_menu.clear()
        for path in paths:
            self.recent_menu.addAction(path, partial(self.window.open_scene, path))
        self.recent_menu.setEnabled(bool(paths))


def build_menus(window) -> Actions:
    actions = Actions(window)
    bar = window.menuBar()
    file = bar.addMenu("&File")
    _action(file, "&Open…", partial(_open_dialog, window), QtGui.QKeySequence.StandardKey.Open)
    _action(file, "Open URDF with a &Fixed Base…", partial(_open_dialog, window, floating_base=False))
    actions.recent_menu = file.addMenu("Open &Recent")
    actions.update_recent(window.recent_files())
    file.addSeparator()
    _action(file, "&Save Recording…", partial(_save_dialog, window, "Save recording", "run.npz",
                                                "Recording (*.npz)", window.save_recording))
    _action(file, "&Load Recording…", partial(_load_recording_dialog, window))
    _action(file, "Export Screens&hot…", partial(_save_dialog, window, "Export screenshot", "screenshot.png",
                                                   "PNG image (*.png)", window.save_screenshot), "Ctrl+P")
    _action(file, "Export &Video…", partial(_video_dialog, window))
    file.addSeparator()
    _action(file, "&Quit", window.close, QtGui.QKeySequence.StandardKey.Quit)

    sim = bar.addMenu("&Simulation")
    actions.play = _action(sim, "&Play / Pause", window.play_pause, "Space", checkable=True)
    actions.step = _action(sim, "&Step", window.step, "S")
    actions.reset = _action(sim, "&Reset", window.reset, "R")
    sim.addSeparator()
    _action(sim, "Se&ttings…", window.edit_settings)
    actions.speed_box = QtWidgets.QComboBox()
    actions.speed_box.addItems([label for label, _ in SPEEDS])
    actions.speed_box.setCurrentText("real time")
    actions.speed_box.textActivated.connect(window.set_speed)

    view = bar.addMenu("&View")
    _toggle(view, "Visual geometry", True, lambda on: window.viewport.set_layer_visible("visual", on))
    _toggle(view, "Collision geometry", False, lambda on: window.viewport.set_layer_visible("collision", on))
    _toggle(view, "Ground grid", True, lambda on: window.viewport.grid.setVisible(on))
    for name in Overlays.NAMES:
        default = name in ("contacts", "friction cones", "external forces")
        _toggle(view, name.capitalize(), default, lambda on, n=name: window.viewport.set_overlay_visible(n, on))
    view.addSeparator()
    _action(view, "Larger force arrows", partial(window.viewport.scale_forces, 2.0), "]")
    _action(view, "Smaller force arrows", partial(window.viewport.scale_forces, 0.5), "[")
    glyphs = view.addMenu("Contact glyph size")
    sizes = QtGui.QActionGroup(glyphs)       # exclusive: one size checked
    for label, factor in GLYPH_SIZES:
        action = _action(glyphs, label, partial(window.viewport.set_contact_glyph_scale, factor), checkable=True)
        action.setChecked(factor == 1.0)
        sizes.addAction(action)
    deformation = view.addMenu("Sole deformation")
    factors = QtGui.QActionGroup(deformation)
    for factor in MAGNIFICATIONS:
        action = _action(deformation, f"× {factor:g}", partial(window.viewport.set_sole_magnification, factor),
                         checkable=True)
        action.setChecked(factor == 1.0)
        factors.addAction(action)
    _ghost_menu(view.addMenu("Ghost engine"), window, actions)
    view.addSeparator()
    _action(view, "Reset camera", lambda: window.viewport.reset_camera(), "Home")
    _action(view, "Frame all", lambda: window.viewport.frame_all(), "F")
    view.addSeparator()
    for dock in (window.scene_dock, window.inspector, window.plots, window.timing, window.log):
        view.addAction(dock.toggleViewAction())

    tools = window.addToolBar("Playback")
    tools.setObjectName("playback")
    tools.addAction(actions.play)
    tools.addAction(actions.step)
    tools.addAction(actions.reset)
    tools.addWidget(QtWidgets.QLabel(" speed "))
    tools.addWidget(actions.speed_box)
    return actions


def _ghost_menu(menu, window, actions):
    """None or one engine to run the scene again on, drawn translucent over the main run; an engine this build
    lacks is greyed out with a tooltip saying so."""
    menu.setToolTipsVisible(True)
    group = QtGui.QActionGroup(menu)
    available = engine_names()
    for name in (None,) + GHOST_ENGINES:
        action = _action(menu, name or "None", partial(window.set_ghost_engine, name), checkable=True)
        action.setChecked(name is None)
        if name is not None and name not in available:
            action.setEnabled(False)
            action.setToolTip(f"engine '{name}' is not available here (engines: {', '.join(available)})")
        group.addAction(action)
        actions.ghost[name] = action


def _action(menu, text, slot, shortcut=None, checkable=False):
    action = menu.addAction(text)
    action.triggered.connect(lambda checked=False: slot())
    if shortcut is not None:
        action.setShortcut(QtGui.QKeySequence(shortcut))
        action.setShortcutContext(APP_SHORTCUT)
    action.setCheckable(checkable)
    return action


def _toggle(menu, text, on, slot):
    action = menu.addAction(text)
    action.setCheckable(True)
    action.setChecked(on)
    action.toggled.connect(slot)
    return action


def _open_dialog(window, floating_base=True):
    filters = "Universe or URDF (*.xml *.urdf);;All files (*)" if floating_base else "URDF (*.urdf)"
    path, _ = QtWidgets.QFileDialog.getOpenFileName(window, "Open a universe or a robot", "", filters)
    if path:
        window.open_scene(path, floating_base)


def _scene_open(window) -> bool:
    """True when a scene is open; otherwise say so (recordings, screenshots and videos need one)."""
    if window.universe is None:
        window.show_error("No scene open", ValueError("open a universe or a URDF first (File ▸ Open)"))
    return window.universe is not None


def _load_recording_dialog(window):
    if not _scene_open(window):
        return
    path, _ = QtWidgets.QFileDialog.getOpenFileName(window, "Load a recording", "", "Recording (*.npz)")
    if path:
        window.load_recording(path)


def _save_dialog(window, title, default, filters, save):
    if not _scene_open(window):
        return
    path, _ = QtWidgets.QFileDialog.getSaveFileName(window, title, default, filters)
    if path:
        try:
            save(path)
        except (OSError, ValueError) as exc:
            window.show_error(title, exc)


def _video_dialog(window):
    if not _scene_open(window):
        return
    path, _ = QtWidgets.QFileDialog.getSaveFileName(window, "Export video", "run.mp4",
                                                    "MP4 video (*.mp4);;Animated GIF (*.gif)")
    if not path:
        return
    reason = video_unavailable(path)
    if reason:
        window.show_error("Video export unavailable", RuntimeError(reason))
        return
    window.export_video(path)
