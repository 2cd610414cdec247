"""The kernels of the sole step, each against a plain reference: ``project_dense`` (BLAS) against ``project``
(the loops that ``delassus`` checks against Pinocchio), ``place_nodes`` against (X + U) Rᵀ + p, and
``near_obstacles`` against the box-overlap test written with numpy, ``largest_magnitude`` against
``np.abs(a).max()``."""
import numpy as np
import pytest

from engine.contact._delassus_kernels import project, project_dense
from engine.contact._sole_kernels import largest_magnitude, near_obstacles, place_nodes


def _terms(rng, n_blocks, C):
    """Random constraint terms: each block a contact (3 rows) on one body, or on two (a self-contact), or a
    closure (6 rows), with symmetric Ω blocks (eq. 3.45's Omega_st = Omega_tsᵀ)."""
    term_contact, term_block, sizes = [], [], []
    for k in range(n_blocks):
        sizes.append(6 if rng.random() < 0.2 else 3)
        for c in rng.choice(C, size=1 + int(C > 1 and rng.random() < 0.3), replace=False):
            term_contact.append(int(c))
            term_block.append(k)
    block_row = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    Xw = np.zeros((len(term_contact), 6, 6))
    for a, k in enumerate(term_block):
        Xw[a, :sizes[k]] = rng.standard_normal((sizes[k], 6))
    G = rng.standard_normal((6 * C, 6 * C))
    Om = (G @ G.T).reshape(C, 6, C, 6).transpose(0, 2, 1, 3).copy()
    return np.array(term_contact, np.int64), np.array(term_block, np.int64), block_row, Xw, Om


@pytest.mark.parametrize("C", [1, 2])
def test_project_dense_equals_project(C):
    rng = np.random.default_rng(11 + C)
    for n_blocks in (1, 7, 80):
        term_contact, term_block, block_row, Xw, Om = _terms(rng, n_blocks, C)
        rows = int(block_row[-1])
        loops = np.zeros((rows, rows))
        project(term_contact, term_block, block_row, Xw, Om, np.empty((len(term_contact), 6, 6 * C)), loops)
        dense = project_dense(term_contact, term_block, block_row, Xw, Om, rows)
        assert np.array_equal(dense, dense.T)                       # exactly symmetric, as project leaves it
        assert np.allclose(dense, loops, rtol=0, atol=1e-12 * np.abs(loops).max())


def test_place_nodes_and_near_obstacles():
    rng = np.random.default_rng(3)
    rest, U = rng.standard_normal((40, 3)), 1e-3 * rng.standard_normal(120)
    R_body, R_sole = (np.linalg.qr(rng.standard_normal((3, 3)))[0] for _ in range(2))
    p_body, p_sole, margin = rng.standard_normal(3), rng.standard_normal(3), 0.005
    R, p, x, box = np.empty((3, 3)), np.empty(3), np.empty((40, 3)), np.empty((2, 3))
    place_nodes(rest, U, R_body, p_body, R_sole, p_sole, margin, R, p, x, box)
    assert np.allclose(R, R_body @ R_sole, rtol=0, atol=1e-15)
    assert np.allclose(p, R_body @ p_sole + p_body, rtol=0, atol=1e-15)
    expected = (rest + U.reshape(-1, 3)) @ R.T + p
    assert np.allclose(x, expected, rtol=0, atol=1e-14)
    assert np.allclose(box, [expected.min(axis=0) - margin, expected.max(axis=0) + margin], rtol=0, atol=1e-14)
    lo = rng.uniform(-4, 2, (50, 3))
    bounds = np.stack([lo, lo + rng.uniform(0, 2, (50, 3))], axis=1)
    bounds[0] = [np.full(3, -np.inf), np.full(3, np.inf)]           # a plane: unbounded
    own = rng.random(50) < 0.2
    near = np.empty(50, np.int64)
    count = near_obstacles(box, bounds, own, near)
    apart = ((bounds[:, 1] < box[0]) | (bounds[:, 0] > box[1])).any(axis=1)
    assert near[:count].tolist() == np.flatnonzero(~(apart | own)).tolist()
    assert 0 < count < 50 and (0 in near[:count]) != own[0]


def test_largest_magnitude_is_numpys_and_keeps_a_nan():
    """The strain probe's max |U_i| equals numpy's exactly (a max rounds nothing), and a NaN anywhere (a diverged
    sole) stays NaN, as np.abs(U).max() gives it."""
    rng = np.random.default_rng(5)
    for n in (1, 2, 120, 121):
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 3, n)
        assert largest_magnitude(a) == np.abs(a).max()
        for i in {0, n // 2, n - 1}:
            b = a.copy()
            b[i] = np.nan
            assert np.isnan(largest_magnitude(b))
