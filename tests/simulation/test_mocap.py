"""Mocap markers played against the model (issue 14 part 6; seed 004 §5.9, Eq. 70): 100 Hz markers at the
simulation's 1 kHz, their RMS distance to the model's frames as a signal, missing markers reported as gaps and
bridged only on request. The slider carries its pivot and a tip 1 m along the arm at 0.3 m/s without gravity:
a uniform translation, which linear interpolation of the markers reproduces exactly."""

import numpy as np
import pytest

import engine
from app.signals import catalogue
from engine.analysis.mocap import MarkerGapWarning, MarkerTrajectories
from engine.errors import UniverseError

SPEED, X0 = 0.3, 0.1
ROBOT = """<robot name="slide">
  <link name="ground"/>
  <link name="carriage"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0"
    izz="0.01"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1"
    iyz="0" izz="0.1"/></inertial></link>
  <link name="tip"/>
  <joint name="slider" type="prismatic"><parent link="ground"/><child link="carriage"/><axis xyz="1 0 0"/></joint>
  <joint name="pivot" type="continuous"><parent link="carriage"/><child link="arm"/><axis xyz="0 -1 0"/></joint>
  <joint name="tip_point" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="1 0 0"/></joint>
</robot>"""


def marker_file(path, offsets=((0, 0, 0), (0, 0, 0)), missing=()):
    """100 Hz samples over 0.5 s of the markers 'arm' (the pivot) and 'tip', moved by ``offsets``; the samples
    of ``missing`` (marker index, first, last sample) left empty."""
    t = np.arange(51) * 0.01
    pivot = np.column_stack([X0 + SPEED * t, np.zeros_like(t), np.full_like(t, 1.0)])
    cells = np.hstack([pivot + offsets[0], pivot + (1.0, 0, 0) + offsets[1]]).astype(object)
    for k, first, last in missing:
        cells[first:last + 1, 3 * k:3 * k + 3] = ""
    rows = [", ".join(["t", "arm_x", "arm_y", "arm_z", "tip_x", "tip_y", "tip_z"])]
    rows += [", ".join([f"{ti:.2f}"] + [str(c) for c in row]) for ti, row in zip(t, cells)]
    path.write_text("\n".join(rows) + "\n")


def run(folder, interpolate=False, steps=400):
    """The signals of the mocap sensor after each of ``steps`` 1 ms steps."""
    (folder / "slide.urdf").write_text(ROBOT)
    (folder / "scene.xml").write_text(
        f'<Universe><Settings><Gravity x="0" y="0" z="0"/></Settings><MultiBody name="slide"><File>slide.urdf</File>'
        f'<Translation x="0" y="0" z="1"/><Joint name="slider" value="{X0}" velocity="{SPEED}"/></MultiBody>'
        f'<Sensor plugin="mocap" target="slide" file="markers.csv" interpolate="{int(interpolate)}"/></Universe>')
    universe = engine.load_universe(folder / "scene.xml")
    sim = engine.Simulation(universe)
    out = []
    for _ in range(steps):
        sim.step(1)
        out.append({k: float(v[0]) for k, v in sim.measurements["slide/mocap"].items()})
    plotted = {s.name: s.value(sim.snapshot()) for s in catalogue(universe) if s.group == "sensor/slide/mocap"}
    np.testing.assert_equal(plotted, out[-1])                   # the same numbers as signals
    return out


def test_markers_on_the_model_have_zero_rms(tmp_path):
    """Markers exactly where the frames are: RMS 0 at every 1 kHz step between the 100 Hz samples."""
    marker_file(tmp_path / "markers.csv")
    values = run(tmp_path)
    assert max(v["rms"] for v in values) <= 1e-12
    assert values[-1]["cost"] <= 1e-20


def test_offset_markers_give_the_offset(tmp_path):
    """Every marker moved by d: RMS d; markers moved by d1 and d2: RMS sqrt((d1² + d2²)/2), and Eq. 70 summed
    over n steps is n (d1² + d2²)."""
    marker_file(tmp_path / "markers.csv", offsets=((0, 0, 0.02), (0, 0.03, -0.04)))
    values = run(tmp_path, steps=100)
    expected = np.sqrt((0.02**2 + 0.05**2) / 2)
    np.testing.assert_allclose([v["rms"] for v in values], expected, rtol=1e-12)
    assert values[-1]["run_rms"] == pytest.approx(expected, rel=1e-12)
    assert values[-1]["cost"] == pytest.approx(100 * (0.02**2 + 0.05**2), rel=1e-12)


def test_missing_markers_are_reported_and_bridged_only_on_request(tmp_path):
    """The tip missing at samples 10-14 (0.10-0.14 s): a warning names the gap; during it (0.09 < t < 0.15) only
    the pivot is seen; with interpolate the gap is bridged (exactly, the motion being uniform)."""
    marker_file(tmp_path / "markers.csv", missing=[(1, 10, 14)])
    with pytest.warns(MarkerGapWarning, match=r"tip 0\.1-0\.14 s"):
        values = run(tmp_path, steps=200)
    visible = np.array([v["visible"] for v in values])
    t = np.arange(1, 201) * 0.001
    inside = (t > 0.09 + 1e-9) & (t < 0.15 - 1e-9)
    assert np.all(visible[inside] == 1) and np.all(visible[~inside] == 2)
    with pytest.warns(MarkerGapWarning, match="interpolated"):
        bridged = run(tmp_path, interpolate=True, steps=200)
    assert all(v["visible"] == 2 for v in bridged) and max(v["rms"] for v in bridged) <= 1e-12
    marker_file(tmp_path / "edge.csv", missing=[(0, 0, 3)])          # a gap at the start cannot be bridged
    with pytest.warns(MarkerGapWarning):
        markers = MarkerTrajectories(tmp_path / "edge.csv", interpolate=True)
    assert markers.gaps == [("arm", 0.0, 0.03, False)]


def test_bad_marker_files_name_the_line(tmp_path):
    (tmp_path / "bad.csv").write_text("t, a_x, a_y\n0, 1, 2\n")
    with pytest.raises(UniverseError, match="header") as err:
        MarkerTrajectories(tmp_path / "bad.csv")
    assert err.value.line == 1
    (tmp_path / "bad.csv").write_text("t, a_x, a_y, a_z\n0, 1, 2, 3\n0.01, 1, x, 3\n")
    with pytest.raises(UniverseError) as err:
        MarkerTrajectories(tmp_path / "bad.csv")
    assert err.value.line == 3
