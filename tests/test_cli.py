"""The command line (engine/cli.py) and the streamed log (engine/logstore.py): help and version with and without
a display, usage errors, scenes without a moving body, a fault that keeps the steps done, and runs killed at
random times (SIGKILL) or stopped (SIGTERM, SIGINT) that never leave a corrupt file."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine import plugins
from engine.cli import main
from engine.logstore import StreamedLog, output_paths, read_log

ROOT = Path(__file__).resolve().parents[1]
BOXES = """<Universe>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="0" y="0" z="0.3"/></Body>
  <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="1" y="0" z="0.5"/></Body>
</Universe>"""


def articula(*args, display=None, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    if display:
        env["DISPLAY"] = display
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("display", [None, ":12345"])   # the second display does not exist: nothing may open
def test_help_and_version_print_and_exit_0_with_or_without_a_display(display):
    done = articula("--help", display=display)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: articula") and "{gui,run,sweep,compare,optimise,cache,avatar}" in done.stdout
    assert "run a scene headless" in done.stdout and "engines side by side" in done.stdout and done.stderr == ""
    done = articula("--version", display=display)
    assert done.returncode == 0 and done.stdout.strip() == "articula 0.1.0"


def test_avatar_writes_a_robot_file_of_the_requested_mass_and_refuses_a_negative_height(tmp_path, capsys):
    import engine
    out = tmp_path / "person.xml"
    assert main(["avatar", "--height", "1.62", "--mass", "55", "--sex", "f", "-o", str(out)]) == 0
    assert abs(engine.load_model(out).total_mass - 55.0) < 1e-9
    assert main(["avatar", "--height", "-1", "--mass", "55", "--sex", "f", "-o", str(tmp_path / "x.xml")]) == 2
    assert "--height must be a positive number of metres (got -1.0)" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [(["bogus"], "invalid choice: 'bogus'"),
                                           (["run", "--bogus"], "unrecognized arguments: --bogus"),
                                           (["run", "--duration", "-1"], "--duration must be > 0")])
def test_an_unknown_command_or_option_prints_the_usage_and_exits_2(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("usage: articula") and message in err


def test_a_scene_alone_means_the_window_and_runs_headless_without_a_display(tmp_path):
    (tmp_path / "empty.xml").write_text("<Universe/>")
    done = articula(str(tmp_path / "empty.xml"))
    assert done.returncode == 0, done.stderr
    assert "no display: running the scene headless" in done.stderr and "simulated  1.000 s" in done.stdout


@pytest.mark.parametrize("universe", ["<Universe/>", '<Universe><Body name="ground"><Plane/><Mass>0</Mass></Body>'
                                                    '<Body name="wall"><Box size="1 1 1"/><Mass>0</Mass></Body>'
                                                    '</Universe>'])
def test_a_scene_without_a_moving_body_runs_one_second_and_says_so(tmp_path, capsys, universe):
    (tmp_path / "static.xml").write_text(universe)
    assert main(["run", str(tmp_path / "static.xml"), "--out", str(tmp_path / "static")]) == 0
    out = capsys.readouterr()
    assert "no moving body" in out.err and "simulated  1.000 s in 1000 steps" in out.out
    columns, table = read_log(tmp_path / "static")
    assert columns == ["t", "kinetic_energy", "potential_energy", "contact_force_sum"]
    np.testing.assert_allclose(table[:, 0], np.arange(101) * 0.01, atol=1e-12)


def test_out_is_a_prefix_never_cut_at_a_dot(tmp_path, capsys):
    (tmp_path / "boxes.xml").write_text(BOXES)
    (tmp_path / "name_1.npz").write_text("another run's output")
    assert main(["-q", "run", str(tmp_path / "boxes.xml"), "--duration", "0.05", "--out",
                 str(tmp_path / "name_1.4")]) == 0
    assert (tmp_path / "name_1.4.npz").is_file() and (tmp_path / "name_1.4.csv").is_file()
    assert (tmp_path / "name_1.npz").read_text() == "another run's output"
    assert not (tmp_path / "name_1.4.part").exists()
    assert output_paths("a/run.npz")[0] == Path("a/run.npz") and output_paths("r.1")[1] == Path("r.1.csv")


def test_a_time_step_out_of_range_warns_and_a_huge_step_count_needs_force(tmp_path, capsys):
    tiny = BOXES.replace("<Universe>", "<Universe><Settings><TimeStep>1e-12</TimeStep></Settings>")
    (tmp_path / "tiny.xml").write_text(tiny)
    assert main(["run", str(tmp_path / "tiny.xml")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'tiny.xml'}:1: time step 1e-12 s is outside the usual range" in err
    assert "1,000,000,000,000 steps" in err and "--force" in err and "tiny.xml" in err


@plugins.register("test-cli-fault")
class RaisesAtStep:
    """Holds nothing; raises on its ``at``-th call."""
    kind, stage = "controller", "control"

    def __init__(self, model, at=0):
        self.nv, self.at, self.calls = model.nv, int(at), 0

    def reset(self, q, v):
        self.calls = 0

    def control(self, t, q, v):
        self.calls += 1
        if self.calls == self.at:
            raise RuntimeError("the controller broke")
        return np.zeros(self.nv)


def test_a_plugin_fault_keeps_the_steps_done_and_exits_2_with_one_line(tmp_path, capsys):
    arm = ROOT / "scenes/AFResources/xml/robot_vrml.xml"
    (tmp_path / "fault.xml").write_text(f'<Universe><MultiBody name="arm"><File>{arm}</File></MultiBody>'
                                        f'<Controller plugin="test-cli-fault" target="arm" at="100"/></Universe>')
    assert main(["-q", "run", str(tmp_path / "fault.xml"), "--out", str(tmp_path / "f"), "--log-every", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "test-cli-fault" in err and "Traceback" not in err
    columns, table = read_log(tmp_path / "f")
    np.testing.assert_allclose(table[:, 0], np.arange(100) * 1e-3, atol=1e-12)   # steps 0 … 99, then the fault


def test_the_streamed_log_reads_back_its_chunks_before_and_its_file_after_close(tmp_path):
    log = StreamedLog(tmp_path / "s", ["t", "x"], flush_seconds=0.0, buffer_rows=3)
    rows = np.arange(20.0).reshape(10, 2)
    for row in rows[:7]:
        log.append(row)
    columns, table = read_log(tmp_path / "s")      # as a kill would leave it: every row flushed so far
    assert columns == ["t", "x"] and np.array_equal(table, rows[:7])
    for row in rows[7:]:
        log.append(row)
    log.close(lambda table: {"t": table[:, 0]})
    assert np.array_equal(read_log(tmp_path / "s")[1], rows) and not (tmp_path / "s.part").exists()
    with np.load(tmp_path / "s.npz") as f:
        assert np.array_equal(f["t"], rows[:, 0])
    assert np.array_equal(np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1), rows)


def _start_run(tmp_path, duration):
    (tmp_path / "boxes.xml").write_text(BOXES)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.Popen([sys.executable, str(ROOT / "main.py"), "-q", "run", str(tmp_path / "boxes.xml"),
                             "--duration", str(duration), "--log-every", "1", "--out", str(tmp_path / "run")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_consistent(tmp_path):
    """What a killed run left: nothing yet, or a log whose rows are complete steps 0, 1, 2, … in order."""
    try:
        columns, table = read_log(tmp_path / "run")
    except FileNotFoundError:
        return 0
    assert table.shape[1] == len(columns) == 4 + 2 * 7 + 2 * 6 and np.all(np.isfinite(table))
    np.testing.assert_allclose(table[:, 0], np.arange(len(table)) * 1e-3, atol=1e-9)
    return len(table)


def test_a_run_killed_at_random_times_leaves_complete_chunks_or_complete_files(tmp_path):
    """SIGKILL at 10 random moments from start-up to the final write (seeded): every time, what is on disk reads
    back as complete rows of consecutive steps (absent only before the first flush). The moments are fractions of
    a whole run timed after a first one, which compiles what numba's cache lacks (timed itself, it put every kill
    of a warm run after its end)."""
    for attempt in ("first", "timed"):
        (tmp_path / attempt).mkdir()
        start = time.monotonic()
        proc = _start_run(tmp_path / attempt, 8.0)
        proc.communicate(timeout=600)
        total = time.monotonic() - start              # a whole run: start-up, stepping, final write
        assert proc.returncode == 0 and _check_consistent(tmp_path / attempt) == 8001
    rng = np.random.default_rng(18)
    rows = []
    for when in sorted(rng.uniform(0.3, 1.05, 10) * total):
        trial = tmp_path / f"kill_{when:.2f}"
        trial.mkdir()
        proc = _start_run(trial, 8.0)
        time.sleep(when)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        rows.append(_check_consistent(trial))
    assert max(rows) > 0                              # the kills did land after some chunks were written


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_stop_the_run_with_a_complete_file_of_the_steps_done(tmp_path, sig):
    proc = _start_run(tmp_path, 1000.0)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "run.part").glob("0*.npy")) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {sig.name}" in err and "Traceback" not in err
    assert (tmp_path / "run.npz").is_file() and not (tmp_path / "run.part").exists()
    steps = _check_consistent(tmp_path)
    assert steps > 0 and f"({steps} rows)" in out


def test_a_run_killed_during_its_final_write_leaves_its_chunks_or_its_files(tmp_path):
    """SIGKILL the moment the final PREFIX.npz or PREFIX.csv starts being written (its temporary file appears)."""
    proc = _start_run(tmp_path, 20.0)
    while proc.poll() is None and not list(tmp_path.glob(".run.*.tmp")):
        time.sleep(0.0005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run ended before its final write was caught"
    assert _check_consistent(tmp_path) == 20001
