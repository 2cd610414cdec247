"""Bad sole input gets a clear SoleError naming the file (and the universe line) and the value."""
import meshio
import numpy as np
import pytest

from engine.deformable import Material, box_mesh, build_sole, read_mesh, rounded_sole, sole_mesh, two_layer_sole
from engine.errors import SoleError

RUBBER = [Material(3e6, 0.4)]


def _cube(offset=(0.0, 0.0, 0.0), n=1, size=0.01):
    m = box_mesh((size, size, size), h=size / n)
    return m.node_position + offset, m.tet_node


def _write(path, points, cells):
    meshio.write(path, meshio.Mesh(points, cells))
    return path


def test_surface_mesh_file_is_not_a_volume(tmp_path):
    path = _write(tmp_path / "skin.vtu", np.eye(3), [("triangle", np.array([[0, 1, 2]]))])
    with pytest.raises(SoleError, match=r"skin\.vtu'? has no linear tetrahedron \(a surface mesh\?") as err:
        read_mesh(path)
    assert str(path) in str(err.value) and "triangle" in str(err.value)


def test_quadratic_tetrahedra_are_named(tmp_path):
    points = np.vstack([np.eye(3), np.zeros(3), np.random.default_rng(0).random((6, 3))])
    path = _write(tmp_path / "quadratic.vtu", points, [("tetra10", np.arange(10)[None])])
    with pytest.raises(SoleError, match="quadratic tetrahedra"):
        read_mesh(path)


def test_inverted_tetrahedron_names_the_file_line_and_volume(tmp_path):
    x, tets = _cube(n=2)
    tets = tets.copy()
    tets[5] = tets[5][[1, 0, 2, 3]]
    path = _write(tmp_path / "inverted.vtu", x, [("tetra", tets)])
    with pytest.raises(SoleError, match=r"scene\.xml:41: sole mesh '.*inverted\.vtu': tetrahedron 5 .* is "
                                        r"inverted \(1 such\), signed volume in m\^3 \(got -") as err:
        read_mesh(path, file="scene.xml", line=41)
    assert err.value.value < 0


def test_all_negative_orientation_is_a_convention_and_is_flipped():
    x, tets = _cube(n=2)
    mesh = sole_mesh(x, tets[:, [1, 0, 2, 3]])
    np.testing.assert_array_equal(np.sort(mesh.tet_node, axis=1), np.sort(tets, axis=1))


def test_degenerate_tetrahedron_is_refused():
    x, tets = _cube(n=1)
    bottom = np.flatnonzero(np.isclose(x[:, 2], x[:, 2].min()))     # four coplanar nodes
    with pytest.raises(SoleError, match=r"tetrahedron 6 .* is degenerate \(1 such\), 6V/l_max\^3 \(got 0\.0\)"):
        sole_mesh(x, np.vstack([tets, bottom[None]]), source="flat.msh")


def test_parts_touching_along_an_edge_are_not_a_closed_volume():
    x1, t1 = _cube()
    x2, t2 = _cube(offset=(0.01, 0.0, 0.01))        # shares the edge x = 0.005 + ..., z = ... with the first
    x = np.vstack([x1, x2])
    _, index, inverse = np.unique(np.round(x, 12), axis=0, return_index=True, return_inverse=True)
    tets = inverse.ravel()[np.vstack([t1, t2 + len(x1)])]
    with pytest.raises(SoleError, match="not a closed volume: a boundary edge belongs to 4 boundary triangles"):
        sole_mesh(x[index], tets, source="bowtie.msh")


def test_a_face_shared_by_three_tetrahedra_is_refused():
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, -1], [0.3, 0.3, 0.8]], float)
    tets = np.array([[0, 1, 2, 3], [0, 2, 1, 4], [0, 1, 2, 5]])
    with pytest.raises(SoleError, match="not a closed volume: a triangle is shared by more than two tetrahedra"):
        sole_mesh(x, tets)


def test_node_index_out_of_range():
    x, tets = _cube()
    with pytest.raises(SoleError, match=r"tetrahedron 0 uses a node that does not exist \(8 nodes\)"):
        sole_mesh(x, np.vstack([[0, 1, 2, 99], tets]))


def test_unused_nodes_are_dropped():
    x, tets = _cube()
    mesh = sole_mesh(np.vstack([[5.0, 5.0, 5.0], x]), tets + 1)
    np.testing.assert_array_equal(mesh.node_position, x)


def test_no_node_on_the_dirichlet_face(tmp_path):
    x, tets = _cube(n=2)
    path = _write(tmp_path / "sole.vtu", x, [("tetra", tets)])
    mesh = read_mesh(path)
    with pytest.raises(SoleError, match=r"scene\.xml:7: sole mesh '.*sole\.vtu': no node on its Dirichlet face"
                                        r" .* \(got 0\)"):
        build_sole(mesh, RUBBER, dirichlet=[], file="scene.xml", line=7)


def test_a_part_with_no_dirichlet_node_would_float():
    x1, t1 = _cube()
    x2, t2 = _cube(offset=(0.0, 0.0, -0.03))                        # a loose block under the sole
    mesh = sole_mesh(np.vstack([x1, x2]), np.vstack([t1, t2 + len(x1)]), source="two.msh")
    with pytest.raises(SoleError, match=r"two\.msh'?: a part of 6 tetrahedra \(first: 6\) touches no Dirichlet "
                                        r"node and would float free"):
        build_sole(mesh, RUBBER)


def test_missing_material_and_wrong_material_type():
    mesh = two_layer_sole(h=0.03)
    with pytest.raises(SoleError, match=r"tetrahedra use material index 1 but only 1 material\(s\) are given"):
        build_sole(mesh, RUBBER, file="scene.xml", line=9)
    with pytest.raises(SoleError, match="materials must be a non-empty list of Material"):
        build_sole(mesh, [(3e6, 0.4), (1e6, 0.25)])


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(SoleError, match=r"scene\.xml:2: sole mesh '.*nowhere\.msh': no such file"):
        read_mesh(tmp_path / "nowhere.msh", file="scene.xml", line=2)
    garbage = tmp_path / "garbage.msh"
    garbage.write_text("$MeshFormat\nnot a mesh\n")
    with pytest.raises(SoleError, match=r"sole mesh '.*garbage\.msh' could not be read"):
        read_mesh(garbage)


@pytest.mark.parametrize("build, message", [
    (lambda: box_mesh((0.22, -0.13, 0.02)), r"size must be finite and > 0"),
    (lambda: box_mesh(h=0.0), r"h must be finite and > 0"),
    (lambda: rounded_sole(radius=0.02), r"edge radius must be below the thickness"),
    (lambda: rounded_sole(edge="oval"), r"edge must be 'round' or 'bevel' \(got 'oval'\)"),
    (lambda: two_layer_sole(rear_pad=0.15, front_pad=0.1), r"the pads overlap"),
])
def test_bad_shape_parameters(build, message):
    with pytest.raises(SoleError, match=message):
        build()


def test_node_selections_out_of_range_or_empty():
    mesh = box_mesh((0.06, 0.04, 0.02), h=0.02)
    n = len(mesh.node_position)
    with pytest.raises(SoleError, match=rf"Dirichlet node index out of range \({n} nodes\) \(got {n + 3}\)"):
        build_sole(mesh, RUBBER, dirichlet=[0, n + 3])
    with pytest.raises(SoleError, match=r"contact node index out of range .* \(got -1\)"):
        build_sole(mesh, RUBBER, contact=[-1, 2])
    top = np.flatnonzero(np.isclose(mesh.node_position[:, 2], 0.0))
    with pytest.raises(SoleError, match="no candidate contact node outside the Dirichlet face"):
        build_sole(mesh, RUBBER, contact=top)


@pytest.mark.parametrize("scale", [0.0, -0.001, float("nan")])
def test_bad_scale_of_a_mesh_file(tmp_path, scale):
    x, tets = _cube()
    path = _write(tmp_path / "mm.vtu", x, [("tetra", tets)])
    with pytest.raises(SoleError, match=r"mm\.vtu'?: scale must be finite and > 0"):
        read_mesh(path, scale=scale)
