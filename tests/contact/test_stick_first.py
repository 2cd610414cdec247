"""The stick-first solve of a robot standing on soles (``_sole_kernels.stick_first``, ``SoleContacts.stick_first``):
its Woodbury solve against the assembled W solved densely, on a real sole's K_c with contacts at a permuted subset
of its nodes; the contacts that pull let go; a sliding contact refused; and in the simulation, the same forces and
sole displacements as the assembled path from the same state, and the assembled path untouched where it fails."""
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, load_universe
from engine.contact import _sole_kernels as SK
from engine.contact import soles as S
from engine.deformable import Material, box_mesh, build_sole

ROOT = Path(__file__).resolve().parents[2]
DT, MU = 1e-3, 0.9


@pytest.fixture(scope="module")
def sole():
    return build_sole(box_mesh(h=0.03), [Material(3e6, 0.4)])


def rotation(rng):
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    return Q * np.sign(np.diag(R))


def schur_stiffness(K_c, nodes):
    """(K_c⁻¹[s, s])⁻¹ written as the Schur complement K_ss − K_sn K_nn⁻¹ K_ns of K_c (the other nodes free)."""
    dofs = (3 * nodes[:, None] + np.arange(3)).ravel()
    rest = np.setdiff1d(np.arange(len(K_c)), dofs)
    K_ss, K_sn, K_nn = K_c[np.ix_(dofs, dofs)], K_c[np.ix_(dofs, rest)], K_c[np.ix_(rest, rest)]
    return K_ss - K_sn @ np.linalg.solve(K_nn, K_sn.T) if len(rest) else K_ss


def problem(sole, rng, nodes_per_sole, ratio):
    """Two soles (the same K_c): contacts at the given nodes, random frames, their rows shuffled in the group; a
    robot's δt X Ω Xᵀ of rank 12; the dense W; forces f with |f_t| = ratio · μ f_n, and u = −W f."""
    c = len(sole.contact_node)
    k = [len(n) for n in nodes_per_sole]
    n = 3 * sum(k)
    block_of = rng.permutation(sum(k))
    frames = [np.array([rotation(rng) for _ in range(m)]) for m in k]
    index = [np.arange(sum(k[:s]), sum(k[:s + 1])) for s in range(2)]
    contact_row = 3 * block_of
    D = np.zeros((n, n))
    for s in range(2):
        for i, (a, Fa) in enumerate(zip(nodes_per_sole[s], frames[s])):
            for j, (b, Fb) in enumerate(zip(nodes_per_sole[s], frames[s])):
                ra, rb = contact_row[index[s][i]], contact_row[index[s][j]]
                D[ra:ra + 3, rb:rb + 3] = Fa @ sole.K_c_inv[3 * a:3 * a + 3, 3 * b:3 * b + 3] @ Fb.T / DT
    X = rng.standard_normal((n, 12)) * 0.5
    L = rng.standard_normal((12, 12))
    Om = L @ L.T / 12 + 0.1 * np.eye(12)
    W = D + DT * X @ Om @ X.T
    f = np.zeros(n)
    for b in range(sum(k)):
        fn, angle = rng.uniform(1.0, 10.0), rng.uniform(0, 2 * np.pi)
        f[3 * b:3 * b + 3] = fn, ratio * MU * fn * np.cos(angle), ratio * MU * fn * np.sin(angle)
    return dict(u=-W @ f, X=X, Om=Om, contact_row=contact_row, index=tuple(index), frames=tuple(frames),
                node=tuple(np.asarray(nd, np.int64) for nd in nodes_per_sole), W=W, f=f, c=c)


def solve(sole, p, active=None):
    n = len(p["u"])
    active = active or tuple(np.ones(len(nd), bool) for nd in p["node"])
    f, stats = np.full(n, np.nan), np.full(7, np.nan)
    U, F = tuple(np.full(3 * p["c"], np.nan) for _ in range(2)), tuple(np.full((p["c"], 3), np.nan) for _ in range(2))
    G = tuple(schur_stiffness(sole.K_c, nd[on]) for nd, on in zip(p["node"], active))
    nb = n // 3
    code = SK.stick_first(p["u"], p["X"], p["Om"], DT, 0, p["contact_row"], p["index"], p["frames"], p["node"],
                          active, G, (sole.K_c_inv, sole.K_c_inv), np.arange(0, n + 1, 3), np.zeros(nb, np.int64),
                          np.full(nb, MU), 1e-6, f, stats, U, F)
    return code, f, stats, U, F


def test_the_woodbury_solve_equals_the_dense_solve_on_a_permuted_node_subset(sole):
    """Sole 1: every candidate node in order (G = K_c, one BLAS product); sole 2: 25 nodes, permuted (G the Schur
    complement). The forces equal W⁻¹(−u) = f to 1e-9, and U_c = K_c⁻¹ Pᵀ(Fᵀ f) on every node of each sole."""
    rng = np.random.default_rng(3)
    c = len(sole.contact_node)
    p = problem(sole, rng, [np.arange(c), rng.permutation(c)[:25]], ratio=0.5)
    code, f, stats, U, F = solve(sole, p)
    assert code == SK.KEPT and stats[3] == 1.0 and stats[1] <= 1e-6 * np.linalg.norm(f)
    np.testing.assert_allclose(f, p["f"], rtol=0, atol=1e-9 * np.abs(p["f"]).max())
    for s in range(2):
        nodes_force = np.zeros((c, 3))
        for i, a in enumerate(p["node"][s]):
            r = p["contact_row"][p["index"][s][i]]
            nodes_force[a] = p["frames"][s][i].T @ p["f"][r:r + 3]
        np.testing.assert_allclose(F[s], nodes_force, rtol=0, atol=1e-9 * np.abs(nodes_force).max())
        U_ref = sole.K_c_inv @ nodes_force.ravel()
        np.testing.assert_allclose(U[s], U_ref, rtol=0, atol=1e-9 * np.abs(U_ref).max())


def test_a_contact_outside_its_cone_is_refused_and_nothing_is_written(sole):
    """The sticking forces with |f_t| = 1.5 μ f_n: not a solution of the frictional problem; FAILED, and f, the
    stats, U_c and the node forces keep their NaN fill."""
    rng = np.random.default_rng(4)
    c = len(sole.contact_node)
    p = problem(sole, rng, [np.arange(c), np.arange(c)], ratio=1.5)
    code, f, stats, U, F = solve(sole, p)
    assert code == SK.FAILED
    assert np.isnan(f).all() and np.isnan(stats).all() and all(np.isnan(x).all() for x in U + F)


def test_contacts_that_pull_are_let_go_and_the_rest_solved_with_their_stiffness(sole):
    """Contacts 0..4 of sole 1 given f_n < 0 in the sticking solution: the first solve returns PULLING and clears
    exactly their flags (a pulling contact may hide no other here: the rest are loaded well inside their cones)."""
    rng = np.random.default_rng(5)
    c = len(sole.contact_node)
    p = problem(sole, rng, [np.arange(c), np.arange(c)], ratio=0.3)
    pull = p["contact_row"][p["index"][0][:5]]
    p["f"][pull] = -1.0
    p["u"] = -p["W"] @ p["f"]
    active = tuple(np.ones(len(nd), bool) for nd in p["node"])
    code = solve(sole, p, active)[0]
    assert code == SK.PULLING
    assert not active[0][:5].any() and active[0][5:].all() and active[1].all()


def test_the_soles_stiffness_of_a_node_subset_is_the_schur_complement_of_k_c(sole):
    """``SoleContacts._stiffness``: K_c itself (the same array) for every node in order; for a permuted subset,
    (K_c⁻¹[s, s])⁻¹ equals K_ss − K_sn K_nn⁻¹ K_ns to 1e-9 relative."""
    sim = Simulation(load_universe(ROOT / "scenes" / "talos_soles.xml"))
    soles = sim.contact_stage.soles
    K_c = soles.specs[0].sole.K_c
    c = len(soles.rest[0])
    assert soles._stiffness(0, np.arange(c)) is K_c
    nodes = np.random.default_rng(6).permutation(c)[:17]
    G = soles._stiffness(0, nodes)
    reference = schur_stiffness(K_c, nodes)
    np.testing.assert_allclose(G, reference, rtol=0, atol=1e-9 * np.abs(reference).max())


def spy_on_stick_first(monkeypatch):
    """Record what each ``SoleContacts.stick_first`` of the run returns (solved or not)."""
    solved, original = [], S.SoleContacts.stick_first

    def spy(self, *args):
        out = original(self, *args)
        solved.append(out is not None)
        return out

    monkeypatch.setattr(S.SoleContacts, "stick_first", spy)
    return solved


@pytest.mark.parametrize("scene, steps", [("talos_soles.xml", (150, 250, 350, 450)),
                                          ("drop_soles.xml", (240, 270, 290, 350))])
def test_from_the_same_state_the_stick_first_and_the_assembled_path_give_the_same_forces(scene, steps, monkeypatch):
    """Talos standing on soles (every node loaded) and after the drop (some nodes idle, let go): from the states at
    ``steps``, one step solved stick-first and one with the assembled W and the solver (which polishes the
    sticking set exactly) give the same contact wrenches and node displacements to 1e-9 relative."""
    solved = spy_on_stick_first(monkeypatch)
    sim = Simulation(load_universe(ROOT / "scenes" / scene))
    stage = stage_of(sim)
    for step in steps:
        sim.step(step - sim.step_count)
        state = sim.state
        solved.clear()
        sim.step()
        assert solved == [True]
        wrench = np.concatenate([run.f_contact.ravel() for run in sim.runs])
        U = np.concatenate(stage.soles.displacements())
        sim.set_state(state)
        stage.stick = False
        sim.step()
        stage.stick = True
        assert solved == [True]                                      # no second attempt
        np.testing.assert_allclose(np.concatenate([run.f_contact.ravel() for run in sim.runs]), wrench, rtol=0,
                                   atol=1e-9 * np.abs(wrench).max())
        np.testing.assert_allclose(np.concatenate(stage.soles.displacements()), U, rtol=0, atol=1e-9 * np.abs(U).max())


def test_where_the_stick_first_solve_fails_the_run_is_bit_for_bit_the_assembled_one(monkeypatch):
    """Talos landing on its soles: over steps 1 … 7 the sticking solutions pull or slip, so the assembled path
    solves them; a failed attempt writes nothing, and the run equals, bit for bit, one without the stick-first
    solve."""
    solved = spy_on_stick_first(monkeypatch)
    sim = Simulation(load_universe(ROOT / "scenes" / "talos_soles.xml"))
    stage = stage_of(sim)
    sim.step()
    state, runs = sim.state, []
    for stick in (True, False):
        sim.set_state(state)
        stage.stick = stick
        solved.clear()
        sim.step(7)
        runs.append((sim.runs[0].q.copy(), sim.runs[0].v.copy(), np.concatenate(stage.soles.displacements())))
        assert solved == ([False] * 7 if stick else [])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def stage_of(sim):
    return sim.contact_stage
