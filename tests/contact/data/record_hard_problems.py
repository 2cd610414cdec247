"""Record the hard contact problems of ``test_hard_problems.py`` as .npz fixtures (run from the repository root:
``python tests/contact/data/record_hard_problems.py [name ...]``, all of them without a name). Each file holds one
collision group's problem as the contact stage hands it to its solver, in the problem file of
``engine.contact.conic``: W (n, n), u (n,) the free velocity with the normal targets, the block layout
(block_start, block_kind, block_mu) and f0, the warm start.

* talos_lying:   Talos (example-robot-data, floating base, no controller) dropped from the half-sitting pose of
                 scenes/default.xml, lying on the floor at t = 2 s; Gauss–Seidel–Newton trajectory, 65 contacts.
* talos_falling: the same fall at t = 0.6 s, 48 contacts (hips, arms and hands landing).
* talos_jammed:  the same fall under nonsmooth-newton, the first step after t = 2 s whose solve ends
                 unconverged: the folded legs touch the hips and each other (self-contacts, μ = 0.9); from its
                 warm start Gauss–Seidel and Newton stall at 1e-3 of the force, but it has a solution (Newton
                 from f = 0 reaches it in 58 iterations; since session 16, Newton's proximal attempt reaches it
                 from the warm start).
* talos_wedged:  the same fall under nonsmooth-newton with the start 1 nm higher, the step at t = 2.011 s: 51
                 contacts; contact 24 joins two links two joints apart, its W_ii has rank 2 and its null
                 direction lies inside the cone. Recorded with commit 98a1662, whose local Newton took 4.7e14 N
                 there (the fall is chaotic: later code reaches another state at that time).
* talos_limits_landing, talos_limits_arms: the same fall under nonsmooth-newton with the joints' limits as
                 constraint rows (``joint_limits="constraint"``), at its steps 388 (15 contacts, 4 limit rows, W
                 49 × 49 of rank 20) and 745 (37 contacts, 6 limit rows, W 117 × 117 of rank 35), two of the 178
                 falling steps 0c2aeea left unconverged (recorded with it): the line search failed with a contact
                 slipping while the sticking contacts' system was inconsistent (``_newton_kernels.newton_step``).
* talos_lying_factor: the fall under nonsmooth-newton with the joints' limits as rows (``joint_limits=
                 "constraint"``), lying at t = 2 s, with the group's joint-space factor W = B Bᵀ (B_col, B_val,
                 width: ``_group_delassus_kernels.multibody_delassus_factor``), recorded by the stage's readable path.
* talos_standing: Talos standing under ``stance-pd`` (kp = 2000, kd = 20) in the half-sitting pose of
                 scenes/default.xml, nonsmooth-newton (the scene of ``bench/contact.py`` part b), its step 123: 8
                 contacts, W 24 × 24 of rank 12. Recorded with commit bde90fb, whose solver took 2 iterations there:
                 a corner of the right foot starts on its cone's boundary and its sticking step leaves the cone
                 (``_newton_kernels._slip_leaving``).
* talos_stalled, talos_stalled_second_run, talos_stalled_third_run: ``bench/contact.py`` part d's headline scene
                 (Talos dropped with no controller, its joints' limits and dry friction as rows: 50 contacts, 6 limit
                 and 20 friction rows, W 176 × 176 of rank 38), lying, at its step 1681 from +3 nm (recorded with
                 046560c) and 1591 from −1 nm (recorded with session 19's first interior-point attempt, one run),
                 and landing, at its step 947 from 0 nm (28 contacts, 7 limit and 20 friction rows, W 111 × 111;
                 recorded with session 20's two runs): steps the default solver left unconverged. Newton stalls on
                 them from the warm start (jammed self-contacts whose sticking velocities W_AA cannot cancel), and so
                 did the proximal attempt; the interior-point attempt solves the first in its first run, the second
                 in its second and the third in its third (``_interior_point_kernels``). The fall is chaotic: later
                 code reaches other states at those steps (session 19's final code: 174 and 175 rows at the first
                 two).
* talos_landing_associated: the same scene landing, at its step 944 from 0 nm (28 contacts, 7 limit and 20
                 friction rows, W 111 × 111; recorded with c8d4be2, before the attempt below): the one step of part d's
                 three starts every attempt then left unconverged (Newton, the interior-point attempt's three runs,
                 the proximal attempt); Newton from the associated problem's solution solves it
                 (``_interior_point_kernels.associated_attempt``, session 22).
* stack10:       ten 0.1 m cubes of 1 kg stacked on the ground, at t = 0.5 s: 40 contacts, W of rank 60.
* sole4:         a 40 kg foot on four coplanar sticking corners, CoM off-centre, pushed sideways (W rank 6).
* cube_sliding:  tests/engines/test_free_bodies.py's ten cubes (test_cubes_in_contact_move_alike) on the readable
                 path, the group of one cube sliding on four face corners (W 12 × 12 of rank 6, μ = 0.6) at the
                 266th step with contacts, one of the 8 steps 92f983b left unconverged: the corners' Baumgarte
                 targets are not a rigid motion's, and the exact solution has a corner separating
                 (``_fallback_kernels.null_step``).
* walk_double, walk_single: scenes/talos_walk_ankles.xml (Talos walking on flexible ankles, nonsmooth-newton,
                 PYTHONHASHSEED=1) at its step 18 (both feet, 8 contacts, W rank 12) and 2373 (one foot, 4 contacts,
                 W rank 6), two of the steps 2ef9dba left unconverged: a rigid foot's Baumgarte targets no rigid
                 motion meets, so the exact solution has a corner slipping (``_fallback_kernels.plateau_step``).
"""
from __future__ import annotations

import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from engine.contact.cone import ConstraintBlocks          # noqa: E402
from engine.contact.conic import load_problem, save_problem  # noqa: E402
from engine.contact.stepping import ContactStage          # noqa: E402
from engine.model.paths import example_robot_data_dir     # noqa: E402
from engine.model.universe_xml import load_universe       # noqa: E402
from engine.simulation import Simulation                  # noqa: E402

TALOS = """<Universe name="talos-falling">
  <Settings><TimeStep>0.001</TimeStep><Solver name="gauss-seidel-newton" tolerance="1e-6" max_iterations="100"/>
    <Contact margin="0.005" max_points="4" correction="baumgarte" erp="0.2" slop="0.0005"/></Settings>
  <Material name="floor" friction="0.9" restitution="0.0"/>
  <MultiBody name="talos"><File>{urdf}</File><FloatingBase>true</FloatingBase><Material>floor</Material>
    {joints}</MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body>
</Universe>
"""
STANCE = '  <Controller plugin="stance-pd" target="talos" kp="2000" kd="20"/>\n'
STACK = """<Universe><Settings><Solver name="gauss-seidel-newton"/></Settings>{boxes}
  <Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>"""


class Recorder:
    """Wraps ``ContactStage._solve_range`` to keep the largest group's problem of the last step (and its factor,
    ``factor``)."""

    def __init__(self):
        self.last, self.factor, original = None, None, ContactStage._solve_range
        recorder = self

        def solve_range(stage, a, W, g0, g1):
            problems = [tuple(np.copy(x) if isinstance(x, np.ndarray) else x for x in stage._problem(a, W, g))
                        for g in range(g0, g1)]
            recorder.last = max(problems, key=lambda p: len(p[1]))
            g = g0 + max(range(g1 - g0), key=lambda k: len(problems[k][1]))
            rows = slice(int(a["row_start"][g]), int(a["row_start"][g + 1]))
            recorder.factor = a["B_col"][rows].copy(), a["B_val"][rows].copy(), int(a["B_width"][g])
            return original(stage, a, W, g0, g1)

        ContactStage._solve_range = solve_range


def simulation(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scene.xml"
        path.write_text(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # <mimic> joints simulated as independent joints
            return Simulation(load_universe(path))


def talos(solver, limits=False, controller=False):
    talos = ET.parse(ROOT / "scenes/default.xml").getroot().find("MultiBody")
    joints = "\n    ".join(ET.tostring(j, encoding="unicode").strip() for j in talos.findall("Joint"))
    urdf = example_robot_data_dir() / "talos_data/robots/talos_reduced.urdf"
    text = TALOS.format(urdf=urdf, joints=joints).replace("gauss-seidel-newton", solver)
    if controller:
        text = text.replace("</Universe>", STANCE + "</Universe>")
    return simulation(text.replace('"100"/>', '"100" joint_limits="constraint"/>') if limits else text)


def lying_factor_problem(recorder):
    sim = talos("nonsmooth-newton", limits=True)
    sim.contact_stage.tree_only = False                 # the readable path, which the recorder wraps
    sim.step(2000)
    return recorder.last + (recorder.factor,)


def talos_problems(recorder):
    sim = talos("gauss-seidel-newton")
    sim.step(601)
    yield "talos_falling", recorder.last
    sim.step(1399)
    yield "talos_lying", recorder.last
    sim = talos("nonsmooth-newton")
    sim.step(2000)
    for _ in range(1000):
        sim.step()
        if not all(g.converged for g in sim.solver_stats["groups"]):
            yield "talos_jammed", recorder.last
            return


def wedged_problem():
    sim = talos("nonsmooth-newton")
    sim.runs[0].q[2] += 1e-9
    sim.step(2011)
    with tempfile.TemporaryDirectory() as tmp:
        sim.contact_stage.export_problems(tmp)          # the one-call path records nothing: export instead
        sim.step()
        return load_problem(next(Path(tmp).glob("*.npz")))


def standing_problem():
    sim = talos("nonsmooth-newton", controller=True)
    sim.step(122)
    with tempfile.TemporaryDirectory() as tmp:
        sim.contact_stage.export_problems(tmp)          # the one-call path records nothing: export
        sim.step()
        return load_problem(next(Path(tmp).glob("*.npz")))


def walk_problems():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulation(load_universe(ROOT / "scenes/talos_walk_ankles.xml"))
    for name, step in (("walk_double", 17), ("walk_single", 2372)):
        sim.step(step - sim.step_count)
        with tempfile.TemporaryDirectory() as tmp:
            sim.contact_stage.export_problems(tmp)      # the walk's step solves in one call: export
            sim.step()
            sim.contact_stage.export = None
            yield name, load_problem(next(Path(tmp).glob("*.npz")))


def limits_problems():
    sim = talos("nonsmooth-newton", limits=True)
    for name, step in (("talos_limits_landing", 387), ("talos_limits_arms", 744)):
        sim.step(step - sim.step_count)
        with tempfile.TemporaryDirectory() as tmp:
            sim.contact_stage.export_problems(tmp)      # the one-call path records nothing: export
            sim.step()
            sim.contact_stage.export = None
            yield name, load_problem(next(Path(tmp).glob("*.npz")))


def sliding_cube_problem():
    from tests.scenes import cubes
    from engine.engines import articula
    original, articula.batchable = articula.batchable, lambda run: False     # one by one: the readable stage
    try:
        sim = simulation(cubes())
    finally:
        articula.batchable = original
    while sim.contact_stage.counts.steps < 266:
        sim.step()
    with tempfile.TemporaryDirectory() as tmp:
        sim.contact_stage.export_problems(tmp)
        sim.step()
        return load_problem(Path(tmp) / "step000266_group5.npz")


def stack_problem(recorder):
    boxes = "\n".join(f'<Body name="box{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass>'
                      f'<Translation x="0" y="0" z="{0.05 + 0.1 * i}"/></Body>' for i in range(10))
    sim = simulation(STACK.format(boxes=boxes))
    sim.step(500)
    return recorder.last


def sole_problem():
    """The sole of test_solvers.sole (seed 000 eq. 3.26 for one free rigid body, twist at the CoM)."""
    dt, g, mass, inertia = 1e-3, 9.81, 40.0, np.diag([0.5, 1.2, 1.5])
    points = np.array([[sx * 0.11, sy * 0.07, -0.1] for sx in (-1, 1) for sy in (-1, 1)]) - [0.03, 0.01, 0.0]
    Minv = np.zeros((6, 6))
    Minv[:3, :3], Minv[3:, 3:] = np.eye(3) / mass, np.linalg.inv(inertia)
    C = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])      # rows n, t1, t2
    J = np.vstack([C @ np.hstack([np.eye(3), -np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])])
                   for r in points])
    F = np.r_[30.0, -10.0, -mass * g, 0.0, 0.0, 2.0]
    return dt * J @ Minv @ J.T, J @ (dt * Minv @ F), ConstraintBlocks.contacts(np.full(4, 0.8)), np.zeros(12)


def stalled_problems():
    """Part d's headline scene from three start heights, the problem of one step each (its export)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from contact import OurFalling
    for name, start_nm, step in (("talos_stalled", 3.0, 1681), ("talos_stalled_second_run", -1.0, 1591),
                                 ("talos_stalled_third_run", 0.0, 947), ("talos_landing_associated", 0.0, 943)):
        with tempfile.TemporaryDirectory() as tmp:
            run = OurFalling(tmp, "nonsmooth-newton", "constraint", start_nm, "constraint")
            run.sim.step(step)
            run.sim.contact_stage.export_problems(Path(tmp) / "problems")
            run.sim.step()
            yield name, load_problem(next((Path(tmp) / "problems").glob("step*_group0.npz")))


def main(names):
    """Record the problems ``names`` (all if empty)."""
    recorder = Recorder()
    problems = dict(talos_problems(recorder))
    problems["talos_wedged"] = wedged_problem()
    problems["talos_lying_factor"] = lying_factor_problem(recorder)
    problems["stack10"] = stack_problem(recorder)
    problems["sole4"] = sole_problem()
    problems["cube_sliding"] = sliding_cube_problem()
    problems["talos_standing"] = standing_problem()
    problems.update(walk_problems())
    problems.update(limits_problems())
    problems.update(stalled_problems())
    for name, problem in problems.items():
        if names and name not in names:
            continue
        save(name, problem)


def save(name, problem):
    """problem = (W, u, blocks, f0[, (B_col, B_val, width)]) into HERE/name.npz, the factor's arrays beside."""
    save_problem(HERE / f"{name}.npz", *problem[:4])
    if len(problem) > 4:
        B_col, B_val, width = problem[4]
        with np.load(HERE / f"{name}.npz") as data:
            np.savez_compressed(HERE / f"{name}.npz", **data, B_col=B_col, B_val=B_val, width=width)
    print(f"{name}: {len(problem[2].block_kind)} blocks, W {problem[0].shape}")


if __name__ == "__main__":
    main(sys.argv[1:])
