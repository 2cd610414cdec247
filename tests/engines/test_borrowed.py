"""engine/_borrowed.py: uncounted views of the one-call kernels' arrays write to their owners' memory and leave
the owners' reference counts as they were."""
import sys
from collections import namedtuple

import numpy as np
from numba import njit

from engine._borrowed import borrowed

Pair = namedtuple("Pair", "points count")


@njit(cache=False)
def _scale(x, pair, factor):
    y, p = borrowed((x, pair))
    for i in range(y.shape[0]):
        y[i] *= factor
    p.points[1:] += p.count          # a slice of a borrowed array is borrowed too
    return y.sum() + p.points[0, 0]


def test_borrowed_views_write_to_their_owners_nested_in_named_tuples():
    x, points = np.arange(4.0), np.ones((3, 2))
    assert _scale(x, Pair(points, 2), 3.0) == 18.0 + 1.0
    np.testing.assert_array_equal(x, [0.0, 3.0, 6.0, 9.0])
    np.testing.assert_array_equal(points, [[1.0, 1.0], [3.0, 3.0], [3.0, 3.0]])


def test_borrowing_leaves_the_owners_reference_counts_unchanged():
    x, points = np.zeros(4), np.zeros((3, 2))
    pair = Pair(points, 0)
    _scale(x, pair, 1.0)
    before = sys.getrefcount(x), sys.getrefcount(points)
    for _ in range(1000):
        _scale(x, pair, 1.0)
    assert (sys.getrefcount(x), sys.getrefcount(points)) == before


def test_in_python_borrowed_is_the_identity():
    x = np.zeros(2)
    assert borrowed(x) is x
