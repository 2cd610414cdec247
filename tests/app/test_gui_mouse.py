"""The mouse as a haptic device in a real window (see conftest.py): double-click grasps the box, Ctrl + drag
upward lifts it through the attach coupling, the force is applied, drawn and plotted, releasing drops it."""
import time

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

import app
from app.interaction import view_ray
from app.signals import catalogue
from gui_helpers import wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
Qt = QtCore.Qt
M, G = 1.75, 9.81
SCENE = """<Universe name="mouse">
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Body name="table"><Box size="0.8 0.8 0.05" xyz="0 0 0.725"/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.15 0.15"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.8251"/></Body>
  <Device plugin="mouse" stiffness="400"/>
  <Device plugin="phantom" library="/nonexistent/libHD.so"/>
  <Configurations><Camera fov="45"><Translation x="1.6" y="-1.2" z="1.3"/><LookAt x="0" y="0" z="0.8"/></Camera>
  </Configurations>
</Universe>
"""


def pixel_of(view, x):
    """Logical pixel of the world point x through Qt's own projection and view matrices (not the ray code)."""
    w, h = view.width(), view.height()
    clip = (view.projectionMatrix((0, 0, w, h), (0, 0, w, h)) * view.viewMatrix()).map(QtGui.QVector4D(*x, 1.0))
    return (clip.x() / clip.w() + 1.0) * w / 2.0, (1.0 - clip.y() / clip.w()) * h / 2.0


def send(view, kind, xy, button=Qt.MouseButton.LeftButton, buttons=Qt.MouseButton.LeftButton,
         modifiers=Qt.KeyboardModifier.NoModifier):
    pos = QtCore.QPointF(*xy)
    QtCore.QCoreApplication.sendEvent(view, QtGui.QMouseEvent(kind, pos, view.mapToGlobal(pos), button, buttons,
                                                              modifiers))


def box_force(snapshot):
    """The external force on the box (multibody 0, body 0), zero when none."""
    return sum((np.asarray(w[:3]) for m, b, w, _ in snapshot.external if (m, b) == (0, 0)), np.zeros(3))


def steady_box_force(qapp, window, interval=0.2):
    """Process events until the force on the box is the same (to 0.1 %) at two frames ``interval`` s of simulated
    time apart: a device's script has ended and the box rests."""
    for _ in range(50):
        first = window.frame.snapshot
        wait(qapp, lambda: window.frame.snapshot.t > first.t + interval)
        a, b = box_force(first)[2], box_force(window.frame.snapshot)[2]
        if abs(b - a) <= 1e-3 * abs(a):
            return
    raise AssertionError(f"the force on the box did not settle in {50 * interval} s: {a} then {b} N")


@pytest.fixture
def mouse_scene(qapp, window, tmp_path):
    path = tmp_path / "mouse.xml"
    path.write_text(SCENE)
    assert window.open_scene(path), window.log.text()
    wait(qapp, lambda: window.frame is not None and window.viewport.snapshot is not None)
    yield window
    window.interaction.release()
    assert window.open_scene(app.DEFAULT_SCENE)
    wait(qapp, lambda: window.frame is not None)


def test_the_view_ray_through_a_projected_point_passes_through_it(qapp, mouse_scene):
    view = mouse_scene.viewport
    x = np.array([0.1, -0.05, 0.9])
    eye, d, R = view_ray(view, *pixel_of(view, x))
    np.testing.assert_allclose(np.cross(d, (x - eye) / np.linalg.norm(x - eye)), 0.0, atol=1e-6)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-6)            # Qt's matrices are single precision


def test_double_click_ctrl_drag_lifts_the_box_and_release_drops_it(qapp, mouse_scene):
    window, view = mouse_scene, mouse_scene.viewport
    window.physics.play()
    wait(qapp, lambda: window.frame.snapshot.t > 0.02, timeout=180)   # running
    z0 = window.frame.snapshot.body_p[0][0][2]
    top = window.frame.snapshot.body_p[0][0] + [0.0, 0.0, 0.075]     # centre of the box's top face
    xy = pixel_of(view, top)
    for kind in (QtCore.QEvent.Type.MouseButtonPress, QtCore.QEvent.Type.MouseButtonRelease,
                 QtCore.QEvent.Type.MouseButtonDblClick, QtCore.QEvent.Type.MouseButtonRelease):
        send(view, kind, xy, buttons=Qt.MouseButton.NoButton if "Release" in kind.name else Qt.MouseButton.LeftButton)
    assert window.interaction.grasped == (0, 0)
    np.testing.assert_allclose(window.interaction.mouse.device.position, top, atol=2e-3)   # on the picked face
    ctrl = Qt.KeyboardModifier.ControlModifier
    send(view, QtCore.QEvent.Type.MouseButtonPress, xy, modifiers=ctrl)
    for k in range(1, 21):                                             # 60 pixels up, in 20 moves
        send(view, QtCore.QEvent.Type.MouseMove, (xy[0], xy[1] - 3 * k), button=Qt.MouseButton.NoButton,
             modifiers=ctrl)
        qapp.processEvents()
        time.sleep(0.01)
    proxy = window.interaction.mouse.device.position
    up = view_ray(view, *xy)[2][:, 1]                                    # the camera's up axis
    assert proxy[2] - top[2] > 0.1                                       # the proxy went up the screen...
    np.testing.assert_allclose(np.cross(proxy - top, up), 0.0, atol=1e-5)
    wait(qapp, lambda: window.frame.snapshot.body_p[0][0][2] > z0 + 0.05                     # ...the box follows
         and np.linalg.norm(window.frame.snapshot.v[0]) < 0.05)                               # and settles
    force = box_force(window.frame.snapshot)
    assert force[2] > 0.5 * M * G                                        # the coupling holds it up
    assert force @ (proxy - top) > 0.0
    lines = window.viewport.overlays.items["external forces"]
    assert lines.visible() and len(lines.pos) == 6                       # one arrow: shaft and two barbs
    signal = {s.key: s for s in catalogue(window.universe)}["user force/z"]
    assert signal.value(window.frame.snapshot) == pytest.approx(force[2])
    send(view, QtCore.QEvent.Type.MouseButtonRelease, (xy[0], xy[1] - 60), buttons=Qt.MouseButton.NoButton,
         modifiers=ctrl)
    assert window.interaction.grasped is None
    wait(qapp, lambda: not box_force(window.frame.snapshot).any())     # released: no force any more
    wait(qapp, lambda: window.frame.snapshot.body_p[0][0][2] < z0 + 0.01)                     # it falls back
    window.physics.pause().result(10)


def test_a_missing_phantom_is_logged_and_the_mouse_still_works(qapp, mouse_scene):
    qapp.processEvents()
    assert "device 'phantom' is not available" in mouse_scene.log.text()
    assert "OpenHaptics" in mouse_scene.log.text() and "the mouse still works" in mouse_scene.log.text()
    assert mouse_scene.interaction.mouse is not None and not mouse_scene.interaction.sessions


def test_escape_lets_go_and_a_double_click_on_nothing_grasps_nothing(qapp, mouse_scene):
    window, view = mouse_scene, mouse_scene.viewport
    send(view, QtCore.QEvent.Type.MouseButtonDblClick, pixel_of(view, window.frame.snapshot.body_p[0][0]))
    assert window.interaction.grasped == (0, 0)
    QtCore.QCoreApplication.sendEvent(view, QtGui.QKeyEvent(QtCore.QEvent.Type.KeyPress, Qt.Key.Key_Escape,
                                                            Qt.KeyboardModifier.NoModifier))
    assert window.interaction.grasped is None
    send(view, QtCore.QEvent.Type.MouseButtonDblClick, (3.0, 3.0))     # the sky
    assert window.interaction.grasped is None
    distance = view.opts["distance"]
    QtCore.QCoreApplication.sendEvent(view, QtGui.QWheelEvent(
        QtCore.QPointF(50, 50), QtCore.QPointF(50, 50), QtCore.QPoint(0, 0), QtCore.QPoint(0, 120),
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False))
    assert view.opts["distance"] < distance                              # no grasp: the wheel zooms


def test_a_touch_device_in_the_scene_presses_the_box_through_the_haptic_process(qapp, window, tmp_path):
    # <Device mode="touch">: the physics thread shares the placements each step with the haptic process, whose
    # god-object stays on the box's top face while the scripted hand sinks 2 cm: the box is pushed down with
    # k_c x 2 cm and the hand feels it
    np.savez(tmp_path / "press.npz", t=[0.0, 0.2, 0.6, 60.0], position=[[0, 0, 0.05], [0, 0, 0.05], [0, 0, -0.02],
                                                                           [0, 0, -0.02]], buttons=[0, 0, 0, 0])
    path = tmp_path / "touch.xml"
    path.write_text(SCENE.replace('<Device plugin="phantom" library="/nonexistent/libHD.so"/>',
                                  '<Device plugin="scripted" file="press.npz" frame="world" origin="0 0 0.9001" '
                                  'mode="touch" stiffness="500"/>'))
    assert window.open_scene(path), window.log.text()
    try:
        wait(qapp, lambda: window.frame is not None)
        window.physics.play().result(30)
        wait(qapp, lambda: window.frame.snapshot.t > 1.5 and box_force(window.frame.snapshot)[2] < -5.0)
        steady_box_force(qapp, window)      # the script's clock starts with the haptic process, which may start late
        window.physics.pause().result(30)
        snapshot, log = window.frame.snapshot, window.log.text()
    finally:                                           # the other GUI tests expect the default scene
        assert window.open_scene(app.DEFAULT_SCENE)
        wait(qapp, lambda: window.frame is not None)
    top = snapshot.body_p[0][0][2] + 0.075
    assert box_force(snapshot)[2] == pytest.approx(-500.0 * (top - 0.8801), rel=0.05)
    assert "device 'scripted' started" in log
