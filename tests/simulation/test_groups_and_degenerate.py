"""Collision groups in the loop (seed 000 §3.2(d)), degenerate contact sets, and the solvers on the stage's own
problems: k separate cubes are k small problems; duplicated points, hyperstatic sets and a box wedged between
parallel opposite faces give finite forces and a reported residual."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.model.universe_xml import load_universe
from engine.simulation import Simulation

ROOT = Path(__file__).resolve().parents[2]
G = 9.81


def scene(tmp_path, body, settings="", name="scene.xml"):
    path = tmp_path / name
    path.write_text(f"<Universe><Settings>{settings}</Settings>{body}</Universe>")
    return Simulation(load_universe(path))


def cubes(k, spacing):
    return "".join(f'<Body name="cube{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass>'
                   f'<Translation x="{i * spacing}" y="0" z="0.05"/></Body>' for i in range(k))


GROUND = '<Body name="ground"><Plane/><Mass>0</Mass></Body>'


@pytest.mark.parametrize("k", [1, 3, 10])
def test_k_separate_cubes_are_k_groups_of_constant_size(tmp_path, k):
    """k cubes 0.3 m apart: k groups of one cube, 4 contacts, 12 rows each, so the assembled W entries (the cost
    of Λ and of a sweep) sum to 144 k, linear in k; side by side, touching, they form one group of 12k + rows."""
    apart = scene(tmp_path, cubes(k, 0.3) + GROUND, name="apart.xml")
    apart.step(20)
    groups = apart.solver_stats["groups"]
    assert [g.multibodies for g in groups] == [(i,) for i in range(k)]
    assert [(g.contacts, g.rows) for g in groups] == [(4, 12)] * k
    assert sum(g.rows ** 2 for g in groups) == 144 * k
    touching = scene(tmp_path, cubes(k, 0.1) + GROUND, name="touching.xml")
    touching.step(20)
    groups = touching.solver_stats["groups"]
    assert len(groups) == 1 and groups[0].multibodies == tuple(range(k)) and groups[0].rows >= 12 * k
    for sim in (apart, touching):                        # resting: the ground carries every cube
        normal = sim.contacts.force @ np.array([0.0, 0.0, 1.0])
        on_ground = np.array([name == "ground" for name in sim.contacts.body_b])
        assert normal[on_ground].sum() == pytest.approx(k * G, rel=1e-6)


DEGENERATE = {
    # every corner of the box meets two coincident ground planes: each contact row appears twice in W
    "duplicated points": ('<Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass>'
                          '<Translation x="0" y="0" z="0.1"/></Body>' + GROUND +
                          '<Body name="ground2"><Plane/><Mass>0</Mass></Body>', 1.0),
    # a plank on three static blocks: 12 coplanar contacts for 6 degrees of freedom
    "hyperstatic": ('<Body name="plank"><Box size="1.0 0.2 0.05"/><Mass>2</Mass>'
                    '<Translation x="0" y="0" z="0.225"/></Body>' +
                    "".join(f'<Body name="block{i}"><Box size="0.2 0.3 0.2"/><Mass>0</Mass>'
                            f'<Translation x="{x}" y="0" z="0.1"/></Body>' for i, x in enumerate((-0.4, 0.0, 0.4))),
                    2.0),
    # a 0.2 m box between two static blocks 0.198 m apart: 1 mm into each, opposite parallel normals; no
    # velocity leaves both, so the push-out targets are unreachable and the group is solved without them
    "wedged": ('<Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="0" y="0" z="0.1"/></Body>'
               '<Body name="left"><Box size="0.2 0.4 0.4"/><Mass>0</Mass><Translation x="-0.199" y="0" z="0.3"/></Body>'
               '<Body name="right"><Box size="0.2 0.4 0.4"/><Mass>0</Mass><Translation x="0.199" y="0" z="0.3"/></Body>'
               + GROUND, 1.0),
}


@pytest.mark.parametrize("case", DEGENERATE)
def test_degenerate_contacts_give_finite_forces_and_a_residual(tmp_path, case):
    """500 steps at rest: forces finite and in their cones, residual reported and finite, the body stays put
    (within 0.1 mm) and the vertical forces carry its weight."""
    body, mass = DEGENERATE[case]
    sim = scene(tmp_path, body)
    start = sim.runs[0].q[:3].copy()
    for _ in range(500):
        sim.step()
        stats = sim.solver_stats
        assert np.isfinite(stats["residual"]) and stats["residual"] >= 0.0
        assert len(stats["groups"]) == 1 and np.all(np.isfinite(sim.contacts.force))
    c = sim.contacts
    fn = np.einsum("ij,ij->i", c.force, c.normal)
    ft = np.linalg.norm(c.force - fn[:, None] * c.normal, axis=1)
    assert np.all(fn >= -1e-12) and np.all(ft <= c.mu * fn * (1 + 1e-9) + 1e-12)
    assert np.abs(sim.runs[0].q[:3] - start).max() < 1e-4
    assert c.force[:, 2].sum() == pytest.approx(mass * G, rel=1e-6)


@pytest.mark.parametrize("solver", ['name="gauss-seidel-newton"', 'name="gauss-seidel"', 'name="lemke"',
                                    'name="gauss-seidel-newton" time_budget="0.01"', 'name="nonsmooth-newton"',
                                    'name="nonsmooth-newton" time_budget="0.01"'])
def test_every_solver_carries_a_frictionless_box(tmp_path, solver):
    """Frictionless (μ = 0) box resting on the ground, with each solver (and a time budget): the normal forces sum
    to m g within 1e-6 (seed 000 §4: frictionless problems agree across solvers)."""
    sim = scene(tmp_path, '<Material name="ice" friction="0"/><Body name="box"><Box size="0.3 0.2 0.1"/>'
                '<Mass>2</Mass><Material>ice</Material><Translation x="0" y="0" z="0.05"/></Body>'
                '<Body name="ground"><Plane/><Mass>0</Mass><Material>ice</Material></Body>',
                f"<Solver {solver}/>")
    sim.step(50)
    assert sim.contacts.force[:, 2].sum() == pytest.approx(2 * G, abs=1e-6)
    assert np.abs(sim.contacts.force[:, :2]).max() < 1e-12


FIVE_BAR_BALL_BOX = f"""<Universe><Settings/>
    <MultiBody name="five_bar"><File>{ROOT / "assets/robots/five_bar.xml"}</File>
      <Translation x="3" y="0" z="1"/><Joint name="j1" value="{np.pi / 2}"/>
      <Joint name="j2" value="{-np.pi / 2}"/><Joint name="j4" value="{-np.pi / 2}"/></MultiBody>
    <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="0" y="0" z="0.102"/></Body>
    <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="1" y="0" z="0.101"/>
      <AngularVelocity>0.3 0.2 0</AngularVelocity></Body>
    {GROUND}</Universe>"""
BALL_ON_BOX = f"""<Universe><Settings/>
    <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="0.02" y="0" z="0.301"/></Body>
    <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="0" y="0" z="0.101"/>
      <AngularVelocity>0.3 0.2 0</AngularVelocity></Body>
    {GROUND}</Universe>"""


@pytest.mark.parametrize("text, one_call", [(FIVE_BAR_BALL_BOX, False), (BALL_ON_BOX, True)],
                         ids=["five-bar-ball-box", "free-bodies-alone"])
def test_contact_stage_runs_as_plain_python(tmp_path, text, one_call):
    """The stage's kernels are plain Python under NUMBA_DISABLE_JIT=1 and give the same trajectory, to 1e-12: a
    ball and a box landing beside the closed 5-bar, and a ball landing on a box on the ground (free bodies alone:
    the whole step in one call, ``FreeBodies.step``)."""
    universe = tmp_path / "mixed.xml"
    universe.write_text(text)
    script = ("import json, sys\n"
              "from engine.model.universe_xml import load_universe\n"
              "from engine.simulation import Simulation\n"
              "sim = Simulation(load_universe(sys.argv[1]))\n"
              "sim.step(15)\n"
              "print(json.dumps([r.q.tolist() + r.v.tolist() for r in sim.runs]))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script, str(universe)], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True)
    sim = Simulation(load_universe(universe))
    assert sim.engine.one_call == one_call
    sim.step(15)
    assert len(sim.contacts) >= 5
    for run, plain in zip(sim.runs, json.loads(out.stdout)):
        np.testing.assert_allclose(np.r_[run.q, run.v], plain, rtol=1e-12, atol=1e-12)
