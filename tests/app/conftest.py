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
import tempfile

import pytest
from gui_helpers import wait

_xvfb = None
NO_DISPLAY = None   # the reason GUI tests are skipped, or None
_autosave = None    # the autosave folder this session made (removed at its end), or None


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
    global NO_DISPLAY, _autosave
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    if "ARTICULA_AUTOSAVE_DIR" not in os.environ:   # the windows' autosaves go to a folder of this session's
        _autosave = os.environ["ARTICULA_AUTOSAVE_DIR"] = tempfile.mkdtemp(prefix="articula-autosave-")
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


def pytest_unconfigure(config):
    if _autosave is not None:
        shutil.rmtree(_autosave, ignore_errors=True)


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
    wait(qapp, lambda: w.frame is not None and w.viewport.isExposed())
    yield w
    w.close()
    qapp.processEvents()
    sys.setswitchinterval(interval)


PD_ARM_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual></link>
  <link name="upper"><inertial><origin xyz="0 0 0.2"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.03" length="0.4"/></geometry></visual></link>
  <link name="fore"><inertial><origin xyz="0 0 0.15"/><mass value="0.5"/>
    <inertia ixx="0.005" iyy="0.005" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.15"/><geometry><cylinder radius="0.02" length="0.3"/></geometry></visual></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="500" velocity="20"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="500" velocity="20"/></joint>
</robot>
"""

PD_ARM_UNIVERSE = """<?xml version="1.0"?>
<Universe name="pd-arm">
  <Settings><TimeStep>0.001</TimeStep></Settings>
  <MultiBody name="arm">
    <File>arm.urdf</File>
    <FloatingBase>false</FloatingBase>
    <Joint name="shoulder" value="0.3"/>
    <Joint name="elbow" value="-0.5"/>
  </MultiBody>
  <Controller plugin="pd" target="arm" kp="50" kd="3"/>
</Universe>
"""


@pytest.fixture(scope="session")
def pd_arm_scene(tmp_path_factory):
    """A fixed-base two-joint arm held at q0 = (0.3, -0.5) rad by a joint PD (kp 50 N m/rad, kd 3 N m s/rad,
    effort limits far away): the torque of a step begun at (q, v) is kp (q0 - q) - kd v."""
    folder = tmp_path_factory.mktemp("pd_arm")
    (folder / "arm.urdf").write_text(PD_ARM_URDF)
    (folder / "arm.xml").write_text(PD_ARM_UNIVERSE)
    return folder / "arm.xml"
