"""Deformable soles in the contact stage (engine/contact/soles.py): a rigid block on an FEM sole resting on the
ground, against closed forms built from the sole's condensed stiffness K_c alone (seed 000 eqs. 4.20–4.22), the
total force against the weight, every node force in its cone, a drop that never gains energy, and a state that
restores exactly."""
import numpy as np
import pytest

from engine import Simulation, load_universe
from engine.errors import ArticulaError

MASS, G = 10.0, 9.81
BLOCK = """<robot name="block"><link name="block">
  <inertial><mass value="10"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial>
  <visual><geometry><box size="0.22 0.13 0.05"/></geometry></visual></link></robot>"""
SCENE = """<Universe>
  <Settings><Contact margin="0.002" correction="{correction}"/></Settings>
  <Material name="floor" friction="{mu}"/>
  <MultiBody name="b"><File>block.urdf</File><FloatingBase>true</FloatingBase>
    <Translation x="0" y="0" z="{z}"/><Material>floor</Material>
    <Sole link="block" shape="box" size="0.22 0.13 0.02" h="0.02"><Translation z="-0.025"/>
      <Material E="3e6" nu="0.4"/></Sole>
  </MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body>
</Universe>"""


def block_on_sole(tmp_path, mu=0.9, z=0.045, correction="baumgarte", scene=SCENE) -> Simulation:
    (tmp_path / "block.urdf").write_text(BLOCK)
    path = tmp_path / "scene.xml"
    path.write_text(scene.format(mu=mu, z=z, correction=correction))
    return Simulation(load_universe(path))


def test_a_sticking_sole_sinks_uniformly_by_the_weight_over_its_vertical_stiffness(tmp_path):
    """Every bottom node sticks (μ = 5) and the block stays level: U_c = δ e_z on every node with
    δ = m g / Σ_ij K_c[z_i, z_j] (K_c U_c = F_c and Σ F_z = m g), to 1e-6."""
    sim = block_on_sole(tmp_path, mu=5.0)
    sim.step(1500)
    soles = sim.contact_stage.soles
    K_c = soles.specs[0].sole.K_c
    delta = MASS * G / K_c[2::3, 2::3].sum()
    U = soles.U[0].reshape(-1, 3)
    assert len(U) == 84 and len(sim.contact_stage.contacts) == 84
    np.testing.assert_allclose(U[:, 2], delta, rtol=1e-6)
    np.testing.assert_allclose(U[:, :2], 0.0, atol=1e-6 * delta)
    assert soles.elastic_energy() == pytest.approx(0.5 * MASS * G * delta, rel=1e-6)


def test_a_frictionless_sole_carries_the_weight_on_a_plane_of_node_displacements(tmp_path):
    """μ = 0: F_c = (0, 0, F_z) on every node, and the nodes, all on the ground, lie on a plane of the sole frame:
    U_z = δ + a x + b y (the structured mesh is not mirror-symmetric, so the block tilts slightly, b ≈ 1.5e-5
    rad). With Σ F_z = m g and no moment about the centre of mass (above the sole's centre), K_c⁻¹ F = U gives
    the linear system solved here for F_z, δ, a, b. Agreement to 2e-4 of δ: the closed form is linear and
    neglects the tilt's effect on the contact geometry (a rotation of 1.5e-5 rad)."""
    sim = block_on_sole(tmp_path, mu=0.0)
    sim.step(1500)
    soles = sim.contact_stage.soles
    K_inv = soles.specs[0].sole.K_c_inv
    c = len(K_inv) // 3
    plane = np.column_stack([np.ones(c), soles.rest[0][:, :2]])
    A = np.block([[K_inv[2::3, 2::3], -plane], [plane.T, np.zeros((3, 3))]])
    solution = np.linalg.solve(A, np.r_[np.zeros(c), MASS * G, 0.0, 0.0])
    F_z, delta = solution[:c], solution[c]
    U_expected = (K_inv[:, 2::3] @ F_z).reshape(-1, 3)
    np.testing.assert_allclose(soles.U[0].reshape(-1, 3), U_expected, atol=2e-4 * delta)
    forces = soles.node_forces(0, sim.contact_stage.previous[2])
    np.testing.assert_allclose(forces[:, 2], F_z, atol=2e-4 * F_z.max())
    assert np.abs(forces[:, :2]).max() < 2 * 1.5e-5 * F_z.max()     # the ground's normal, seen tilted


@pytest.mark.parametrize("mu", [0.3, 0.9])
def test_the_total_node_force_equals_the_weight_and_every_node_force_lies_in_its_cone(tmp_path, mu):
    sim = block_on_sole(tmp_path, mu=mu)
    sim.step(800)
    stage = sim.contact_stage
    f = stage.previous[2]
    assert stage.forces.sum(axis=0) == pytest.approx([0.0, 0.0, MASS * G], abs=1e-6 * MASS * G)
    assert np.all(f[:, 0] >= -1e-12)
    assert np.all(np.hypot(f[:, 1], f[:, 2]) <= mu * f[:, 0] * (1 + 1e-9) + 1e-12)
    assert all(r.converged for r in stage.reports)


def test_a_sole_dropped_on_the_ground_never_gains_energy(tmp_path):
    """Dropped from 1 cm without penetration correction: kinetic + potential + elastic energy, step after step,
    never increases by more than rounding (the contact impulse and the quasi-static sole only dissipate)."""
    sim = block_on_sole(tmp_path, z=0.055, correction="none")
    energies = []
    for _ in range(400):
        sim.step(1)
        kinetic, potential = sim.energy()
        energies.append(kinetic + potential + sim.contact_stage.soles.elastic_energy())
    rise = np.diff(energies)
    assert rise.max() <= 1e-9 * MASS * G * 0.01
    assert energies[-1] < energies[0] - 0.5 * MASS * G * 0.01        # the impact dissipated most of it


def test_the_sole_state_restores_exactly(tmp_path):
    """The node displacements are part of the state: a run restored at step k continues bit for bit."""
    sim = block_on_sole(tmp_path, z=0.05)
    sim.step(30)
    state = sim.state
    sim.step(40)
    q_a, U_a = sim.runs[0].q.copy(), sim.contact_stage.soles.displacements()
    sim.set_state(state)
    sim.step(40)
    np.testing.assert_array_equal(sim.runs[0].q, q_a)
    np.testing.assert_array_equal(sim.contact_stage.soles.displacements()[0], U_a[0])
    sim.reset()
    assert not sim.contact_stage.soles.displacements()[0].any()


@pytest.mark.parametrize("sole, message, got", [
    ('<Sole link="blok"><Material E="3e6" nu="0.4"/></Sole>', "not a link of 'b' (did you mean 'block'?)",
     "(got 'blok')"),
    ('<Sole link="block"><Material E="-3e6" nu="0.4"/></Sole>', "Young's modulus E must be finite and > 0",
     "(got -3000000.0)"),
    ('<Sole link="block"><Material E="3e6" nu="0.5"/></Sole>', "Poisson's ratio nu must lie in (-1, 0.5)",
     "(got 0.5)"),
    ('<Sole link="block" shape="boxx"><Material E="3e6" nu="0.4"/></Sole>', "(did you mean 'box'?)", "(got 'boxx')"),
    ('<Sole link="block"><Translation z="-3"/><Material E="3e6" nu="0.4"/></Sole>', "is 3 m from its link 'block'",
     "(got [0.0, 0.0, -3.0])"),
    ('<Sole link="block"/>', "<Sole> needs a <Material", ""),
    ('<Sole link="block" shape="file" file="missing.msh"><Material E="3e6" nu="0.4"/></Sole>', "file not found",
     "(got 'missing.msh')"),
    ('<Sole link="block"><Material E="3e6" nu="0.4"/></Sole><Sole link="block"><Material E="3e6" nu="0.4"/></Sole>',
     "link 'block' already has a sole (line 3)", "(got 'block')"),
])
def test_a_bad_sole_names_the_universe_file_its_line_and_the_value(tmp_path, sole, message, got):
    (tmp_path / "block.urdf").write_text(BLOCK)
    path = tmp_path / "scene.xml"
    path.write_text(f"""<Universe>
  <MultiBody name="b"><File>block.urdf</File><FloatingBase>true</FloatingBase>
    {sole}
  </MultiBody>
</Universe>""")
    with pytest.raises(ArticulaError) as info:
        load_universe(path)
    text = str(info.value)
    assert text.startswith(f"{path}:3: ") and message in text and got in text, text
