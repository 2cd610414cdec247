"""The CasADi export of RNEA (engine/optimise/symbolic.py) against Articula's own ``rnea`` (the numba kernels)
on random states of every shipped model, fixed and floating, and on random trees with geared rotors: the two
are the same equations written twice, so they agree to rounding (1e-12 relative)."""
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics.integrators import random_configuration
from engine.optimise.symbolic import point_position, rnea_function
from tests.dynamics.random_trees import random_model

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for p in (ROOT / "assets" / "robots").iterdir() if p.suffix in (".xml", ".urdf"))


def _agree(model, rng, states=4):
    data, F = model.create_data(), rnea_function(model)
    for _ in range(states):
        q = random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        expected = engine.rnea(model, data, q, v, a)
        got = np.asarray(F(q, v, a)).ravel()
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_symbolic_rnea_equals_rnea_on_every_shipped_model(path, floating):
    _agree(engine.load_model(path, floating_base=floating), np.random.default_rng(len(path.name)))


@pytest.mark.filterwarnings("ignore:.*mimic")
def test_symbolic_rnea_equals_rnea_on_talos():
    """Talos as scenes/default.xml loads it (free flyer, 38 dofs)."""
    talos = engine.load_universe(ROOT / "scenes" / "default.xml").multibody("talos").model
    _agree(talos, np.random.default_rng(7), states=2)


@pytest.mark.parametrize("seed", range(6))
def test_symbolic_rnea_equals_rnea_on_random_trees_with_rotors(seed):
    rng = np.random.default_rng(seed)
    _agree(random_model(rng, nv=12, rotors=True, floating=bool(seed % 2)), rng)


def test_symbolic_point_position_equals_forward_kinematics():
    """The 5-bar's O5 end point (S4's tip) from the export and from ``frame``-free forward kinematics."""
    model = engine.load_model(ROOT / "assets" / "robots" / "five_bar.xml")
    data, q = model.create_data(), np.array([0.3, -1.2, 0.4, -0.9])
    engine.forward_kinematics(model, data, q)
    body, tip = model.body_index("S4"), np.array([0.4, 0.0, 0.0])
    expected = data.oMi_R[body] @ tip + data.oMi_p[body]
    np.testing.assert_allclose(np.asarray(point_position(model, q, body, tip)).ravel(), expected, atol=1e-14)
