"""The message log: every load or simulation error in plain words, plus warnings and notices.

Messages may come from any thread (the physics thread, the engine's ``warnings``): they travel through a Qt
signal, so they are appended in the GUI thread.
"""
from __future__ import annotations

import html
import logging
import re
import time

from PySide6 import QtCore, QtGui, QtWidgets

COLORS = {"error": "#ff6b6b", "warning": "#f0c060", "info": "#d0d4dc"}
BACKGROUND = "#1e2128"   # the log is a dark console whatever the desktop theme: every level stays readable


class LogDock(QtWidgets.QDockWidget):
    received = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__("Log", parent)
        self.setObjectName("log")
        self.view = QtWidgets.QPlainTextEdit(readOnly=True)
        self.view.setMaximumBlockCount(5000)
        self.view.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        palette = self.view.palette()
        palette.setColor(QtGui.QPalette.ColorRole.Base, QtGui.QColor(BACKGROUND))
        palette.setColor(QtGui.QPalette.ColorRole.Text, QtGui.QColor(COLORS["info"]))
        self.view.setPalette(palette)
        self.setWidget(self.view)
        self.received.connect(self._append)
        self.handler = _SignalHandler(self.received)

    def info(self, text: str):
        self.received.emit("info", text)

    def warning(self, text: str):
        self.received.emit("warning", text)

    def error(self, text: str):
        self.received.emit("error", text)

    def text(self) -> str:
        return self.view.toPlainText()

    def _append(self, level: str, text: str):
        stamp = time.strftime("%H:%M:%S")
        body = html.escape(f"{stamp} {level:7s} {text}").replace("\n", "<br>")
        color = COLORS.get(level, COLORS["info"])
        self.view.appendHtml(f'<span style="color:{color}; white-space:pre">{body}</span>')


class _SignalHandler(logging.Handler):
    """A logging handler (for ``py.warnings`` and the engine's loggers) that forwards to the log dock."""

    def __init__(self, signal):
        super().__init__(level=logging.INFO)
        self.signal = signal

    def emit(self, record):
        level = "error" if record.levelno >= logging.ERROR else "warning" if record.levelno >= logging.WARNING \
            else "info"
        text = record.getMessage().strip()
        if record.name == "py.warnings":   # "path:line: Category: message\n  source line" -> "Category: message"
            text = re.sub(r"^\S+:\d+: (\w+): ", r"\1: ", text.splitlines()[0])
        self.signal.emit(level, text)
