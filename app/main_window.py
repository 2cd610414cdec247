"""The main window: the 3D view with its timeline, the playback toolbar, the docks, menus, files.

The window never waits for the physics: a 60 Hz timer takes the newest frame from the physics thread's
latest-value slot and draws it; every action is a command queued to the physics thread.
"""
from __future__ import annotations

import itertools
import logging
import os
import time
import traceback
from pathlib import Path

from PySide6 import QtCore, QtWidgets

import engine
from app.docks.inspector import InspectorDock
from app.docks.log import LogDock
from app.docks.plots import PlotsDock
from app.docks.scene_tree import SceneTreeDock
from app.docks.timing import TimingDock
from app.ghost import GhostBodies, GhostDropped, divergence
from app.interaction import Interaction
from app.menus import SPEEDS, build_menus
from app.physics_thread import PhysicsThread
from app.recording import Autosave, Recorder, write_video
from app.settings_dialog import SettingsDialog
from app.timeline import Timeline
from app.viewport import Viewport
from engine.state import State

FRAME_PERIOD_MS = 16            # the view reads snapshots at up to ~60 Hz
SLOW_PANELS_EVERY = 6           # inspector and timing panel refresh every 6th frame (~10 Hz)
RECORD_SECONDS = 30.0           # simulated seconds the ring buffer keeps
RECORD_RATE = 500.0             # at most this many recorded frames per simulated second
VIDEO_FPS = 30.0
SCENE_SUFFIXES = (".xml", ".urdf")
SESSIONS = itertools.count(1)   # numbers the autosaved sessions of this process


def autosave_folder() -> Path:
    """Where sessions are streamed as they run: ``$ARTICULA_AUTOSAVE_DIR``, else
    ``$XDG_STATE_HOME/articula/autosave`` (``~/.local/state/articula/autosave``)."""
    if os.environ.get("ARTICULA_AUTOSAVE_DIR"):
        return Path(os.environ["ARTICULA_AUTOSAVE_DIR"])
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "articula" / "autosave"


def load_scene(path, floating_base: bool = True):
    """A Universe from a universe XML, or from a URDF alone (dropped on a ground plane, with a floating base
    unless ``floating_base`` is False)."""
    path = Path(path)
    if path.suffix.lower() == ".urdf":
        return engine.universe_from_urdf(path, floating_base=floating_base)
    return engine.load_universe(path)


class StatusProgress(logging.Handler):
    """Shows the engine's progress lines (e.g. "convex decomposition of shoulder.stl …") in the status bar while
    a scene loads on the GUI thread."""

    def __init__(self, status_bar):
        super().__init__(logging.INFO)
        self.status_bar = status_bar

    def emit(self, record):
        self.status_bar.showMessage(record.getMessage())
        QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self):
        super().__init__()
        self.resize(1400, 900)
        self.universe = self.physics = self.recorder = self.pending_universe = self.error_box = None
        self.autosave = None
        self.engine_name = None        # the dynamics engine of every scene opened (None: each universe's own)
        self.ghost_engine, self.ghost_bodies = None, None   # View ▸ Ghost engine, its bodies in the viewport
        self.frame, self._version, self._ticks, self.fps = None, 0, 0, 0.0
        self.viewport = Viewport()
        self.timeline = Timeline()
        central = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QtWidgets.QWidget.createWindowContainer(self.viewport), 1)
        layout.addWidget(self.timeline)
        self.setCentralWidget(central)
        self.scene_dock, self.inspector = SceneTreeDock(self), InspectorDock(self)
        self.plots, self.timing, self.log = PlotsDock(self), TimingDock(self), LogDock(self)
        self.interaction = self.viewport.interaction = Interaction(self.viewport, self.log)
        area = QtCore.Qt.DockWidgetArea
        self.addDockWidget(area.LeftDockWidgetArea, self.scene_dock)
        self.addDockWidget(area.LeftDockWidgetArea, self.inspector)
        self.addDockWidget(area.BottomDockWidgetArea, self.plots)
        self.addDockWidget(area.BottomDockWidgetArea, self.timing)
        self.addDockWidget(area.BottomDockWidgetArea, self.log)
        self.tabifyDockWidget(self.plots, self.timing)
        self.tabifyDockWidget(self.timing, self.log)
        self.plots.raise_()
        self.resizeDocks([self.plots], [230], QtCore.Qt.Orientation.Vertical)
        self.actions = build_menus(self)
        self.rtf_label, self.fps_label = QtWidgets.QLabel(), QtWidgets.QLabel()
        self.ghost_label = QtWidgets.QLabel()
        self.ghost_label.hide()
        self.statusBar().addPermanentWidget(self.ghost_label)
        self.statusBar().addPermanentWidget(self.rtf_label)
        self.statusBar().addPermanentWidget(self.fps_label)
        self.scene_dock.selected.connect(self._on_selection)
        self.inspector.posture_changed.connect(self._on_posture)
        self.timeline.scrubbed.connect(self.seek)
        self.timeline.replay_button.toggled.connect(self._on_replay)
        self.viewport.files_dropped.connect(self.open_dropped)
        self.viewport.frameSwapped.connect(self._count_frame)
        self.setAcceptDrops(True)
        logging.captureWarnings(True)      # the engine's warnings (e.g. a mesh repaired) reach the log dock
        for name in ("py.warnings", "engine"):
            logging.getLogger(name).addHandler(self.log.handler)
        logging.getLogger("engine").setLevel(logging.INFO)   # progress lines too (status bar and log)
        self._fps_clock = QtCore.QElapsedTimer()
        self._fps_clock.start()
        self._frames_drawn = 0
        self.timer = QtCore.QTimer(self, interval=FRAME_PERIOD_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    # ---- files ------------------------------------------------------------------------------------------
    def open_scene(self, path, floating_base: bool = True) -> bool:
        """Load a universe XML or a URDF (``floating_base``: see ``load_scene``) and show it; on error keep the
        current scene, log and show a dialog."""
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        self.statusBar().showMessage(f"loading {path}…")
        QtWidgets.QApplication.processEvents()
        progress = StatusProgress(self.statusBar())      # the engine's progress lines while it loads
        engine_log = logging.getLogger("engine")
        engine_log.addHandler(progress)
        try:
            universe = load_scene(path, floating_base)
            self._start(universe)
        except Exception as exc:  # a broken file (ArticulaError with file:line) or anything a loader raised
            self.show_error(f"Could not open {path}", exc)
            return False
        finally:
            engine_log.removeHandler(progress)
            QtWidgets.QApplication.restoreOverrideCursor()
            self.statusBar().clearMessage()
        self.log.info(f"opened {path}: {len(universe.multibodies)} multibody(ies), {len(universe.statics)} "
                      f"static body(ies), time step {universe.time_step:g} s")
        self._remember(path)
        return True

    def open_dropped(self, paths):
        for path in paths:
            if Path(path).suffix.lower() == ".npz":
                self.load_recording(path)
            else:
                self.open_scene(path)

    def _start(self, universe):
        """Run a universe: a new Simulation in a new physics thread, and every view rebuilt for it."""
        simulation = engine.Simulation(universe, engine=self.engine_name)
        self.ghost_bodies = None            # set_universe takes every body out of the view
        try:
            self.viewport.set_universe(universe)
        except Exception:  # a mesh that cannot be drawn: the scene is not opened, the previous one stays
            if self.universe is not None:
                self.viewport.set_universe(self.universe)
                self.viewport.show_snapshot(self.frame.snapshot)
                self._show_ghost(self.frame)
            raise
        self._stop_physics()
        stride = max(1, round(1.0 / (RECORD_RATE * universe.time_step)))
        self.autosave = Autosave(autosave_folder(), f"{Path(universe.source).stem}-{time.strftime('%Y%m%d-%H%M%S')}"
                                 f"-{os.getpid()}-{next(SESSIONS)}", simulation)
        self.recorder = Recorder(capacity=int(RECORD_SECONDS / (stride * universe.time_step)) + 1, stride=stride,
                                 autosave=self.autosave)
        self.physics = PhysicsThread(simulation, self.recorder, speed=self.speed())
        self.interaction.start(universe, simulation, self.physics, self.recorder)
        self.universe, self.pending_universe = universe, None
        self._version, self.frame = self.physics.latest.get()
        self.viewport.show_snapshot(self.frame.snapshot)
        self.scene_dock.set_universe(universe)
        self.inspector.set_universe(universe)
        self.plots.set_universe(universe)
        self.timing.set_time_step(universe.time_step)
        self.timeline.set_length(1, follow=True)
        self.setWindowTitle(f"Articula — {universe.name} ({universe.source})")
        if self.ghost_engine is not None:           # the ghost runs on the new scene too
            self.physics.set_ghost(self.ghost_engine)
        self.physics.start()

    def _remember(self, path):
        settings = QtCore.QSettings("Articula", "Articula")
        recent = [str(Path(path).resolve())] + [p for p in settings.value("recent", [], list)
                                                if p != str(Path(path).resolve())]
        settings.setValue("recent", recent[:8])
        self.actions.update_recent(recent[:8])

    def recent_files(self) -> list:
        return QtCore.QSettings("Articula", "Articula").value("recent", [], list)

    # ---- playback ---------------------------------------------------------------------------------------
    def play_pause(self):
        if self.physics is None:
            return
        self.timeline.stop_replay()
        if self.physics.playing:
            self.physics.pause()
        else:
            self.physics.play()

    def step(self):
        if self.physics is not None:
            self.physics.step(1)

    def reset(self):
        """Back to the initial state; settings edited since the last reset take effect now."""
        self.timeline.stop_replay()
        if self.pending_universe is not None:
            self._start(self.pending_universe)
            self.log.info("new settings applied")
        elif self.physics is not None:
            self.physics.reset()
            self.plots.clear()

    def speed(self):
        return dict(SPEEDS)[self.actions.speed_box.currentText()]

    def set_ghost_engine(self, name: str | None):
        """View ▸ Ghost engine: run the scene a second time on engine ``name`` from the current state, in lockstep
        with the main run and drawn translucent over it (None: no ghost). Returns the physics command's Future."""
        self.ghost_engine = name
        if name in self.actions.ghost:
            self.actions.ghost[name].setChecked(True)
        if self.physics is not None:
            return self.physics.set_ghost(name)

    def set_speed(self, label: str):
        self.actions.speed_box.setCurrentText(label)
        if self.physics is not None:
            self.physics.set_speed(dict(SPEEDS)[label])

    def edit_settings(self):
        if self.universe is None:
            return
        dialog = SettingsDialog(self.pending_universe or self.universe, self)
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            try:
                self.pending_universe = dialog.applied_to(self.universe)
            except ValueError as exc:
                self.show_error("Invalid settings", exc)
                return
            self.log.info("settings changed: they apply on the next reset")

    # ---- recording --------------------------------------------------------------------------------------
    def seek(self, index: int):
        """Show recorded frame ``index`` (pausing the run; playing on continues from it)."""
        if self.recorder is None or not len(self.recorder):
            return
        frame = self.recorder.frame(min(index, len(self.recorder) - 1))
        self.physics.set_state(frame.state, frame.contacts, frame.external, frame.tau, frame.measurements)

    def _on_replay(self, on: bool):
        if on and self.recorder is not None and len(self.recorder) > 1:
            self.physics.pause()
            self.timeline.start_replay(self.recorder.times(), self.speed())
        else:
            self.timeline.stop_replay()

    def load_recording(self, path) -> bool:
        try:
            recorder = Recorder.load(path, capacity=self.recorder.capacity if self.recorder else None)
            first = recorder.frame(0).state
            shapes = [(q.shape, v.shape) for q, v in zip(first.q, first.v)]
            expected = [((mb.model.nq,), (mb.model.nv,)) for mb in self.universe.multibodies]
            if shapes != expected:
                raise ValueError(f"{path}: recorded multibodies {shapes} do not match the open scene's {expected}")
        except Exception as exc:
            self.show_error(f"Could not load the recording {path}", exc)
            return False
        self.physics.pause()
        self.recorder = recorder
        self.physics.set_recorder(recorder)
        self.timeline.set_length(len(recorder), follow=False)
        self.seek(0)
        self.log.info(f"loaded recording {path}: {len(recorder)} frames")
        return True

    def save_recording(self, path):
        names = [mb.name for mb in self.universe.multibodies]
        self.recorder.save(path, source=self.universe.source, multibodies=names)
        self.log.info(f"saved {len(self.recorder)} recorded frames to {path}")

    def export_video(self, path, fps: float = VIDEO_FPS):
        """Render the recording at ``fps`` frames per simulated second into a video (MP4 or GIF)."""
        times = self.recorder.times()
        if len(times) < 2:
            self.show_error("Nothing to export", ValueError("the recording holds fewer than two frames"))
            return
        count = int((times[-1] - times[0]) * fps + 1e-6) + 1            # both ends of the recording
        indices = [self.recorder.index_at(times[0] + k / fps + 1e-9) for k in range(count)]   # 1e-9: round-off
        self.physics.pause().result(timeout=10)
        size = (self.viewport.width() // 16 * 16, self.viewport.height() // 16 * 16)   # codecs' macroblocks
        progress = QtWidgets.QProgressDialog("Rendering the video…", "Cancel", 0, len(indices), self)
        progress.setWindowModality(QtCore.Qt.WindowModality.WindowModal)

        def images():
            for k, index in enumerate(indices):
                if progress.wasCanceled():
                    return
                frame = self.recorder.frame(index)
                self.physics.set_state(frame.state, frame.contacts, frame.external, frame.tau, frame.measurements).result(timeout=10)
                self.viewport.show_snapshot(self.physics.latest.get()[1].snapshot)
                progress.setValue(k)
                yield self.viewport.grab_array(size)
        try:
            write_video(path, images(), fps)
        except (OSError, RuntimeError, ValueError) as exc:
            self.show_error("Video export failed", exc)
            return
        finally:
            progress.close()
        self.log.info(f"video of {len(indices)} frames written to {path}")

    def save_screenshot(self, path):
        if not self.viewport.render_image().save(str(path)):
            raise OSError(f"could not write the image {path}")
        self.log.info(f"screenshot saved to {path}")

    # ---- the frame loop ---------------------------------------------------------------------------------
    def _tick(self):
        """Draw the newest frame, if any, and report errors of the physics thread."""
        if self.physics is None:
            return
        while not self.physics.errors.empty():
            error = self.physics.errors.get_nowait()
            if isinstance(error, GhostDropped):
                self._ghost_dropped(error)
            elif isinstance(error, engine.SimulationError):
                self.show_fault(error)
            else:
                self.show_error("The simulation stopped", error)
        version, frame = self.physics.latest.get()
        if version == self._version:
            return
        self._version, self.frame = version, frame
        snapshot = frame.snapshot
        self.viewport.show_snapshot(snapshot)
        self._show_ghost(frame)
        self.plots.add_sample(snapshot, frame.real_time_factor)
        self.timeline.set_time(snapshot.t, snapshot.step)
        self.timeline.set_length(len(self.recorder), follow=frame.playing)
        self.timeline.events.set_events(self.recorder.events(), *self.recorder.span())
        self.actions.play.setChecked(frame.playing)
        self._ticks += 1
        if self._ticks % SLOW_PANELS_EVERY == 0 or not frame.playing:
            self.inspector.update_frame(snapshot, frame.playing)
            self.timing.update_frame(snapshot, frame.real_time_factor)
            self.rtf_label.setText(f"real-time factor {frame.real_time_factor:.2f}" if frame.playing else "paused")

    def _show_ghost(self, frame):
        """Draw the ghost's bodies at its snapshot (built on its first frame, removed once it is gone) and show its
        engine and the divergence of the runs in the status bar."""
        if frame.ghost is None:
            if self.ghost_bodies is not None:
                self.ghost_bodies.remove()
                self.ghost_bodies = None
            self.ghost_label.hide()
            return
        if self.ghost_bodies is None:
            self.ghost_bodies = GhostBodies(self.viewport)
        self.ghost_bodies.show(frame.ghost)
        self.ghost_label.setText(f"ghost {frame.ghost_engine}: "
                                 f"{1e3 * divergence(frame.snapshot, frame.ghost):.3f} mm apart")
        self.ghost_label.show()

    def _ghost_dropped(self, error):
        """The ghost could not be built or faulted: say so (log and status bar); the main run goes on."""
        self.log.error(f"{error} — the main run goes on")
        self.statusBar().showMessage(str(error), 10000)
        if error.name == self.ghost_engine:
            self.ghost_engine = None
            self.actions.ghost[None].setChecked(True)

    def _count_frame(self):
        self._frames_drawn += 1
        elapsed = self._fps_clock.elapsed()
        if elapsed >= 1000:
            self.fps = 1000.0 * self._frames_drawn / elapsed
            self.fps_label.setText(f"{self.fps:.0f} fps")
            self._frames_drawn = 0
            self._fps_clock.restart()

    # ---- selection and posture --------------------------------------------------------------------------
    def _on_selection(self, selection):
        self.inspector.show_selection(selection, self.frame.snapshot if self.frame else None)
        if selection is not None and selection.kind in ("body", "joint"):
            self.viewport.highlight(selection.multibody, selection.index)
        else:
            self.viewport.highlight(None, None)

    def _on_posture(self, multibody: int, index_q: int, value: float):
        """A joint slider moved: set that coordinate (velocities of the multibody zeroed) while paused."""
        physics = self.physics

        def edit(sim):       # in the physics thread: the current state, edited, is set next (a ghost follows)
            state = sim.state
            q = [a.copy() for a in state.q]
            v = [a.copy() for a in state.v]
            q[multibody][index_q], v[multibody][:] = value, 0.0
            physics.set_state(State.capture(state.t, state.step, q, v, state.warm_start, state.plugins))
        if physics is not None and not physics.playing:
            physics.submit(edit)

    # ---- errors, drops, closing -------------------------------------------------------------------------
    def show_error(self, title: str, exc: BaseException):
        """Log the error in plain words (a traceback too when it is not an input error) and show a dialog."""
        text = str(exc) or type(exc).__name__
        if isinstance(exc, (engine.ArticulaError, ValueError, OSError)):
            self.log.error(f"{title}: {text}")
        else:
            self.log.error(f"{title}: {type(exc).__name__}: {text}\n"
                           + "".join(traceback.format_exception(exc)).rstrip())
        if self.error_box is not None:
            self.error_box.close()
        self.error_box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, title, text,
                                               QtWidgets.QMessageBox.StandardButton.Ok, self)
        self.error_box.open()

    def show_fault(self, error):
        """A fault paused the run on its last good state: log it, and offer Reset, Disable plugin (a plugin's
        fault, but the contact solver's) and Continue."""
        self.log.error(f"The simulation stopped: {error}")
        if self.error_box is not None:
            self.error_box.close()
        box = self.error_box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Warning, "The simulation stopped",
            f"{error}\n\nThe run is paused on its last good state; the recording is kept.",
            QtWidgets.QMessageBox.StandardButton.NoButton, self)
        Role = QtWidgets.QMessageBox.ButtonRole
        box.addButton("Reset", Role.ResetRole).clicked.connect(self.reset)
        plugin = getattr(error, "plugin", None)
        if plugin is not None and error.kind != "solver":
            box.addButton(f"Disable plugin '{plugin}'", Role.ActionRole).clicked.connect(
                lambda: self.physics.disable_plugin(plugin))
        box.addButton("Continue", Role.AcceptRole).clicked.connect(lambda: self.physics.resume())
        box.open()

    def dragEnterEvent(self, event):
        if any(Path(u.toLocalFile()).suffix.lower() in SCENE_SUFFIXES + (".npz",) for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event):
        self.open_dropped([u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()])
        event.acceptProposedAction()

    def _stop_physics(self):
        self.interaction.stop()
        if self.physics is not None:
            self.physics.stop()
            self.physics = None
        if self.autosave is not None:          # after the physics thread stopped: it no longer appends
            self.autosave.close()
            self.autosave = None

    def closeEvent(self, event):
        self.timer.stop()
        self._stop_physics()
        for name in ("py.warnings", "engine"):
            logging.getLogger(name).removeHandler(self.log.handler)
        super().closeEvent(event)
