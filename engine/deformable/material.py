"""Linear isotropic elastic materials of a sole (seed 000 §3.8, thesis §4.3.2).

Small-strain Hooke's law (thesis eqs. 4.4–4.6):

    ε = ½(∇u + ∇ᵀu)                          (4.4)
    σ = 2μ ε + λ tr(ε) I₃                     (4.5)
    μ = E / (2(1 + ν)),  λ = E ν / ((1 + ν)(1 − 2ν))   (4.6)

E (Pa) must be finite and > 0, ν in (−1, 0.5): outside that range the elasticity tensor is not positive
definite (ν → 0.5 is incompressible, λ → ∞). The thesis's sole is E = 3 MPa, ν = 0.4 (a rubber, §4.4.1); its
two-layer sole uses E = 3 MPa / 1 MPa with ν = 0.25 (§4.6).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.errors import SoleError


@dataclass(frozen=True)
class Material:
    """Young's modulus ``E`` (Pa) and Poisson's ratio ``nu``; ``file``/``line`` locate it for errors."""

    E: float
    nu: float
    name: str = ""
    file: str | None = field(default=None, compare=False, repr=False)
    line: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        label = f"material {self.name!r}: " if self.name else "material: "
        E, nu = _number(self.E), _number(self.nu)
        if not (math.isfinite(E) and E > 0.0):
            raise SoleError(label + "Young's modulus E must be finite and > 0 (Pa)", self.file, self.line, self.E)
        if not -1.0 < nu < 0.5:
            raise SoleError(label + "Poisson's ratio nu must lie in (-1, 0.5)", self.file, self.line, self.nu)
        object.__setattr__(self, "E", E)
        object.__setattr__(self, "nu", nu)

    @property
    def mu(self) -> float:
        """Shear modulus μ = E / (2(1 + ν)) (eq. 4.6), Pa."""
        return self.E / (2.0 * (1.0 + self.nu))

    @property
    def lam(self) -> float:
        """First Lamé constant λ = E ν / ((1 + ν)(1 − 2ν)) (eq. 4.6), Pa."""
        return self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))


def _number(value) -> float:
    """``value`` as a float, NaN when it is not a real number (a string, None, a complex)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
