"""Material(E, nu): Lamé constants (thesis eq. 4.6) and the admissible range."""
import math

import pytest
from skfem.models.elasticity import lame_parameters

from engine.deformable import Material
from engine.errors import SoleError


@pytest.mark.parametrize("E, nu", [(3e6, 0.4), (1e6, 0.25), (3e6, 0.25), (10e6, 0.01), (1e6, 0.49), (2e5, -0.5)])
def test_lame_constants_match_the_moduli_they_define(E, nu):
    """μ is the shear modulus E/(2(1+ν)); λ + 2μ/3 is the bulk modulus E/(3(1−2ν)); scikit-fem agrees."""
    m = Material(E, nu)
    assert math.isclose(m.mu, E / (2 * (1 + nu)), rel_tol=1e-14)
    assert math.isclose(m.lam + 2 * m.mu / 3, E / (3 * (1 - 2 * nu)), rel_tol=1e-12)
    assert (m.lam, m.mu) == pytest.approx(lame_parameters(E, nu), rel=1e-14)


def test_thesis_rubber_values():
    """E = 3 MPa, ν = 0.4 (§4.4.1): μ = 1.0714 MPa, λ = 4.2857 MPa."""
    m = Material(3e6, 0.4)
    assert m.mu == pytest.approx(3e6 / 2.8, rel=1e-14)
    assert m.lam == pytest.approx(3e6 * 0.4 / (1.4 * 0.2), rel=1e-14)


@pytest.mark.parametrize("E", [0.0, -1e6, math.inf, math.nan, "soft", None])
def test_bad_young_modulus_is_refused_with_its_value_and_place(E):
    with pytest.raises(SoleError, match=r"scene\.xml:12: material 'pad': Young's modulus E must be finite and > 0"
                       ) as err:
        Material(E, 0.3, name="pad", file="scene.xml", line=12)
    assert err.value.value is E


@pytest.mark.parametrize("nu", [0.5, 0.6, -1.0, -2.0, math.nan])
def test_poisson_ratio_outside_minus_one_half_is_refused(nu):
    with pytest.raises(SoleError, match=r"Poisson's ratio nu must lie in \(-1, 0\.5\)") as err:
        Material(3e6, nu, file="scene.xml", line=3)
    assert "scene.xml:3" in str(err.value) and repr(nu) in str(err.value)
