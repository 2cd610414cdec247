"""Published models and numbers: seed 003's planar 5-bar and BIP mass matrices (Chessé 2002, Tables III-1,
III-3, eq. III.1, Annex B) and seed 004's slider–pivot inverse and direct models (Riccoboni 2022, Eq. 1, 4).

The planar seeds write the dynamics in absolute angles theta (I.26-I.28); our joints are relative angles
phi with theta = C phi (C[i, j] = 1 when body j is body i or one of its ancestors), so the thesis' matrix
is M_abs = C^-T M C^-1 and its gravity forces are C^-T tau_g.
"""
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics import aba, crba, forward_kinematics, rnea
from engine.model.description import compile_model
from engine.model.urdf import read_urdf

ROBOTS = Path(__file__).resolve().parents[2] / "assets" / "robots"
G = 9.81


def ancestry(model):
    """C with theta = C phi for a tree of 1-DOF hinges."""
    C = np.eye(model.nbodies)
    for i in range(model.nbodies):
        j = model.body_parent[i]
        while j >= 0:
            C[i, j] = 1.0
            j = model.body_parent[j]
    return C


def absolute_dynamics(model, theta):
    """(M_abs, dV/dtheta) at absolute angles theta, from our crba and rnea (v = 0, a = 0)."""
    C = ancestry(model)
    Cinv = np.linalg.inv(C)
    q = Cinv @ theta
    data = model.create_data()
    M = crba(model, data, q).copy()
    tau_g = rnea(model, data, q, np.zeros(model.nv), np.zeros(model.nv)).copy()
    return Cinv.T @ M @ Cinv, Cinv.T @ tau_g


# -- seed 003 §3.1: the 5-bar (Table III-1, eq. III.1-III.2, raw L2244-2340) -------------------------------

def five_bar_constants():
    """(III.1) with Table III-1: r = 0.4, m = 2, a = 0.2, I_O = 0.107 for S1..S4; load m5 = 5 kg at O3."""
    r, m, a, I, m5 = 0.4, 2.0, 0.2, 0.107, 5.0
    m345, m2345 = 2 * m + m5, 3 * m + m5
    M = np.diag([I + m2345 * r**2, I + m345 * r**2, I + m * r**2, I])
    E = np.zeros((4, 4))
    E[0, 1] = r * (m * a + m345 * r)
    E[0, 2] = E[1, 2] = r * (m * a + m * r)
    E[0, 3] = E[1, 3] = E[2, 3] = r * m * a
    V = G * np.array([m * a + m2345 * r, m * a + m345 * r, m * a + m * r, m * a])
    return M, E + E.T, V


def test_seed003_five_bar_mass_matrix_formula():
    """M = [[M11, E12 C12, ...]] with C_ij = cos(q_i - q_j) (III.1), gravity Q_i = -V_i cos q_i (III.2)."""
    model = engine.load_model(ROBOTS / "five_bar.xml")
    Mdiag, E, V = five_bar_constants()
    rng = np.random.default_rng(0)
    for _ in range(10):
        theta = rng.uniform(-np.pi, np.pi, 4)
        M_abs, dV = absolute_dynamics(model, theta)
        expected = Mdiag + E * np.cos(theta[:, None] - theta[None, :])
        np.testing.assert_allclose(M_abs, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(dV, V * np.cos(theta), rtol=0, atol=1e-11)


def test_seed003_five_bar_printed_constants():
    """The digest's values of the constants (§3.1 table, to the printed digits): our crba at theta = 0
    reads M_ii and E_ij directly (C_ij = 1), rnea's gravity forces read V_i."""
    model = engine.load_model(ROBOTS / "five_bar.xml")
    M_abs, dV = absolute_dynamics(model, np.zeros(4))
    np.testing.assert_allclose(np.diag(M_abs), [1.867, 1.547, 0.427, 0.107], atol=5e-4)
    iu = np.triu_indices(4, 1)  # E12, E13, E14, E23, E24, E34
    np.testing.assert_allclose(M_abs[iu], [1.6, 0.48, 0.16, 0.48, 0.16, 0.16], atol=5e-3)
    np.testing.assert_allclose(dV, [47.088, 39.24, 11.772, 3.924], atol=5e-4)
    assert model.total_mass == pytest.approx(13.0) and model.total_mass * G == pytest.approx(127.53)


def test_five_bar_closure_configuration():
    """The asset's closure O5 (span L = 0.8 m, our choice: the thesis gives none) holds at the absolute
    angles (90, 0, 0, -90) deg its comment names: the end of S4 lands on (L, 0, 0)."""
    model = engine.load_model(ROBOTS / "five_bar.xml")
    (closure,) = model.closures
    data = model.create_data()
    forward_kinematics(model, data, np.array([np.pi / 2, -np.pi / 2, 0.0, -np.pi / 2]))
    b = closure.body_a
    np.testing.assert_allclose(data.oMi_R[b] @ closure.p_a + data.oMi_p[b], closure.p_b, rtol=0, atol=1e-15)
    np.testing.assert_allclose(closure.p_b, [0.8, 0.0, 0.0])


# -- seed 003 §3.3: BIP (Table III-3, Annex B eq. B.1-B.3, Annex C) -----------------------------------------

BIP_TABLE = {  # Table III-3, raw L3574-3621: r_i, m_i, a_i, b_i, I_i about O_i
    "S1_rear_foot": (0.188, 2.34, 0.143, 0.042, 0.1), "S2_rear_shank": (0.410, 6.11, 0.258, 0.028, 0.69),
    "S3_rear_thigh": (0.410, 10.9, 0.250, 0.005, 1.31), "S4_front_thigh": (0.410, 10.9, 0.160, -0.005, 1.02),
    "S5_front_shank": (0.410, 6.11, 0.152, -0.028, 0.72), "S6_front_foot": (0.29, 2.34, 0.045, -0.042, 0.07),
    "S7_trunk": (0.0, 66.11, 0.391, 0.029, 18.99)}


def planar_tree_dynamics(model, table, theta):
    """The closed form behind (I.32) and (B.1), for any planar tree whose children hang at O_{i+1} = r_i X_i:
    M_ii = I_i + m_{>i} r_i^2, and for j a descendant of i
    M_ij = r_i [(m_j a_j + m_{>j} r_j) cos(theta_j - theta_i) - m_j b_j sin(theta_j - theta_i)], 0 across
    branches; V = g sum_i [(m_i a_i + m_{>i} r_i) sin theta_i + m_i b_i cos theta_i] (Annex C)."""
    n = model.nbodies
    r, m, a, b, I = (np.array([table[name][k] for name in model.body_name]) for k in range(5))
    C = ancestry(model)
    beyond = C.T @ m - m  # m_{>i}: the mass of the descendants of i
    M = np.diag(I + beyond * r**2)
    for i in range(n):
        for j in range(n):
            if j != i and C[j, i]:
                d = theta[j] - theta[i]
                M[i, j] = M[j, i] = r[i] * ((m[j] * a[j] + beyond[j] * r[j]) * np.cos(d) - m[j] * b[j] * np.sin(d))
    k = m * a + beyond * r
    return M, G * (k * np.cos(theta) - m * b * np.sin(theta))


def test_seed003_bip_mass_matrix_formula():
    """The asset (all of Table III-3, every b_i) against the closed form, at random postures."""
    model = engine.load_model(ROBOTS / "bip_sagittal.xml")
    rng = np.random.default_rng(1)
    for _ in range(10):
        theta = rng.uniform(-np.pi, np.pi, 7)
        M_abs, dV = absolute_dynamics(model, theta)
        M_expected, dV_expected = planar_tree_dynamics(model, BIP_TABLE, theta)
        np.testing.assert_allclose(M_abs, M_expected, rtol=0, atol=1e-11)
        np.testing.assert_allclose(dV, dV_expected, rtol=0, atol=1e-10)


def thesis_bip():
    """The thesis' own BIP: b_i dropped except b1 and b6 (Annex B, B.1; Annex C), I_i about O_i kept."""
    desc = read_urdf(ROBOTS / "bip_sagittal.xml")
    table = dict(BIP_TABLE)
    for name in ("S2_rear_shank", "S3_rear_thigh", "S4_front_thigh", "S5_front_shank", "S7_trunk"):
        r, m, a, b, I = table[name]
        table[name] = (r, m, a, 0.0, I)
        link = desc.links[name]
        link.com = np.array([a, 0.0, 0.0])
        link.inertia = link.inertia * (I - m * a * a) / link.inertia[1, 1]
    return compile_model(desc), table


def test_seed003_bip_printed_formulas_and_constants():
    """(B.2)-(B.3): M_ii; M_ij = E_ij C_ji - F_ij S_ji with F only in column 6; M_j7 = E_j7 C_7j (j <= 3),
    M47 = M57 = M67 = 0; checked at random postures, then the digest's values of the constants (§3.3 table,
    to the printed digits) read from our crba at theta = 0 (and theta_6 - theta_1 = pi/2 for F16).
    Printed error (already in the digest): Annex B L4662 names F46 "F36"."""
    model, table = thesis_bip()
    r, m, a, b, I = (np.array([table[n][k] for n in model.body_name]) for k in range(5))
    rng = np.random.default_rng(2)
    for _ in range(10):
        theta = rng.uniform(-np.pi, np.pi, 7)
        M_abs, _ = absolute_dynamics(model, theta)
        np.testing.assert_allclose(M_abs, planar_tree_dynamics(model, table, theta)[0], rtol=0, atol=1e-11)
        np.testing.assert_allclose(M_abs[3:6, 6], 0.0, rtol=0, atol=1e-12)
        d61 = theta[5] - theta[0]
        F16 = r[0] * m[5] * b[5]
        assert M_abs[0, 5] == pytest.approx(r[0] * m[5] * a[5] * np.cos(d61) - F16 * np.sin(d61), abs=1e-12)
    M0, dV0 = absolute_dynamics(model, np.zeros(7))
    np.testing.assert_allclose(np.diag(M0), [3.7217, 16.8881, 15.6758, 2.4404, 1.1134, 0.07, 18.99], atol=5e-5)
    for (i, j), E in {(0, 1): 7.7238, (0, 2): 7.0996, (0, 6): 4.8596, (1, 2): 15.4831, (1, 6): 10.5981,
                      (1, 3): 2.1355, (2, 3): 2.1355}.items():
        assert M0[i, j] == pytest.approx(E, abs=5e-5), (i + 1, j + 1)
    theta = np.zeros(7)
    theta[5] = np.pi / 2
    assert -absolute_dynamics(model, theta)[0][0, 5] == pytest.approx(-0.0185, abs=5e-5)  # M16 = -F16
    # Annex C: V_i = dV/dtheta_i at theta = 0 (VB1, VB6 multiply sin 0)
    np.testing.assert_allclose(dV0[:5], [192.27, 403.03, 370.46, 51.10, 18.52], atol=5e-3)
    assert dV0[5] == pytest.approx(1.033, abs=5e-4) and dV0[6] == pytest.approx(253.58, abs=5e-3)
    assert model.total_mass == pytest.approx(104.81)


# -- seed 004 §2.6: the slider-pivot (raw L689-729) ---------------------------------------------------------

M2, M3, L3, IZZ3 = 1.0, 2.0, 0.5, 0.1


def slider_pivot_inverse(theta, dtheta, ddx, ddtheta):
    """Eq. 1: X = (m2+m3) x'' - l3 m3 sin(t) t'' - l3 m3 t'^2 cos(t),
    N = (Izz3 + l3^2 m3) t'' - l3 m3 sin(t) x'' + l3 m3 g cos(t)."""
    X = (M2 + M3) * ddx - L3 * M3 * np.sin(theta) * ddtheta - L3 * M3 * dtheta**2 * np.cos(theta)
    N = (IZZ3 + L3**2 * M3) * ddtheta - L3 * M3 * np.sin(theta) * ddx + L3 * M3 * G * np.cos(theta)
    return np.array([X, N])


@pytest.fixture(scope="module")
def slider_pivot():
    model = engine.load_model(ROBOTS / "slider_pivot.xml")
    return model, model.create_data()


def test_seed004_slider_pivot_test_vector(slider_pivot):
    """theta = 0.3, theta' = 1, x'' = 0.5, theta'' = -2 (x = 0.2, x' = -0.7 are ours: the model does not
    depend on them): X = 1.1357039242 N, N = 8.0240908550 N m, the actuating components of the joint
    reaction wrenches (X along the slide on solid 2, N about the pivot on solid 3)."""
    model, data = slider_pivot
    q, v, a = np.array([0.2, 0.3]), np.array([-0.7, 1.0]), np.array([0.5, -2.0])
    tau = rnea(model, data, q, v, a)
    np.testing.assert_allclose(tau, [1.1357039242, 8.0240908550], rtol=0, atol=1e-10)
    f_slider, f_pivot = data.f[0], data.f[1]  # wrench of parent on child, child frame (linear, angular)
    assert f_slider[0] == pytest.approx(1.1357039242, abs=1e-10)
    assert f_pivot[3:] @ model.joint_axis[1] == pytest.approx(8.0240908550, abs=1e-10)
    # the rest of the slider's reaction, from Newton on solids 2 + 3 (world frame = slider frame):
    # F = m2 x'' e_x + m3 a_G3 - (m2 + m3) g, a_G3 = (x'' - l3 (t'' sin t + t'^2 cos t), 0, l3 (t'' cos t - t'^2 sin t))
    t, dt, ddx, ddt = 0.3, 1.0, 0.5, -2.0
    aG = np.array([ddx - L3 * (ddt * np.sin(t) + dt**2 * np.cos(t)), 0.0, L3 * (ddt * np.cos(t) - dt**2 * np.sin(t))])
    F = M2 * np.array([ddx, 0.0, 0.0]) + M3 * aG + (M2 + M3) * np.array([0.0, 0.0, G])
    np.testing.assert_allclose(f_slider[:3], F, rtol=0, atol=1e-12)


def test_seed004_slider_pivot_inverse_and_direct_models(slider_pivot):
    """Eq. 1 at random states; Eq. 4's determinant D = l3^2 m3^2 cos^2 t + (l3^2 m2 + Izz3) m3 + Izz3 m2
    (= 1.71266781 at t = 0.3) is det M; aba inverts rnea (the direct model returns x'', t'' exactly)."""
    model, data = slider_pivot
    D = L3**2 * M3**2 * np.cos(0.3)**2 + (L3**2 * M2 + IZZ3) * M3 + IZZ3 * M2
    assert D == pytest.approx(1.71266781, abs=5e-9)
    assert np.linalg.det(crba(model, data, np.array([0.0, 0.3]))) == pytest.approx(D, rel=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, v, a = rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2)
        tau = rnea(model, data, q, v, a).copy()
        np.testing.assert_allclose(tau, slider_pivot_inverse(q[1], v[1], a[0], a[1]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(aba(model, data, q, v, tau), a, rtol=0, atol=1e-12)
