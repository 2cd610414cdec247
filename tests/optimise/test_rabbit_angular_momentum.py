"""Why RABBIT's single support (seed 003 §3.2) spends far more than the thesis' 18.2 J, and what reaches it.

RABBIT stands on a point foot O and its trunk turns freely on the boom, so the actuators cannot change the
angular momentum about O: only gravity does (Euler's law about a fixed point),

    L_O(t1) − L_O(t0) = ∫ M g (x_G − x_O) dt                                        (1)

The thesis' boundary states fix the left side (0.82 N m s), i.e. 2.1 mm s of x_G − x_O; a centre of mass at
the uniform speed the thesis describes (Figs. III-16/17: tangential force negligible, normal force the weight)
gives 8.2 mm s.  Given a torque of its own on the trunk, the optimiser spends 18.1 J, the thesis' number
(docs/plugins.md).  L_O and x_G come from Articula's numba centroidal functions, not from the CasADi model.
"""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics.centroidal import centroidal_momentum, com
from engine.optimise.command import optimise
from engine.optimise.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "scenes" / "problems"
FOOT = np.array([0.45, 0.0, 0.01])        # the stance roller's centre O (the problem pins it there)


@pytest.fixture(scope="module")
def rabbit():
    universe = engine.load_universe(ROOT / "scenes" / "rabbit.xml")
    return universe, universe.multibodies[0].model


def momentum_about_foot(model, q, v):
    """(L_O, x_G − x_O): the pitch angular momentum about O (world y) and the centre of mass ahead of O."""
    data = model.create_data()
    c, h = com(model, data, q), centroidal_momentum(model, data, q, v)
    return h[4] + np.cross(c - FOOT, h[:3])[1], c[0] - FOOT[0]


def balance(model, result, trunk_torque=0.0):
    """L_O(t1) − L_O(t0) and the trapezoid of its rate M g (x_G − x_O) (+ a torque about y) over the nodes."""
    L, x = np.array([momentum_about_foot(model, q, v) for q, v in zip(result.q, result.v)]).T
    rate = model.total_mass * 9.81 * x + trunk_torque
    return L[-1] - L[0], np.trapezoid(rate, result.t), np.trapezoid(np.abs(rate), result.t)


def test_the_boundary_states_ask_a_quarter_of_what_a_uniform_centre_of_mass_gains(rabbit):
    _, model = rabbit
    problem = load_problem(PROBLEMS / "rabbit_single_support.toml")
    names = [model.joint_name[int(model.dof_joint[k])] for k in range(model.nv)]
    ends = [momentum_about_foot(model, np.array([q[n] for n in names]), np.array([v[n] for n in names]))
            for q, v in ((problem.start_q, problem.start_v), (problem.end_q, problem.end_v))]
    asked = (ends[1][0] - ends[0][0]) / (model.total_mass * 9.81)               # (1), m s
    uniform = problem.duration * (ends[0][1] + ends[1][1]) / 2                  # x_G − x_O linear in t
    assert 0 < asked < uniform / 3, (asked, uniform)


def test_the_underactuated_optimum_obeys_eulers_law_about_the_foot(rabbit):
    """(1) on the optimiser's trajectory, to the transcription's accuracy, falling as the intervals double."""
    universe, model = rabbit
    problem = load_problem(PROBLEMS / "rabbit_single_support.toml")
    gaps = []
    for n in (problem.intervals, 2 * problem.intervals):
        result = optimise(universe, dataclasses.replace(problem, intervals=n))
        assert result.success
        change, integral, scale = balance(model, result)
        gaps.append(abs(change - integral))
        assert gaps[-1] < 1e-3 * scale, (change, integral, scale)
    assert gaps[1] < gaps[0] / 3, gaps


def test_with_a_torque_on_the_trunk_the_energy_is_the_thesis(rabbit):
    """The trunk torque (about −y, the joint's axis) supplies the momentum (1) lacks; J_e within ±30 % of 18.2 J."""
    universe, model = rabbit
    result = optimise(universe, load_problem(PROBLEMS / "rabbit_single_support_trunk_torque.toml"))
    assert result.success, result.status_words
    assert result.energy == pytest.approx(18.2, rel=0.30)
    torque = -result.u[:, list(result.actuator_names).index("boom_pitch")]
    change, integral, scale = balance(model, result, torque)
    assert abs(change - integral) < 1e-3 * scale, (change, integral, scale)
    gravity_only = balance(model, result)[1]
    assert gravity_only > 3 * change                      # the torque makes up what gravity gives too much
