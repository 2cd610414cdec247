"""Touch mode: analytic distance fields, the god-object on boxes, spheres and thin plates, forces, reactions."""
import numpy as np
import pytest

from engine.interaction import (Box, GodObject, HapticSession, Plane, SafetySettings, ScriptedDevice, Sphere,
                                TouchSettings, union)
from engine.spatial import rotation_axis_angle
from haptic_helpers import RigidWorld, world_body

K, B, TOL = 800.0, 2.0, 1e-6


def test_analytic_distances_match_closed_forms():
    R = rotation_axis_angle([0, 0, 1], 0.3)
    box = Box([0.1, 0.2, 0.3], R, np.array([1.0, 2.0, 3.0]))
    to_world = lambda y: R @ np.asarray(y, float) + [1.0, 2.0, 3.0]   # noqa: E731
    cases = [([0.3, 0.0, 0.0], 0.2, [0.1, 0.0, 0.0], [1, 0, 0]),            # off a face
             ([0.4, 0.6, 0.0], 0.5, [0.1, 0.2, 0.0], [0.6, 0.8, 0.0]),      # off an edge: |(0.3, 0.4)|
             ([0.05, 0.0, 0.29], -0.01, [0.05, 0.0, 0.3], [0, 0, 1])]       # inside, nearest the top face
    for y, d, c, n in cases:
        pr = box(to_world(y))
        assert pr.distance == pytest.approx(d, abs=1e-12)
        np.testing.assert_allclose(pr.point, to_world(c), atol=1e-12)
        np.testing.assert_allclose(pr.normal, R @ n, atol=1e-12)
    pr = Sphere(np.array([0.0, 0.0, 1.0]), 0.5)([0.0, 0.3, 1.4])
    assert pr.distance == pytest.approx(0.0) and np.allclose(pr.normal, [0, 0.6, 0.8])
    pr = Plane(np.array([0.0, 0.0, 2.0]), 0.1)([3.0, 4.0, -0.4])
    assert pr.distance == pytest.approx(-0.5) and np.allclose(pr.point, [3.0, 4.0, 0.1])
    scene = union(Plane(np.array([0.0, 0.0, 1.0])), Sphere(np.array([0.0, 0.0, 1.0]), 0.5, body="ball"))
    assert scene([0.0, 0.0, 1.6]).body == "ball" and scene([2.0, 0.0, 0.3]).body is None


def touch_session(clock, t, position, scene, **kw):
    device = ScriptedDevice(t, position, clock=clock)
    session = HapticSession(device, mode="touch", proximity=scene, clock=clock,
                            touch=TouchSettings(stiffness=K, damping=B, tolerance=TOL),
                            safety=SafetySettings(ramp_time=0.0, passivity=False), **kw)
    device.start()
    return device, session


def run(session, port, clock, n, world=None):
    outputs = []
    for _ in range(n):
        clock.t += 1e-3
        port.update(clock.t)
        if world is not None:
            world.step()
        session.tick()
        outputs.append(session.output.get().value)
    return outputs


def test_pressing_into_a_static_box_never_penetrates_and_the_force_grows(clock):
    """The hand goes 5 cm into the top face (z = 0) of a static box at 0.1 m/s: the god-object stays on the face,
    and the hand feels f_z = k_c depth + b_c speed (spring to the god-object plus normal damping)."""
    box = Box([0.2, 0.2, 0.1], np.eye(3), np.array([0.0, 0.0, -0.1]))
    t = np.array([0.0, 0.6])
    device, session = touch_session(clock, t, [[0.01, 0.02, 0.01], [0.01, 0.02, -0.05]], box)
    port = session.physics_port(lambda x: None, lambda key: None)
    out = run(session, port, clock, 590)
    depth = np.array([-o.proxy[2] for o in out])
    god = np.array([o.god for o in out])
    f = np.array([o.force_world for o in out])
    assert min(box(g).distance for g in god) >= -TOL
    pressing = depth > 0
    np.testing.assert_allclose(god[pressing], np.tile([0.01, 0.02, 0.0], (pressing.sum(), 1)), atol=TOL)
    np.testing.assert_allclose(f[pressing, 2], K * depth[pressing] + B * 0.1, rtol=1e-9)
    assert np.all(np.diff(f[pressing, 2]) > 0) and np.allclose(f[~pressing], 0.0)


def test_a_thin_plate_is_not_crossed(clock):
    """A 2 mm plate and a hand passing 3 cm through it at 1 m/s: the god-object stays on the top side."""
    plate = Box([0.1, 0.1, 0.001])
    t = np.array([0.0, 0.05])
    device, session = touch_session(clock, t, [[0.0, 0.0, 0.02], [0.0, 0.0, -0.03]], plate)
    out = run(session, session.physics_port(lambda x: None, lambda key: None), clock, 60)
    assert all(o.god[2] >= 0.001 - TOL for o in out)
    assert out[-1].force_world[2] == pytest.approx(K * 0.031, rel=1e-9)


def test_the_god_object_slides_to_the_nearest_point_of_a_sphere():
    """Sliding on a convex surface, the god-object converges to the radial projection of the hand."""
    center, r = np.array([0.0, 0.0, 0.0]), 0.1
    god = GodObject(Sphere(center, r), TouchSettings(stiffness=K, tolerance=TOL))
    god.update([0.0, 0.0, 0.2], np.zeros(3))
    for angle in np.linspace(0.0, 1.2, 200):                          # pressing 2 cm in, sweeping 70 degrees
        x_d = 0.08 * np.array([np.sin(angle), 0.0, np.cos(angle)])
        contact = god.update(x_d, np.zeros(3))
        np.testing.assert_allclose(np.linalg.norm(contact.god - center), r, atol=TOL)
    np.testing.assert_allclose(contact.god, r * x_d / 0.08, atol=1e-4)
    np.testing.assert_allclose(contact.force, K * (contact.god - x_d), rtol=1e-9)
    contact = god.update([0.0, 0.0, 0.3], np.zeros(3))                 # pulled out: free again
    assert not contact.in_contact and np.allclose(contact.god, [0.0, 0.0, 0.3]) and not contact.force.any()


def test_the_touched_body_receives_the_reaction(clock):
    """Pressing a dynamic ball (a RigidWorld body) from above: the physics applies -f_hand at the god-object."""
    world = RigidWorld(1.0, [0.05] * 3, [0.0, 0.0, 0.05], table_z=0.05, g=0.0)
    ball = lambda x: Sphere(world.c.copy(), 0.05, body=(0, -1))(x)    # noqa: E731
    t = np.array([0.0, 0.5])
    device, session = touch_session(clock, t, [[0.0, 0.0, 0.12], [0.0, 0.0, 0.08]], ball)
    port = session.physics_port(*world_body(world))
    out = run(session, port, clock, 400, world)
    last = out[-2]                                                    # the command the physics applied last
    assert last.force_world[2] > 1.0
    np.testing.assert_allclose(world.wrench, np.concatenate([-last.force_world, np.zeros(3)]), rtol=1e-12)
    np.testing.assert_allclose(world.point, last.god, atol=1e-12)


def test_touch_mode_needs_a_proximity_query():
    with pytest.raises(ValueError, match="proximity"):
        HapticSession(ScriptedDevice([0.0], [[0.0, 0.0, 0.0]]), mode="touch")
    with pytest.raises(ValueError, match="stiffness"):
        TouchSettings(stiffness=-1.0)


def test_switching_to_touch_mode_takes_effect_at_the_next_tick(clock):
    """In attach mode with no grasp the hand inside a box feels nothing; once switched to touch mode the
    god-object starts on the nearest face and the hand feels k_c depth."""
    box = Box([0.2, 0.2, 0.1], np.eye(3), np.array([0.0, 0.0, -0.1]))
    device, session = touch_session(clock, np.array([0.0, 1.0]), [[0.0, 0.0, -0.01], [0.0, 0.0, -0.01]], box)
    session.mode = "attach"
    port = session.physics_port(lambda x: None, lambda key: None)
    assert not run(session, port, clock, 5)[-1].force_world.any()
    session.mode = "touch"
    assert session.mode == "touch"
    out = run(session, port, clock, 1)[-1]
    np.testing.assert_allclose(out.god, [0.0, 0.0, 0.0], atol=TOL)
    np.testing.assert_allclose(out.force_world, [0.0, 0.0, K * 0.01], rtol=1e-9)
