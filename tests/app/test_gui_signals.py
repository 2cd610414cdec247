"""Plot signals: centre of mass against Pinocchio, ZMP and contact force splits against closed forms."""
import numpy as np
import pytest

import engine
from app.signals import catalogue, centre_of_mass, contact_forces_on, zmp
from engine.dynamics import forward_kinematics
from engine.dynamics.integrators import random_configuration
from engine.model.paths import example_robot_data_dir
from engine.state import ActiveContacts

TALOS = "talos_data/robots/talos_reduced.urdf"


def _contacts(points, normals, forces, a, b):
    n = len(points)
    return ActiveContacts(point=np.asarray(points, float), normal=np.asarray(normals, float),
                          force=np.asarray(forces, float), depth=np.zeros(n), mu=np.ones(n), body_a=a, body_b=b)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_centre_of_mass_of_talos_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    path = example_robot_data_dir() / TALOS
    model = engine.load_model(path, floating_base=True)
    data = model.create_data()
    q = random_configuration(model, np.random.default_rng(3))
    forward_kinematics(model, data, q)            # body placements (the base frame is the world here)
    pin_model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    expected = pin.centerOfMass(pin_model, pin_model.createData(), q)
    np.testing.assert_allclose(centre_of_mass(model, data.oMi_R, data.oMi_p), expected, atol=1e-9)


def test_zmp_is_the_centre_of_pressure_of_the_vertical_forces():
    # normal forces 1, 1, 1, 3 N at the corners of the unit square: x = (1 + 3) / 6, y = (1 + 3) / 6;
    # the side contact (horizontal normal) and the other multibody's contact are left out
    points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [5, 5, 1], [9, 9, 0]]
    normals = [[0, 0, 1]] * 4 + [[1, 0, 0], [0, 0, 1]]
    forces = [[0.2, 0, 1], [0, 0, 1], [0, -0.3, 1], [0, 0, 3], [50, 0, 0], [0, 0, 100]]
    a = ("robot/foot",) * 5 + ("box/box",)
    contacts = _contacts(points, normals, forces, a, ("ground",) * 6)
    np.testing.assert_allclose(zmp(contacts, "robot/"), [4 / 6, 4 / 6, 0.0])
    assert np.isnan(zmp(_contacts(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), (), ()))).all()


def test_contact_forces_on_a_body_split_into_normal_and_tangential_parts():
    # f = (3, 0, 4) on n = z: normal 4 N, tangential 3 N; the second contact involves the body as body b
    contacts = _contacts([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 0, 1], [0, 0, 1], [0, 0, 1]],
                         [[3, 0, 4], [0, 0, 2], [0, 0, 10]], ("robot/foot", "ground", "box/box"),
                         ("ground", "robot/foot", "ground"))
    assert contact_forces_on(contacts, "robot/foot") == pytest.approx((6.0, 3.0))
    assert contact_forces_on(contacts, "robot/hand") == (0.0, 0.0)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_catalogue_offers_joint_base_energy_contact_com_and_zmp_signals(default_universe):
    universe = default_universe
    snapshot = engine.Simulation(universe).snapshot()
    keys = {s.key for s in catalogue(universe)}
    for key in ("energy/total", "talos/q/leg_left_4_joint", "talos/v/arm_right_1_joint", "talos/tau/torso_1_joint",
                "talos/base/z", "talos/centre of mass/z", "talos/ZMP/x", "contact/talos/leg_left_6_link/normal force",
                "contact/ground/tangential force"):
        assert key in keys
    values = {s.key: s.value(snapshot) for s in catalogue(universe)}
    assert values["talos/base/z"] == pytest.approx(1.02)
    assert values["energy/total"] == pytest.approx(snapshot.energy[0] + snapshot.energy[1])


def test_joint_torque_signals_are_the_controller_torques_of_the_last_step(pd_arm_scene):
    from engine.state import State
    universe = engine.load_universe(pd_arm_scene)
    sim = engine.Simulation(universe)
    signals = {s.key: s for s in catalogue(universe)}
    np.testing.assert_array_equal(sim.snapshot().tau[0], [0.0, 0.0])       # no step taken, no torque
    q, v = np.array([0.4, -0.7]), np.array([0.7, -1.1])
    sim.set_state(State.capture(0.0, 0, [q], [v]))
    sim.step(1)
    # PD: tau = kp (q0 - q) - kd v = 50 (-0.1, 0.2) - 3 (0.7, -1.1) = (-7.1, 13.3) N m
    snapshot = sim.snapshot()
    np.testing.assert_allclose(snapshot.tau[0], [-7.1, 13.3], rtol=0, atol=1e-12)
    assert signals["arm/tau/shoulder"].value(snapshot) == pytest.approx(-7.1, abs=1e-12)
    assert signals["arm/tau/elbow"].value(snapshot) == pytest.approx(13.3, abs=1e-12)
    assert signals["arm/tau/elbow"].unit == "N m"
    sim.reset()
    np.testing.assert_array_equal(sim.snapshot().tau[0], [0.0, 0.0])


def test_sensor_readings_are_plot_signals(tmp_path):
    # the force-torque sensor under a resting 2 kg box: its plotted force z is the weight, NaN before a step
    path = tmp_path / "ft.xml"
    path.write_text("""<Universe><Settings/><Body name="ground"><Plane/><Mass>0</Mass></Body>
        <Body name="box"><Box size="0.3 0.2 0.1"/><Mass>2</Mass><Translation x="0" y="0" z="0.05"/></Body>
        <Sensor plugin="force-torque" target="box" body="box" name="ft"/></Universe>""")
    universe = engine.load_universe(path)
    sim = engine.Simulation(universe)
    signals = {s.key: s for s in catalogue(universe)}
    assert {f"sensor/ft/{q}[{k}]" for q in ("force", "torque") for k in range(3)} <= set(signals)
    assert np.isnan(signals["sensor/ft/force[2]"].value(sim.snapshot()))
    sim.step(200)
    assert signals["sensor/ft/force[2]"].value(sim.snapshot()) == pytest.approx(2.0 * 9.81, rel=1e-9)
    assert signals["sensor/ft/force[2]"].value(sim.snapshot()) == sim.measurements["ft"]["force"][2]
