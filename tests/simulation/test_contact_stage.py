"""The contact stage's kernels (engine/contact/_stepping_kernels.py) against the readable definitions: contact
frames, the maps X = ±C [1, −[p − o]×] and free velocities (problem.contact_block, rigid-body kinematics), Λ
assembled per multibody against the dense J M⁻¹ Jᵀ, closure rows against problem.closure_blocks, collision
groups against a graph search, warm-start matching."""
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import engine
from engine.contact import _group_delassus_kernels as D
from engine.contact import _stepping_kernels as K
from engine.contact.delassus import delassus, workspace
from engine.contact.frames import contact_frames
from engine.contact.groups import collision_groups, unassembled
from engine.contact.problem import closure_blocks, closure_rows, contact_block
from engine.contact.closures import Closures, WorldBodies
from engine.dynamics import aba
from engine.dynamics.integrators import random_configuration
from engine.model.model import Closure
from engine.model.universe_xml import load_universe
from engine.simulation import Simulation

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(5)


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def test_contact_frames_are_right_handed_and_follow_the_normal():
    n = RNG.normal(size=(50, 3))
    n[:3] = np.eye(3)                                   # axis-aligned normals (ties in the least-aligned axis)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    for ni, Ci in zip(n, contact_frames(n)):
        np.testing.assert_allclose(Ci @ Ci.T, np.eye(3), atol=1e-15)
        assert np.linalg.det(Ci) == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_array_equal(Ci[0], ni)
        e = np.eye(3)[np.argmin(np.abs(ni))]            # the world axis least aligned with n
        t1 = np.cross(ni, e) / np.linalg.norm(np.cross(ni, e))
        np.testing.assert_allclose(Ci[1], t1, atol=1e-15)


def _contacts(nc, rng):
    """nc random contacts between random sides of a 2-multibody world (-1: a static object)."""
    pair_object = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])          # objects: bodies (0, 0), (0, 1), (1, 0), static
    object_multibody, object_body = np.array([0, 0, 1, -1]), np.array([0, 1, 0, 0])
    pair = np.sort(rng.integers(0, 4, nc))
    normal = rng.normal(size=(nc, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    return dict(point=rng.normal(size=(nc, 3)), normal=normal, depth=rng.uniform(-0.003, 0.003, nc), pair=pair,
                pair_object=pair_object, object_multibody=object_multibody, object_body=object_body,
                pair_mu=np.array([0.3, 0.5, 0.7, 0.9]), pair_restitution=np.array([0.0, 0.5, 0.0, 0.8]))


def test_contact_rows_are_the_maps_of_problem_contact_block_and_the_relative_velocity():
    """X[i, a] = C [1, −[p − o_a]×], X[i, b] = −C [1, −[p − o_b]×] (problem.contact_block); u = C (v_a(p) − v_b(p))
    at V_free with v(p) = v_o + ω × (p − o), minus (normal target, 0, 0)."""
    offset, nc, dt = np.array([0, 2, 3]), 40, 1e-3
    body_p = np.vstack([RNG.normal(size=(3, 3)), np.zeros((1, 3))])
    V, V_free = (np.vstack([RNG.normal(size=(3, 6)), np.zeros((1, 6))]) for _ in range(2))
    c = _contacts(nc, RNG)
    side, side_mb, C, X, u, target, mu = (np.empty((nc, 2), np.int64), np.empty((nc, 2), np.int64),
                                          np.empty((nc, 3, 3)), np.empty((nc, 2, 3, 6)), np.empty((nc, 3)),
                                          np.empty(nc), np.empty(nc))
    K.contact_rows(*c.values(), offset, body_p, V, V_free, dt, 0.2, 5e-4, side, side_mb, C, X, u, target, mu)
    global_body = {(0, 0): 0, (0, 1): 1, (1, 0): 2}
    for i in range(nc):
        objects = c["pair_object"][c["pair"][i]]
        sides = [(int(c["object_multibody"][o]), int(c["object_body"][o])) for o in objects]
        g = [global_body.get(s, 3) for s in sides]
        assert side[i].tolist() == g and side_mb[i].tolist() == [s[0] if gi < 3 else -1 for s, gi in zip(sides, g)]
        ref = contact_block(C[i], c["point"][i], *[(0, 0, body_p[gi]) if gi < 3 else None for gi in g], 0.0, 0.0)
        maps = [X for _, _, X in ref.bodies]
        np.testing.assert_allclose([X[i, s] for s in range(2) if g[s] < 3], maps, atol=1e-15)
        for s in range(2):
            if g[s] == 3:                                  # the static side has no map
                np.testing.assert_array_equal(X[i, s], np.zeros((3, 6)))

        def point_velocity(Vs, s):
            return Vs[g[s], :3] + np.cross(Vs[g[s], 3:], c["point"][i] - body_p[g[s]]) if g[s] < 3 else np.zeros(3)

        rel, rel_now = (C[i] @ (point_velocity(Vs, 0) - point_velocity(Vs, 1)) for Vs in (V_free, V))
        t = K.normal_target(c["depth"][i], rel_now[0], rel[0], c["pair_restitution"][c["pair"][i]], dt, 0.2, 5e-4)
        assert target[i] == pytest.approx(t, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(u[i], rel - [t, 0.0, 0.0], rtol=1e-12, atol=1e-12)
        assert mu[i] == c["pair_mu"][c["pair"][i]]


@pytest.mark.parametrize("method", [D.AUTO, D.THESIS, D.CHANG_KHATIB, D.TEST_FORCE])
def test_group_delassus_is_the_dense_reference(method):
    """W += δt Λ over a rotated, translated arm with contacts on two bodies of one branch, a self-contact and a
    static side: equal to δt J M⁻¹ Jᵀ by CRBA + Cholesky (``delassus(..., "dense")``) with X in base axes."""
    model = engine.load_model(ROOT / "scenes/AFResources/xml/robot_vrml.xml")
    q, data = random_configuration(model, RNG), model.create_data()
    aba(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    R_m, p_m = rotation([1.0, 2.0, 0.5], 0.7), np.array([0.3, -0.2, 0.5])
    bodies = WorldBodies([model.nbodies])
    K.world_bodies(data.ws, R_m, p_m, 0, bodies.R, bodies.p, bodies.V)
    static, nc, dt = model.nbodies, 5, 1e-3
    side = np.array([[2, static], [1, static], [2, 1], [0, static], [static, 2]])
    X = np.zeros((nc, 2, 3, 6))
    blocks = []
    for i in range(nc):
        normal = RNG.normal(size=3)
        C = contact_frames(normal / np.linalg.norm(normal))
        ref = contact_block(C[0], RNG.normal(size=3), *[(0, g, bodies.p[g]) if g < static else None
                                                        for g in side[i]], 0.0, 0.0)
        for s, g in enumerate(side[i]):
            if g < static:
                X[i, s] = ref.bodies[0 if s == 0 or side[i, 0] == static else 1][2]
        blocks.append([(b, Xb @ np.kron(np.eye(2), R_m)) for _, b, Xb in ref.bodies])
    W, n = np.zeros(9 * nc * nc), 3 * nc
    work = workspace(model, data)
    code = D.multibody_delassus(0, model.nbodies, R_m, np.arange(nc), side, X, 3 * np.arange(nc),
                                np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros((0, 2, 6, 6)),
                                np.zeros(0, np.int64), np.zeros(0, np.int64), data.model_pack.bi, data.model_pack.df,
                                data.ws, data.wd, work.Sw, work.Uw, work.y, work.F, work.A, work.Od, work.S6, work.path,
                                work.mark, work.union, method, W, 0, n, 0, dt)
    assert code == (D.CHANG_KHATIB if method == D.AUTO else method)    # contacts on forearm and hand: one branch
    reference = dt * delassus(model, model.create_data(), q, blocks, "dense")
    np.testing.assert_allclose(W.reshape(n, n), reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())


def test_free_rigid_bodies_take_the_closed_form_delassus_equal_to_the_dense_reference(tmp_path):
    """Three spinning boxes of different sizes and masses stacked on the ground: one group of free rigid bodies,
    whose W the stage builds in closed form (``rigid_delassus``: X R6 M⁻¹ R6ᵀ Xᵀ per shared body, its upper blocks
    mirrored); exactly symmetric and equal to the dense δt J M⁻¹ Jᵀ (CRBA + Cholesky) of every body at the same
    configuration."""
    boxes = "".join(f'<Body name="box{i}"><Box size="0.1 0.{i + 2} 0.1"/><Mass>{1 + i}</Mass>'
                    f'<Translation x="{0.01 * i}" y="0" z="{0.05 + 0.1 * i}"/>'
                    f'<AngularVelocity>0.{i} 0.3 0.1</AngularVelocity></Body>' for i in range(3))
    path = tmp_path / "stack.xml"
    path.write_text(f'<Universe>{boxes}<Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>')
    sim = Simulation(load_universe(path))
    sim.step(30)
    stage, dt = sim.contact_stage, sim.dt
    stage.world.update()
    a, ng = stage._layout(stage.world.detect(), dt)
    W = np.zeros(a["w_start"][ng])
    assert ng == 1 and stage._delassus(a, W, ng, dt) == ["rigid"] and a["contact_start"][1] == 12
    n = a["row_start"][1]
    np.testing.assert_array_equal(W.reshape(n, n), W.reshape(n, n).T)     # the mirrored blocks: exactly symmetric
    stage.method = "dense"
    reference = np.zeros_like(W)
    assert stage._delassus(a, reference, ng, dt) == ["dense"]
    np.testing.assert_allclose(W, reference, rtol=1e-12, atol=1e-14 * np.abs(reference).max())


def test_closure_rows_are_problem_closure_blocks():
    """Point and hinge closures at a configuration that does not close them: the kernel's maps and free velocity
    (zero body velocities: the drift bias) are those of the readable ``closure_blocks``."""
    model = engine.load_model(ROOT / "assets/robots/five_bar.xml")
    hinge = Closure("H", "hinge", 3, rotation([0.2, 1.0, 0.3], 0.4), np.array([0.4, 0.01, 0.0]), 1,
                    rotation([1.0, 0.0, 0.2], -0.3), np.array([0.1, 0.0, 0.05]))
    model = replace(model, closures=model.closures + (hinge,))
    R_m, p_m = rotation([0.0, 0.0, 1.0], 0.5), np.array([1.0, 2.0, 0.3])
    run = SimpleNamespace(model=model, instance=SimpleNamespace(R=R_m, p=p_m))
    cl, bodies, dt = Closures([run]), WorldBodies([model.nbodies]), 1e-3
    data = model.create_data()
    engine.forward_kinematics(model, data, random_configuration(model, RNG), np.zeros(model.nv))
    K.world_bodies(data.ws, R_m, p_m, 0, bodies.R, bodies.p, bodies.V)
    closure_rows(cl.mb, cl.body, cl.hinge, cl.R, cl.p, bodies.offset, cl.base_R, cl.base_p, bodies.R, bodies.p,
                   cl.still, dt, cl.side, cl.X, cl.u, cl.rows)
    reference = closure_blocks(0, model.closures, (R_m, p_m), bodies.R[:-1], bodies.p[:-1], dt)
    assert cl.rows.tolist() == [3, 5]
    for c, block in enumerate(reference):
        np.testing.assert_allclose(cl.u[c, :block.rows], block.bias, rtol=1e-12, atol=1e-12)
        by_body = {b: X for _, b, X in block.bodies}
        for s, b in enumerate(cl.body[c]):
            expected = by_body[b] if b >= 0 else np.zeros((block.rows, 6))
            np.testing.assert_allclose(cl.X[c, s, :block.rows], expected, atol=1e-14)


def _components(n, edges, seeds):
    """Reference: connected components (breadth-first search) holding an edge or a seed, by smallest member."""
    adjacent = {m: set() for m in range(n)}
    for a, b in edges:
        if a >= 0 and b >= 0:
            adjacent[a].add(b)
            adjacent[b].add(a)
    active = {m for e in edges for m in e if m >= 0} | set(seeds)
    groups, seen = [], set()
    for m in range(n):
        if m in seen:
            continue
        part, todo = set(), [m]
        while todo:
            x = todo.pop()
            if x not in part:
                part.add(x)
                todo += list(adjacent[x])
        seen |= part
        if part & active:
            groups.append(sorted(part))
    return groups


@pytest.mark.parametrize("seed", range(5))
def test_collision_groups_are_the_connected_components(seed):
    rng = np.random.default_rng(seed)
    n, nc = 12, 15
    side_mb = rng.integers(-1, n, size=(nc, 2))
    closure_mb = np.unique(rng.integers(0, n, 2))
    groups = collision_groups(n, side_mb[:, 0], side_mb[:, 1], closure_mb)
    expected = _components(n, side_mb.tolist(), closure_mb.tolist())
    assert [members for members, _ in groups] == expected
    for (_, contacts), part in zip(groups, expected):
        assert contacts.tolist() == [i for i, (a, b) in enumerate(side_mb) if (a if a >= 0 else b) in part]


def test_warm_start_takes_the_nearest_previous_contact_of_the_same_pair():
    prev_pair = np.array([0, 0, 2, 2, 2])
    prev_point = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0, 0], [0.004, 0, 0], [0.2, 0, 0]], float)
    prev_force = np.arange(15, dtype=float).reshape(5, 3)
    pair = np.array([0, 1, 2, 2])
    point = np.array([[0.098, 0, 0], [0, 0, 0], [0.003, 0, 0], [0.5, 0, 0]])
    f0 = np.full((4, 3), np.nan)
    K.warm_start(pair, point, prev_pair, prev_point, prev_force, 0.01, f0)
    np.testing.assert_array_equal(f0, [prev_force[1], [0, 0, 0], prev_force[3], [0, 0, 0]])



def test_warm_start_rows_fill_the_rows_of_the_groups_not_solved_only():
    """``warm_start_rows`` after a stick-first solve: group 0 (contacts 2, 0) solved, its rows untouched (NaN);
    group 1 (contacts 1, 3, at rows 6 and 9) takes the force of the nearest previous contact of its pair within
    the radius (contact 3: prev 3 at 1 mm, not prev 2 at 3 mm), or zero (contact 1: no previous contact of pair 1)."""
    prev_pair = np.array([0, 0, 2, 2, 2])
    prev_point = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0, 0], [0.004, 0, 0], [0.2, 0, 0]], float)
    prev_force = np.arange(15, dtype=float).reshape(5, 3)
    pair = np.array([0, 1, 2, 2])
    point = np.array([[0.098, 0, 0], [0, 0, 0], [0.5, 0, 0], [0.003, 0, 0]])
    contact_start, contacts = np.array([0, 2, 4]), np.array([2, 0, 1, 3])
    contact_row = np.array([3, 6, 0, 9])
    f = np.full(12, np.nan)
    K.warm_start_rows(2, np.array([0]), contact_start, contacts, contact_row, pair, point, prev_pair, prev_point,
                      prev_force, 0.01, f)
    assert np.isnan(f[:6]).all()
    np.testing.assert_array_equal(f[6:], np.r_[0.0, 0.0, 0.0, prev_force[3]])


def test_groups_solved_without_w_have_no_entries():
    """``unassembled``: groups of 6, 3 and 12 rows, the middle one solved stick-first: W offsets 0, 36, 36, 180
    (``group_layout`` wrote the first, 0)."""
    w_start = np.array([0, -1, -1, -1])
    unassembled(3, np.array([0, 6, 9, 21]), np.array([1]), w_start)
    np.testing.assert_array_equal(w_start, [0, 36, 36, 180])

def test_a_restored_state_continues_bit_for_bit(tmp_path):
    """State carries the solver's warm start: a leaning stack of three boxes, restored into a fresh Simulation
    after 40 steps, gives the same 30 next steps to the bit; without the warm start it differs by ~1e-7 (the
    solver tolerance)."""
    boxes = "".join(f'<Body name="box{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Material>m</Material>'
                    f'<Translation x="{0.01 * i}" y="0" z="{0.05 + 0.1 * i}"/></Body>' for i in range(3))
    path = tmp_path / "stack.xml"
    path.write_text(f"""<Universe><Settings/><Material name="m" friction="0.3"/>{boxes}
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body></Universe>""")
    universe = engine.load_universe(path)
    original = engine.Simulation(universe)
    original.step(40)
    saved = original.state
    original.step(30)
    for warm_start, equal in ((saved.warm_start, True), ({}, False)):
        assert continues_as(original, universe, saved, warm_start, 30) == equal


def test_states_saved_in_flight_and_at_rest_continue_bit_for_bit_on_a_simulation_in_the_other(tmp_path):
    """Two cubes dropped from 0.3 m land at t ≈ 0.2 s. A state saved in flight (step 50), set on the same
    Simulation once the cubes rest (step 450), gives the same steps through the landing to the bit as the first
    run; a state saved at rest, set on it in flight, the same steps after it. A contactless step forgets the
    contacts and warm start only where something set them since the last time (``ContactStage._forget``): a set
    state, its warm start (possibly with no contact) included, must count as such."""
    path = tmp_path / "drop.xml"
    path.write_text("""<Universe>""" + "".join(
        f'<Body name="cube{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation x="{0.3 * i}" y="0" z="0.3"/>'
        f'</Body>' for i in range(2)) + """<Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>""")
    sim = engine.Simulation(engine.load_universe(path))
    sim.step(50)
    in_flight = sim.state
    assert len(sim.contacts) == 0
    sim.step(400)
    at_rest = sim.state
    assert len(sim.contacts) == 8
    sim.step(300)
    end = sim.state
    for saved, steps, before in ((in_flight, 700, None), (at_rest, 300, in_flight)):
        if before is not None:                            # set on the Simulation in flight
            sim.set_state(before)
            sim.step(5)
        sim.set_state(saved)
        sim.step(steps)
        assert all(np.array_equal(a, b) for a, b in zip(sim.state.q + sim.state.v, end.q + end.v))


def continues_as(original, universe, saved, warm_start, steps) -> bool:
    """Whether a fresh Simulation of ``universe`` restored at ``saved`` with ``warm_start`` and stepped ``steps``
    times ends, to the bit, where ``original`` (stepped as many times after ``saved``) is."""
    restored = engine.Simulation(universe)
    restored.set_state(replace(saved, warm_start=warm_start))
    restored.step(steps)
    return all(np.array_equal(a, b) for a, b in zip(original.state.q + original.state.v,
                                                     restored.state.q + restored.state.v))
