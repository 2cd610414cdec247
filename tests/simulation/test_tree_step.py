"""One articulated multibody stepped in one compiled call per stage — free dynamics (``_tree_kernels.free_motion``),
contacts (``ContactStage._tree_step``, ``contact/_tree_kernels.tree_contacts``), integration
(``constrained_motion``) — against the readable steps they replace (``aba``, ``free_velocities``, ``_layout``,
``_delassus``, ``_solve_groups``, ``scatter``, ``_apply``, ``_integrate``, ``refresh``, ``check_energy``): the
same kernels on the same arrays, so every step's state, body velocities, forces, closure forces, stats and
kinetic energy must be the same to the last bit, over a few hundred steps of Talos standing (8 contacts, the
thesis's Delassus method), Talos falling with its joint limits as rows (self-contacts, limit rows coming and
going, groups past the kept factor's 48 rows) and a closed five-bar (closure rows alone: no collision geometry;
integrated by the readable steps, being closed)."""
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.engines import articula
from engine.engines._tree_kernels import REDO
from tests.scenes import falling

ROOT = Path(__file__).resolve().parents[2]

STANDING = """<Universe><Settings><Solver name="{solver}"/>
    <Contact margin="0.005" max_points="4" correction="baumgarte" erp="0.2" slop="0.0005"/></Settings>
  <Material name="floor" friction="0.9" restitution="0.0"/>
  <MultiBody name="talos"><File>package://example-robot-data/robots/talos_data/robots/talos_reduced.urdf</File>
    <FloatingBase>true</FloatingBase><Material>floor</Material>{joints}</MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body>
  <Controller plugin="stance-pd" target="talos" kp="2000" kd="20"/></Universe>"""

FIVE_BAR = f"""<Universe><Settings><Solver name="gauss-seidel-newton"/></Settings>
  <MultiBody name="five_bar"><File>{ROOT / "assets/robots/five_bar.xml"}</File><Translation x="0" y="0" z="0.3"/>
    <Joint name="j1" value="1.5707963267948966"/><Joint name="j2" value="-1.5707963267948966"/>
    <Joint name="j4" value="-1.5707963267948966"/></MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>"""


def _pair(path, text):
    """Two simulations of the universe ``text``: the first steps in one call per stage, the second stage by stage
    (``readable``)."""
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Talos's <mimic> joints simulated as independent joints
        sims = [engine.Simulation(engine.load_universe(path)) for _ in range(2)]
    assert sims[0].contact_stage.tree_only
    sims[1].contact_stage.tree_only = False
    return sims


def _readable_step(sim, monkeypatch):
    """A step of ``sim`` by the readable steps: its dynamics and integration kernels stubbed to refuse their inputs
    (``REDO``), which hands every step to the readable path (the contact stage's is off, ``tree_only``)."""
    with monkeypatch.context() as patch:
        patch.setattr(articula, "free_motion", lambda *args: REDO)
        patch.setattr(articula, "constrained_motion", lambda *args: (REDO, 0.0))
        sim.step()


def _assert_same_steps(fused, stages, steps, monkeypatch):
    """Step both; every step the same state, contact forces, closure forces and solver stats, bit for bit.
    Returns the largest contact count, self-contact total and group rows seen."""
    most, self_contacts, rows = 0, 0, 0
    for k in range(steps):
        fused.step()
        _readable_step(stages, monkeypatch)
        a, b = fused.contact_stage, stages.contact_stage
        r, s = fused.runs[0], stages.runs[0]
        for x, y in ((r.q, s.q), (r.v, s.v), (r.a, s.a), (r.a_free, s.a_free),
                     (fused.bodies.V_free, stages.bodies.V_free),
                     (fused.bodies.V, stages.bodies.V), (r.V_last, s.V_last), (a.forces, b.forces),
                     (a.closures.force, b.closures.force), (r.f_contact, s.f_contact)):
            np.testing.assert_array_equal(x, y, err_msg=f"step {k}")
        assert fused.solver_stats == stages.solver_stats and r.kinetic_next == s.kinetic_next, k
        most = max(most, len(a.contacts) if a.contacts is not None else 0)
        rows = max([rows] + [g.rows for g in fused.solver_stats["groups"]])
    assert fused.contact_report() == stages.contact_report()
    return most, fused.contact_report().self_contacts, rows


@pytest.mark.parametrize("solver", ["nonsmooth-newton", "gauss-seidel-newton"])
def test_talos_standing_steps_as_stage_by_stage(tmp_path, solver, monkeypatch):
    talos = ET.parse(ROOT / "scenes/default.xml").getroot().find("MultiBody")
    joints = "".join(ET.tostring(j, encoding="unicode").strip() for j in talos.findall("Joint"))
    fused, stages = _pair(tmp_path / "standing.xml", STANDING.format(solver=solver, joints=joints))
    most, _, _ = _assert_same_steps(fused, stages, 300, monkeypatch)
    assert most == 8 and fused.solver_stats["delassus"] == "thesis" and fused.engine.euler == {0}


def test_talos_falling_with_limit_rows_steps_as_stage_by_stage(tmp_path, monkeypatch):
    fused, stages = _pair(tmp_path / "falling.xml", falling('joint_limits="constraint"'))
    most, self_contacts, rows = _assert_same_steps(fused, stages, 1200, monkeypatch)   # it folds from t ≈ 0.6 s
    assert most > 20 and self_contacts > 0 and rows >= 48       # lying: many contacts, the kept factor in use
    assert np.count_nonzero(fused.contact_stage.closures.rows) > 0 and fused.engine.euler == {0}


def test_a_closed_five_bar_steps_as_stage_by_stage(tmp_path, monkeypatch):
    fused, stages = _pair(tmp_path / "five_bar.xml", FIVE_BAR)
    _assert_same_steps(fused, stages, 400, monkeypatch)
    assert np.abs(fused.contact_stage.closures.force).max() > 1.0     # the closure carries the load
