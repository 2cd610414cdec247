"""The contact stage's run totals (``Simulation.contact_report()``): steps solved, steps left unconverged, contacts
and self-contacts, as the run summary and the GUI's timing panel show them."""
import pytest

from engine.model.universe_xml import load_universe
from engine.simulation import Simulation

# a fixed base plate, an intermediate link without geometry, and a slider that drops onto the plate: the plate
# and the slider are not parent and child and do not touch in the neutral pose, so their contacts are
# self-contacts of one multibody
DROPPER = """<robot name="dropper">
  <link name="plate"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><box size="0.4 0.4 0.05"/></geometry></collision></link>
  <link name="hinge"><inertial><mass value="0.1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0"
    iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
    iyz="0"/></inertial><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="turn" type="revolute"><parent link="plate"/><child link="hinge"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="drop" type="prismatic"><parent link="hinge"/><child link="slider"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
</robot>
"""


def run(tmp_path, body, settings="", steps=300):
    (tmp_path / "dropper.urdf").write_text(DROPPER)
    path = tmp_path / "scene.xml"
    path.write_text(f"<Universe><Settings>{settings}</Settings>{body}</Universe>")
    sim = Simulation(load_universe(path))
    sim.step(steps)
    return sim


def test_a_box_on_the_ground_counts_its_contacts_and_no_self_contact(tmp_path):
    sim = run(tmp_path, '<Body name="box"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation z="0.05"/></Body>'
                        '<Body name="ground"><Plane/><Mass>0</Mass></Body>')
    report = sim.contact_report()
    assert report.steps == 300 and report.unconverged_steps == 0
    assert report.contacts == 4 * 300 and report.max_contacts == 4 and report.self_contacts == 0
    assert sim.solver_stats["unconverged_steps"] == 0
    assert report.summary() == ("contacts: 300 steps solved, 0 unconverged (0.0%); 4.0 contacts per step "
                                "(0% self-contacts), at most 4")


def test_a_slider_resting_on_its_own_base_is_a_self_contact(tmp_path):
    sim = run(tmp_path, '<MultiBody name="dropper"><File>dropper.urdf</File></MultiBody>')
    report = sim.contact_report()
    assert report.steps > 0 and report.self_contacts == report.contacts > 0
    assert sim.runs[0].q[1] == pytest.approx(-0.025, abs=2e-3)       # the slider rests on the plate (z = 0.075)


def test_steps_left_unconverged_are_counted_and_reset(tmp_path):
    # one sweep of plain Gauss–Seidel on a box landing on four corners cannot meet a relative change of 1e-15
    box = ('<Body name="box"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation z="0.052"/></Body>'
           '<Body name="ground"><Plane/><Mass>0</Mass></Body>')
    sim = run(tmp_path, box, '<Solver name="gauss-seidel" tolerance="1e-15" max_iterations="1"/>', steps=50)
    assert sim.contact_report().unconverged_steps > 0
    assert sim.snapshot().solver_stats["unconverged_steps"] == sim.contact_report().unconverged_steps
    sim.reset()
    assert sim.contact_report().steps == 0 and sim.contact_report().summary() == "contacts: none"


@pytest.mark.parametrize("batched", [True, False])
def test_steps_without_contacts_do_not_reset_the_totals(tmp_path, batched):
    """A box resting, lifted off the ground by an upward push (contact-free steps), dropped back: the totals
    count every step that had contacts, before the flight and after it, as the test counts them itself from
    ``sim.contacts`` (the box batched with the free bodies, and stepped as a multibody of its own)."""
    from engine.engines import articula, free_bodies
    (tmp_path / "box.xml").write_text('<Universe><Body name="box"><Box size="0.1 0.1 0.1"/><Mass>1</Mass>'
                                      '<Translation z="0.05"/></Body><Body name="ground"><Plane/><Mass>0</Mass></Body>'
                                      '</Universe>')
    original = articula.batchable
    articula.batchable = free_bodies.batchable if batched else (lambda run: False)
    try:
        sim = Simulation(load_universe(tmp_path / "box.xml"))
    finally:
        articula.batchable = original
    assert (sim.engine.free_bodies is not None) == batched
    steps = contacts = flight = 0
    for k in range(600):
        if k == 100:
            sim.set_external_wrench(0, 0, [0, 0, 30.0, 0, 0, 0], [0, 0, 0.05])     # 30 N up against 9.81 N
        if k == 150:
            sim.clear_external_wrenches()
        sim.step()
        steps += len(sim.contacts) > 0
        contacts += len(sim.contacts)
        flight += len(sim.contacts) == 0
    report = sim.contact_report()
    assert flight > 100 and report.steps == steps > 250 and report.contacts == contacts


def test_a_batched_free_body_says_whether_it_touches(tmp_path):
    """``run.in_contact`` of a free body stepped in the engine's batch: false while it falls, true once it lands,
    and at every step whether its contact wrench is non-zero."""
    (tmp_path / "box.xml").write_text('<Universe><Body name="box"><Box size="0.1 0.1 0.1"/><Mass>1</Mass>'
                                      '<Translation z="0.1"/></Body><Body name="ground"><Plane/><Mass>0</Mass></Body>'
                                      '</Universe>')
    sim = Simulation(load_universe(tmp_path / "box.xml"))
    run = sim.runs[0]
    assert run in sim.engine.free_bodies.runs
    seen = set()
    for _ in range(300):
        sim.step()
        assert run.in_contact == bool(run.f_contact.any())
        seen.add(run.in_contact)
    assert seen == {False, True} and run.in_contact
