"""Operation counts of the three Delassus-operator methods (seed 000 Tables 3.1–3.3, §3.2).

Symbols (seed 000 L1531–1537, L1757): m contact points, C contact bodies, s bodies between the base and the
contact bodies (summed over them: s = 2 × 6 for HRP-2's feet), d_ij joints between bodies i and j,
β_m = Σ_{i≤m} d_i0, α_C = Σ_{i<j≤C} d_ij, β_C = Σ_{i≤C} d_i0. Each count is split into multiplications /
divisions and additions / subtractions; the projection X_c Ω X_cᵀ on the upper triangle costs 27 m(m+1)/2.
"""
from __future__ import annotations

from typing import NamedTuple


class OpCount(NamedTuple):
    """Operations (×÷, +−) of one method."""

    muldiv: int
    addsub: int

    @property
    def total(self) -> int:
        return self.muldiv + self.addsub


def _triangle(m):
    return 27 * m * (m + 1) // 2


def initial_method_ops(m, s, beta_m) -> OpCount:
    """Initial (test-force) method, Table 3.1: ×÷ 144m + 39sm + 36β_m + 27m(m+1)/2,
    +− 99m + 36sm + 21β_m + 27m(m+1)/2."""
    return OpCount(144 * m + 39 * s * m + 36 * beta_m + _triangle(m),
                   99 * m + 36 * s * m + 21 * beta_m + _triangle(m))


def chang_khatib_ops(m, s, C, alpha_C) -> OpCount:
    """Chang–Khatib Ω recursion, Table 3.2: ×÷ 286 + 153s + 72α_C + 54Cm + 27m(m+1)/2,
    +− 235 + 179s + 66α_C + 54Cm + 27m(m+1)/2."""
    return OpCount(286 + 153 * s + 72 * alpha_C + 54 * C * m + _triangle(m),
                   235 + 179 * s + 66 * alpha_C + 54 * C * m + _triangle(m))


def thesis_method_ops(m, s, C, beta_C) -> OpCount:
    """The thesis's method (6 unit wrenches per contact body), Table 3.3: ×÷ 252C + 78Cs + 72β_C + 54Cm +
    27m(m+1)/2, +− 180C + 72Cs + 42β_C + 54Cm + 27m(m+1)/2."""
    return OpCount(252 * C + 78 * C * s + 72 * beta_C + 54 * C * m + _triangle(m),
                   180 * C + 72 * C * s + 42 * beta_C + 54 * C * m + _triangle(m))


def cheapest_method(m, s, C, beta_m, alpha_C, beta_C) -> str:
    """The method of fewest operations: "test-force", "chang-khatib" or "thesis" (ties go to the later one)."""
    totals = {"test-force": initial_method_ops(m, s, beta_m).total,
              "chang-khatib": chang_khatib_ops(m, s, C, alpha_C).total,
              "thesis": thesis_method_ops(m, s, C, beta_C).total}
    return min(reversed(totals), key=totals.get)
