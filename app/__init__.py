"""Articula's desktop application (PySide6 + pyqtgraph): ``run_gui(path=None)`` opens the main window.

The GUI imports only the engine's public API; the physics runs in its own thread (``app.physics_thread``) and
the window draws the immutable snapshots it publishes (seed 000 §2 "GUI and threads": display and dynamics
are separate threads).
"""
from __future__ import annotations

import sys
from pathlib import Path

import OpenGL

OpenGL.ERROR_CHECKING = False   # set before OpenGL.GL is imported: a glGetError per call halves the frame rate

DEFAULT_SCENE = Path(__file__).resolve().parent.parent / "scenes" / "default.xml"


def check_qt_binding():
    """PySide6 6.12.0 on Python < 3.12 releases a reference to None on every call of a C++ method returning
    void (update, repaint, processEvents...): None is freed after a few thousand frames and the interpreter
    aborts ("none_dealloc"). Refuse it with a clear message rather than crash minutes later."""
    import PySide6
    if PySide6.__version__ == "6.12.0" and sys.version_info < (3, 12):
        raise RuntimeError("PySide6 6.12.0 corrupts Python 3.11's reference count of None and crashes the GUI "
                           "within minutes: install another version, e.g. pip install 'PySide6==6.11.3'")


SWITCH_INTERVAL = 0.001   # s: how long a thread may hold the GIL while another waits for it (Python: 0.005)


def application():
    """The QApplication, created for the GUI process if there is none yet.

    Besides checking the Qt binding and sharing OpenGL contexts between windows, it shortens the
    interpreter's thread switch interval: the physics thread runs Python between its compiled kernels, and
    every OpenGL or Qt call of the drawing thread releases the GIL, which it would then wait up to 5 ms to
    take back (the "convoy effect"), dividing the frame rate while the physics is busy."""
    check_qt_binding()
    from PySide6 import QtCore, QtWidgets
    sys.setswitchinterval(SWITCH_INTERVAL)
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    qt_app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    qt_app.setApplicationName("Articula")
    return qt_app


def run_gui(path=None, engine=None) -> int:
    """Open the main window on ``path`` (a universe XML or a URDF; the default scene when None) and run
    the Qt event loop; returns its exit code. ``engine``: the dynamics engine, if not the universe's."""
    qt_app = application()
    from app.main_window import MainWindow
    window = MainWindow()
    window.engine_name = engine
    window.show()
    window.open_scene(path or DEFAULT_SCENE)
    return qt_app.exec()


__all__ = ["DEFAULT_SCENE", "application", "run_gui"]
