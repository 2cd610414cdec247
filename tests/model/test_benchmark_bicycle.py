"""The benchmark bicycle (assets/robots/benchmark_bicycle.urdf) against seed 001's numbers (issue 12, part 4;
shared/seeds/001_bicycle.md §3.1-3.3, checklist §5.1 item 1) and Pinocchio."""
import math
from pathlib import Path

import numpy as np
import pytest

import engine

BIKE = Path(__file__).parents[2] / "assets" / "robots" / "benchmark_bicycle.urdf"
H2, H3, MU = 0.35, 0.3, math.pi / 10


@pytest.fixture(scope="module")
def bike():
    model = engine.load_model(BIKE, floating_base=True)
    order = [0, 1, 2, 3, 4, 5] + [next(j.idx_v for j in model.joints if j.name == name)
                                  for name in ("steer", "front_spin", "rear_spin")]
    return model, order


def mass_matrix(model, order, steer):
    """M in the digest's order (V1, V2, V3, Ω1, Ω2, Ω3, ṙ1, ṙ2, ṙ3), frame at rest pose, steer r1."""
    q = engine.neutral(model)
    q[next(j.idx_q for j in model.joints if j.name == "steer")] = steer
    return engine.crba(model, model.create_data(), q)[np.ix_(order, order)], q


# §3.3, App. C.1 formulas (1-based indices, values to their 6 printed decimals)
AT_0 = {(1, 1): 94, (2, 2): 94, (3, 3): 94, (1, 6): -32.157789, (3, 4): 32.157789, (2, 6): 52.785554,
        (3, 5): -52.785554, (3, 7): 0.211352, (4, 4): 17.015406, (4, 5): -19.316850, (4, 7): 0.340203,
        (5, 5): 40.736457, (5, 7): -0.106486, (6, 6): 56.743264, (6, 8): 0.28, (6, 9): 0.12, (9, 9): 0.12,
        (7, 7): 0.154999, (8, 8): 0.28}
AT_03 = {(1, 5): 0.062459, (4, 6): -0.030139, (4, 8): -0.025570, (5, 6): -0.096443, (5, 8): -0.078696}


@pytest.mark.parametrize("steer, expected", [(0.0, AT_0), (0.3, AT_03)])
def test_the_mass_matrix_has_the_seed_s_spot_values(bike, steer, expected):
    """Articula's crba equals the thesis's closed-form entries (printed to 6 decimals: tolerance 5e-7)."""
    M, _ = mass_matrix(*bike, steer)
    for (i, j), value in expected.items():
        assert M[i - 1, j - 1] == pytest.approx(value, abs=5e-7), (i, j)


@pytest.mark.parametrize("steer", [0.0, 0.3, -1.1])
def test_the_mass_matrix_is_pinocchio_s(bike, steer):
    """Pinocchio loads the same URDF and gives the same M(q) to 1e-10 (an oracle for the frames and inertias)."""
    pin = pytest.importorskip("pinocchio")
    model, order = bike
    M, q = mass_matrix(model, order, steer)
    reference = pin.buildModelFromUrdf(str(BIKE), pin.JointModelFreeFlyer())
    q_pin = pin.neutral(reference)
    k = reference.joints[reference.getJointId("steer")].idx_q      # a continuous joint: (cos, sin) in Pinocchio
    q_pin[k:k + 2] = math.cos(steer), math.sin(steer)
    M_pin = pin.crba(reference, reference.createData(), q_pin)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    pin_order = [0, 1, 2, 3, 4, 5] + [reference.joints[reference.getJointId(n)].idx_v
                                      for n in ("steer", "front_spin", "rear_spin")]
    np.testing.assert_allclose(M, M_pin[np.ix_(pin_order, pin_order)], rtol=0, atol=1e-10)


def test_wheelbase_trail_and_centre_of_mass_are_the_benchmark_s(bike):
    """Meijaard et al. 2007: wheelbase w = 1.02 m, trail c = 0.08 m (digest §3.2: 1.0197 and 0.08002 from the
    thesis's rounded lengths), total mass 94 kg and centre of mass (x_T, z_T) = (0.34213, −0.86117) m from the
    rear contact (x forward, z down): to 1e-12 the mass-weighted mean of the thesis's centres of mass (frame
    (0.3, 0.9), fork O1 + R1 G1, wheels at the hubs), within 4e-4 the benchmark's (the thesis rounds the fork's
    centre of mass to (0.8997, 0.7089) from (0.9, 0.7): 4 kg × 0.0089 m / 94 kg = 3.8e-4 m)."""
    model, order = bike
    q = engine.neutral(model)
    data = model.create_data()
    engine.forward_kinematics(model, data, q)
    body = {name: b for b, name in enumerate(model.body_name)}
    rear_hub, front_hub = data.oMi_p[body["frame"]], data.oMi_p[body["front_wheel"]]
    # R0: x up, y forward; the contacts lie a radius below the hubs
    assert front_hub[1] - rear_hub[1] == pytest.approx(1.0197, abs=1e-12)
    assert front_hub[0] - rear_hub[0] == pytest.approx(H2 - H3, abs=1e-12)
    steer = next(j for j in model.joints if j.name == "steer").body
    axis = data.oMi_R[steer] @ model.joint_axis[steer]                 # the steering axis, pointing up
    origin = data.oMi_p[steer]
    t = (-H3 - origin[0]) / axis[0]                                    # where it meets the ground x = −h3
    assert axis[0] == pytest.approx(math.cos(MU), abs=1e-12) and axis[1] == pytest.approx(-math.sin(MU), abs=1e-12)
    assert (origin + t * axis)[1] - front_hub[1] == pytest.approx(H2 * math.tan(MU) - 0.0337, abs=1e-12)
    assert (origin + t * axis)[1] - front_hub[1] == pytest.approx(0.08, abs=5e-5)
    assert model.total_mass == pytest.approx(94.0, abs=1e-12)
    c = engine.com(model, data, q)
    x_T, z_T = c[1] - rear_hub[1], -(c[0] - rear_hub[0] + H3)
    s, k = math.sin(MU), math.cos(MU)
    fork = (0.986 + k * 0.0288 - s * 0.368, H3 + 0.05 + s * 0.0288 + k * 0.368)      # O1 + R1 G1 (forward, up)
    assert x_T == pytest.approx((85 * 0.3 + 4 * fork[0] + 3 * 1.0197) / 94, abs=1e-12)
    assert z_T == pytest.approx(-(85 * 0.9 + 4 * fork[1] + 3 * H2 + 2 * H3) / 94, abs=1e-12)
    assert (x_T, z_T) == pytest.approx((0.34213, -0.86117), abs=4e-4)
