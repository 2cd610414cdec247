"""The recorder: ring buffer, stride, truncation, .npz round trip, video export (no window needed)."""
import numpy as np
import pytest

import engine
from app.recording import Recorder, video_unavailable, write_video

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def run(default_universe):
    """A Simulation of the default scene and its recording of 30 steps with a user force on the box."""
    universe = default_universe
    sim = engine.Simulation(universe)
    recorder = Recorder(capacity=1000)
    recorder.append(sim)
    box = [mb.name for mb in universe.multibodies].index("box")
    sim.set_external_wrench(box, 0, [0.0, 0.0, 5.0, 0.0, 0.0, 0.0], sim.body_placement(box, 0)[1])
    for _ in range(30):
        sim.step(1)
        recorder.append(sim)
    return universe, sim, recorder


@pytest.fixture(scope="module")
def other(default_universe):
    """A second Simulation of the default scene (tests reset it)."""
    return engine.Simulation(default_universe)


def test_the_ring_buffer_keeps_the_newest_frames_every_stride_steps(other):
    sim = other
    sim.reset()
    recorder = Recorder(capacity=4, stride=3)
    recorder.append(sim)
    for _ in range(20):
        sim.step(1)
        recorder.append(sim)
    assert [f.state.step for f in recorder.frames()] == [9, 12, 15, 18]
    assert recorder.index_at(0.0155) == 2 and recorder.index_at(-1.0) == 0
    recorder.truncate_after(13)
    assert [f.state.step for f in recorder.frames()] == [9, 12]
    with pytest.raises(ValueError, match="capacity"):
        Recorder(capacity=0)


def test_a_run_resumed_from_a_recorded_state_continues_as_the_original(run, other):
    # bit for bit: the State carries the contact solver's warm start
    _, sim, recorder = run
    replay = other
    replay.reset()
    replay.set_state(recorder.frame(10).state)
    m, body, wrench, point = recorder.frame(11).external[0]      # the force applied during step 11
    replay.set_external_wrench(m, body, wrench, point)
    replay.step(20)
    for a, b in zip(replay.state.q + replay.state.v, sim.state.q + sim.state.v):
        np.testing.assert_array_equal(a, b)


def test_npz_round_trip_keeps_states_contacts_and_inputs(run, tmp_path):
    universe, _, recorder = run
    path = tmp_path / "run.npz"
    recorder.save(path, source=universe.source, multibodies=[mb.name for mb in universe.multibodies])
    loaded = Recorder.load(path)
    assert len(loaded) == len(recorder) == 31
    for a, b in zip(recorder.frames(), loaded.frames()):
        assert (a.state.t, a.state.step) == (b.state.t, b.state.step)
        for qa, qb in zip(a.state.q + a.state.v, b.state.q + b.state.v):
            np.testing.assert_array_equal(qa, qb)
        assert len(a.contacts) == len(b.contacts)
        assert a.contacts.body_a == b.contacts.body_a and a.contacts.body_b == b.contacts.body_b
        for field in ("point", "normal", "force", "depth", "mu"):
            np.testing.assert_array_equal(getattr(a.contacts, field), getattr(b.contacts, field))
        assert [(m, body) for m, body, _, _ in a.external] == [(m, body) for m, body, _, _ in b.external]
        for (_, _, wa, xa), (_, _, wb, xb) in zip(a.external, b.external):
            np.testing.assert_array_equal(wa, wb)
            np.testing.assert_array_equal(xa, xb)
        for ta, tb in zip(a.tau, b.tau):
            np.testing.assert_array_equal(ta, tb)
        assert a.state.warm_start.keys() == b.state.warm_start.keys()
        for key in a.state.warm_start:
            np.testing.assert_array_equal(a.state.warm_start[key], b.state.warm_start[key])
    assert any(np.any(t) for t in recorder.frame(5).tau)            # stance-pd's torques were recorded


def test_a_run_resumed_from_a_saved_recording_continues_as_the_original(run, other, tmp_path):
    # the .npz keeps the contact warm start: resuming from a loaded frame is bit for bit too
    universe, sim, recorder = run
    recorder.save(tmp_path / "run.npz")
    loaded = Recorder.load(tmp_path / "run.npz")
    other.reset()
    other.set_state(loaded.frame(10).state)
    m, body, wrench, point = loaded.frame(11).external[0]
    other.set_external_wrench(m, body, wrench, point)
    other.step(20)
    for a, b in zip(other.state.q + other.state.v, sim.state.q + sim.state.v):
        np.testing.assert_array_equal(a, b)


def test_loading_a_file_that_is_not_a_recording_names_it(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, x=np.zeros(3))
    with pytest.raises(ValueError, match="other.npz: not an Articula recording"):
        Recorder.load(path)
    with pytest.raises(ValueError, match="empty"):
        Recorder().save(tmp_path / "empty.npz")


def test_video_export_writes_gif_and_explains_what_it_cannot_write(tmp_path):
    images = [np.full((24, 32, 3), k * 40, np.uint8) for k in range(5)]
    write_video(tmp_path / "clip.gif", images, fps=10)
    import imageio.v2 as imageio
    frames = imageio.mimread(tmp_path / "clip.gif")
    assert len(frames) == 5 and frames[0].shape[:2] == (24, 32)
    assert "use .mp4 or .gif" in video_unavailable(tmp_path / "clip.bmp")
    with pytest.raises(RuntimeError, match="use .mp4 or .gif"):
        write_video(tmp_path / "clip.bmp", images, fps=10)


def test_mp4_export_needs_ffmpeg_and_says_so_when_it_is_missing(tmp_path, monkeypatch):
    images = [np.full((32, 32, 3), k * 40, np.uint8) for k in range(5)]
    try:
        import imageio_ffmpeg
        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        assert "pip install imageio-ffmpeg" in video_unavailable(tmp_path / "clip.mp4")
        return
    write_video(tmp_path / "clip.mp4", images, fps=10)
    assert (tmp_path / "clip.mp4").stat().st_size > 0
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", str(tmp_path / "no-such-ffmpeg"))   # a machine without ffmpeg
    assert "pip install imageio-ffmpeg" in video_unavailable(tmp_path / "clip.mp4")


def test_sensor_readings_are_recorded_saved_and_loaded_back(tmp_path):
    """A noisy IMU and an encoder: every recorded frame keeps the readings of its step, the .npz keeps them
    exactly, and frames recorded before a sensor read anything have none."""
    (tmp_path / "box.urdf").write_text('<robot name="b"><link name="b"><inertial><mass value="1"/>'
                                       '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
                                       '</link></robot>')
    (tmp_path / "scene.xml").write_text(
        '<Universe><MultiBody name="b"><File>box.urdf</File><FloatingBase>true</FloatingBase></MultiBody>'
        '<Sensor plugin="imu" target="b" body="b" name="imu" gyro_noise="0.1" seed="2"/></Universe>')
    sim = engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
    recorder = Recorder()
    recorder.append(sim)
    readings = []
    for _ in range(5):
        sim.step()
        recorder.append(sim)
        readings.append(sim.measurements["imu"]["gyro"].copy())
    recorder.save(tmp_path / "run.npz")
    for frames in (recorder.frames(), Recorder.load(tmp_path / "run.npz").frames()):
        assert frames[0].measurements == {}
        for frame, gyro in zip(frames[1:], readings):
            assert np.array_equal(frame.measurements["imu"]["gyro"], gyro) and np.abs(gyro).max() > 0
