"""Identities of the free dynamics on random trees (hypothesis): random topologies, every joint type
(revolute, prismatic, spherical, planar, free-flyer root or fixed base), axes, placements, inertias and
geared rotors.  Tolerances: 1e-9 relative.

* crba equals the matrix of n rnea calls with unit accelerations, v = 0, g = 0 (seed 002's test);
* aba(q, v, rnea(q, v, a, f_ext), f_ext) = a;
* v^T M v = 2 T;
* M is symmetric positive definite;
* without rotors, crba, rnea and aba equal Pinocchio's.
"""
import numpy as np
import pinocchio as pin
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dynamics import aba, crba, kinetic_energy, rnea
from engine.dynamics.integrators import random_configuration
from tests.dynamics.random_trees import ALL_KINDS, random_model, to_pinocchio

ZERO_G = np.zeros(3)
TREES = st.fixed_dictionaries({
    "seed": st.integers(0, 2**32 - 1), "nbodies": st.integers(1, 10), "floating": st.booleans(),
    "rotors": st.booleans(), "kinds": st.sets(st.sampled_from(ALL_KINDS), min_size=1).map(sorted)})
PROPERTY = settings(max_examples=25, deadline=None)


def draw(spec, rotors=None):
    """(model, data, q, v, a, f_ext, rng) for a tree spec; q, v, a and body wrenches at random."""
    rng = np.random.default_rng(spec["seed"])
    model = random_model(rng, nbodies=spec["nbodies"], floating=spec["floating"], kinds=spec["kinds"],
                         rotors=spec["rotors"] if rotors is None else rotors)
    q = random_configuration(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    return model, model.create_data(), q, v, a, rng.normal(size=(model.nbodies, 6)), rng


def close(x, y, rel=1e-9):
    np.testing.assert_allclose(x, y, rtol=0, atol=rel * max(1.0, np.abs(y).max()))


@PROPERTY
@given(TREES)
def test_crba_is_rnea_with_unit_accelerations(spec):
    model, data, q, *_ = draw(spec)
    M = crba(model, data, q).copy()
    zero, columns = np.zeros(model.nv), []
    for k in range(model.nv):
        columns.append(rnea(model, data, q, zero, np.eye(model.nv)[k], gravity=ZERO_G))
    close(np.array(columns).T, M)


@PROPERTY
@given(TREES)
def test_aba_inverts_rnea(spec):
    model, data, q, v, a, f_ext, _ = draw(spec)
    tau = rnea(model, data, q, v, a, f_ext=f_ext).copy()
    close(aba(model, data, q, v, tau, f_ext=f_ext), a)


@PROPERTY
@given(TREES)
def test_kinetic_energy_is_half_vMv(spec):
    model, data, q, v, *_ = draw(spec)
    M = crba(model, data, q).copy()
    T = kinetic_energy(model, data, q, v)
    assert abs(v @ M @ v - 2.0 * T) <= 1e-9 * abs(2.0 * T)


@PROPERTY
@given(TREES)
def test_mass_matrix_is_symmetric_positive_definite(spec):
    model, data, q, *_ = draw(spec)
    M = crba(model, data, q).copy()
    close(M, M.T, rel=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0.0
    np.linalg.cholesky(M)


@settings(max_examples=15, deadline=None)
@given(TREES)
def test_rigid_trees_match_pinocchio(spec):
    model, data, q, v, a, f_ext, _ = draw(spec, rotors=False)
    pmodel = to_pinocchio(model)
    pdata = pmodel.createData()
    fp = [pin.Force.Zero()] + [pin.Force(f[:3], f[3:]) for f in f_ext]
    M = pin.crba(pmodel, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    close(crba(model, data, q), M)
    tau = pin.rnea(pmodel, pdata, q, v, a, fp)
    close(rnea(model, data, q, v, a, f_ext=f_ext), tau)
    close(aba(model, data, q, v, tau, f_ext=f_ext), pin.aba(pmodel, pdata, q, v, tau, fp))
