"""Mesh loading (engine.model.meshes) and mesh collision shapes: formats, scenes, units, scale, bad meshes."""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from engine.collision.geometry import CONVEX, MESH, shapes_of
from engine.errors import ModelError
from engine.model import meshes
from engine.model.meshes import MeshWarning
from engine.model.model import Geometry
from tests.collision.scenes import I3, free_body, place, rot, static, world


def mesh_geometry(path, mode="mesh", scale=(1.0, 1.0, 1.0)):
    return Geometry("m", 0, "mesh", (), I3, np.zeros(3), mesh_path=str(path), mesh_scale=scale,
                    collision_mode=mode)


@pytest.fixture(scope="module")
def l_path(tmp_path_factory):
    """An L (STL): a 0.3 x 0.1 x 0.1 bar along x with a 0.1 x 0.1 x 0.3 post on its -x end; watertight, not
    convex.  One file for the module, so its V-HACD decomposition is computed once (meshes cache)."""
    bar = trimesh.creation.box((0.3, 0.1, 0.1))
    post = trimesh.creation.box((0.1, 0.1, 0.3))
    post.apply_translation([-0.1, 0.0, 0.1])
    path = tmp_path_factory.mktemp("l") / "l.stl"
    bar.union(post).export(path)
    return path


@pytest.mark.parametrize("ext", ["stl", "obj", "ply", "dae"])
def test_formats_load_to_the_same_box(tmp_path, ext):
    path = tmp_path / f"box.{ext}"
    trimesh.creation.box((0.1, 0.2, 0.3)).export(path)
    mesh = meshes.load_mesh(path)
    np.testing.assert_allclose(mesh.extents, [0.1, 0.2, 0.3], atol=1e-6)
    assert mesh.is_watertight and abs(mesh.volume - 0.006) < 1e-8


def test_scene_becomes_one_mesh_with_node_transforms(tmp_path):
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.creation.box((0.1, 0.1, 0.1)), node_name="a")
    scene.add_geometry(trimesh.creation.box((0.1, 0.1, 0.1)), node_name="b",
                       transform=trimesh.transformations.translation_matrix([1.0, 0.0, 0.0]))
    path = tmp_path / "two.glb"
    scene.export(path)
    mesh = meshes.load_mesh(path)
    np.testing.assert_allclose(mesh.bounds, [[-0.05, -0.05, -0.05], [1.05, 0.05, 0.05]], atol=1e-6)


def test_collada_unit_is_applied(tmp_path):
    path = tmp_path / "mm.dae"
    trimesh.creation.box((100.0, 100.0, 100.0)).export(path)
    path.write_text(path.read_text().replace("<up_axis>", '<unit name="millimeter" meter="0.001"/><up_axis>', 1))
    np.testing.assert_allclose(meshes.load_mesh(path).extents, [0.1, 0.1, 0.1], atol=1e-9)


def test_scale_mirrors_and_cache_is_shared(tmp_path):
    path = tmp_path / "box.stl"
    box = trimesh.creation.box((0.1, 0.2, 0.3))
    box.apply_translation([1.0, 0.0, 0.0])
    box.export(path)
    mirrored = meshes.load_mesh(path, (1.0, -1.0, 2.0))
    np.testing.assert_allclose(mirrored.bounds, [[0.95, -0.1, -0.3], [1.05, 0.1, 0.3]], atol=1e-6)
    assert mirrored.volume > 0.0  # faces re-oriented: outward normals
    assert meshes.load_mesh(str(path), [1, -1, 2]) is mirrored
    assert meshes.load_mesh(path) is not mirrored
    with pytest.raises(ModelError, match="scale"):
        meshes.load_mesh(path, (1.0, 0.0, 1.0))


def test_missing_empty_and_degenerate_meshes(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        meshes.load_mesh(tmp_path / "nope.stl")
    empty = tmp_path / "empty.stl"
    empty.write_text("solid empty\nendsolid empty\n")
    with pytest.raises(ModelError) as info:
        meshes.load_mesh(empty)
    assert str(empty) in str(info.value)
    flat_triangles = tmp_path / "degenerate.stl"  # every triangle has zero area
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False).export(flat_triangles)
    with pytest.raises(ModelError, match="non-degenerate") as info, pytest.warns(MeshWarning):
        meshes.load_mesh(flat_triangles)
    assert str(flat_triangles) in str(info.value)
    some = trimesh.creation.box((0.1, 0.1, 0.1))
    some = trimesh.Trimesh(np.vstack([some.vertices, [[5, 5, 5], [6, 5, 5], [7, 5, 5]]]),
                           np.vstack([some.faces, [[8, 9, 10]]]), process=False)
    path = tmp_path / "some.stl"
    some.export(path)
    with pytest.warns(MeshWarning, match="1 degenerate"):
        mesh = meshes.load_mesh(path)
    assert len(mesh.faces) == 12


def test_collision_modes_and_fallbacks(tmp_path, l_path):
    assert [s.kind for s in shapes_of(mesh_geometry(l_path, "convex"))] == [CONVEX]
    pieces = shapes_of(mesh_geometry(l_path, "mesh"))  # moving, not convex: convex pieces
    assert len(pieces) > 1 and {s.kind for s in pieces} == {CONVEX}
    assert [s.kind for s in shapes_of(mesh_geometry(l_path, "mesh"), mobile=False)] == [MESH]
    open_box = trimesh.creation.box((0.1, 0.1, 0.1))
    open_box.update_faces(np.arange(len(open_box.faces)) > 1)  # two triangles removed: a hole
    open_path = tmp_path / "open.stl"
    open_box.export(open_path)
    with pytest.warns(MeshWarning, match="not watertight"):
        assert [s.kind for s in shapes_of(mesh_geometry(open_path))] == [CONVEX]
    flat = tmp_path / "flat.stl"
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], [[0, 1, 2], [1, 3, 2]]).export(flat)
    with pytest.warns(MeshWarning, match="flat"):
        assert [s.kind for s in shapes_of(mesh_geometry(flat, "convex"))] == [MESH]
    with pytest.raises(ValueError, match="collision_mode"):
        shapes_of(mesh_geometry(l_path, "hull"))


def test_convex_mesh_on_convex_mesh_gives_the_face_corners(tmp_path):
    path = tmp_path / "cube.stl"
    trimesh.creation.box((0.1, 0.1, 0.1)).export(path)
    a = free_body(tmp_path, "a", f'<mesh filename="{path}"/>')
    b = free_body(tmp_path, "b", f'<mesh filename="{path}"/>')
    w = world([a, b])
    assert list(w.shapes.kind) == [CONVEX, CONVEX]
    p = np.array([0.03, 0.02, 0.1 - 1e-3])
    place(w, [(I3, p), (I3, [0, 0, 0])])
    c = w.detect()
    expected = [[x, y, 0.05 - 0.5e-3] for x in (-0.02, 0.05) for y in (-0.03, 0.05)]
    assert len(c) == 4  # STL stores float32: coordinates are exact to ~1e-8
    assert all(np.min(np.linalg.norm(c.point - q, axis=1)) < 1e-7 for q in expected)
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]] * 4, atol=1e-7)
    np.testing.assert_allclose(c.depth, [1e-3] * 4, atol=1e-7)


def test_non_convex_mesh_rests_on_its_bar(tmp_path, l_path):
    """A moving L (convex pieces) lying on its bar: contacts spread under the whole bar."""
    body = free_body(tmp_path, "l", f'<mesh filename="{l_path}"/>')
    w = world([body], [static("ground")])
    place(w, [(I3, [0.0, 0.0, 0.05 - 1e-3])])  # the bar lies on the ground, the post stands up
    c = w.detect()
    assert len(c) >= 4
    np.testing.assert_allclose(c.depth, 1e-3, atol=1e-6)
    assert c.point[:, 0].min() < -0.14 and c.point[:, 0].max() > 0.14  # the whole bar's footprint
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (len(c), 1)), atol=1e-12)


def test_box_on_a_static_triangle_mesh(tmp_path, l_path):
    """A static non-convex mesh keeps its triangles (FCL BVH); contacts come from FCL, normals from it to the box."""
    box = free_body(tmp_path, "box", '<box size="0.1 0.1 0.1"/>')
    terrain = static("terrain", "mesh", mesh_path=str(l_path))
    w = world([box], [terrain])
    assert w.shapes.kind[1] == MESH
    place(w, [(I3, [0.1, 0.0, 0.05 + 0.05 - 1e-3])])  # on the bar, away from the post
    c = w.detect()
    assert len(c) >= 1
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (len(c), 1)), atol=1e-7)
    np.testing.assert_allclose(c.depth, 1e-3, atol=1e-7)
    assert np.all(np.abs(c.point[:, 2] - (0.05 - 0.5e-3)) < 1e-7)
    place(w, [(rot([0, 0, 1], 10), [0.1, 0.0, 0.05 + 0.05 + 2e-3])])  # 2 mm above: a proximity contact
    c = w.detect(margin=5e-3)
    np.testing.assert_allclose(c.depth, -2e-3, atol=1e-7)
    assert len(w.detect(margin=1e-3)) == 0
