"""CollisionWorld: pair filters, objects, materials, Talos, determinism and bad input."""
from __future__ import annotations

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import engine
from engine.collision import CollisionSettings, CollisionWorld, GeometryWarning, PairFilter, placements_at
from engine.errors import SimulationError
from engine.model.paths import example_robot_data_dir
from tests.collision.scenes import I3, free_body, place, rot, static, world

ARM = """<robot name="arm">
  <link name="base_link"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="l1"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.1 0.1 0.12"/></geometry></collision></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.1 0.1 0.12"/></geometry></collision></link>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l3"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.1"/><geometry><box size="0.3 0.3 0.02"/></geometry></collision>
    <collision><origin xyz="0 0 0.4"/><geometry><sphere radius="0.05"/></geometry></collision></link>
</robot>"""


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return SimpleNamespace(name="arm", model=engine.load_model(path), R=I3, p=np.array([0.0, 0.0, 0.05]))


def tracked(w):
    return {tuple(sorted((w.object_name(i), w.object_name(j)))) for i, j in w.tables.pair_object}


def test_objects_are_addressed_by_multibody_and_body(arm, tmp_path):
    ball = free_body(tmp_path, "ball", '<sphere radius="0.1"/>')
    w = world([arm, ball], [static("ground")])
    assert [(o.name, o.multibody, o.body, o.mobile) for o in w.objects] == [
        ("arm/base_link", 0, -1, False), ("arm/l1", 0, 0, True), ("arm/l2", 0, 1, True), ("arm/l3", 0, 2, True),
        ("ball/ball", 1, 0, True), ("ground", -1, 0, False)]
    assert len(w.geometries) == 7  # l3 carries two


def test_default_filter_drops_fixed_pairs_parent_child_and_neutral_contacts(arm):
    w = world([arm], [static("ground")])
    # l3's plate overlaps l1 in the neutral pose; parent-child pairs and the fixed base-ground pair go
    assert tracked(w) == {("arm/l1", "ground"), ("arm/l2", "ground"), ("arm/l3", "ground"),
                          ("arm/base_link", "arm/l2"), ("arm/base_link", "arm/l3")}
    neutral_on = world([arm], [static("ground")], exclude_neutral=False)
    assert ("arm/l1", "arm/l3") in tracked(neutral_on)
    w.update(placements_at([arm], [np.zeros(3)]))
    assert len(w.detect()) == 0  # the neutral pose is contact-free
    neutral_on.update(placements_at([arm], [np.zeros(3)]))
    c = neutral_on.detect()
    assert {(neutral_on.object_name(i), neutral_on.object_name(j)) for i, j in zip(c.object_a, c.object_b)} == \
        {("arm/l1", "arm/l3")}
    everything = world([arm], [static("ground")], exclude_neutral=False, exclude_parent_child=False)
    assert {("arm/base_link", "arm/l1"), ("arm/l1", "arm/l2"), ("arm/l2", "arm/l3")} <= tracked(everything)


def test_folded_arm_touches_the_ground_and_itself(arm):
    w = world([arm], [static("ground")])
    w.update(placements_at([arm], [np.array([0.0, 2.0, 0.0])]))  # l2 folded down: l3's ball hits the ground
    c = w.detect()
    pairs = {(w.object_name(i), w.object_name(j)) for i, j in zip(c.object_a, c.object_b)}
    assert ("arm/l3", "ground") in pairs
    np.testing.assert_allclose(c.normal[c.multibody_b == -1], np.tile([0, 0, 1.0], ((c.multibody_b == -1).sum(), 1)))


def test_groups_masks_include_and_exclude(arm, tmp_path):
    ball = free_body(tmp_path, "ball", '<sphere radius="0.1"/>')
    w = world([arm, ball], [static("ground")], groups={"arm/*": (2, 0xFFFFFFFF), "ball/*": (1, 1)})
    pairs = tracked(w)
    assert ("arm/l1", "ball/ball") not in pairs  # ball's mask 1 rejects group 2
    assert ("ball/ball", "ground") in pairs      # ground in group 1
    w = world([arm, ball], [static("ground")], exclude=(("*", "ground"),), include=(("arm/l3", "arm/l1"),))
    pairs = tracked(w)
    assert not any("ground" in p for p in pairs)
    assert ("arm/l1", "arm/l3") in pairs  # included despite touching in the neutral pose
    only = world([arm, ball], [static("ground")], exclude=(("*", "*"),), include=(("ball/*", "ground"),))
    assert tracked(only) == {("ball/ball", "ground")}
    with pytest.raises(ValueError, match="pair of name patterns"):
        PairFilter(exclude=(("a",),))
    with pytest.raises(ValueError, match="group, mask"):
        PairFilter(groups={"a": (1,)})


def test_materials_are_combined_per_pair(tmp_path):
    rubber = free_body(tmp_path, "rubber", '<sphere radius="0.1"/>', material="rubber")
    ice = free_body(tmp_path, "ice", '<sphere radius="0.1"/>', material="ice")
    materials = {"rubber": (1.0, 0.8), "ice": SimpleNamespace(mu=0.04, restitution=0.1), "default": (0.5, 0.0),
                 ("ice", "steel"): (0.02, 0.3)}
    steel = static("steel", "box", (1, 1, 1), p=(0, 0, -0.5), material="steel")
    steel_mat = dict(materials, steel=(0.6, 0.2))
    w = world([rubber, ice], [static("ground"), steel], materials=steel_mat)
    place(w, [(I3, [0, 0, 0.095]), (I3, [0.15, 0, 0.095])])
    c = w.detect()
    got = {(w.object_name(a), w.object_name(b)): (m, e) for a, b, m, e in
           zip(c.object_a, c.object_b, c.mu, c.restitution)}
    assert got[("rubber/rubber", "ice/ice")] == pytest.approx((np.sqrt(1.0 * 0.04), 0.8))  # sqrt(mu mu), max e
    assert got[("rubber/rubber", "ground")] == pytest.approx((np.sqrt(0.5), 0.8))
    assert got[("ice/ice", "steel")] == pytest.approx((0.02, 0.3))  # the pair's own entry
    with pytest.raises(ValueError, match="unknown contact material 'steel'"):
        world([rubber], [steel], materials=materials)
    with pytest.raises(ValueError, match="restitution"):
        world([rubber], [], materials={"rubber": (1.0, 1.5)})


def test_placements_in_place_and_bad_updates(arm, tmp_path):
    ball = free_body(tmp_path, "ball", '<sphere radius="0.1"/>')
    w = world([arm, ball], [static("ground")])
    R_view, p_view = w.body_placements[1]
    R_view[0], p_view[0] = I3, [0.0, 1.0, 0.09]
    arm_R, arm_p = w.body_placements[0]
    arm_R[:], arm_p[:] = placements_at([arm], [np.zeros(3)])[0]
    w.update()
    c = w.detect()
    assert len(c) == 1 and c.depth[0] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="placements of 2 multibodies"):
        w.update([(np.tile(I3, (3, 1, 1)), np.zeros((3, 3)))])
    with pytest.raises(ValueError, match=r"nb = \[3, 1\]"):
        w.update([(np.tile(I3, (2, 1, 1)), np.zeros((2, 3))), (I3[None], np.zeros((1, 3)))])
    bad = np.zeros((1, 3))
    bad[0, 2] = np.nan
    w.update([placements_at([arm], [np.zeros(3)])[0], (I3[None], bad)])
    with pytest.raises(SimulationError, match="non-finite") as info:
        w.detect()
    assert info.value.value == ["ball"]
    with pytest.raises(ValueError, match="margin"):
        w.detect(margin=-1.0)
    with pytest.raises(ValueError, match="margin"):
        CollisionSettings(margin=float("nan"))


def test_zero_size_and_negative_primitives(tmp_path):
    flat = free_body(tmp_path, "flat", '<box size="0.1 0.0 0.1"/>')
    with pytest.warns(GeometryWarning, match="no volume"):
        w = world([flat], [static("ground")])
    assert len(w.objects) == 1 and w.object_name(0) == "ground" and len(w.pairs) == 0
    place(w, [(I3, [0, 0, 0])])
    assert len(w.detect()) == 0
    point = free_body(tmp_path, "point", '<capsule radius="0.1" length="0"/>')  # a sphere, not degenerate
    assert len(world([point]).objects) == 1
    with pytest.raises(ValueError, match=r"box sizes must be finite and >= 0.*-1"):
        world([point], [static("bad", "box", (1.0, -1.0, 1.0))])


@pytest.fixture(scope="module")
def talos():
    path = example_robot_data_dir() / "talos_data" / "robots" / "talos_reduced.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints, non-watertight collision meshes (hull fallback)
        model = engine.load_model(path, floating_base=True)
        mb = SimpleNamespace(name="talos", model=model, R=I3, p=np.zeros(3))
        w = CollisionWorld([mb], [static("ground")])
    q = engine.neutral(model)
    w.update(placements_at([mb], [q]))
    q[2] = -w.workspace.lo[w.shapes.kind != 6, 2].min() - 1e-3  # soles 1 mm into the ground
    return w, mb, q


def test_talos_in_its_neutral_pose_has_no_self_contact(talos):
    w, mb, q = talos
    w.update(placements_at([mb], [q]))
    c = w.detect(margin=w.settings.filter.neutral_margin)
    assert set(c.multibody_a) == {0} and set(c.multibody_b) == {-1}  # only against the ground
    assert {w.object_name(i) for i in c.object_a} == {"talos/leg_left_6_link", "talos/leg_right_6_link"}
    assert np.bincount(c.pair).max() <= 4
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (len(c), 1)), atol=1e-15)
    assert c.depth.max() == pytest.approx(1e-3, abs=1e-9) and c.depth.min() >= -w.settings.filter.neutral_margin
    assert ("talos/arm_left_7_link", "talos/arm_right_7_link") in tracked(w)  # self pairs are tracked


def test_talos_crossed_legs_collide(talos):
    w, mb, q = talos
    q = q.copy()
    q[mb.model.joint("leg_left_2_joint").idx_q] = -0.6  # left hip roll: the left leg swings across the right
    w.update(placements_at([mb], [q]))
    c = w.detect()
    pairs = {(w.object_name(i), w.object_name(j)) for i, j in zip(c.object_a, c.object_b)}
    assert any(a.startswith("talos/leg_left") and b.startswith("talos/leg_right") for a, b in pairs)
    np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0, atol=1e-12)


def test_detection_is_deterministic(talos, tmp_path):
    w, mb, q = talos
    q = q.copy()
    q[mb.model.joint("leg_left_2_joint").idx_q] = -0.6
    w.update(placements_at([mb], [q]))
    first = w.detect(margin=0.01)
    for _ in range(3):
        w.update(placements_at([mb], [q]))
        again = w.detect(margin=0.01)
        for name in ("point", "normal", "depth", "pair"):
            assert np.array_equal(getattr(first, name), getattr(again, name))
    cubes = [free_body(tmp_path, f"c{i}", '<box size="0.1 0.1 0.1"/>') for i in range(6)]
    poses = [(rot([0, 0, 1], 7 * i), [0.02 * i, 0.01 * i, 0.05 + 0.099 * i]) for i in range(6)]
    results = []
    for _ in range(2):
        wc = world(cubes, [static("ground")], margin=1e-3)
        place(wc, poses)
        results.append(wc.detect())
    assert len(results[0]) == 24
    for name in ("point", "normal", "depth", "pair"):
        assert np.array_equal(getattr(results[0], name), getattr(results[1], name))


def test_unknown_collision_mode_is_reported(tmp_path):
    body = free_body(tmp_path, "m", '<box size="1 1 1"/>')
    model = dataclasses.replace(body.model, geometries=tuple(
        dataclasses.replace(g, kind="mesh", mesh_path="/nonexistent.stl") for g in body.model.geometries))
    with pytest.raises(engine.ModelError, match="not found"):
        world([SimpleNamespace(name="m", model=model, R=I3, p=np.zeros(3))])
