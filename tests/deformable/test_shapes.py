"""Sole meshes: volumes against closed forms, the two-layer sole's materials and pads, files read through meshio."""
import math
import os
import subprocess
import sys
from pathlib import Path

import meshio
import numpy as np
import pytest

from engine.deformable import (Material, bottom_surface, box_mesh, build_sole, mesh_regions, read_mesh,
                               rounded_sole, top_face, two_layer_sole)
from engine.deformable.mesh import signed_volume6
from engine.deformable.shapes import gmsh_session

L, W, T = 0.22, 0.13, 0.02
ROOT = Path(__file__).resolve().parents[2]


def _volume(mesh, material=None):
    keep = slice(None) if material is None else mesh.tet_material == material
    return signed_volume6(mesh.node_position, mesh.tet_node[keep]).sum() / 6.0


def test_box_volume_orientation_and_faces():
    mesh = box_mesh((L, W, T), h=0.01)
    assert (signed_volume6(mesh.node_position, mesh.tet_node) > 0).all()
    assert math.isclose(_volume(mesh), L * W * T, rel_tol=1e-12)
    assert len(bottom_surface(mesh)) == len(top_face(mesh)) == 23 * 14
    assert np.allclose(mesh.node_position[top_face(mesh), 2], 0.0)


def test_two_layer_sole_volumes_materials_and_pads():
    """Top layer (material 0) over a 9 cm rear pad and a 5 cm front pad (material 1), conformal at the interface
    (the pads hang on the layer: the sole builds, so no part floats)."""
    layer = pad = 0.01
    rear, front = 0.09, 0.05
    mesh = two_layer_sole(L, W, layer, pad, rear, front, h=0.012)
    assert math.isclose(_volume(mesh, 0), L * W * layer, rel_tol=1e-9)
    assert math.isclose(_volume(mesh, 1), (rear + front) * W * pad, rel_tol=1e-9)
    sole = build_sole(mesh, [Material(3e6, 0.25), Material(1e6, 0.25)])
    x = mesh.node_position[sole.contact_node]
    assert np.allclose(x[:, 2], -layer - pad)
    assert (x[:, 0] <= -L / 2 + rear + 1e-9).sum() > (x[:, 0] >= L / 2 - front - 1e-9).sum() > 10
    assert not ((x[:, 0] > -L / 2 + rear + 1e-9) & (x[:, 0] < L / 2 - front - 1e-9)).any()


def test_bevelled_sole_volume_is_exact():
    """Four bottom edges bevelled by r: the removed wedges (area r²/2, centroid r/3 in from the side) are swept
    around the perimeter P with mitred corners, V = L W T − (r²/2)(P − 8 r/3); flat faces, so exact."""
    r = 0.008
    mesh = rounded_sole((L, W, T), radius=r, edge="bevel", h=0.01)
    perimeter = 2 * (L + W)
    assert math.isclose(_volume(mesh), L * W * T - r**2 / 2 * (perimeter - 8 * r / 3), rel_tol=1e-9)


def test_rounded_sole_volume_within_the_chord_error():
    """Rounded by r: removed area (1 − π/4) r² with ∫u dA = r³(10 − 3π)/12, so V = L W T − (1 − π/4) r² P +
    (2/3)(10 − 3π) r³. The mesh's flat facets cut chords of the (convex) rounding: the mesh volume is below V by at
    most the circular segments, Σ s³/(12 r) = π s²/24 per unit length for chords s ≤ the longest boundary edge."""
    r = 0.01
    mesh = rounded_sole((L, W, T), radius=r, edge="round", h=0.006)
    perimeter = 2 * (L + W)
    exact = L * W * T - (1 - math.pi / 4) * r**2 * perimeter + 2 / 3 * (10 - 3 * math.pi) * r**3
    faces = mesh.boundary
    x = mesh.node_position
    chord = np.linalg.norm(x[faces] - x[np.roll(faces, 1, axis=1)], axis=2).max()
    assert 0.0 <= exact - _volume(mesh) <= math.pi * chord**2 / 24 * perimeter
    band = bottom_surface(mesh, band=r)                       # the rounded edge can touch the ground
    assert len(band) > len(bottom_surface(mesh))


def _gmsh_file(path, tags):
    """A real Gmsh .msh: two stacked boxes in physical volumes ``tags`` (top, bottom), written by Gmsh."""
    with gmsh_session("layers") as gmsh:
        occ = gmsh.model.occ
        top = occ.addBox(-0.05, -0.03, -0.01, 0.1, 0.06, 0.01)
        bottom = occ.addBox(-0.05, -0.03, -0.02, 0.1, 0.06, 0.01)
        occ.fragment([(3, top)], [(3, bottom)])
        occ.synchronize()
        gmsh.model.addPhysicalGroup(3, [top], tags[0])
        gmsh.model.addPhysicalGroup(3, [bottom], tags[1])
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.01)
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    return path


def test_gmsh_file_with_physical_volumes_maps_materials_by_sorted_tag(tmp_path):
    path = _gmsh_file(tmp_path / "layers.msh", tags=(7, 3))
    assert mesh_regions(path) == [3, 7]
    mesh = read_mesh(path)
    assert mesh.source == str(path)
    z = mesh.node_position[mesh.tet_node].mean(axis=1)[:, 2]
    np.testing.assert_array_equal(mesh.tet_material, np.where(z > -0.01, 1, 0))   # tag 7 (top) is material 1
    assert math.isclose(_volume(mesh), 0.1 * 0.06 * 0.02, rel_tol=1e-9)


def test_vtu_material_cell_data_and_millimetres(tmp_path):
    mesh = two_layer_sole(h=0.02)
    path = tmp_path / "sole.vtu"
    meshio.write(path, meshio.Mesh(mesh.node_position * 1000.0, [("tetra", mesh.tet_node)],
                                   cell_data={"material": [mesh.tet_material + 10]}))
    again = read_mesh(path, scale=0.001)
    np.testing.assert_allclose(again.node_position, mesh.node_position, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(again.tet_material, mesh.tet_material)


@pytest.mark.parametrize("edge", ["round", "bevel"])
def test_shaped_soles_build_with_their_edges_as_candidates(edge):
    mesh = rounded_sole((L, W, T), radius=0.008, edge=edge, h=0.012)
    sole = build_sole(mesh, [Material(3e6, 0.4)], contact=bottom_surface(mesh, band=0.008))
    z = mesh.node_position[sole.contact_node, 2]
    assert z.min() == pytest.approx(-T) and z.max() == pytest.approx(-T + 0.008)
    np.linalg.cholesky(sole.K_c)


def test_meshing_with_gmsh_keeps_sigpipe_ignored(tmp_path):
    """Gmsh's initialisation resets SIGPIPE to 'terminate'; after a Gmsh sole, writing to a closed pipe must
    still raise BrokenPipeError (a dead haptic child otherwise kills the simulator), whether Gmsh ran in the main
    thread or another. In a fresh interpreter."""
    code = ("import threading\nfrom engine.deformable import rounded_sole, two_layer_sole\n"
            "two_layer_sole(h=0.03)\n"
            "worker = threading.Thread(target=rounded_sole, kwargs={'h': 0.03}); worker.start(); worker.join()\n"
            "import os; r, w = os.pipe(); os.close(r)\n"
            "try:\n    os.write(w, b'x')\nexcept BrokenPipeError:\n    print('broken pipe raised')\n")
    env = dict(os.environ, ARTICULA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert run.stdout.strip() == "broken pipe raised"
