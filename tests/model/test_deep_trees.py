"""Trees of any depth load and run (every walk over a tree is iterative), and every link's inertia is checked."""
import numpy as np
import pytest

import engine
from engine.errors import ModelWarning

N = 5000
INERTIA = '<inertia ixx="1e-4" iyy="1e-4" izz="1e-5" ixy="0" ixz="0" iyz="0"/>'


def chain_urdf(n):
    links = "".join(f'<link name="l{i}"><inertial><origin xyz="0 0 -0.05"/><mass value="0.1"/>{INERTIA}'
                    f'</inertial></link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i:05d}" type="continuous"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/></joint>' for i in range(n))
    return f'<robot name="chain">{links}{joints}</robot>'


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "chain.urdf"
    path.write_text(chain_urdf(N))
    return path


def test_a_chain_of_1200_links_satisfies_the_dynamics_identities(tmp_path):
    """Past the depth (~990) where the recursive walk failed. Pinocchio is no oracle here: its URDF parser
    (urdfdom) crashes at 5000 links, and its Data for a 1200-joint chain needs more than 24 GB. The algorithms are
    checked against Pinocchio on real robots (tests/dynamics); here, on the deep chain, M(q) a + h(q, v) = τ with
    h = rnea(q, v, 0) and M from crba, and aba inverts rnea."""
    n, path = 1200, tmp_path / "chain.urdf"
    path.write_text(chain_urdf(n))
    model = engine.load_model(path)
    assert model.nv == n and model.nbodies == n
    data = model.create_data()
    rng = np.random.default_rng(5)
    q, v, a = (rng.uniform(-0.1, 0.1, n) for _ in range(3))
    tau = engine.rnea(model, data, q, v, a)
    h = engine.rnea(model, data, q, v, np.zeros(n))
    M = engine.crba(model, data, q)
    np.testing.assert_allclose(M @ a + h, tau, rtol=0, atol=1e-10 * np.abs(tau).max())
    np.testing.assert_allclose(M @ engine.aba(model, data, q, v, tau), M @ a, rtol=0, atol=1e-9 * np.abs(tau).max())


def test_a_chain_of_5000_links_loads_and_steps_in_a_universe(chain, tmp_path):
    assert engine.load_model(chain).nv == N
    scene = tmp_path / "chain.xml"
    scene.write_text(f"<Universe><MultiBody name='chain'><File>{chain}</File><Joint name='j00000' value='0.3'/>"
                     f"</MultiBody></Universe>")
    sim = engine.Simulation(engine.load_universe(scene))
    sim.step(3)
    assert sim.step_count == 3 and np.all(np.isfinite(sim.runs[0].v)) and np.abs(sim.runs[0].v).max() > 0


def test_a_fixed_root_with_a_non_positive_definite_inertia_is_reported_with_its_line(tmp_path):
    path = tmp_path / "bad_root.urdf"
    path.write_text('<robot name="r">\n<link name="base"><inertial><mass value="1"/>'
                    '<inertia ixx="1" iyy="1" izz="-1" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
                    f'<link name="arm"><inertial><mass value="1"/>{INERTIA}</inertial></link>\n'
                    '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
                    '<axis xyz="0 0 1"/></joint></robot>')
    with pytest.warns(ModelWarning, match=rf"{path}:2: link 'base': inertia is not positive semi-definite"):
        engine.load_model(path)
