"""The GUI streams every recorded state to its autosave while the scene runs (issue 18: a crash of the window
loses at most a second), and writes the session's files when the scene is closed."""
import numpy as np

import app
from app.main_window import autosave_folder
from engine.logstore import read_log
from gui_helpers import wait


def test_a_running_session_is_on_disk_within_a_second_and_complete_when_closed(qapp, window, pd_arm_scene):
    assert window.open_scene(pd_arm_scene), window.log.text()
    wait(qapp, lambda: window.frame is not None)
    autosave = window.autosave
    prefix = autosave.folder / autosave.stream.npz.stem
    window.physics.set_speed(1.0).result(30)
    window.physics.play()
    wait(qapp, lambda: list(autosave.stream.part.glob("0*.npy")), timeout=10)   # a chunk within ~1 s of wall time
    columns, table = read_log(prefix)                 # what a crash would leave: complete states, in order
    assert columns[:2] == ["t", "step"] and columns[2:4] == ["arm.q0", "arm.q1"] and len(table) > 0
    assert np.all(np.diff(table[:, 1]) == window.recorder.stride)
    window.physics.pause()
    wait(qapp, lambda: not window.frame.playing)
    recorded = [window.recorder.frame(i).state for i in range(len(window.recorder))]
    assert window.open_scene(app.DEFAULT_SCENE)       # closing the arm's session finishes its files
    wait(qapp, lambda: window.frame is not None)
    columns, table = read_log(prefix)
    assert prefix.with_suffix(".npz").is_file() and not autosave.stream.part.exists()
    assert len(table) == len(recorded)                # every recorded state, and the same ones
    np.testing.assert_array_equal(table[:, 2:4], np.array([s.q[0] for s in recorded]))
    assert autosave.folder == autosave_folder()
