"""BIP's single support in the cyclic step (seed 003 §3.3; scenes/problems/bip_single_support.toml): its boundary
states are the thesis' data (L4115-4122, Annex A), checked by forward kinematics; the optimum spends the
published 109.5 J to the digest's ±30 %, and the stance foot's two ground forces (the heel's, the optimiser's
contact force; the toe's, the Newton–Euler ground reaction less the heel's: Annex D, III.22-III.23) push on the
ground with a friction below the thesis' 0.3."""
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics import forward_kinematics, frame_placement
from engine.dynamics.ground_reaction import ground_wrench
from engine.optimise.bip_states import JOINTS, single_support
from engine.optimise.command import optimise
from engine.optimise.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]
LPAS, L_PIED, DELTA, OMEGA_1 = 0.5, 0.4314111417, np.radians(11.0), -5.0    # L4115-4122; l_pied: the robot file's
BETA_P, GAMMA_P = np.arcsin(0.1 / 0.29), np.arcsin(0.1 / 0.188)            # the foot's angles (robot file)
ROTATION = -0.425              # the swing foot's turn from flat at the start (its q1^f: the problem file's choice)
PUBLISHED = 205.8 - 96.3       # J: the cyclic step less its double support (L4197-4198)


@pytest.fixture(scope="module")
def bip():
    universe = engine.load_universe(ROOT / "scenes" / "bip.xml")
    problem = load_problem(ROOT / "scenes" / "problems" / "bip_single_support.toml")
    mb = universe.multibody("bip")
    return mb.model, mb.q0, problem


def kinematics(model, q):
    """Hip O4, the stance heel A1, the swing toe B2 and heel B1 (x, z), the swing foot's and the trunk's absolute
    angles (rad): what Annex A prescribes."""
    data = model.create_data()
    forward_kinematics(model, data, q)

    def point(frame):
        return frame_placement(model, data, model.frame_index(frame))[1][[0, 2]]

    def angle(body):
        x = data.oMi_R[model.body_index(body)][:, 0]
        return np.arctan2(x[2], x[0])
    hip = data.oMi_p[model.body_index("S7_trunk")][[0, 2]]
    return np.concatenate([hip, point("rear_heel"), point("front_toe"), point("front_heel"),
                           [angle("S6_front_foot"), angle("S7_trunk")]])


def rates(model, q, v, eps=1e-6):
    """d/dt of ``kinematics`` along v (central differences, O(eps²))."""
    return (kinematics(model, q + eps * v) - kinematics(model, q - eps * v)) / (2 * eps)


def wrap(angle):
    return np.angle(np.exp(1j * angle))


def state(problem, which):
    values = {"start": (problem.start_q, problem.start_v), "end": (problem.end_q, problem.end_v)}[which]
    return tuple(np.array([table[n] for n in JOINTS]) for table in values)


def test_the_boundary_states_are_the_thesis_data(bip):
    """Start (the double support's end seen from the new stance toe): hip (20 − 50, 83) cm at (0.75, 0.05) m/s,
    the stance foot flat and still, the swing toe at −LPAS, still, its foot turned by ROTATION and turning at
    ω1 = −5 rad/s.  End (scenes/bip.xml): hip (7.0, 84.5) cm at (0.75, −0.2) m/s, the swing heel B1 down at
    LPAS − l_pied, still, its foot at δ = 11° (q6 = β_p + δ − π) with the ankle not turning (A.11); the trunk
    upright and still at both ends."""
    model, q_scene, problem = bip
    q, v = state(problem, "start")
    k, kd = kinematics(model, q), rates(model, q, v)
    flat = BETA_P - np.pi                                          # the swing foot's X6 (ankle -> heel), flat
    np.testing.assert_allclose(k, [-0.30, 0.83, -L_PIED, 0, -LPAS, 0, -LPAS - L_PIED * np.cos(ROTATION),
                                   -L_PIED * np.sin(ROTATION), wrap(flat + ROTATION), np.pi / 2], atol=1e-9)
    np.testing.assert_allclose(kd, [0.75, 0.05, 0, 0, 0, 0, kd[6], kd[7], OMEGA_1, 0], atol=1e-8)
    assert q[0] == pytest.approx(np.pi - GAMMA_P, abs=1e-9) and v[0] == 0.0
    q, v = state(problem, "end")
    np.testing.assert_allclose(q, q_scene, atol=1e-9)
    k, kd = kinematics(model, q), rates(model, q, v)
    np.testing.assert_allclose(k[[0, 1, 2, 3, 6, 7, 8, 9]], [0.07, 0.845, -L_PIED, 0, LPAS - L_PIED, 0,
                                                            flat + DELTA, np.pi / 2], atol=1e-9)
    np.testing.assert_allclose(kd[[0, 1, 2, 3, 6, 7, 9]], [0.75, -0.2, 0, 0, 0, 0, 0], atol=1e-8)
    assert v[5] == 0.0                                              # front_ankle: q6' = q5'
    assert q[2] > 0 and q[4] < 0                                    # both knees bent forward (Figure A-2)


def test_annex_a_gives_the_problem_files_states(bip):
    """The closed forms of Annex A (engine/optimise/bip_states.py) from the thesis' data give the boundary states
    checked above by forward kinematics, to the file's 10 decimals."""
    _, _, problem = bip
    q, v = single_support(LPAS, (0.20, 0.83), (0.75, 0.05), np.pi - GAMMA_P + ROTATION, OMEGA_1, (0.07, 0.845),
                          (0.75, -0.2), DELTA)
    for which in ("start", "end"):
        given_q, given_v = state(problem, which)
        np.testing.assert_allclose([q[which][n] for n in JOINTS], given_q, rtol=0, atol=1e-9)
        np.testing.assert_allclose([v[which][n] for n in JOINTS], given_v, rtol=0, atol=1e-9)


def test_the_optimum_spends_the_published_energy_and_the_stance_foot_pushes(bip):
    model, _, problem = bip
    universe = engine.load_universe(ROOT / "scenes" / "bip.xml")
    result = optimise(universe, problem)
    assert result.success, result.status_words
    assert abs(result.energy - PUBLISHED) / PUBLISHED <= 0.30
    data = model.create_data()
    total = np.array([ground_wrench(model, data, q, v, a)[[0, 2]] for q, v, a in zip(result.q, result.v, result.a)])
    heel, toe = result.forces, total - result.forces
    weight = model.total_mass * 9.81
    assert heel[:, 1].min() >= -1e-6 * weight and toe[:, 1].min() > 0.0          # NB1, NB2 >= 0 (III.22-III.23)
    assert (np.abs(total[:, 0]) / total[:, 1]).max() < 0.3                        # the friction needed (L4189-4193)
