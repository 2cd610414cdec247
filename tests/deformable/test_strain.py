"""Small-strain validity: the strain of a displacement field (eq. 4.4) and the warning past 10 %."""
import warnings

import numpy as np
import pytest

from engine.deformable import SMALL_STRAIN, SmallStrainWarning, check_small_strain, max_strain, two_layer_sole
from engine.deformable.strain import element_strain

RNG = np.random.default_rng(2)


@pytest.fixture(scope="module")
def mesh(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARTICULA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return two_layer_sole(h=0.02)


def test_affine_field_has_the_strain_of_its_symmetric_gradient(mesh):
    """u = A x + b: ε = ½(A + Aᵀ) in every tetrahedron, exactly (linear elements reproduce affine fields)."""
    A = RNG.normal(size=(3, 3)) * 0.01
    U = mesh.node_position @ A.T + RNG.normal(size=3)
    sym = 0.5 * (A + A.T)
    np.testing.assert_allclose(element_strain(mesh, U), np.broadcast_to(sym, (len(mesh.tet_node), 3, 3)),
                               atol=1e-13)
    assert max_strain(mesh, U) == pytest.approx(np.abs(np.linalg.eigvalsh(sym)).max(), rel=1e-10)


def test_infinitesimal_rotation_has_no_strain(mesh):
    w = RNG.normal(size=3) * 0.01
    U = np.cross(w, mesh.node_position)
    assert max_strain(mesh, U) < 1e-14


def test_warning_past_the_small_strain_limit(mesh):
    stretch = np.diag([0.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_small_strain(mesh, mesh.node_position @ (0.09 * stretch)) == pytest.approx(0.09)
    with pytest.warns(SmallStrainWarning, match=r"strain 0\.12 exceeds the small-strain limit 0\.1"):
        assert check_small_strain(mesh, mesh.node_position @ (0.12 * stretch)) == pytest.approx(0.12)
    assert SMALL_STRAIN == 0.10


def test_a_sole_crushed_past_ten_percent_is_reported():
    """The thesis's sole (ν = 0) under a uniform pressure p strains by p/E: 3 % under 0.1 MPa, 17 % under 0.5."""
    from fem_helpers import traction_load

    from engine.deformable import Material, box_mesh, build_sole
    E = 3e6
    sole = build_sole(box_mesh((0.22, 0.13, 0.02), h=0.02), [Material(E, 0.0)])
    tri = sole.contact_node[sole.contact_triangle]
    for pressure, warns in ((1e5, False), (5e5, True)):
        F_c = traction_load(sole.mesh, tri, (0.0, 0.0, pressure))[sole.contact_node].ravel()
        U = sole.displacement(sole.contact_displacement(F_c))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert check_small_strain(sole.mesh, U) == pytest.approx(pressure / E, rel=1e-9)
        assert [w.category for w in caught] == ([SmallStrainWarning] if warns else [])
