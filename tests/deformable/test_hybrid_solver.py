"""The compliance block in the unchanged contact solvers (thesis eqs. 4.21, 4.22, 4.32): a rigid block resting on a
sole settles where the static FEM says, solved by Gauss–Seidel/Newton (sticking) and Lemke (frictionless).

A hand-written loop stands in for the contact stage (the coupling is not wired yet): a body of mass M that
only translates, the sole glued under it, every candidate contact node on rigid ground, rows (n, t₁, t₂) =
(z, x, y). Per step: W = δt G M⁻¹ Gᵀ + P K_c⁻¹ Pᵀ/δt and V_free = G(V + g δt) − P U_cᵗ/δt, solved; then
V ← V + g δt + δt M⁻¹ Gᵀ f and U_c ← K_c⁻¹ Pᵀ f (4.22). The explicit deformation step is a backward-Euler
spring, so the oscillation decays and the block comes to rest on the deformed sole.

Oracle: the full FEM model pressed by a flat rigid punch. Sticking, every bottom node moves by the same
(a, b, δ) (the structured mesh is not mirror-symmetric, so a vertical push alone leaves a net lateral reaction
and the block drifts until it vanishes); without friction only u_z = δ is imposed. The reactions are linear in
the punch's displacement, which is set by the total force (0, 0, M g).
"""
import numpy as np
import pytest
from fem_helpers import node_dofs, solve_full

from engine.contact import solve
from engine.deformable import Material, box_mesh, build_sole, compliance, contact_weights, node_forces
from engine.model.universe import SolverSettings

MASS, G, DT = 2.0, 9.81, 1e-3
FRAME = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])   # rows n, t1, t2 in the sole frame
TIGHT = SolverSettings(tolerance=1e-13, max_iterations=20000)


@pytest.fixture(scope="module")
def sole(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARTICULA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return build_sole(box_mesh((0.06, 0.04, 0.02), h=0.01), [Material(3e6, 0.4)])


def _punch_reactions(sole, components, push):
    """Ground forces on the bottom nodes (k, 3), in rows (n, t1, t2), when every bottom node is displaced by
    ``push`` (m) along ``components`` (the others free) — the linear flat-punch oracle."""
    F = np.zeros((len(sole.mesh.node_position), 3))
    fixed = np.concatenate([node_dofs(sole.dirichlet_node), node_dofs(sole.contact_node, components)])
    prescribed = np.concatenate([np.zeros(3 * len(sole.dirichlet_node)),
                                 np.tile(np.asarray(push, float)[list(components)], len(sole.contact_node))])
    _, reaction = solve_full(sole.mesh, sole.materials, fixed, F, prescribed)
    return reaction[sole.contact_node] @ FRAME.T


def _bonded_punch(sole):
    """(reactions (k, 3), punch displacement (3,)) of the sticking punch carrying (0, 0, M g) in total."""
    unit = [_punch_reactions(sole, (0, 1, 2), e) for e in np.eye(3)]
    total = np.column_stack([r.sum(axis=0) @ FRAME for r in unit])        # world force per unit displacement
    push = np.linalg.solve(total, [0.0, 0.0, MASS * G])
    return sum(p * r for p, r in zip(push, unit)), push


def _settle(sole, solver, mu, steps):
    """Run the loop of the module docstring; returns the last contact forces (k, 3) and U_c (k, 3)."""
    n = len(sole.contact_node)
    triangle = [int(np.flatnonzero((sole.contact_triangle == s).any(axis=1))[0]) for s in range(n)]
    weights = contact_weights(sole, triangle, sole.mesh.node_position[sole.contact_node])
    frames = np.repeat(FRAME[None], n, axis=0)
    Gmap = np.vstack(frames)                                     # (3n, 3): every row sees the body translation
    delassus = DT * Gmap @ Gmap.T / MASS
    V, U_c, gravity = np.zeros(3), np.zeros(3 * n), np.array([0.0, 0.0, -G])
    for _ in range(steps):
        block, shift = compliance(sole, weights, DT, U_c, frames)
        v_free = V + DT * gravity
        f, stats = solve(solver, delassus + block, Gmap @ v_free + shift, mu, TIGHT)
        assert stats.converged, stats
        V = v_free + DT * Gmap.T @ f / MASS
        U_c = sole.contact_displacement(node_forces(weights, f, n, frames))
    np.testing.assert_allclose(V, 0.0, atol=1e-9)
    return f.reshape(-1, 3), U_c.reshape(-1, 3)


def test_sticking_block_settles_on_the_bonded_punch_solution(sole):
    reaction, push = _bonded_punch(sole)
    mu = 2.0 * np.max(np.linalg.norm(reaction[:, 1:], axis=1) / reaction[:, 0])   # every contact sticks
    f, U_c = _settle(sole, "gauss-seidel-newton", mu, steps=600)     # the lateral drift decays slowest
    np.testing.assert_allclose(f, reaction, rtol=0, atol=1e-6 * MASS * G / len(f))
    np.testing.assert_allclose(U_c, np.tile(push, (len(f), 1)), rtol=0, atol=1e-6 * push[2])


def test_frictionless_block_settles_on_the_sliding_punch_solution_with_lemke(sole):
    unit = _punch_reactions(sole, (2,), (0.0, 0.0, 1.0))
    assert (unit[:, 0] > 0).all()                                # the punch presses every node: all in contact
    depth = MASS * G / unit[:, 0].sum()
    f, U_c = _settle(sole, "lemke", 0.0, steps=300)
    np.testing.assert_allclose(f[:, 1:], 0.0, atol=0)
    np.testing.assert_allclose(f[:, 0], depth * unit[:, 0], rtol=0, atol=1e-6 * MASS * G / len(f))
    np.testing.assert_allclose(U_c[:, 2], depth, rtol=1e-6)
