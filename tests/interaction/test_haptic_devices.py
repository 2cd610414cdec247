"""Scripted and mouse devices, workspace map, recording round trip, mailbox, haptic thread."""
import sys
import threading
import time

import numpy as np
import pytest

from engine.interaction import (DeviceState, HapticSession, HapticThread, Mailbox, MouseDevice, ScriptedDevice,
                                WorkspaceMap, load_trajectory)
from engine.spatial import quaternion_to_rotation, rotation_axis_angle
from haptic_helpers import RigidWorld, lockstep, world_body


def test_scripted_device_interpolates_a_csv_trajectory(tmp_path, clock):
    """Linear position, constant-rate rotation about z (90 degrees in 1 s), buttons held from the last sample."""
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    path = tmp_path / "traj.csv"
    path.write_text("t,x,y,z,qx,qy,qz,qw,buttons\n0,0,0,0,0,0,0,1,0\n"
                    f"1,0.1,0.2,-0.3,0,0,{s},{c},1\n2,0.1,0.2,-0.3,0,0,{s},{c},3\n")
    device = ScriptedDevice.from_file(path, clock=clock)
    device.start()
    clock.t += 0.25
    state = device.read()
    np.testing.assert_allclose(state.p, [0.025, 0.05, -0.075], atol=1e-15)
    np.testing.assert_allclose(state.v, [0.1, 0.2, -0.3], atol=1e-15)
    np.testing.assert_allclose(state.w, [0.0, 0.0, np.pi / 2], atol=1e-12)
    assert state.buttons == 0 and state.t == clock.t
    clock.t += 1.0
    state = device.read()
    np.testing.assert_allclose(state.R, rotation_axis_angle([0, 0, 1], np.pi / 2), atol=1e-12)
    assert state.buttons == 1 and not state.v.any()
    clock.t += 5.0
    assert device.read().buttons == 3                                 # after the end: the last sample holds


def test_scripted_device_rejects_bad_files_naming_them(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,x,y\n0,0,0\n")
    with pytest.raises(ValueError, match="bad.csv.*position"):
        load_trajectory(bad)
    np.savez(tmp_path / "back.npz", t=[0.0, 1.0, 0.5], position=np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"back.npz.*strictly increasing \(row 2"):
        load_trajectory(tmp_path / "back.npz")
    np.savez(tmp_path / "nan.npz", t=[0.0, 1.0], position=[[0, 0, 0], [0, np.nan, 0]])
    with pytest.raises(ValueError, match="nan.npz.*non-finite"):
        load_trajectory(tmp_path / "nan.npz")
    with pytest.raises(ValueError, match="traj.txt.*npz or a .csv"):
        load_trajectory(tmp_path / "traj.txt")


def test_a_recorded_session_replays_through_the_scripted_device(tmp_path, clock):
    """Record a grasp session, save it, replay the file: the same device poses and buttons at the same times."""
    world = RigidWorld(1.0, [0.05] * 3, [0.0, 0.0, 0.5], table_z=0.5)
    t = np.array([0.0, 0.1, 0.4])
    q = np.array([[0, 0, 0, 1], [0, 0, 0, 1], [0, np.sin(0.2), 0, np.cos(0.2)]])
    original = ScriptedDevice(t, [[0, 0, 0], [0, 0, 0.01], [0.02, 0, 0.05]], q, [0, 1, 1], clock=clock)
    session = HapticSession(original, workspace_map=WorkspaceMap(p=world.c + [0, 0, 0.05]), clock=clock)
    port = session.physics_port(*world_body(world))
    original.start()
    lockstep(session, port, world, clock, 0.4)
    session.recording.save(tmp_path / "session.npz")
    recorded = np.load(tmp_path / "session.npz")
    np.testing.assert_allclose(recorded["force"], original.forces()[:, 1:4])
    replay = ScriptedDevice.from_file(tmp_path / "session.npz")
    for k in (0, 57, 150, 399):                                      # tick k read the original at (k + 1) ms
        expected = original.sample(1e-3 * (k + 1))
        got = replay.sample(recorded["t"][k])
        np.testing.assert_allclose(got.p, expected.p, atol=1e-12)
        np.testing.assert_allclose(got.R, expected.R, atol=1e-12)
        assert got.buttons == expected.buttons


def test_workspace_map_is_power_consistent():
    """f_dev = s R^T f_world conserves power: f_dev . v_dev = f_world . v_world."""
    rng = np.random.default_rng(1)
    m = WorkspaceMap(rotation_axis_angle(rng.normal(size=3), 1.1), rng.normal(size=3), scale=3.0)
    state = DeviceState(0.0, quaternion_to_rotation([0, 0, 0, 1]), rng.normal(size=3), rng.normal(size=3))
    R, p, v, w = m.pose(state)
    f = rng.normal(size=3)
    f_dev, _ = m.force_to_device(f, np.zeros(3))
    assert f_dev @ state.v == pytest.approx(f @ v)
    np.testing.assert_allclose(p, m.R @ (3.0 * state.p) + m.p)
    y_up = WorkspaceMap.y_up()
    np.testing.assert_allclose(y_up.R @ [0, 1, 0], [0, 0, 1])       # OpenHaptics' up is the world's up
    with pytest.raises(ValueError, match="rotation"):
        WorkspaceMap(R=2 * np.eye(3))


def test_mouse_moves_the_proxy_in_the_camera_plane_and_in_depth(clock):
    view_R = rotation_axis_angle([1, 0, 0], np.pi / 2)              # camera looking along +y, up is +z
    mouse = MouseDevice(clock=clock)
    clock.t += 0.01
    mouse.drag(0.02, 0.03, view_R)                                   # right = +x, up = +z
    np.testing.assert_allclose(mouse.position, [0.02, 0.0, 0.03], atol=1e-15)
    np.testing.assert_allclose(mouse.read().v, [2.0, 0.0, 3.0], atol=1e-12)
    clock.t += 0.01
    mouse.push(0.05, view_R)                                         # into the screen: +y
    np.testing.assert_allclose(mouse.position, [0.02, 0.05, 0.03], atol=1e-15)
    clock.t += 0.2
    assert not mouse.read().v.any()                                  # resting mouse, no velocity
    mouse.press()
    assert mouse.read().buttons == 1
    mouse.release()
    mouse.write([0.0, 0.0, -1.5])
    assert mouse.read().buttons == 0 and mouse.force[2] == -1.5


def test_mailbox_keeps_only_the_latest_value_and_never_tears():
    box = Mailbox()
    assert box.get() == (None, 0, None) and box.age() == float("inf")
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            box.put((i, i))
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    seen = [box.get() for _ in range(2000)]
    stop.set()
    thread.join()
    assert all(letter.value is None or letter.value[0] == letter.value[1] for letter in seen)
    seqs = [letter.seq for letter in seen]
    assert seqs == sorted(seqs) and box.get().seq == box.get().value[0] + 1


def test_haptic_thread_ticks_stops_and_survives_a_faulty_tick():
    previous = sys.getswitchinterval()
    ticks = []
    thread = HapticThread(lambda: ticks.append(time.perf_counter()), rate=500.0, switch_interval=1e-4)
    thread.start()
    assert sys.getswitchinterval() == pytest.approx(1e-4)
    time.sleep(0.1)
    thread.stop()
    assert not thread.running and len(ticks) > 10 and thread.error is None
    assert sys.getswitchinterval() == previous
    summary = thread.stats.summary()
    assert summary.count == len(ticks) - 1 and sum(summary.histogram) == summary.count
    assert "mean rate" in summary.table()

    errors = []

    def faulty():
        raise RuntimeError("device unplugged")

    thread = HapticThread(faulty, on_error=errors.append)
    thread.start()
    thread._thread.join(1.0)
    assert not thread.running and isinstance(thread.error, RuntimeError) and errors == [thread.error]
    thread.stop()
    with pytest.raises(ValueError, match="rate"):
        HapticThread(faulty, rate=0.0)
