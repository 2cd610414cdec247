"""The optimised gait replayed in the simulator with contacts (issue 14's validation item): RABBIT's single
support of scenes/problems/rabbit_single_support_replay.toml, optimised here (0.4 s), then played by the
``replay`` controller in scenes/rabbit_replay.xml, where the contact solver computes the roller forces itself.
Every contact force stays in its cone (μ_sim = 0.5, to the solver's tolerance), the stance roller sticks (its
force strictly inside), the swing roller never pushes on the ground, and the replay's energy ∫ Σ |q̇_i τ_i| dt is
the optimiser's J_e to 5 %.  Why the problem needs margins (a smaller μ_opt = 0.3, a clearance, the rate cost):
its header."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.control.replay import TrajectoryReplay
from engine.optimise.command import optimise
from engine.optimise.problem import load_problem
from engine.optimise.trajectory import save_trajectory

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "scenes" / "problems" / "rabbit_single_support_replay.toml"
LEGS = ("left_hip", "left_knee", "right_hip", "right_knee")


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    universe = engine.load_universe(ROOT / "scenes" / "rabbit.xml")
    result = optimise(universe, load_problem(PROBLEM))
    assert result.success, result.status_words
    save_trajectory(result, tmp / "ss.npz")
    scene = (ROOT / "scenes" / "rabbit_replay.xml").read_text()
    scene = scene.replace("../assets/robots", str(ROOT / "assets" / "robots"))
    (tmp / "replay.xml").write_text(scene.replace("../assets/trajectories/rabbit_single_support.npz", "ss.npz"))
    sim = engine.Simulation(engine.load_universe(tmp / "replay.xml"))
    run = sim.runs[0]
    legs = [run.model.joint(name).idx_v for name in LEGS]
    work, contacts = 0.0, []
    for _ in range(round(result.t[-1] / sim.dt)):
        q = run.q.copy()
        sim.step()
        work += np.abs(run.tau[legs] * (run.q[legs] - q[legs])).sum()   # the step's work of each motor
        contacts.append(sim.contacts)
    return result, sim, work, contacts


def test_every_contact_force_stays_in_its_cone_and_the_stance_roller_sticks(replay):
    """Sliding puts a contact's force on its cone's edge (|F_t| = μ F_n to the solver's tolerance): a ratio
    below μ by more than that at every step is a roller that sticks."""
    result, sim, _, contacts = replay
    tolerance = sim.universe.solver.tolerance
    stance = []
    for c in contacts:
        normal = np.einsum("ij,ij->i", c.force, c.normal)
        tangential = np.linalg.norm(c.force - normal[:, None] * c.normal, axis=1)
        assert (normal >= -tolerance * np.linalg.norm(c.force, axis=1)).all()
        assert (tangential <= c.mu * normal + tolerance * np.linalg.norm(c.force, axis=1)).all()
        for body, f_n, f_t in zip(c.body_a, normal, tangential):
            if body == "rabbit/right_tibia":
                stance.append(f_t / f_n)
            else:                                   # the swing roller: at most touching, never pushing
                assert f_n <= tolerance * 9.81 * 40.0
    assert len(stance) == len(contacts)             # the stance roller is down at every step
    assert max(stance) < 0.5 * (1.0 - 100 * tolerance)         # inside the cone, not on its edge


def test_the_replay_spends_the_optimisers_energy_to_5_percent(replay):
    result, _, work, _ = replay
    assert abs(work - result.energy) / result.energy <= 0.05


def test_the_rate_cost_removes_the_trapezoids_zigzag():
    """The trapezoid constrains a_k + a_{k+1} only: without the rate cost the stance force alternates from node to
    node (its second differences are a zig-zag's, 246 N at the median), with it they are a smooth force's (6 N:
    |F''| h² for ~700 N changing over ~0.1 s at h = 10.6 ms is tens of N)."""
    universe = engine.load_universe(ROOT / "scenes" / "rabbit.xml")
    problem = load_problem(PROBLEM)
    second = {}
    for rate in (0.0, problem.rate):
        result = optimise(universe, replace(problem, rate=rate))
        assert result.success, result.status_words
        second[rate] = np.median(np.abs(np.diff(result.forces[:, 1], 2)))
    assert second[0.0] > 10 * second[problem.rate]


def test_a_replay_naming_a_joint_the_model_has_not_is_refused():
    model = engine.load_universe(ROOT / "scenes" / "rabbit.xml").multibodies[0].model
    with pytest.raises(ValueError, match="'lft_knee' is not a joint of 'rabbit'.*left_knee"):
        TrajectoryReplay(model, ROOT / "assets" / "trajectories", "rabbit_single_support.npz", "left_hip lft_knee")
