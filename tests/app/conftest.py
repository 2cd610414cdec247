"""GUI tests run in a real window with real OpenGL (Mesa's software renderer works).

A display is needed: the tests use $DISPLAY when it is set; otherwise they start a private Xvfb server for
the session when the ``Xvfb`` binary is installed; otherwise every test of this folder that needs Qt is
skipped with the reason. (QT_QPA_PLATFORM=offscreen cannot create an OpenGL context, so it is not used.)
Run locally with ``xvfb-run -a python -m pytest tests/app``.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess

import pytest

_xvfb = None
NO_DISPLAY = None   # the reason GUI tests are skipped, or None


def _die_with_parent():
    """In the Xvfb child: get SIGTERM when the test process ends (the QApplication keeps its connection to the
    display until then, so the server is not stopped earlier), even if the process aborts."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG = 1


def _start_xvfb():
    """Start ``Xvfb`` on a free display number (it writes the number on the pipe given by -displayfd)."""
    global _xvfb
    read, write = os.pipe()
    _xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1200x24", "-nolisten",
                              "tcp"], pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        raise RuntimeError("Xvfb did not report a display number")
    os.environ["DISPLAY"] = f":{number}"


def pytest_configure(config):
    global NO_DISPLAY
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    if not os.environ.get("DISPLAY"):
        if shutil.which("Xvfb") is None:
            NO_DISPLAY = "no X display: set DISPLAY, or install Xvfb (or run under xvfb-run -a)"
        else:
            try:
                _start_xvfb()
            except (OSError, RuntimeError) as exc:
                NO_DISPLAY = f"could not start Xvfb: {exc}"
    if NO_DISPLAY is None:
        from PySide6 import QtCore
        QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
        QtCore.QStandardPaths.setTestModeEnabled(True)    # QSettings (recent files) go to a test location


def pytest_collection_modifyitems(config, items):
    if NO_DISPLAY is None:
        return
    skip = pytest.mark.skip(reason=NO_DISPLAY)
    for item in items:
        if "qapp" in item.fixturenames or "qtbot" in item.fixturenames or "window" in item.fixturenames:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def default_universe():
    import engine
    from app import DEFAULT_SCENE
    return engine.load_universe(DEFAULT_SCENE)


@pytest.fixture(scope="session")
def window(qapp):
    """The main window on the default scene, shown and drawn once, shared by the GUI tests (each leaves it
    paused on the default scene); closed, its physics thread stopped, at the end of the session."""
    import sys

    import app
    from app.main_window import MainWindow
    interval = sys.getswitchinterval()
    assert app.application() is qapp
    w = MainWindow()
    w.resize(1200, 800)
    w.show()
    assert w.open_scene(app.DEFAULT_SCENE), w.log.text()
    _wait(qapp, lambda: w.frame is not None and w.viewport.isExposed())
    yield w
    w.close()
    qapp.processEvents()
    sys.setswitchinterval(interval)


def _wait(qapp, condition, timeout=20.0):
    import time
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("condition not met in time")
        qapp.processEvents()
        time.sleep(0.005)
