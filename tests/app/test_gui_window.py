"""The main window on the default scene, in a real window with real OpenGL (see conftest.py)."""
import csv
import sys
import time

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

import engine
from app import DEFAULT_SCENE, check_qt_binding
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def paused_at_start(qapp, window):
    window.physics.reset().result(30)
    settle(qapp, window)


def test_the_qt_binding_keeps_none_alive(qapp):
    # PySide6 6.12.0 on Python 3.11 drops a reference to None on each void call: the GUI would abort
    check_qt_binding()
    widget = QtWidgets.QWidget()
    before = sys.getrefcount(None)
    for _ in range(500):
        widget.update()
        qapp.processEvents()
    assert sys.getrefcount(None) >= before - 50


def test_window_opens_on_the_default_scene(window):
    assert window.universe.source.endswith("default.xml") and "default" in window.windowTitle()
    assert [mb.name for mb in window.universe.multibodies] == ["talos", "box"]
    assert window.scene_dock.tree.topLevelItemCount() == 1
    assert "opened" in window.log.text()


def test_viewport_renders_and_the_image_changes_when_the_robot_moves(qapp, window):
    paused_at_start(qapp, window)
    before = window.viewport.grab_array().astype(float)
    assert before.std() > 10.0                       # not a uniform clear colour
    assert len(np.unique(before.reshape(-1, 3), axis=0)) > 50

    def crouch(sim):   # lower the floating base by 30 cm
        state = sim.state
        q = [a.copy() for a in state.q]
        q[0][2] -= 0.3
        sim.set_state(type(state).capture(state.t, state.step, q, state.v))
    window.physics.submit(crouch).result(30)
    settle(qapp, window)
    after = window.viewport.grab_array().astype(float)
    assert np.abs(after - before).mean() > 1.0
    paused_at_start(qapp, window)


def test_play_advances_simulated_time_and_pause_stops_it(qapp, window):
    paused_at_start(qapp, window)
    window.play_pause()
    wait(qapp, lambda: window.frame.snapshot.t > 0.02)
    assert window.actions.play.isChecked()
    window.play_pause()
    wait(qapp, lambda: not window.physics.playing)
    settle(qapp, window)
    t = window.frame.snapshot.t
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        qapp.processEvents()
    assert window.frame.snapshot.t == t and not window.frame.playing


def test_step_advances_exactly_one_time_step(qapp, window):
    paused_at_start(qapp, window)
    window.actions.step.trigger()
    wait(qapp, lambda: window.frame.snapshot.step == 1)
    assert window.frame.snapshot.t == window.universe.time_step
    window.step()
    wait(qapp, lambda: window.frame.snapshot.step == 2)
    assert window.frame.snapshot.t == 2 * window.universe.time_step


def test_reset_restores_the_initial_state(qapp, window):
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=50)
    wait(qapp, lambda: window.frame.snapshot.step == 50)
    window.actions.reset.trigger()
    wait(qapp, lambda: window.frame.snapshot.step == 0)
    for mb, q, v in zip(window.universe.multibodies, window.frame.snapshot.q, window.frame.snapshot.v):
        np.testing.assert_array_equal(q, mb.q0)
        np.testing.assert_array_equal(v, mb.v0)
    assert window.frame.snapshot.t == 0.0
    window.physics.set_speed(1.0)


@pytest.fixture(scope="module")
def headless_100(default_universe):
    sim = engine.Simulation(default_universe)
    sim.step(100)
    return sim.state


@pytest.mark.parametrize("speed", ["as fast as possible", "×10", "real time"])
def test_n_steps_in_the_gui_give_the_headless_state(qapp, window, headless_100, speed):
    paused_at_start(qapp, window)
    window.set_speed(speed)
    window.physics.play(stop_at_step=100)
    wait(qapp, lambda: window.frame.snapshot.step == 100 and not window.frame.playing, timeout=120)
    snapshot = window.frame.snapshot
    for a, b in zip(snapshot.q + snapshot.v, headless_100.q + headless_100.v):
        np.testing.assert_array_equal(a, b)
    window.set_speed("real time")


def test_a_broken_file_is_logged_and_shown_and_the_window_stays_usable(qapp, window, tmp_path):
    paused_at_start(qapp, window)
    broken = tmp_path / "broken.xml"
    broken.write_text('<?xml version="1.0"?>\n<Universe name="x">\n  <MultiBdy name="r"/>\n</Universe>\n')
    universe = window.universe
    assert not window.open_scene(broken)
    qapp.processEvents()
    assert "broken.xml:3" in window.log.text()
    assert window.error_box.isVisible() and "broken.xml" in window.error_box.text()
    window.error_box.close()
    assert window.universe is universe
    window.step()
    wait(qapp, lambda: window.frame.snapshot.step == 1)


def test_a_simulation_error_during_play_stops_the_run_and_keeps_the_recording(qapp, window):
    paused_at_start(qapp, window)
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=10)
    wait(qapp, lambda: window.frame.snapshot.step == 10 and not window.frame.playing)

    def blow_up(sim):
        state = sim.state
        sim.set_state(type(state).capture(state.t, state.step, state.q, [np.full_like(v, 1e300) for v in state.v]))
    window.physics.submit(blow_up).result(30)
    window.play_pause()
    wait(qapp, lambda: window.error_box is not None and window.error_box.isVisible())
    assert "simulation stopped" in window.log.text().lower() and "non-finite" in window.log.text()
    window.error_box.close()
    wait(qapp, lambda: not window.frame.playing)
    assert window.recorder.frame(-1).state.step == 10 and window.recorder.frame(0).state.step == 0
    window.physics.set_speed(1.0)


def test_the_window_stays_responsive_while_the_physics_is_busy(qapp, window):
    paused_at_start(qapp, window)
    busy = window.physics.submit(lambda sim: time.sleep(1.0))
    fired = []
    QtCore.QTimer.singleShot(50, lambda: fired.append(time.monotonic()))
    start = time.monotonic()
    wait(qapp, lambda: fired, timeout=0.5)
    assert fired[0] - start < 0.4 and not busy.done()
    busy.result(30)


def test_scrubbing_the_timeline_shows_a_recorded_frame_and_recordings_round_trip(qapp, window, tmp_path):
    paused_at_start(qapp, window)
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=40)
    wait(qapp, lambda: window.frame.snapshot.step == 40 and not window.frame.playing)
    recorded = len(window.recorder)
    assert window.recorder.frame(-1).state.step == 40
    window.seek(5)
    target = window.recorder.frame(5).state
    wait(qapp, lambda: window.frame.snapshot.step == target.step)
    np.testing.assert_array_equal(window.frame.snapshot.q[0], target.q[0])
    np.testing.assert_array_equal(window.frame.snapshot.tau[0], window.recorder.frame(5).tau[0])   # its torques
    assert window.frame.snapshot.tau[0].any()
    window.save_recording(tmp_path / "run.npz")
    assert window.load_recording(tmp_path / "run.npz")
    wait(qapp, lambda: window.frame.snapshot.step == 0)
    assert len(window.recorder) == recorded
    window.save_screenshot(tmp_path / "shot.png")
    assert (tmp_path / "shot.png").stat().st_size > 1000
    window.physics.set_speed(1.0)
    window.open_scene(DEFAULT_SCENE)


URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><cylinder radius="0.03" length="0.4"/></geometry></visual></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.25"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="10" velocity="2"/></joint>
</robot>
"""


def test_a_dropped_urdf_opens_on_a_ground_plane_with_a_floating_base_and_joins_recent_files(qapp, window,
                                                                                             tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    drop = QtGui.QDropEvent(QtCore.QPointF(10, 10), QtCore.Qt.DropAction.CopyAction, mime,
                            QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    assert [mb.name for mb in window.universe.multibodies] == ["arm"]
    assert window.universe.multibodies[0].model.joints[0].type == engine.JointType.FREE
    assert any(g.kind == "plane" for s in window.universe.statics for g in s.geometries)
    assert window.recent_files()[0] == str(path.resolve())
    assert window.actions.recent_menu.actions()[0].text() == str(path.resolve())
    settle(qapp, window)
    assert window.viewport.grab_array().std() > 10.0
    assert window.open_scene(DEFAULT_SCENE)
    settle(qapp, window)


def test_settings_apply_on_reset(qapp, window):
    from app.settings_dialog import SettingsDialog
    paused_at_start(qapp, window)
    dialog = SettingsDialog(window.universe, window)
    dialog.time_step.setValue(2.0)
    dialog.gravity[2].setValue(-1.62)
    dialog.max_iterations.setValue(17)
    window.pending_universe = dialog.applied_to(window.universe)
    assert window.universe.time_step == 1e-3            # not before the reset
    window.reset()
    assert window.universe.time_step == 2e-3 and window.universe.gravity[2] == -1.62
    assert window.universe.solver.max_iterations == 17
    window.step()
    wait(qapp, lambda: window.frame.snapshot.step == 1)
    assert window.frame.snapshot.t == 2e-3
    assert window.open_scene(DEFAULT_SCENE)
    settle(qapp, window)


def test_joint_slider_sets_the_posture_while_paused(qapp, window):
    paused_at_start(qapp, window)
    tree = window.scene_dock.tree
    item = tree.findItems("leg_left_4_joint", QtCore.Qt.MatchFlag.MatchExactly | QtCore.Qt.MatchFlag.MatchRecursive)[0]
    tree.setCurrentItem(item)
    model = window.universe.multibodies[0].model
    k = model.joint("leg_left_4_joint").idx_q
    slider, lo, hi = window.inspector.sliders[(0, k)]
    slider.setValue(750)
    expected = lo + 0.75 * (hi - lo)
    wait(qapp, lambda: abs(window.frame.snapshot.q[0][k] - expected) < 1e-12)
    rows = {window.inspector.table.item(r, 0).text(): window.inspector.table.item(r, 1).text()
            for r in range(window.inspector.table.rowCount())}
    assert rows["joint"] == "leg_left_4_joint" and rows["type"] == "revolute"
    paused_at_start(qapp, window)


def test_plots_follow_a_signal_and_export_it_as_csv(qapp, window, tmp_path):
    paused_at_start(qapp, window)
    window.plots.select("talos/base/z")
    window.plots.select("energy/total")
    window.play_pause()
    wait(qapp, lambda: window.frame.snapshot.t > 0.1)
    window.play_pause()
    wait(qapp, lambda: not window.physics.playing)
    settle(qapp, window)
    window.plots.export_csv(tmp_path / "signals.csv")
    with open(tmp_path / "signals.csv", newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header[0] == "t [s]" and {"talos/base/z [m]", "energy/total [J]"} <= set(header) and len(rows) > 2
    last = dict(zip(header, (float(x) for x in rows[-1])))
    snapshot = window.frame.snapshot
    assert last["t [s]"] == snapshot.t and last["talos/base/z [m]"] == snapshot.q[0][2]
    assert last["energy/total [J]"] == sum(snapshot.energy)
    assert window.timing.stages and "ms" in window.timing.summary.text()
    window.plots.select("talos/base/z", on=False)


def test_inspector_and_plots_show_the_joint_torques_the_controller_applied(qapp, window, pd_arm_scene, tmp_path):
    from engine.state import State
    assert window.open_scene(pd_arm_scene), window.log.text()
    settle(qapp, window)
    q, v = np.array([0.4, -0.7]), np.array([0.7, -1.1])
    window.physics.set_state(State.capture(0.0, 0, [q], [v])).result(30)
    tree = window.scene_dock.tree
    tree.setCurrentItem(tree.findItems("elbow", QtCore.Qt.MatchFlag.MatchExactly | QtCore.Qt.MatchFlag.MatchRecursive)[0])
    window.plots.select("arm/tau/elbow")
    settle(qapp, window)
    window.step()
    wait(qapp, lambda: window.frame.snapshot.step == 1)
    settle(qapp, window)
    # joint PD of the scene: tau = kp (q0 - q) - kd v = 50 (-0.5 + 0.7) - 3 (-1.1) = 13.3 N m at the elbow
    rows = {window.inspector.table.item(r, 0).text(): window.inspector.table.item(r, 1).text()
            for r in range(window.inspector.table.rowCount())}
    assert float(rows["joint τ"].strip("[]")) == pytest.approx(13.3, abs=1e-4)
    window.plots.export_csv(tmp_path / "tau.csv")
    with open(tmp_path / "tau.csv", newline="") as f:
        header, *_, last = list(csv.reader(f))
    last = dict(zip(header, (float(x) for x in last)))
    assert last["t [s]"] == window.universe.time_step and last["arm/tau/elbow [N m]"] == pytest.approx(13.3, abs=1e-12)
    assert window.open_scene(DEFAULT_SCENE)
    settle(qapp, window)


def _view_action(window, text):
    menu = next(m for m in window.menuBar().findChildren(QtWidgets.QMenu) if m.title() == "&View")
    return next(a for a in menu.actions() if a.text() == text)


def test_view_toggles_show_and_hide_friction_cones_and_link_frames(qapp, window):
    paused_at_start(qapp, window)
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=30)
    wait(qapp, lambda: window.frame.snapshot.step == 30 and not window.frame.playing)
    settle(qapp, window)
    assert len(window.frame.snapshot.contacts) > 0          # Talos stands on its soles
    shown = window.viewport.grab_array().astype(float)
    cones = _view_action(window, "Friction cones")
    assert cones.isChecked()
    cones.trigger()
    assert not window.viewport.overlays.items["friction cones"].visible()
    hidden = window.viewport.grab_array().astype(float)
    cones.trigger()
    np.testing.assert_array_equal(window.viewport.grab_array(), shown.astype(np.uint8))
    assert np.abs(hidden - shown).max() > 0
    frames = _view_action(window, "Link frames")
    frames.trigger()
    assert np.abs(window.viewport.grab_array().astype(float) - shown).mean() > 0.05
    frames.trigger()
    polygon = _view_action(window, "Support polygon")                # off by default: the feet's hull and ZMP
    assert not polygon.isChecked()
    polygon.trigger()
    settle(qapp, window)
    items = window.viewport.overlays.items
    assert items["support polygon"].visible() and len(items["support polygon"].pos) >= 6
    assert items["ZMP"].visible() and len(items["ZMP"].pos) == 2            # Talos and the box on the table
    assert np.abs(window.viewport.grab_array().astype(float) - shown).max() > 0
    polygon.trigger()
    window.physics.set_speed(1.0)
    paused_at_start(qapp, window)


def test_the_recording_exports_as_a_video_from_the_window(qapp, window, tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    paused_at_start(qapp, window)
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=200)
    wait(qapp, lambda: window.frame.snapshot.step == 200 and not window.frame.playing)
    window.export_video(tmp_path / "run.gif", fps=50)
    frames = imageio.mimread(tmp_path / "run.gif")
    assert len(frames) == 11                                   # 0 to 0.2 s of recording at 50 frames per second
    assert frames[0].shape[:2] == (window.viewport.height() // 16 * 16, window.viewport.width() // 16 * 16)
    assert "video of 11 frames" in window.log.text()
    window.physics.set_speed(1.0)
    paused_at_start(qapp, window)


def test_a_urdf_opens_with_a_fixed_base_when_asked(qapp, window, tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    assert window.open_scene(path, floating_base=False)
    model = window.universe.multibodies[0].model
    assert [j.type for j in model.joints] == [engine.JointType.REVOLUTE] and model.nq == 1
    settle(qapp, window)
    assert window.open_scene(DEFAULT_SCENE)
    settle(qapp, window)
