"""Free rigid bodies stepped together (engine/engines/free_bodies.py) against the one-by-one path (ABA per
multibody): the same motion, to rounding, in free flight, in contact and in a group with a robot."""
import numpy as np
import pytest

import engine
from engine.engines import articula, free_bodies
from tests.scenes import cubes


def run(path, steps, batched, setup=None):
    """{"q", "v", "a", "placements"} after each step (rows), the free bodies batched or not."""
    original = articula.batchable
    articula.batchable = free_bodies.batchable if batched else (lambda run: False)
    try:
        sim = engine.Simulation(engine.load_universe(path))
    finally:
        articula.batchable = original
    assert (sim.engine.free_bodies is not None) == batched
    if setup:
        setup(sim)
    rows = {"q": [], "v": [], "a": [], "placements": []}
    for _ in range(steps):
        sim.step()
        for name in ("q", "v", "a"):
            rows[name].append(np.concatenate([getattr(r, name) for r in sim.runs]))
        R, p = sim.placements()
        rows["placements"].append(np.concatenate([np.ravel(x) for x in R + p] + [sim.runs[-1].V_last.ravel()]))
    return {k: np.array(v) for k, v in rows.items()}, sim


def assert_alike(batched, one_by_one, position, velocity):
    """Positions (q, placements) to ``position``, velocities to ``velocity``; accelerations to ``velocity``/δt
    relative (the batch keeps the acceleration it applied, the one-by-one path (v⁺ − v)/δt)."""
    for name in ("q", "placements"):
        np.testing.assert_allclose(batched[name], one_by_one[name], rtol=0, atol=position, err_msg=name)
    np.testing.assert_allclose(batched["v"], one_by_one["v"], rtol=0, atol=velocity, err_msg="v")
    np.testing.assert_allclose(batched["a"], one_by_one["a"], rtol=velocity / 1e-3, atol=velocity / 1e-3,
                               err_msg="a")


TUMBLER = """<Universe><Settings><Gravity x="0.3" y="-0.2" z="-9.81"/></Settings>
  <Body name="tumbler"><Box size="0.3 0.1 0.05" xyz="0.05 0.02 -0.01"/><Mass>2</Mass>
    <Inertia>0.02 0.001 0.002 0.001 0.03 0.0005 0.002 0.0005 0.04</Inertia>
    <Rotation angle="30" x="1" y="2" z="3"/><Translation x="0" y="0" z="5"/>
    <LinearVelocity>0.5 -0.2 3</LinearVelocity><AngularVelocity>4 -7 2</AngularVelocity></Body>
</Universe>"""


def test_a_tumbling_body_in_free_flight_moves_as_aba_moves_it(tmp_path):
    """Off-centre mass, a full inertia tensor, a rotated start, spin and a user wrench: Newton–Euler about the
    origin in the batch and ABA on the one-body tree agree to 1e-12 over 500 steps."""
    (tmp_path / "tumbler.xml").write_text(TUMBLER)

    def push(sim):
        sim.set_external_wrench(0, 0, [1.0, 2.0, -0.5, 0.1, -0.2, 0.05], [0.1, 0.0, 5.0])
    batched, _ = run(tmp_path / "tumbler.xml", 500, True, push)
    one_by_one, _ = run(tmp_path / "tumbler.xml", 500, False, push)
    assert np.abs(batched["v"][-1, 3:]).max() > 1.0                               # it does tumble
    assert_alike(batched, one_by_one, position=1e-12, velocity=1e-12)


def test_cubes_in_contact_move_alike(tmp_path):
    """Ten cubes dropped apart, tilted and spinning, land, slide and come to rest (contacts, friction, one group
    each): over 400 steps positions agree to 1e-9 m and velocities to 1e-6 m/s, the contact solve's tolerance
    (its relative residual 1e-6: two roundings of the same problem give solutions that far apart)."""
    (tmp_path / "cubes.xml").write_text(cubes())
    batched, sim = run(tmp_path / "cubes.xml", 400, True)
    one_by_one, _ = run(tmp_path / "cubes.xml", 400, False)
    assert len(sim.contacts) >= 10
    assert_alike(batched, one_by_one, position=1e-9, velocity=1e-6)


PLATE = """<robot name="plate"><link name="base"/>
  <link name="plate"><inertial><mass value="3"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.1"/>
    </inertial><collision><geometry><box size="0.6 0.6 0.04"/></geometry></collision></link>
  <joint name="tilt" type="continuous"><parent link="base"/><child link="plate"/><axis xyz="1 0 0"/></joint>
</robot>"""


def test_a_free_box_on_a_robot_link_shares_its_group(tmp_path):
    """A box on a tilting plate (a one-joint robot): the box and the robot form one collision group, whose
    Delassus operator reads the box's ABA workspace (``fresh_data``); over 300 steps positions agree to 1e-9 m,
    velocities to 1e-6 (the contact solve's tolerance)."""
    (tmp_path / "plate.urdf").write_text(PLATE)
    (tmp_path / "scene.xml").write_text("""<Universe>
      <MultiBody name="plate"><File>plate.urdf</File><Translation x="0" y="0" z="0.5"/></MultiBody>
      <Body name="box"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation x="0.1" y="0" z="0.571"/></Body>
      <Controller plugin="pd" target="plate" kp="200" kd="5"/></Universe>""")
    batched, sim = run(tmp_path / "scene.xml", 300, True)
    one_by_one, _ = run(tmp_path / "scene.xml", 300, False)
    groups = sim.solver_stats["groups"]
    assert any(set(g.multibodies) == {0, 1} for g in groups)
    assert_alike(batched, one_by_one, position=1e-9, velocity=1e-6)


def test_a_diverging_free_body_is_named_with_its_stage(tmp_path):
    """A body thrown beyond the speed bound (1000 m/s by default) stops the step with a DivergenceError naming it;
    the last good state is kept."""
    (tmp_path / "fast.xml").write_text("""<Universe><Body name="bullet"><Sphere radius="0.01"/><Mass>0.01</Mass>
        <LinearVelocity>999.99 0 0</LinearVelocity></Body></Universe>""")
    sim = engine.Simulation(engine.load_universe(tmp_path / "fast.xml"))
    sim.set_external_wrench(0, 0, [100.0, 0, 0, 0, 0, 0], [0.0, 0.0, 0.0])
    before = sim.runs[0].q.copy()
    with pytest.raises(engine.DivergenceError, match="free velocity .* of dof 0 .* stage 'dynamics', multibody "
                                                     "'bullet', step 1"):
        sim.step()
    np.testing.assert_array_equal(sim.runs[0].q, before)


@engine.plugins.register("test-constant-push")
class ConstantPush:
    """A force of 2 N along body x, every step."""
    kind, stage = "controller", "control"

    def __init__(self, model):
        self.nv = model.nv

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        return np.array([2.0] + [0.0] * (self.nv - 1))


def test_a_free_body_whose_controller_is_disabled_keeps_no_torque(tmp_path):
    """A box in free flight pushed by 2 N along x (m = 0.5 kg: v_x gains δt · 4 m/s² a step, gravity along −z),
    its controller then disabled: no run is driven, the control stage is skipped, and the push is gone for good —
    v_x stays what it was, to the last bit (a = I⁻¹ f + g with ω = 0), also when the run is restored to the last good
    state, whose torque was the push."""
    path = tmp_path / "pushed.xml"
    path.write_text('<Universe><Body name="box"><Box size="0.1 0.1 0.1"/><Mass>0.5</Mass><Translation z="5"/>'
                    '</Body><Controller plugin="test-constant-push" target="box"/></Universe>')
    sim = engine.Simulation(engine.load_universe(path))
    run = sim.runs[0]
    assert sim.batch is not None and sim._driven == [run]
    sim.step(10)
    assert run.v[0] == pytest.approx(10 * 1e-3 * 4.0, rel=1e-12)
    sim.disable_plugin("test-constant-push")
    assert sim._driven == [] and not run.tau.any() and not run.tau_good.any()
    v_x = run.v[0]
    sim._restore()                                 # as after a fault in the next step: back to step 10
    sim.step(10)
    assert run.v[0] == v_x and not run.tau.any() and sim.timer.last["control"] == 0.0
