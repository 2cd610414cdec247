"""The event-driven hybrid loop for wheels (issue 12 part 3; seed 001 §2.7–2.9, acceptance tests A10–A12 of its
§5.2): the benchmark bicycle's scenes under <Settings events="on">, free flight, restored states, bad input."""
import math
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.cli import summary
from engine.errors import SimulationError, UniverseError
from engine.rolling.ground import Ground
from engine.rolling.hybrid import HybridWheels

SCENES = Path(__file__).resolve().parents[2] / "scenes"
BIKE = SCENES.parent / "assets" / "robots" / "benchmark_bicycle.urdf"


def run(sim, seconds):
    """Step ``sim``; per step the total energy (J) and the events it saw."""
    energy, events = [sum(sim.energy())], []
    for _ in range(int(round(seconds / sim.dt))):
        sim.step(1)
        energy.append(sum(sim.energy()))
        events.append(sim.snapshot().events)
    return np.array(energy), events


def scene(tmp_path, name, *edits):
    """scenes/<name>.xml with (old, new) text replacements, written next to a copy of the robot."""
    text = (SCENES / f"{name}.xml").read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "scenes" / f"{name}.xml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace("../assets/robots/", str(BIKE.parent) + "/"))
    return path


def line_of(path, text) -> int:
    return next(k for k, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a11_the_front_impact_lifts_the_rear_wheel_with_the_thesis_impulses():
    """A11 (Mauny 2018 Test 4, Table 4.5, L2875–L2877): at the front wheel's impact the prediction 'both wheels
    stay' gives Λ2N = 126.6, Λ3N = −66.8 N s and is rejected, 'front only' gives 133.3 N s and is accepted (the
    rear wheel lifts off); at the rear landing Λ2N = 5.8, Λ3N = 67.8 N s, both wheels end on the ground. ±2 %
    (the digest's tolerance: the numbers depend on the fall; the table's state is complete, pitch −0.174 rad
    taken as printed)."""
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_collision_liftoff.xml"))
    run(sim, 0.6)
    events = [e for _, e in sim.wheel_events()]
    assert [(e.kind, e.wheel) for e in events] == [("collision", "front_wheel"), ("lift-off", "rear_wheel"),
                                                   ("collision", "rear_wheel")]
    (both, rejected, ok), (front, accepted, ok2) = events[0].predictions
    assert both == ("front_wheel", "rear_wheel") and not ok and front == ("front_wheel",) and ok2
    assert rejected[:, 0] == pytest.approx([126.6, -66.8], rel=0.02)
    assert accepted[0, 0] == pytest.approx(133.3, rel=0.02)
    (landing, impulse, ok3), = events[2].predictions
    assert landing == ("front_wheel", "rear_wheel") and ok3
    assert impulse[:, 0] == pytest.approx([5.8, 67.8], rel=0.02)
    assert events[2].on_ground == ("front_wheel", "rear_wheel")
    assert len(sim.contacts.point) == 2 and np.all(np.asarray(sim.contacts.force)[:, 2] > 0)


def test_a12_the_ramp_jump_s_events_come_in_order_and_only_landings_lose_energy():
    """A12 (Test 2, Table 4.3): front lift-off, rear lift-off (each wheel's contact point leaves the ramp's
    face), front landing, rear landing (plastic); the energy is constant on the ramp, across the lift-offs and
    in flight (to 1e-9 relative per step), and drops at each landing only."""
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_ramp_jump.xml"))
    energy, events = run(sim, 1.3)
    timeline = [(e.kind, e.wheel, e.cause) for _, e in sim.wheel_events()]
    assert timeline == [("lift-off", "front_wheel", "edge"), ("lift-off", "rear_wheel", "edge"),
                        ("collision", "front_wheel", "gap"), ("collision", "rear_wheel", "gap")]
    landing_steps = {k for k, step in enumerate(events) if any(e.kind == "collision" for _, e in step)}
    change = np.diff(energy)
    assert len(landing_steps) == 2 and all(change[k] < -10.0 for k in landing_steps)
    quiet = np.delete(change, sorted(landing_steps))
    assert np.abs(quiet).max() < 1e-9 * energy[0]
    assert sim.wheel_events()[0][1].t < sim.wheel_events()[1][1].t


def test_a10_elastic_bounces_keep_the_energy():
    """A10 (Test 1, Table 4.2, ε = I): at least five impacts in 2 s, each keeping the kinetic energy (to 1e-12
    relative), and the total energy constant over the run to 1e-6 relative (RK4 in flight, 1 ms)."""
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_bounce.xml"))
    energy, _ = run(sim, 2.0)
    impacts = [e for _, e in sim.wheel_events() if e.kind == "collision"]
    assert len(impacts) >= 5
    assert all(abs(e.kinetic[1] - e.kinetic[0]) < 1e-12 * e.kinetic[0] for e in impacts)
    assert np.abs(energy - energy[0]).max() < 1e-6 * abs(energy[0])
    assert all(e.on_ground == () for e in impacts)                 # elastic wheels bounce off


def test_the_run_summary_lists_the_event_timeline():
    universe = engine.load_universe(SCENES / "bicycle_collision_liftoff.xml")
    sim = engine.Simulation(universe)
    sim.step(450)
    text = summary(universe, sim, 1.0)
    assert "events     3" in text and "collision front_wheel" in text and "rejected" in text


def test_a_restored_state_replays_the_same_events():
    """The contact configuration and the log travel with the State: back to t = 0.3 s (both wheels on the ramp),
    the run lands at the same times, bit for bit."""
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_ramp_jump.xml"))
    sim.step(300)
    state = sim.state
    sim.step(800)
    first, q = sim.wheel_events(), sim.state.q[0].copy()
    sim.set_state(state)
    assert sim.wheel_events() == ()
    sim.step(800)
    assert [e.t for _, e in sim.wheel_events()] == [e.t for _, e in first]
    np.testing.assert_array_equal(sim.state.q[0], q)


def free_bicycle(gravity=np.zeros(3)):
    model = engine.load_model(BIKE, floating_base=True)
    body = {n: b for b, n in enumerate(model.body_name)}
    ground = Ground([(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -100.0]))], np.zeros((0, 3, 3)), [], [],
                    ["ground"])
    wheels = HybridWheels(model, (body["front_wheel"], body["rear_wheel"]), (0.35, 0.3), ((0, 1, 0), (0, 0, 1)),
                          ("front_wheel", "rear_wheel"), [(0, 0), (0, 0)], ground, gravity, "bicycle")
    q = engine.neutral(model)
    q[:3], q[3:7] = (0.0, 0.0, 1.0), (-0.5, -0.5, -0.5, 0.5)
    return model, wheels, q, {j.name: j.idx_v for j in model.joints}


@pytest.mark.parametrize("moving", [False, True])
def test_in_free_flight_a_wheel_torque_turns_the_frame_and_keeps_the_momentum(moving):
    """Checklist item 8: no external wrench (zero gravity, the ground 100 m away), 30 N m on the rear wheel for
    1 s: the frame pitches back (the falling cat's mechanical connection, Test 2 variant) while the centroidal
    momentum h_G = (P, L_G) (engine.centroidal_momentum, Pinocchio's hg) stays constant to 1e-10 relative."""
    model, wheels, q, dof = free_bicycle()
    data = model.create_data()
    v = np.zeros(model.nv)
    if moving:
        v[:6], v[dof["front_spin"]] = (0.3, 5.0, 1.0, 0.1, 0.2, -0.3), 10.0
    q, v = wheels.start(q, v)
    h0 = engine.centroidal_momentum(model, data, q, v)
    tau = np.zeros(model.nv)
    tau[dof["rear_spin"]] = 30.0
    drift = 0.0
    for k in range(1000):
        q, v = wheels.step(q, v, tau, None, k * 1e-3, 1e-3)
        drift = max(drift, np.abs(engine.centroidal_momentum(model, data, q, v) - h0).max())
    assert drift < 1e-10 * max(1.0, np.abs(h0).max()) and wheels.events == []
    if not moving:
        engine.forward_kinematics(model, data, q)
        forward = data.oMi_R[1][:, 1]                                   # the frame's n0, level at the start
        assert math.degrees(math.atan2(forward[2], forward[0])) > 10.0   # nose up: the wheel spins forward


@pytest.mark.parametrize("attribute, value, message", [
    ('restitution="1.5"', 1.5, "normal restitution must lie in [0, 1]"),
    ('restitution="-0.1"', -0.1, "normal restitution must lie in [0, 1]"),
    ('tangential="-2"', -2.0, "tangential restitution must lie in [-1, 1]")])
def test_a_restitution_out_of_range_names_its_line(tmp_path, attribute, value, message):
    path = scene(tmp_path, "bicycle_collision_liftoff", ('radius="0.3" axis="0 0 1"/>',
                                                         f'radius="0.3" axis="0 0 1" {attribute}/>'))
    with pytest.raises(UniverseError) as err:
        engine.load_universe(path)
    assert message in str(err.value) and err.value.value == value
    assert err.value.line == line_of(path, 'radius="0.3"') and err.value.file == str(path)


def test_events_must_be_on_or_off(tmp_path):
    path = scene(tmp_path, "bicycle_collision_liftoff", ('events="on"', 'events="yes"'))
    with pytest.raises(UniverseError, match="'events' must be on or off") as err:
        engine.load_universe(path)
    assert err.value.line == line_of(path, "<Settings") and err.value.value == "yes"


def test_a_zeno_sequence_stops_the_run_on_its_last_good_state(tmp_path):
    """ε_N = 0.5 (ε_T = 0): a bicycle dropped upright 5 cm bounces ever lower, infinitely often in finite time;
    the loop stops with a message at the 21st impact within 1 ms and the Simulation keeps its last good state."""
    path = scene(tmp_path, "bicycle_collision_liftoff",
                 ('value="0 0 0.3 -0.4546637977218027 -0.541554088749395 -0.541554088749395 0.4546637977218027"',
                  'value="0 0 0.35 -0.5 -0.5 -0.5 0.5"'),
                 ('<Joint name="front_spin" velocity="-200"/>', ''),
                 ('radius="0.35" axis="0 1 0"/>', 'radius="0.35" axis="0 1 0" restitution="0.5"/>'),
                 ('radius="0.3" axis="0 0 1"/>', 'radius="0.3" axis="0 0 1" restitution="0.5"/>'))
    sim = engine.Simulation(engine.load_universe(path))
    with pytest.raises(SimulationError, match="Zeno sequence: 21 impacts within 0.001 s"):
        sim.step(2000)
    assert sim.faulted is not None and np.all(np.isfinite(sim.state.q[0]))
    assert sim.time == pytest.approx(sim.step_count * sim.dt)


def test_a_gap_that_jumps_stops_the_run_naming_the_event(tmp_path):
    """A bicycle gliding 5 cm above the floor (no gravity) into a 20 cm kerb: the face rule (L3401) measures
    the front wheel's gap to the floor until its centre passes over the kerb's top, then to the kerb: the gap
    jumps from +5 cm to −15 cm, root finding cannot bring it to zero, and the run stops naming the event."""
    path = scene(tmp_path, "bicycle_collision_liftoff",
                 ('<Settings events="on">', '<Settings events="on"><Gravity x="0" y="0" z="0"/>'),
                 ('value="0 0 0.3 -0.4546637977218027 -0.541554088749395 -0.541554088749395 0.4546637977218027"',
                  'value="0 0 0.35 -0.5 -0.5 -0.5 0.5" velocity="0 3 0 0 0 0"'),
                 ('<Joint name="front_spin" velocity="-200"/>', ''),
                 ('<Configurations>', '<Body name="kerb"><Box size="1 4 0.2"/><Translation x="2" y="0" z="0.1"/>'
                                      '<Mass>0</Mass></Body><Configurations>'))
    sim = engine.Simulation(engine.load_universe(path))
    with pytest.raises(SimulationError, match="root finding on the gap of wheel 'front_wheel' did not converge"):
        sim.step(1000)
    assert sim.faulted is not None and 0.1 < sim.time < 1.0


def test_the_recorder_keeps_each_step_s_events():
    from app.recording import Recorder
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_collision_liftoff.xml"))
    recorder = Recorder()
    for _ in range(200):
        sim.step(1)
        recorder.append(sim)
    events = [e for frame in recorder.frames() for _, e in frame.events]
    assert [(e.kind, e.wheel) for e in events] == [("collision", "front_wheel"), ("lift-off", "rear_wheel")]
    assert events[0].t == sim.wheel_events()[0][1].t


def braking(torque, steps):
    """The weaving bicycle of Test 3 (4.6 m/s, roll rate 0.5 rad/s) braked by ``torque`` (N m) on its front
    wheel: its HybridWheels after ``steps`` of 1 ms, or the fault that stopped them."""
    from engine.dynamics.rolling import consistent_velocity
    model, wheels, q, dof = free_bicycle(np.array([0.0, 0.0, -9.81]))
    wheels.ground = Ground([(np.array([0.0, 0.0, 1.0]), np.zeros(3))], np.zeros((0, 3, 3)), [], [], ["ground"])
    q[2] = 0.3
    q, _ = wheels.start(q, np.zeros(model.nv))
    v = consistent_velocity(model, model.create_data(), q, wheels.on_ground()[1],
                            {4: 0.5, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / 0.3})
    tau = np.zeros(model.nv)
    tau[dof["front_spin"]] = torque
    for k in range(steps):
        q, v = wheels.step(q, v, tau, None, k * 1e-3, 1e-3)
    return wheels


def test_an_abrupt_brake_lifts_the_rear_wheel_then_the_front_one_where_its_force_vanishes():
    """Test 3's brake (L2806–L2871): 600 N m on the front wheel makes λ3N < 0 at once, the rear wheel lifts off at
    t = 0 (the step replayed without its constraints); the bicycle pitches over its front wheel, whose λ2N then
    crosses zero inside a step: located by Brent's method to |λ2N| ≤ 1e-6 N, the velocity unchanged."""
    events = braking(-600.0, 300).events
    assert [(e.kind, e.wheel, e.cause) for e in events] == [("lift-off", "rear_wheel", "force"),
                                                            ("lift-off", "front_wheel", "force")]
    assert events[0].t == 0.0 and events[0].residual < -100.0
    assert abs(events[1].residual) <= 1e-6 and events[1].kinetic[0] == events[1].kinetic[1]
    assert min(abs(events[1].t - k * 1e-3) for k in range(300)) > 1e-7       # inside a step, not at its end


def test_a_lift_off_into_the_ground_stops_the_run():
    """A brake of 245 N m, just under a stoppie's threshold: λ3N falls to zero while the rear wheel's no-slip
    forces do not; released, it would sink (ideal rolling contact has no consistent motion there, a
    Painlevé-like paradox): the loop stops with that message instead of chattering between contact and flight."""
    with pytest.raises(SimulationError, match="'rear_wheel' has λ_N < 0 on the ground but would sink"):
        braking(-245.0, 600)


def test_a_wheel_starting_inside_the_ground_names_its_line(tmp_path):
    """An initial state 1 cm into the ground: UniverseError with the <Wheel>'s line and the gap."""
    path = scene(tmp_path, "bicycle_collision_liftoff",
                 ('value="0 0 0.3 -0.4546637977218027', 'value="0 0 0.29 -0.4546637977218027'))
    with pytest.raises(UniverseError, match="wheel 'rear_wheel' of 'bicycle' starts 0.01 m inside") as err:
        engine.Simulation(engine.load_universe(path))
    assert err.value.line == line_of(path, 'radius="0.3"') and err.value.value == pytest.approx(-0.01, abs=1e-12)


def test_the_events_go_into_the_saved_recording_and_come_back(tmp_path):
    """The ramp jump's events (lift-offs, collisions with their impact predictions, energies and residuals) are
    written into the recording's .npz and read back equal to the bit, in the recorder's timeline and in each
    frame's own step; a recording without events reads back with none."""
    from app.recording import Recorder
    sim = engine.Simulation(engine.load_universe(SCENES / "bicycle_ramp_jump.xml"))
    recorder = Recorder()
    while len(sim.wheel_events()) < 4:
        sim.step(1)
        recorder.append(sim)
    recorder.save(tmp_path / "jump.npz", multibodies=[run.name for run in sim.runs])
    loaded = Recorder.load(tmp_path / "jump.npz")
    assert len(loaded.events()) == len(recorder.events()) >= 4
    for (t, m, e), (t2, m2, e2) in zip(recorder.events(), loaded.events()):
        assert (t, m, e.t, e.kind, e.wheel, e.cause, e.on_ground, e.kinetic, e.residual) == \
               (t2, m2, e2.t, e2.kind, e2.wheel, e2.cause, e2.on_ground, e2.kinetic, e2.residual)
        assert len(e.predictions) == len(e2.predictions)
        for (w, lam, ok), (w2, lam2, ok2) in zip(e.predictions, e2.predictions):
            assert w == w2 and ok == ok2 and np.array_equal(lam, lam2)
        assert e.line() == e2.line()
    assert ([[(m, e.line()) for m, e in f.events] for f in recorder.frames()]
            == [[(m, e.line()) for m, e in f.events] for f in loaded.frames()])
    quiet = Recorder()
    quiet.append(engine.Simulation(engine.load_universe(SCENES / "bicycle_bounce.xml")))
    quiet.save(tmp_path / "quiet.npz")
    assert Recorder.load(tmp_path / "quiet.npz").events() == ()


def test_a_wheel_rolling_into_a_kerb_hits_its_edge_when_its_hub_is_one_radius_from_it(tmp_path):
    """The upright bicycle rolls straight at constant speed V (no torque, flat ground: its energy and so V are
    constant) towards a kerb 0.1 m high whose face is at x_k = 3 m. The front rim meets the kerb's top edge when
    the hub (height h2 = 0.35 m) is h2 from it: x_hub = x_k − √(h2² − (h2 − k)²), so at t* = (x_k − √(h2² −
    (h2 − k)²) − x_hub(0)) / V. The collision event of the front wheel fires there (to 1e-9 s), caused by the
    kerb, with a positive normal impulse; nothing happens before it."""
    scene = (SCENES / "bicycle.xml").read_text().replace("../assets", str(SCENES.parent / "assets"))
    scene = scene.replace("<Settings>", '<Settings events="on">').replace('velocity="0 4.6 -0.15 0 0.5 0"',
                                                                          'velocity="0 4.6 0 0 0 0"')
    x_k, k, h2 = 3.0, 0.1, 0.35
    kerb = (f'<Body name="kerb"><Box size="1 4 {k}"/><Translation x="{x_k + 0.5}" y="0" z="{k / 2}"/>'
            f'<Mass>0</Mass></Body>\n  <Body name="ground">')
    path = tmp_path / "kerb.xml"
    path.write_text(scene.replace('<Body name="ground">', kerb))
    sim = engine.Simulation(engine.load_universe(path))
    front = sim.runs[0].model.body_name.index("front_wheel")
    hub, V = sim.body_placement(0, front)[1], sim.body_velocity(0, front)[0]
    assert abs(hub[2] - h2) < 1e-12 and abs(V[1]) < 1e-12 and abs(V[2]) < 1e-12
    t_star = (x_k - math.sqrt(h2 ** 2 - (h2 - k) ** 2) - hub[0]) / V[0]
    while not sim.wheel_events():
        sim.step(1)
        assert sim.time < t_star + 0.01
    (_, event), *_ = sim.wheel_events()
    assert (event.kind, event.wheel, event.cause) == ("collision", "front_wheel", "kerb")
    assert abs(event.t - t_star) < 1e-9, (event.t, t_star)
    wheels, impulse, accepted = event.predictions[-1]
    assert accepted and "front_wheel" in wheels and impulse[wheels.index("front_wheel")][0] > 0.0
