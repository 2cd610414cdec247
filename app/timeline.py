"""The timeline under the 3D view: a slider over the recorded frames (drag to scrub), the run's discrete events
marked under it (``EventStrip``), a replay button that plays the recording back at the chosen speed, and the
simulated time."""
from __future__ import annotations

import time

from PySide6 import QtCore, QtGui, QtWidgets

REPLAY_PERIOD_MS = 33
EVENT_COLORS = {"collision": (200, 40, 40), "lift-off": (40, 90, 210)}   # impacts red, lift-offs blue


class EventStrip(QtWidgets.QWidget):
    """A thin strip under the slider with a tick at the time of each discrete event of the recorded run (the
    event-driven wheels' lift-offs and collisions, engine/rolling/); its tooltip lists them."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFixedHeight(6)
        self.ticks = ()           # (position along the strip in [0, 1], kind)

    def set_events(self, events, t0: float, t1: float):
        """``events``: (t, multibody, WheelEvent) over the recorded span [t0, t1]."""
        span = t1 - t0
        ticks = tuple(((t - t0) / span if span > 0.0 else 0.0, e.kind) for t, _, e in events)
        if ticks != self.ticks:
            self.ticks = ticks
            self.setToolTip("\n".join(f"{m}: {e.line()}" for _, m, e in events))
            self.update()

    def paintEvent(self, event):
        painter = QtGui.QPainter(self)
        width = self.width() - 2
        for x, kind in self.ticks:
            color = QtGui.QColor(*EVENT_COLORS.get(kind, (0, 0, 0)))
            painter.fillRect(int(round(x * width)), 0, 2, self.height(), color)
        painter.end()


class Timeline(QtWidgets.QWidget):
    """``scrubbed(index)``: the user moved to recorded frame ``index`` (by hand or by the replay)."""

    scrubbed = QtCore.Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, maximum=0)
        self.replay_button = QtWidgets.QToolButton(text="Replay", checkable=True)
        self.replay_button.setToolTip("Play the recording back from the slider's position")
        self.label = QtWidgets.QLabel("t = 0.000 s")
        self.label.setMinimumWidth(170)
        self.events = EventStrip()
        track = QtWidgets.QVBoxLayout()
        track.setContentsMargins(0, 0, 0, 0)
        track.setSpacing(0)
        track.addWidget(self.slider)
        track.addWidget(self.events)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.replay_button)
        layout.addLayout(track, 1)
        layout.addWidget(self.label)
        self.slider.sliderMoved.connect(self.scrubbed)
        self.slider.actionTriggered.connect(self._on_action)
        self.replay_button.toggled.connect(self._on_replay)
        self.timer = QtCore.QTimer(self, interval=REPLAY_PERIOD_MS)
        self.timer.timeout.connect(self._replay_tick)
        self.times = None        # recorded times, set when a replay starts
        self.speed = 1.0
        self._replay_start = (0.0, 0.0)

    def set_length(self, n: int, follow: bool):
        """``n`` recorded frames; ``follow`` keeps the slider at the newest one (a live run)."""
        if self.slider.isSliderDown() or self.timer.isActive():
            return
        self.slider.blockSignals(True)
        self.slider.setMaximum(max(n - 1, 0))
        if follow:
            self.slider.setValue(self.slider.maximum())
        self.slider.blockSignals(False)

    def set_time(self, t: float, step: int):
        self.label.setText(f"t = {t:.3f} s  (step {step})")

    def start_replay(self, times, speed: float | None):
        """Play back recorded frames of times ``times`` from the slider's position, at ``speed`` × real time."""
        self.times, self.speed = times, speed or 4.0
        if self.slider.value() >= len(times) - 1:
            self.slider.setValue(0)
        self._replay_start = (time.perf_counter(), float(times[self.slider.value()]))
        self.timer.start()

    def stop_replay(self):
        self.timer.stop()
        self.replay_button.blockSignals(True)
        self.replay_button.setChecked(False)
        self.replay_button.blockSignals(False)

    def _on_replay(self, on: bool):
        if not on:
            self.timer.stop()

    def _replay_tick(self):
        wall0, t0 = self._replay_start
        target = t0 + (time.perf_counter() - wall0) * self.speed
        index = int(min(self.times.searchsorted(target, side="right") - 1, len(self.times) - 1))
        self.slider.setValue(index)
        self.scrubbed.emit(index)
        if index >= len(self.times) - 1:
            self.stop_replay()

    def _on_action(self, action):
        if action != QtWidgets.QAbstractSlider.SliderAction.SliderMove:   # page/arrow steps
            QtCore.QTimer.singleShot(0, lambda: self.scrubbed.emit(self.slider.value()))
