"""The ``walk`` controller on flexible ankles (issue 13 with the compliant-feet issue's ``<Flexibility>``,
scenes/talos_walk_ankles.xml): the sole frames ride on the sole plates beyond the bushes, the QP's solution
satisfies the dynamics on the bushes' passive rows (spring–damper, no motor) as on the others, and Talos walks the
scene's six steps measured from the simulation."""
import warnings
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import Simulation, load_universe
from engine.control.walking.record import WalkRecord, talos_sole_outlines
from engine.dynamics import point_jacobian

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "talos_walk_ankles.xml"
PLATES = ["talos/leg_left_6_link_sole_plate", "talos/leg_right_6_link_sole_plate"]


def _walk():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulation(load_universe(SCENE))
    return sim, sim.runs[0].controllers[0]


def test_the_soles_and_their_bushes_are_found_beyond_the_ankles():
    """The sole frames (left_sole_link, right_sole_link) are carried by the sole plates, and each foot's bush is
    its three passive dofs (flex_y, flex_x, flex_z from the sole up), springs and dampers as the scene says."""
    _, ctrl = _walk()
    model = ctrl.model
    assert [model.body_name[model.frame_body[f]] for f in ctrl.feet] == [p.split("/")[1] for p in PLATES]
    for side, dofs in zip(("left", "right"), ctrl.bush):
        names = [model.joint_name[model.dof_joint[k]] for k in dofs]
        assert names == [f"leg_{side}_6_link_flex_{a}" for a in "yxz"]
        assert np.all(model.dof_passive[dofs]) and not np.any(ctrl.mask[dofs])
        assert model.dof_stiffness[dofs].tolist() == [2000.0, 2000.0, 2e5]
        assert model.dof_damping[dofs].tolist() == [2.5, 2.5, 400.0]
    assert np.flatnonzero(model.dof_passive).tolist() == sorted(np.concatenate(ctrl.bush).tolist())


@pytest.mark.parametrize("t_state", [0.5, 1.5], ids=["double-support", "single-support"])
def test_the_qp_solution_satisfies_the_dynamics_on_the_passive_rows(t_state):
    """On the scene's state at t, with M and h recomputed by engine.crba/rnea (h holds the bushes' k q + c q̇, as
    the dynamics does) and the corner Jacobians by engine.point_jacobian on the plates:
    |M q̈ + h − Sᵀτ − J_cᵀ f|∞ ≤ 1e-8 on every row, the base's and the bushes' included; τ is 0 on both
    (no motor), so on a bush row the contact forces and the plate's inertia balance exactly the spring–damper;
    every corner force is in its pyramid (1e-9 N) and |τ| within the effort limits."""
    sim, ctrl = _walk()
    sim.step(int(round(t_state / sim.dt)))
    q, v = sim.state.q[0], sim.state.v[0]
    tau = ctrl.control(sim.time, q, v)
    qdd, f, _, stance, *_ = ctrl.last
    assert len(stance) == (2 if t_state < ctrl.plan.steps[0].t_lift else 1)
    model, data = ctrl.model, ctrl.model.create_data()
    M = engine.crba(model, data, q)
    h = engine.rnea(model, data, q, v, np.zeros(model.nv), gravity=np.array([0, 0, -9.81])) \
        - model.dof_friction * np.sign(v)
    engine.forward_kinematics(model, data, q)
    rows = []
    for i in stance:
        fr = ctrl.feet[i]
        body, bR, bp = model.frame_body[fr], model.frame_R[fr], model.frame_p[fr]
        rows += [point_jacobian(model, data, body, bR @ c + bp) for c in ctrl.corners]
    Jc = np.vstack(rows)
    passive = np.flatnonzero(model.dof_passive)
    residual = M @ qdd + h - tau - Jc.T @ f
    assert np.abs(residual).max() <= 1e-8
    assert np.all(tau[:6] == 0.0) and np.all(tau[passive] == 0.0)
    spring = model.dof_stiffness[passive] * q[model.joint_idx_q[model.dof_joint[passive]]] \
        + model.dof_damping[passive] * v[passive]
    assert np.abs(spring).max() > 1.0        # the bushes are loaded: their rows carry real forces
    F, m = f.reshape(-1, 3), ctrl.mu / np.sqrt(2.0)
    assert F[:, 2].min() >= -1e-9 and (np.abs(F[:, :2]) - m * F[:, 2:]).max() <= 1e-9
    assert np.all(np.abs(tau) <= model.dof_effort_limit)


def test_talos_walks_on_flexible_ankles():
    """The scene as shipped (six 0.2 m steps of 0.7 s, seed 000 §4.4.2's walk on the ankle of §4.2), measured
    from the simulation at every step: all steps taken, no fall and no QP failure; the CoM ends within the issue's
    5 cm of the planned final mid-feet point (4 mm today); no stance sole slips more than 5 mm (< 1 mm today);
    the centre of pressure of the plates' ground forces stays in the support polygon of the soles' flat faces
    (except within 20 ms before a planned landing, by < 1 mm, as on rigid feet); the QP's dynamics residual
    ≤ 1e-8 on every row, the bushes' passive rows included, and its forces in their pyramids to 1e-9 N."""
    sim, ctrl = _walk()
    record = WalkRecord(sim, ctrl, talos_sole_outlines(), PLATES)
    for _ in range(int(round(ctrl.plan.duration / sim.dt))):
        sim.step(1)
        record.observe()
    assert ctrl.fallen is None and ctrl.qp_failures == 0
    assert ctrl.plan.steps_taken(sim.time) == 6
    assert np.linalg.norm(record.com[:2] - ctrl.plan.feet_final[:, :2].mean(axis=0)) < 0.05
    assert record.slip.max() < 0.005
    assert record.cop_outside < 1e-3
    if record.cop_outside > 1e-9:
        assert any(0 <= s.t_land - record.cop_outside_time < 0.02 for s in ctrl.plan.steps)
    assert record.qp_residual <= 1e-8 and record.cone_violation <= 1e-9
