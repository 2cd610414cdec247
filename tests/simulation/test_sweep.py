"""Parameter sweeps (engine/sweep.py, engine/model/overrides.py, engine/metrics.py): the grid, the universe paths,
a Dask cluster of two processes giving the serial numbers bit for bit, a worker killed mid-sweep, a failing metric,
an unreachable scheduler, results kept on disk and resumed, and the command line with its plot."""
import subprocess
import sys
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

import engine
from engine.errors import UniverseError
from engine.sweep import Parameter, grid, parse_parameter, sweep

ROOT = Path(__file__).resolve().parents[2]
SCENE = """<Universe>
  <Material name="floor" friction="0.5" restitution="0.0"/>
  <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>2</Mass><Translation x="0" y="0" z="0.3"/>
    <Material>floor</Material></Body>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body>
  {extra}
</Universe>"""
DIE_ONCE = '''import os
from pathlib import Path
from engine.plugins import register

@register("die-once")
class DieOnce:
    """Kills its worker process the first time a run at z = 0.5 reaches its end (a marker file remembers)."""
    kind = "metric"

    def __init__(self, sim):
        self.sim = sim

    def observe(self, sim):
        pass

    def value(self):
        z = self.sim.runs[0].instance.q0[2]
        marker = Path(__file__).with_name("died")
        if abs(z - 0.5) < 1e-9 and not marker.exists():
            marker.write_text("once")
            os._exit(1)
        return z


@register("raises")
class Raises(DieOnce):
    def value(self):
        if self.sim.runs[0].instance.q0[2] > 0.55:
            raise RuntimeError("the metric cannot read this run")
        return 1.0
'''


def scene(tmp_path, extra=""):
    path = tmp_path / "scene.xml"
    path.write_text(SCENE.format(extra=extra))
    return path


PARAMETERS = [parse_parameter("Body[box].Translation.z=0.3:0.6:4"), parse_parameter("Material[floor].restitution=0,0.5")]


def test_parameters_make_the_grid_first_varying_slowest():
    assert parse_parameter("Sole.Material.E=1e6:1e7:10").values == tuple(np.linspace(1e6, 1e7, 10))
    assert parse_parameter("Sole.Material.nu=0.01,0.25,0.49") == Parameter("Sole.Material.nu", (0.01, 0.25, 0.49))
    runs = grid(PARAMETERS)
    assert len(runs) == 8 and runs[1] == {"Body[box].Translation.z": 0.3, "Material[floor].restitution": 0.5}


@pytest.mark.parametrize("text, message", [
    ("Sole.Material.E=1e7:1e6:10", "goes down (1e+07 to 1e+06)"),
    ("Sole.Material.E=3MPa,5MPa", "numbers in SI units without a unit"),
    ("Sole.Material.E=1e6:1e7:0", "must be a whole number >= 1"),
    ("Sole.Material.E", "PATH=start:stop:count"),
])
def test_a_bad_range_is_explained(text, message):
    with pytest.raises(ValueError) as info:
        parse_parameter(text)
    assert message in str(info.value)


def test_a_path_reaches_every_match_and_a_wrong_one_names_the_file(tmp_path):
    path = scene(tmp_path)
    u = engine.load_universe(path, overrides={"Body[box].Mass": 5.0, "Material[floor].friction": 0.9})
    box = [mb for mb in u.multibodies if mb.name == "box"][0]
    assert box.model.total_mass == pytest.approx(5.0) and u.materials["floor"].mu == 0.9
    with pytest.raises(UniverseError, match=r"scene.xml: the parameter path 'Bodi\[box\].Mass' matches no <Bodi> "
                                            r"with name, link or target 'box' in the file \(did you mean 'Body'\?\)"):
        engine.load_universe(path, overrides={"Bodi[box].Mass": 5.0})
    with pytest.raises(UniverseError, match=r"scene.xml:2: .*'frictio'"):           # the reader's own check
        engine.load_universe(path, overrides={"Material[floor].frictio": 0.9})


def test_a_cluster_of_two_workers_gives_the_serial_numbers_bit_for_bit(tmp_path):
    path = scene(tmp_path)
    metrics = ["peak_torso_acc", "final_height", "max_tilt"]
    serial = sweep(path, PARAMETERS, metrics, 0.4, workers=0)
    parallel = sweep(path, PARAMETERS, metrics, 0.4, workers=2, out=tmp_path / "runs")
    assert np.array_equal(serial.metrics, parallel.metrics) and np.array_equal(serial.grid, parallel.grid)
    assert not serial.errors and np.all(np.isfinite(serial.metrics))
    assert serial.metrics[0, 1] == pytest.approx(0.1, abs=2e-3)                     # the box rests, 0.1 m up
    assert serial.metrics[6, 0] > serial.metrics[0, 0]                              # higher drop, harder impact
    saved = np.load(tmp_path / "runs.npz")
    assert np.array_equal(saved["metrics"], serial.metrics) and list(saved["parameters"]) == [p.path for p in
                                                                                                PARAMETERS]


def test_a_worker_killed_mid_sweep_loses_no_run(tmp_path):
    (tmp_path / "die.py").write_text(DIE_ONCE)
    path = scene(tmp_path, '<PluginModule path="die.py"/>')
    result = sweep(path, PARAMETERS, ["die-once", "final_height"], 0.05, workers=2, out=tmp_path / "runs",
                   trust_plugins=True)
    assert (tmp_path / "died").exists()                                             # a worker did die
    assert not result.errors and len(result.metrics) == 8 and np.all(np.isfinite(result.metrics))
    np.testing.assert_allclose(result.metrics[:, 0], np.repeat([0.3, 0.4, 0.5, 0.6], 2))


def test_a_metric_that_raises_is_reported_with_its_run_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "die.py").write_text(DIE_ONCE)
    path = scene(tmp_path, '<PluginModule path="die.py"/>')
    result = sweep(path, PARAMETERS, ["raises"], 0.05, workers=0, trust_plugins=True)
    assert sorted(result.errors) == [6, 7]                                           # z = 0.6
    assert "RuntimeError: the metric cannot read this run" in result.errors[6]
    assert np.isnan(result.metrics[6:]).all() and np.array_equal(result.metrics[:6], np.ones((6, 1)))


def test_an_unreachable_scheduler_is_an_error_within_ten_seconds(tmp_path):
    start = time.monotonic()
    with pytest.raises(UniverseError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        sweep(scene(tmp_path), PARAMETERS[:1], ["final_height"], 0.01, scheduler="tcp://127.0.0.1:9")
    assert time.monotonic() - start < 15.0


def test_runs_on_disk_are_not_run_again(tmp_path):
    path = scene(tmp_path)
    first = sweep(path, PARAMETERS, ["final_height"], 0.1, workers=0, out=tmp_path / "runs")
    (tmp_path / "runs.part" / "run00005.npz").unlink()                             # as if the sweep was killed
    again = sweep(path, PARAMETERS, ["final_height"], 0.1, workers=0, out=tmp_path / "runs")
    assert first.ran == 8 and again.ran == 1 and np.array_equal(first.metrics, again.metrics)


def test_the_command_line_sweeps_and_plots_a_heat_map(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "sweep", str(scene(tmp_path)), "--param",
                          "Body[box].Translation.z=0.3:0.6:4", "--param", "Material[floor].restitution=0,0.5",
                          "--metric", "peak_torso_acc", "--duration", "0.2", "--workers", "0", "--out",
                          str(tmp_path / "runs"), "--plot", str(tmp_path / "map.png")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "8 runs, 8 run now" in out.stdout and (tmp_path / "runs.csv").read_text().count("\n") == 9
    image = iio.imread(tmp_path / "map.png")
    assert image.shape[1] == 900 and image[..., :3].std() > 10                      # drawn, not blank
