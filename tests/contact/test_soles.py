"""Deformable soles in the contact stage (engine/contact/soles.py): a rigid block on an FEM sole resting on the
ground, against closed forms built from the sole's condensed stiffness K_c alone (seed 000 eqs. 4.20–4.22), the
total force against the weight, every node force in its cone, a drop that never gains energy, and a state that
restores exactly."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, load_universe
from engine.contact.sole_geometry import plane_nodes
from engine.deformable import SmallStrainWarning
from engine.errors import ArticulaError

ROOT = Path(__file__).resolve().parents[2]
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
    forces = sim.snapshot().soles[0].force
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


def drop_peak(tmp_path, dt, mass=1000.0, height=0.01):
    """Peak upward acceleration of a block of ``mass`` dropped from ``height`` onto its sole (μ = 5: every node
    sticks), and its closed form: a mass on the sole's vertical stiffness k = Σ K_c[z, z] meets the ground at
    v₀ = √(2 g h) and swings about its rest compression m g / k with amplitude A = √((m g / k)² + v₀² m / k),
    so the peak is k (m g / k + A) / m − g = √(g² + v₀² k / m)."""
    (tmp_path / "block.urdf").write_text(BLOCK.replace('mass value="10"', f'mass value="{mass:g}"'))
    path = tmp_path / "drop.xml"
    path.write_text(SCENE.format(mu=5.0, z=0.045 + height, correction="none")
                    .replace("<Settings>", f"<Settings><TimeStep>{dt}</TimeStep>"))
    sim = Simulation(load_universe(path))
    k = sim.contact_stage.soles.specs[0].sole.K_c[2::3, 2::3].sum()
    vz = np.empty(int(0.1 / dt))
    for i in range(len(vz)):
        sim.step(1)
        vz[i] = sim.runs[0].v[2]
    return np.diff(vz).max() / dt, np.sqrt(G ** 2 + 2 * G * height * k / mass)


def test_a_block_dropped_on_its_sole_peaks_at_the_mass_spring_deceleration_converging_with_the_step(tmp_path):
    """The sole's compliance enters each step implicitly (U_c⁺ = K_c⁻¹ F_c⁺, backward Euler), which damps the
    swing by about π ω δt / 4 over its quarter period (ω = √(k/m) ≈ 96 rad/s): 1.5 % at δt = 0.2 ms, halving
    with δt. The tonne block compresses the 2 cm sole by 5.7 mm: past the small-strain limit, which is reported."""
    with pytest.warns(SmallStrainWarning, match=r"drop.xml:6: the sole under b/block is strained 0\.\d+, beyond"):
        coarse, expected = drop_peak(tmp_path, 2e-4)
    with pytest.warns(SmallStrainWarning):
        fine, _ = drop_peak(tmp_path, 1e-4)
    assert abs(coarse / expected - 1) < 0.03 and abs(fine / expected - 1) < 0.015
    assert abs(fine / expected - 1) < 0.6 * abs(coarse / expected - 1)


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


def torso_peak(scene, seconds=0.3) -> float:
    """Peak |vertical acceleration| of Talos's base (rigid with the torso: every joint held at 0) in a drop
    scene, differenced over one step."""
    sim = Simulation(load_universe(ROOT / "scenes" / scene))
    run, vz = sim.runs[0], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallStrainWarning)
        for _ in range(int(seconds / 1e-3)):
            sim.step(1)
            vz.append((run.world_placements()[0][0] @ run.v[:3])[2])
    return float(np.abs(np.diff(vz)).max() / 1e-3)


def test_the_drop_experiment_orders_the_feet_rigid_above_fem_soles_above_two_layer_soles():
    """Seed 000 §4.4 (thesis L2266): Talos dropped from 1 cm, joints at 0. The sole acts as a spring under the
    robot: its peak is close to v₀ √(k/m) (1 cm: v₀ = 0.44 m/s), below the rigid feet's, and the softer pads
    of the two-layer sole lower it further. The flexible ankles (default bush, 2e5 N/m a foot, twenty times
    softer than the 3 MPa sole) lower it most."""
    rigid, ankles, soles, layers = (torso_peak(f"drop_{name}.xml")
                                    for name in ("rigid", "flexible_ankles", "soles", "two_layer"))
    assert rigid > 1.1 * soles and soles > 1.5 * layers and rigid > 3 * ankles


def test_talos_on_soles_restores_exactly_with_its_kept_factor():
    """Talos standing on two soles (240 rows, solved with a factor kept from step to step, ``kept_solve``): a
    run restored at step k continues bit for bit, because the state refers to the factor the original used."""
    sim = Simulation(load_universe(ROOT / "scenes" / "talos_soles.xml"))
    sim.step(60)
    state = sim.state
    assert state.warm_start["factor"][1][0] == 240                          # the kept factor, 240 rows
    sim.step(100)
    q = sim.runs[0].q.copy()
    sim.set_state(state)
    sim.step(100)
    np.testing.assert_array_equal(sim.runs[0].q, q)


def test_a_sole_stands_on_a_moving_crate_that_carries_its_weight_to_the_ground(tmp_path):
    """A sole on a free 4 kg crate lying on the ground (an obstacle carried by a moving body): the sole's node
    contacts are with the crate alone and carry the block's weight, the crate's corners both weights, to 1e-6 —
    the two bodies are coupled in one contact group like any rigid contact; the crate settles."""
    scene = SCENE.replace('<Body name="ground">', '<Body name="crate"><Box size="0.4 0.3 0.1"/><Mass>4</Mass>'
                          '<Translation z="0.05"/><Material>floor</Material></Body>\n  <Body name="ground">')
    sim = block_on_sole(tmp_path, z=0.146, scene=scene)
    sim.step(500)
    c = sim.contacts
    force = np.asarray(c.force)
    on_crate = np.array([(a, b) == ("b/block", "crate/crate") for a, b in zip(c.body_a, c.body_b)])
    on_ground = np.array([(a, b) == ("crate/crate", "ground") for a, b in zip(c.body_a, c.body_b)])
    assert on_crate.sum() >= 40 and (on_crate | on_ground).all()
    np.testing.assert_allclose(force[on_crate].sum(axis=0), [0, 0, MASS * G], atol=1e-6)
    np.testing.assert_allclose(force[on_ground].sum(axis=0), [0, 0, (MASS + 4.0) * G], atol=1e-6)
    assert np.abs(sim.runs[1].v).max() < 1e-6


def test_each_soles_contacts_are_its_node_tests_when_one_sole_is_near_a_box_and_the_other_on_the_ground_alone(
        tmp_path):
    """Talos standing on its soles beside a static post (a 10 cm cube turned 45° about z) whose bounds meet the
    left sole's but whose faces stay 4 cm from its nodes: the left sole takes the general node tests, the right one
    the static planes' kernel (``soles_on_near_planes``); the contacts of each sole, in the rows it keeps, are the
    ground's node test of its displaced nodes (``sole_geometry.plane_nodes``), in order, with the pair of that
    sole and the ground."""
    post = ('<Body name="post"><Box size="0.1 0.1 0.1"/><Mass>0</Mass><Rotation angle="45" x="0" y="0" z="1"/>'
            '<Translation x="0.1607" y="0.2157" z="0.05"/><Material>wood</Material></Body>\n  <Body name="box">')
    path = tmp_path / "talos_soles.xml"
    path.write_text((ROOT / "scenes" / "talos_soles.xml").read_text().replace('<Body name="box">', post))
    sim = Simulation(load_universe(path))
    soles = sim.contact_stage.soles
    ground = next(j for j, o in enumerate(soles.obstacles) if o.kind == "plane")
    normal, offset = soles.obstacles[ground].shape
    sim.step(100)                                                        # standing
    for _ in range(20):
        sim.step(1)
        assert soles._found[0, 1] == -1 and soles._found[1, 1] >= 0      # left: general path; right: the kernel
        c = sim.contact_stage.contacts
        for k, item in enumerate(soles._contact):
            rows, slot = item[0], item[1]
            nodes, point, _, depth, _ = plane_nodes(soles._x[k], normal, offset, soles.margin)
            assert len(nodes) and rows.tolist() == list(range(rows[0], rows[0] + len(nodes)))
            np.testing.assert_array_equal(slot[:, 0], nodes)
            np.testing.assert_array_equal(c.point[rows], point)
            np.testing.assert_array_equal(c.depth[rows], depth)
            assert (c.pair[rows] == soles.pair[k, ground]).all()
