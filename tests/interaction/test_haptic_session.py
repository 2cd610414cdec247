"""Safety with real threads: the watchdog on a stalled physics, stale device data, a device fault."""
import time

import numpy as np

from engine.interaction import DeviceError, HapticSession, SafetySettings, ScriptedDevice, WorkspaceMap
from haptic_helpers import FailingDevice, PhysicsLoop, RigidWorld, lockstep, wait_for, world_body

M, G = 1.75, 9.81


def holding_session(device_cls=ScriptedDevice, clock=time.monotonic, **device_kw):
    """A 1.75 kg box on a table, grasped at 0.05 s, lifted 5 cm by 0.3 s, then held."""
    world = RigidWorld(M, [0.1, 0.1, 0.05], [0.0, 0.0, 0.75], table_z=0.75)
    t = np.array([0.0, 0.049, 0.05, 0.1, 0.3, 60.0])
    z = np.array([0.0, 0.0, 0.0, 0.0, 0.05, 0.05])
    device = device_cls(t, np.stack([0 * z, 0 * z, z], axis=1), buttons=[0, 0, 1, 1, 1, 1], clock=clock,
                        **device_kw)
    session = HapticSession(device, workspace_map=WorkspaceMap(p=world.c + [0, 0, 0.05]), clock=clock,
                            safety=SafetySettings(force_gain=0.05))
    return world, device, session, session.physics_port(*world_body(world))


def test_a_stalled_physics_zeroes_the_device_force_within_50_ms():
    world, device, session, port = holding_session()
    with PhysicsLoop(world, port) as physics:
        session.start()
        try:
            time.sleep(0.7)
            t_stall = time.monotonic()
            physics.stalled.set()
            time.sleep(0.15)
            physics.stalled.clear()
            time.sleep(0.4)
        finally:
            session.stop()
    forces = device.forces()
    f = np.linalg.norm(forces[:, 1:4], axis=1)
    before = (forces[:, 0] > t_stall - 0.2) & (forces[:, 0] < t_stall)
    assert np.all(f[before] > 0.5 * 0.05 * M * G)                   # holding the box before the stall
    stalled = (forces[:, 0] > t_stall) & (forces[:, 0] < t_stall + 0.15)
    first_zero = forces[stalled][f[stalled] == 0.0][0, 0]
    assert first_zero - t_stall <= 0.050
    assert np.all(f[stalled & (forces[:, 0] >= first_zero)] == 0.0)
    assert f[-2] > 0.5 * 0.05 * M * G                                 # physics back: the force ramped back


class FreezingDevice(ScriptedDevice):
    """Its readings stop changing after ``freeze_after`` reads (a servo loop that died silently)."""

    def __init__(self, *args, freeze_after: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads, self.freeze_after, self.frozen = 0, freeze_after, None

    def read(self):
        self.reads += 1
        if self.reads <= self.freeze_after:
            self.frozen = super().read()
        return self.frozen


def test_stale_device_data_zero_the_force(clock):
    world, device, session, port = holding_session(FreezingDevice, clock, freeze_after=600)
    device.start()
    lockstep(session, port, world, clock, 0.7)
    f = np.linalg.norm(device.forces()[:, 1:4], axis=1)
    assert np.all(f[550:600] > 0.5 * 0.05 * M * G)
    stale_after = session.safety.watchdog / 1e-3                     # ticks
    assert np.all(f[600 + int(stale_after) + 1:] == 0.0) and not world.wrench.any()


def test_a_device_fault_stops_the_coupling_not_the_application():
    world, device, session, port = holding_session(FailingDevice, fail_after=400)
    with PhysicsLoop(world, port) as physics:
        session.start()
        wait_for(lambda: session.fault is not None)
        steps = physics.steps
        time.sleep(0.1)
        assert physics.steps > steps and physics.error is None         # the physics thread runs on
        assert isinstance(session.fault, DeviceError) and "USB cable pulled" in str(session.fault)
        assert not session.thread.running
        assert not world.wrench.any()                                    # the body was released
        session.stop()
    assert not device.forces()[-1, 1:4].any()                           # and the device was zeroed
