"""The PHANToM device end to end through the real pyOpenHaptics binding, on a fake libHD built at test time."""
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from engine.interaction import DeviceError, HapticSession, PhantomDevice, SafetySettings, WorkspaceMap
from engine.spatial import quaternion_to_rotation
from haptic_helpers import PhysicsLoop, RigidWorld, fake_forces, world_body, write_fake_trajectory

M, G, GAIN = 1.75, 9.81, 0.04
ROOT = pathlib.Path(__file__).resolve().parents[2]
HD_FORCE_ERROR = 0x0204


def run_script(script, env):
    env = {k: v for k, v in {**os.environ, **env}.items() if k != "ARTICULA_LIBHD"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_without_openhaptics_the_error_says_what_to_install():
    out = run_script("from engine.interaction import PhantomDevice, DeviceError\n"
                     "try:\n    PhantomDevice().start()\nexcept DeviceError as e:\n    print(e)\n",
                     {"LD_LIBRARY_PATH": ""})
    assert "libHD.so" in out and "OpenHaptics" in out and "ARTICULA_LIBHD" in out and "mouse" in out


def test_the_binding_finds_libhd_on_the_loader_path_and_units_are_converted(fake_libhd, tmp_path):
    """LD_LIBRARY_PATH, as a user with OpenHaptics installed would run it: the pose comes back in metres with
    the rotation of the trajectory (column-major transform undone), a force goes out in newtons."""
    q = np.array([0.1, -0.3, 0.2, 0.9]) / np.linalg.norm([0.1, -0.3, 0.2, 0.9])
    row = [0.01, 0.02, -0.03, *q, 2]
    traj = write_fake_trajectory(tmp_path / "traj.txt", [[0.0, *row], [10.0, *row]])
    log = tmp_path / "forces.txt"
    out = run_script("import json, time\nfrom engine.interaction import PhantomDevice\n"
                     "d = PhantomDevice()\nd.start()\ns = d.read()\nd.write([0.1, -0.2, 0.3])\ntime.sleep(0.05)\n"
                     "d.stop()\nprint(json.dumps({'R': s.R.tolist(), 'p': s.p.tolist(), 'b': s.buttons,\n"
                     "  'max_force': d.max_force, 'lower': d.workspace.lower.tolist()}))\n",
                     {"LD_LIBRARY_PATH": str(fake_libhd.parent), "FAKEHD_TRAJECTORY": str(traj),
                      "FAKEHD_FORCE_LOG": str(log)})
    got = json.loads(out.strip().splitlines()[-1])
    np.testing.assert_allclose(got["p"], [0.01, 0.02, -0.03], atol=1e-12)
    np.testing.assert_allclose(got["R"], quaternion_to_rotation(q), atol=1e-12)
    assert got["b"] == 2 and got["max_force"] == 0.88
    np.testing.assert_allclose(got["lower"], [-0.08, -0.06, -0.035])
    sent = np.loadtxt(log)[:, 1:]     # the force goes out; a loaded machine may zero it (stale) before the log ends
    assert np.any(np.all(np.abs(sent - [0.1, -0.2, 0.3]) <= 1e-7 * 0.3, axis=1))


def test_no_device_plugged_in_is_a_clear_error(fake_libhd, fake_hd, monkeypatch):
    monkeypatch.setenv("FAKEHD_NO_DEVICE", "1")
    with pytest.raises(DeviceError, match="HD_COMM_ERROR.*plugged in"):
        PhantomDevice(library=str(fake_libhd)).start()


def test_six_dof_output_sends_torques_in_millinewton_metres(fake_libhd, fake_hd, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKEHD_OUTPUT_DOF", "6")
    monkeypatch.setenv("FAKEHD_TRAJECTORY", str(write_fake_trajectory(tmp_path / "t.txt", [[0, 0, 0, 0, 0, 0,
                                                                                          0, 1, 0]])))
    device = PhantomDevice(library=str(fake_libhd))
    device.start()
    try:
        assert device.max_torque == pytest.approx(0.188)
        device.write([0.0, 0.0, 0.0], [0.01, 0.02, -0.03])
        time.sleep(0.05)
        torque = (np.ctypeslib.ctypes.c_double * 3)()
        fake_hd.fakehd_last_torque(torque)
    finally:
        device.stop()
    np.testing.assert_allclose(list(torque), [10.0, 20.0, -30.0])
    assert fake_hd.fakehd_error_count() == 0


def grasp_through_phantom(fake_libhd, tmp_path, monkeypatch, duration, during=None):
    """The thesis grasp with the PHANToM: device frame y up, pressed at 0.3 s, lifted 10 cm over [0.5, 1.0] s."""
    rows = [[t, 0.0, y, 0.0, 0, 0, 0, 1, b] for t, y, b in
            [(0.0, 0.0, 0), (0.3, 0.0, 0), (0.301, 0.0, 1), (0.5, 0.0, 1), (1.0, 0.1, 1), (30.0, 0.1, 1)]]
    monkeypatch.setenv("FAKEHD_TRAJECTORY", str(write_fake_trajectory(tmp_path / "grasp.txt", rows)))
    world = RigidWorld(M, [0.1, 0.1, 0.05], [0.0, 0.0, 0.75], table_z=0.75)
    session = HapticSession(PhantomDevice(library=str(fake_libhd)), clock=time.monotonic,
                            workspace_map=WorkspaceMap.y_up(p=world.c + [0, 0, 0.05]),
                            safety=SafetySettings(force_gain=GAIN))
    with PhysicsLoop(world, session.physics_port(*world_body(world))) as physics:
        session.start()
        try:
            if during is not None:
                during(physics)
            time.sleep(duration)
        finally:
            session.stop()
    return world, session, physics


def test_a_grasp_through_the_real_binding_renders_the_weight(fake_libhd, fake_hd, tmp_path, monkeypatch):
    world, session, physics = grasp_through_phantom(fake_libhd, tmp_path, monkeypatch, 2.2)
    assert session.fault is None and physics.error is None and fake_hd.fakehd_error_count() == 0
    log = fake_forces(fake_hd)
    settled = log[(log[:, 0] > 1.8) & (log[:, 0] < 2.1)]
    assert len(settled) > 200                                          # the servo loop ran at ~1 kHz
    np.testing.assert_allclose(settled[:, 1:4].mean(axis=0), [0.0, -GAIN * M * G, 0.0], atol=0.02 * GAIN * M * G)
    assert np.linalg.norm(log[:, 1:4], axis=1).max() <= 0.88 + 1e-12    # the Omni's continuous maximum
    assert world.c[2] > 0.75 + 0.04                                     # lifted off the table
    assert abs(world.wrench[2] - M * G) < 0.03 * M * G


def test_an_hd_error_stops_the_coupling_and_releases_the_body(fake_libhd, fake_hd, tmp_path, monkeypatch):
    def fail_later(physics):
        time.sleep(1.3)
        fake_hd.fakehd_inject_error(HD_FORCE_ERROR)          # the binding's callback sees it and returns DONE
        time.sleep(0.4)
        assert physics.error is None
    world, session, physics = grasp_through_phantom(fake_libhd, tmp_path, monkeypatch, 0.1, during=fail_later)
    assert isinstance(session.fault, DeviceError) and "stopped updating" in str(session.fault)
    assert not world.wrench.any() and world.c[2] < 0.75 + 1e-9                  # released: back on the table
