"""Opening a scene again (File ▸ Open, reset with new settings) reuses what its meshes cost to prepare: the
loaded meshes and the polytopes of their convex hulls are cached by file (path, scale, modification time),
so a mesh edited on disk is read again, and every collision shape still gets its own FCL object."""
import os

import numpy as np
import trimesh

from engine.collision.geometry import CONVEX, shapes_of
from engine.model import meshes
from engine.model.model import Geometry


def _geometry(path):
    return Geometry("m", 0, "mesh", (), np.eye(3), np.zeros(3), mesh_path=str(path), collision_mode="convex")


def test_a_second_build_reuses_the_hull_polytope_with_its_own_fcl_object(tmp_path):
    path = tmp_path / "box.stl"
    trimesh.creation.box((0.1, 0.2, 0.3)).export(path)
    (first,), (second,) = shapes_of(_geometry(path)), shapes_of(_geometry(path))
    assert first.kind == second.kind == CONVEX
    assert second.vertices is first.vertices and second.faces is first.faces      # computed once
    assert second.fcl_geometry is not first.fcl_geometry     # FCL contacts name their geometry: never shared
    assert not first.vertices.flags.writeable
    assert len(first.faces) == 6                             # a box hull: six quadrilateral faces
    np.testing.assert_allclose(2.0 * first.box_half, [0.1, 0.2, 0.3], atol=1e-9)


def test_a_mesh_edited_on_disk_is_read_again(tmp_path):
    path = tmp_path / "box.stl"
    trimesh.creation.box((0.1, 0.2, 0.3)).export(path)
    np.testing.assert_allclose(meshes.load_mesh(path).extents, [0.1, 0.2, 0.3], atol=1e-6)
    (before,) = shapes_of(_geometry(path))
    key, stat = meshes.mesh_key(path), path.stat()
    trimesh.creation.box((0.4, 0.2, 0.3)).export(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))   # a later modification time
    assert meshes.mesh_key(path)[:2] == key[:2] and meshes.mesh_key(path)[2] != key[2]
    np.testing.assert_allclose(meshes.load_mesh(path).extents, [0.4, 0.2, 0.3], atol=1e-6)
    (after,) = shapes_of(_geometry(path))
    np.testing.assert_allclose(2.0 * after.box_half, [0.4, 0.2, 0.3], atol=1e-9)
    np.testing.assert_allclose(2.0 * before.box_half, [0.1, 0.2, 0.3], atol=1e-9)
