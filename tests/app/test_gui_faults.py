"""A plugin fault in the GUI (issue 18): the run pauses on the last good state, the recording keeps steps
0 … k − 1, and a dialog names the plugin and offers Reset, Disable plugin and Continue — each works."""
import shutil

import numpy as np
import pytest

import app
from engine import plugins
from gui_helpers import wait

K = 30   # the controller's faulty call


@plugins.register("gui-test-fault")
class FaultyPD:
    """A joint PD toward q0 that raises on its ``at``-th call after each reset."""
    kind, stage = "controller", "control"

    def __init__(self, q0, at=K):
        self.q0, self.at, self.calls = q0.copy(), int(at), 0

    def reset(self, q, v):
        self.calls = 0

    def control(self, t, q, v):
        self.calls += 1
        if self.calls == self.at:
            raise ZeroDivisionError("gain schedule")
        return 50.0 * (self.q0 - q) - 3.0 * v


@pytest.fixture
def faulty_arm(qapp, window, pd_arm_scene, tmp_path):
    """The window on the PD arm driven by the faulty controller; back on the default scene afterwards."""
    shutil.copy(pd_arm_scene.parent / "arm.urdf", tmp_path / "arm.urdf")
    path = tmp_path / "faulty.xml"
    path.write_text(pd_arm_scene.read_text().replace('plugin="pd" target="arm" kp="50" kd="3"',
                                                     'plugin="gui-test-fault" target="arm"'))
    assert window.open_scene(path), window.log.text()
    wait(qapp, lambda: window.frame is not None)
    window.physics.set_speed(None).result(30)
    yield window
    if window.error_box is not None:
        window.error_box.close()
    window.physics.set_speed(1.0).result(30)
    assert window.open_scene(app.DEFAULT_SCENE)
    wait(qapp, lambda: window.frame is not None)


def play_to_the_fault(qapp, window):
    window.physics.play()
    wait(qapp, lambda: window.error_box is not None and window.error_box.isVisible())
    wait(qapp, lambda: not window.frame.playing and window.frame.snapshot.step == K - 1)
    return {b.text(): b for b in window.error_box.buttons()}


def test_a_plugin_fault_pauses_the_gui_and_reset_disable_and_continue_each_work(qapp, faulty_arm):
    window = faulty_arm
    buttons = play_to_the_fault(qapp, window)
    text = window.error_box.text()
    assert text.startswith(f"controller plugin 'gui-test-fault' failed in stage 'control', multibody 'arm', step {K} "
                           f"(t = 0.029000 s): raised ZeroDivisionError: gain schedule")
    assert "The simulation stopped" in window.log.text() and "Traceback" not in window.log.text()
    assert sorted(buttons) == ["Continue", "Disable plugin 'gui-test-fault'", "Reset"]
    frames = window.recorder.frames()                       # steps 0 … K − 1, every stride-th
    assert [f.state.step for f in frames] == list(range(0, K, window.recorder.stride))
    kept = window.physics.submit(lambda sim: (sim.state, sim.faulted)).result(30)
    assert kept[0].step == K - 1 and kept[1] is not None
    np.testing.assert_array_equal(window.frame.snapshot.q[0], kept[0].q[0])

    buttons["Reset"].click()                                # back to step 0, paused, fault cleared
    wait(qapp, lambda: window.frame.snapshot.step == 0 and not window.frame.playing)
    assert window.physics.submit(lambda sim: sim.faulted).result(30) is None

    buttons = play_to_the_fault(qapp, window)               # the controller faults again at its K-th call
    buttons["Continue"].click()                             # from step K − 1; it faults only once per reset
    wait(qapp, lambda: window.frame.snapshot.step >= 3 * K)
    window.physics.pause().result(30)
    assert not window.error_box.isVisible()

    window.physics.reset().result(30)
    buttons = play_to_the_fault(qapp, window)
    buttons["Disable plugin 'gui-test-fault'"].click()      # the arm runs on without its controller
    wait(qapp, lambda: window.frame.snapshot.step >= 2 * K)
    window.physics.pause().result(30)
    assert window.physics.submit(lambda sim: (sim.faulted, sim.runs[0].controllers)).result(30) == (None, [])
    assert not window.error_box.isVisible()
