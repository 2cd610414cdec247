"""Problem files of ``articula optimise`` (engine/optimise/problem.py) and the command itself: bad input names
the file, the line and the key; an infeasible start reports IPOPT's status in plain words and keeps the last
iterate; the trajectory file has the documented columns."""
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.errors import UniverseError
from engine.optimise.problem import load_problem
from engine.optimise.trajectory import columns, load_trajectory

ROOT = Path(__file__).resolve().parents[2]
SCENE = str(ROOT / "scenes" / "five_bar.xml")
GOOD = (ROOT / "scenes" / "problems" / "five_bar_transfer.toml").read_text()


def _write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _line_of(text, fragment):
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


@pytest.mark.parametrize("edit, key, fragment", [
    (("[cost]", "[cost]\nefort = 2.0"), "cost.efort", "efort"),                     # misspelt
    (("duration = 0.42", "duration = 0.42\ntime = 1"), "time", "time ="),          # unknown at the top
    (("axis = [0, -1, 0]", "axis = [0, -1, 0]\ngain = 3"), "actuators.O5.gain", "gain"),
    (("[start.v]", "[start.w]"), "start.w", "[start.w]"),                          # unknown table
])
def test_an_unknown_key_names_file_line_and_key(tmp_path, edit, key, fragment):
    text = GOOD.replace(*edit, 1)
    with pytest.raises(UniverseError) as err:
        load_problem(_write(tmp_path, text))
    assert err.value.file.endswith("p.toml") and err.value.line == _line_of(text, fragment)
    assert f"'{key}'" in str(err.value) and "unknown key" in str(err.value)


def test_a_misspelt_key_gets_a_suggestion(tmp_path):
    with pytest.raises(UniverseError, match="did you mean 'effort'"):
        load_problem(_write(tmp_path, GOOD.replace("[cost]", "[cost]\nefort = 2.0")))


@pytest.mark.parametrize("edit, key, message", [
    (("duration = 0.42", "duration = -0.42"), "duration", "positive"),
    (("duration = 0.42", 'duration = "long"'), "duration", "a number"),
    (("intervals = 40", "intervals = 1"), "intervals", "at least 2"),
    (("force = 1e-4", "force = -1.0"), "cost.force", ">= 0"),
    (("axis = [0, -1, 0]", "axis = [0, -2, 0]"), "actuators.O5.axis", "unit"),
    (("force = 1e-4", "force = 1e-4\n[solver]\nfriction_speed = 0.0"), "solver.friction_speed", "> 0"),
])
def test_a_non_physical_value_names_file_line_and_key(tmp_path, edit, key, message):
    text = GOOD.replace(*edit, 1)
    with pytest.raises(UniverseError, match=message) as err:
        load_problem(_write(tmp_path, text))
    assert err.value.line == _line_of(text, edit[1].split("\n")[-1]) and f"'{key}'" in str(err.value)


def test_malformed_toml_names_its_line(tmp_path):
    text = GOOD.replace("intervals = 40", "intervals = = 40")
    with pytest.raises(UniverseError, match="malformed TOML") as err:
        load_problem(_write(tmp_path, text))
    assert err.value.line == _line_of(text, "intervals = = 40")


@pytest.mark.parametrize("edit, key", [
    (("[start.q]\nj1 =", "[start.q]\nj9 ="), "start.q.j9"),          # no such joint
    (("[actuators.j4]", "[actuators.j5]"), "actuators.j5"),            # neither a joint nor a closure
])
def test_a_name_the_model_does_not_have_names_its_line(tmp_path, capsys, edit, key):
    text = GOOD.replace(*edit, 1)
    rc = main(["optimise", SCENE, "--problem", str(_write(tmp_path, text)), "-o", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and f"p.toml:{_line_of(text, edit[1].split(chr(10))[-1])}:" in err and f"'{key}'" in err


def test_an_infeasible_start_is_reported_in_plain_words_and_its_last_iterate_kept(tmp_path, capsys):
    """j1 turned by 0.48 rad at the start: the loop no longer closes there, which no trajectory can mend."""
    text = GOOD.replace("j1 = 1.8229600119", "j1 = 2.3", 1)
    out = tmp_path / "partial.npz"
    rc = main(["optimise", SCENE, "--problem", str(_write(tmp_path, text)), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3 and "not solved: infeasible" in err and str(out) in err
    with np.load(out) as f:
        assert str(f["status"]) == "Infeasible_Problem_Detected"
        assert f["q"].shape == (41, 4) and np.isfinite(f["tau"]).all()      # IPOPT's last iterate, whole


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_the_trajectory_file_has_t_q_v_tau(tmp_path, capsys, suffix):
    out = tmp_path / f"fb{suffix}"
    assert main(["optimise", SCENE, "--problem", str(ROOT / "scenes/problems/five_bar_transfer.toml"),
                 "-o", str(out)]) == 0
    assert "energy J_e" in capsys.readouterr().out
    traj = load_trajectory(out)
    assert traj["t"].shape == (41,) and traj["q"].shape == traj["v"].shape == traj["tau"].shape == (41, 4)
    assert traj["t"][-1] == pytest.approx(0.42)
    if suffix == ".csv":
        assert out.read_text().splitlines()[0].split(",") == columns(4, 4)


def test_an_unknown_output_format_is_refused(tmp_path, capsys):
    rc = main(["optimise", SCENE, "--problem", str(ROOT / "scenes/problems/five_bar_transfer.toml"),
               "-o", str(tmp_path / "fb.txt")])
    assert rc == 2 and ".npz or a .csv" in capsys.readouterr().err


def test_periodicity_with_an_offset_joins_the_end_to_the_start(tmp_path):
    """[periodic]: j1 ends where it started plus 0.1 rad, at the speed it started with (0); the other joints
    follow the closure."""
    import engine
    from engine.optimise.command import optimise
    text = GOOD[:GOOD.index("[end.q]")] + '[periodic]\nq = { j1 = "j1" }\noffset = { j1 = 0.1 }\n'
    result = optimise(engine.load_universe(SCENE), load_problem(_write(tmp_path, text)))
    assert result.success, result.status_words
    assert result.q[-1, 0] - result.q[0, 0] == pytest.approx(0.1, abs=1e-9)
    assert result.v[-1, 0] == pytest.approx(result.v[0, 0], abs=1e-9)
    assert result.closure_residual < 1e-8


def test_a_smooth_step_problem_refuses_the_keys_it_would_ignore(tmp_path):
    text = (ROOT / "scenes" / "problems" / "gymnast_smooth_step.toml").read_text() + "\n[cost]\neffort = 1.0\n"
    with pytest.raises(UniverseError, match="not used by a \\[smooth_step\\] problem") as err:
        load_problem(_write(tmp_path, text))
    assert err.value.line == _line_of(text, "[cost]") and "'cost'" in str(err.value)
