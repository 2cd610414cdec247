"""Engines side by side (engine/compare.py, ``articula compare``): the same engine twice agrees bit for bit with
a plain run, two universes part as their closed form says, a fault stops one engine and keeps its rows, the
command line writes its .npz and .png and prints the table, and each bad input gets its message."""
import math
import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

import engine
from engine import plugins
from engine.cli import main
from engine.compare import PARTED, compare, known_engines, normal_force
from engine.state import ActiveContacts

ROOT = Path(__file__).resolve().parents[1]
G = 9.81
DROP = """<Universe>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>2</Mass><Translation x="0" y="0" z="0.3"/></Body>
  <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="1" y="0" z="0.5"/></Body>
  {extra}
</Universe>"""
BALL = """<Universe>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="0" y="0" z="{z}"/>
    <LinearVelocity>{vx} 0 0</LinearVelocity></Body>
  {extra}
</Universe>"""


def universe(tmp_path, text, name="scene.xml"):
    path = tmp_path / name
    path.write_text(text)
    return engine.load_universe(path)


@plugins.register("test-compare-fault")
class RaisesAtStep:
    """Pushes nothing; raises on its ``at``-th call."""
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


def test_the_same_engine_twice_gives_zero_divergence_and_a_plain_runs_series_bit_for_bit(tmp_path):
    """Two Simulations of one universe, stepped in turn, are two plain runs: every series equal to the last bit,
    every divergence exactly 0; after the landings the contact forces carry the weights (F_n = m g)."""
    u = universe(tmp_path, DROP.format(extra=""))
    result = compare(u, ["articula", "articula"], 0.5)
    first, second = result.series
    assert [s.label for s in result.series] == ["articula_1", "articula_2"] and len(first.t) == 501
    sim, multibodies = engine.Simulation(u), ("box", "ball")
    rows = {"t": [], "base_p": [], "contact_force": [], "energy": []}
    for k in range(501):
        if k:
            sim.step()
        rows["t"].append(sim.time)
        rows["base_p"].append([sim.body_placement(m, 0)[1] for m in range(2)])
        rows["contact_force"].append(normal_force(sim.contacts, multibodies))
        rows["energy"].append(sum(sim.energy()))
    for key, plain in rows.items():
        assert np.array_equal(getattr(first, key), np.array(plain)), key
        assert np.array_equal(getattr(second, key), np.array(plain)), key
    assert np.all(first.step_time[1:] > 0) and np.isnan(first.step_time[0])
    d, = result.divergences()
    assert (d.max_dp, d.final_dp, d.parted_at, d.max_dE, d.rms_dF) == (0.0, 0.0, None, 0.0, 0.0)
    np.testing.assert_allclose(first.contact_force[-1], [2 * G, 1 * G], rtol=1e-6)
    assert first.contact_force[0].tolist() == [0.0, 0.0]
    assert "never" in result.table() and "reference" in result.table()


def test_the_normal_force_counts_a_contact_on_either_side_once():
    """f is the force on body a and n points from b to a: f·n is the same compressive force seen from either
    side; a self-contact counts once; "box/" is not a prefix of "box2/"."""
    n, f = np.array([0.0, 0.0, 1.0]), np.array([0.3, 0.0, 5.0])
    contacts = ActiveContacts(point=np.zeros((4, 3)), normal=np.array([n, -n, n, n]), force=np.array([f, -f, f, f]),
                              depth=np.zeros(4), mu=np.zeros(4),
                              body_a=("box/box", "ground", "arm/hand", "box2/box"),
                              body_b=("ground", "box/box", "arm/link1", "ground"))
    assert normal_force(contacts, ("box", "arm", "box2", "none")).tolist() == [10.0, 5.0, 5.0, 0.0]
    assert normal_force(ActiveContacts(), ("box",)).tolist() == [0.0]


def test_a_ball_dropped_higher_and_thrown_sideways_parts_as_its_closed_form(tmp_path):
    """Before the impact (t < sqrt(2 · 0.9 / g) = 0.43 s) both balls fall alike: Δz = Δh = 6 mm and Δx = vx t with
    vx = 0.3 m/s, so |Δp| = sqrt(Δh² + (vx t)²) first exceeds 1 cm at the first step past t = 0.008 / 0.3 =
    0.02667 s (t = 0.027 s); ΔE = m g Δh + ½ m vx² at every step (the vertical motions are the same)."""
    dh, vx = 0.006, 0.3
    low = universe(tmp_path, BALL.format(z=1.0, vx=0.0, extra=""), "low.xml")
    high = universe(tmp_path, BALL.format(z=1.0 + dh, vx=vx, extra=""), "high.xml")
    result = compare([low, high], ["articula", "articula"], 0.3)
    ref, other = result.series
    delta = other.base_p[:, 0] - ref.base_p[:, 0]
    np.testing.assert_allclose(delta[:, 2], dh, atol=1e-12)
    np.testing.assert_allclose(delta[:, 0], vx * ref.t, atol=1e-12)
    assert np.all(delta[:, 1] == 0.0)
    d, = result.divergences()
    final = math.hypot(dh, vx * 0.3)
    assert d.max_dp == pytest.approx(final, abs=1e-12) and d.final_dp == pytest.approx(final, abs=1e-12)
    assert math.hypot(dh, vx * 0.026) < PARTED < math.hypot(dh, vx * 0.027)
    assert d.parted_at == pytest.approx(0.027, abs=1e-12)
    assert d.max_dE == pytest.approx(1.0 * G * dh + 0.5 * 1.0 * vx ** 2, abs=1e-9)
    assert d.rms_dF == 0.0 and d.until == pytest.approx(0.3, abs=1e-12)
    assert "0.027" in result.table().splitlines()[3]


def test_a_faulting_engine_is_reported_with_its_step_and_the_other_runs_on(tmp_path):
    """The second universe's controller raises in step 50: that engine keeps rows 0 … 49 (t = 0 … 0.049 s), the
    first runs its 100 steps, and the table says which step faulted and how far the two are compared."""
    plain = universe(tmp_path, BALL.format(z=1.0, vx=0.0, extra=""), "plain.xml")
    broken = universe(tmp_path, BALL.format(z=1.0, vx=0.0, extra='<Controller plugin="test-compare-fault" '
                                                                 'target="ball" at="50"/>'), "broken.xml")
    result = compare([plain, broken], ["articula", "articula"], 0.1)
    ref, faulted = result.series
    assert len(ref.t) == 101 and ref.fault is None
    assert len(faulted.t) == 50 and faulted.fault_step == 50 and "test-compare-fault" in faulted.fault
    np.testing.assert_allclose(faulted.t, np.arange(50) * 1e-3, atol=1e-12)
    assert np.array_equal(faulted.base_p, ref.base_p[:50])      # the controller pushed nothing before
    table = result.table()
    assert "articula_2 faulted at step 50 (its 49 steps before are kept)" in table and "the controller broke" in table
    assert "compared up to t = 0.049 s" in table


def test_stop_ends_the_run_after_the_current_step(tmp_path):
    u = universe(tmp_path, BALL.format(z=1.0, vx=0.0, extra=""))
    calls = []
    result = compare(u, ["articula", "articula"], 1.0, stop=lambda: len(calls) >= 10,
                     progress=lambda step, steps: calls.append((step, steps)))
    assert calls[-1] == (10, 1000) and [len(s.t) for s in result.series] == [11, 11]
    assert "compared up to" not in result.table()                   # both stopped alike: nothing left out


@pytest.mark.parametrize("engines, duration, message", [
    (["articla", "articula"], 1.0, "unknown engine 'articla' (did you mean 'articula'?); the engines are articula"),
    (["articula"], 1.0, "a comparison needs at least two engines, the first as the reference (got articula)"),
    (["articula", "articula"], 0.0, "the duration must be a finite number of seconds > 0 (got 0.0)"),
    (["articula", "articula"], math.inf, "(got inf)")])
def test_compare_refuses_bad_input_from_python(tmp_path, engines, duration, message):
    with pytest.raises(ValueError) as error:
        compare(universe(tmp_path, DROP.format(extra="")), engines, duration)
    assert message in str(error.value)


@pytest.mark.parametrize("args, message", [
    (["--engines", "articula,pybulet"], "argument --engines: unknown engine 'pybulet'"),
    (["--engines", "artcula,articula"], "argument --engines: unknown engine 'artcula' (did you mean 'articula'?); "
                                        "the engines are articula"),
    (["--engines", "articula"], "argument --engines: a comparison needs at least two engines, the first as the "
                                "reference (got articula)"),
    (["--engines", "articula,articula"], "argument --engines: engine 'articula' is given twice"),
    (["--duration", "-1"], "argument --duration: must be a finite number of seconds > 0 (got -1)"),
    (["--duration", "0"], "argument --duration: must be a finite number of seconds > 0 (got 0)"),
    (["--duration", "5s"], "argument --duration: not a number of seconds: '5s'")])
def test_the_command_line_names_each_bad_value(tmp_path, capsys, args, message):
    (tmp_path / "drop.xml").write_text(DROP.format(extra=""))
    with pytest.raises(SystemExit) as exit_:
        main(["compare", str(tmp_path / "drop.xml"), *args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("usage: articula compare") and message in err


def test_the_command_line_writes_the_series_and_their_plot_and_prints_the_table(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}   # offscreen
    (tmp_path / "drop.xml").write_text(DROP.format(extra=""))
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "compare", str(tmp_path / "drop.xml"),
                          "--engines", "articula,pybullet", "--duration", "0.4", "--out", str(tmp_path / "cmp.1")],
                         capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["engine", "max", "|dp|"] and lines[2].split()[:2] == ["articula", "reference"]
    row = lines[3].split()
    assert row[0] == "pybullet" and 0.0 < float(row[1]) < 5.0 and row[3] == "never"     # mm: the ball lands alike
    assert lines[-1] == f"wrote {tmp_path / 'cmp.1.npz'} and {tmp_path / 'cmp.1.png'}"
    with np.load(tmp_path / "cmp.1.npz") as f:
        assert f["engines"].tolist() == ["articula", "pybullet"] and f["multibodies"].tolist() == ["box", "ball"]
        assert f["articula.base_p"].shape == (401, 2, 3) and f["fault_step"].tolist() == [-1, -1]
        ball = f["articula.base_p"][:250, 1], f["pybullet.base_p"][:250, 1]     # in the air for 0.25 s: alike
        assert np.abs(ball[0] - ball[1]).max() < 1e-12 and f["articula.base_p"][0, 1, 2] == 0.5
    image = iio.imread(tmp_path / "cmp.1.png")
    assert image.shape[1] == 1200 and image[..., :3].std() > 10                     # drawn, not blank
    assert len(np.unique(image[..., :3].reshape(-1, 3), axis=0)) > 50               # curves and text, not a fill


def test_main_py_dispatches_compare(tmp_path):
    (tmp_path / "drop.xml").write_text(DROP.format(extra=""))
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "compare", str(tmp_path / "drop.xml"),
                          "--engines", "articula"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 2 and "usage: articula compare" in out.stderr and "at least two engines" in out.stderr


def test_pybullet_and_articula_agree_on_a_free_fall(tmp_path):
    """Before the impact (0.43 s) both integrate z = z0 − g t²/2 with semi-implicit Euler: no contact, bases
    within 1 mm, the same energy within 1 mJ."""
    result = compare(universe(tmp_path, BALL.format(z=1.0, vx=0.0, extra="")), ["articula", "pybullet"], 0.3)
    d, = result.divergences()
    assert d.max_dp < 1e-3 and d.parted_at is None and d.max_dE < 1e-3 and d.rms_dF == 0.0
