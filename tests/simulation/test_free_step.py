"""A world of free bodies alone stepped in one compiled call (``FreeBodies.step``, ``_free_body_kernels.free_step``:
dynamics, collision, contacts, integration) against the readable stages it replaces (``FreeBodies.dynamics``,
``CollisionWorld.detect``, ``ContactStage``'s ``_layout``, ``_delassus``, ``_solve_groups``, ``scatter``, ``_apply``,
``FreeBodies.integrate``): the same kernels on the same arrays, so every step's state, body velocities, contacts,
forces, stats and kinetic energies must be the same to the last bit — N = 1, 5 and 40 cubes dropped apart, tilted
and spinning (flight, landing, sliding, rest), and a pile of cubes dropped onto each other (one group, box-box
contacts, the group past the kept factor's 48 rows, which the one call hands to ``ContactStage._rigid_step``)."""
import numpy as np
import pytest

import engine
from engine import plugins

GROUND = '<Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body>'


def cube(i, x, y, z, angle, spin):
    return (f'<Body name="c{i}"><Box size="0.1 0.1 0.1"/><Mass>{1 + 0.1 * (i % 3)}</Mass><Material>m</Material>'
            f'<Rotation angle="{angle}" x="1" y="1" z="0"/><Translation x="{x}" y="{y}" z="{z}"/>'
            f'<LinearVelocity>{0.05 * (i % 4)} 0.2 0</LinearVelocity><AngularVelocity>0 0 {spin}</AngularVelocity>'
            f'</Body>')


def apart(n):
    """n cubes 0.3 m apart, dropped from 5–9 cm, tilted and spinning."""
    return "".join(cube(i, 0.3 * (i % 8), 0.3 * (i // 8), 0.1 + 0.02 * (i % 3), 5 * (i % 4), i % 5)
                   for i in range(n))


def pile():
    """Six cubes dropped in two columns of three onto each other: one group of many contacts."""
    return "".join(cube(i, 0.09 * (i % 2), 0.01 * i, 0.06 + 0.105 * (i // 2), 2 * i, 0.5) for i in range(6))


def _pair(path, bodies):
    """Two simulations of the universe of ``bodies`` on a ground: the first steps in one call, the second by the
    readable stages."""
    path.write_text(f'<Universe><Material name="m" friction="0.6"/>{bodies}{GROUND}</Universe>')
    sims = [engine.Simulation(engine.load_universe(path)) for _ in range(2)]
    assert sims[0].engine.one_call
    sims[1].engine.one_call = sims[1].contact_stage.rigid_only = False
    return sims


def _assert_same_steps(fused, stages, steps):
    """Step both; every step the same state, velocities, contacts, forces, stats and energies, bit for bit.
    Returns the most contacts and group rows seen and the number of steps without contacts."""
    most = rows = free = 0
    a, b = fused.batch, stages.batch
    for k in range(steps):
        fused.step()
        stages.step()
        x, y = fused.contact_stage, stages.contact_stage
        for p, q in ((a.q, b.q), (a.v, b.v), (a.a, b.a), (a.a_free, b.a_free), (a.f_contact, b.f_contact),
                     (a.in_contact, b.in_contact), (a.kinetic, b.kinetic), (a.V_last, b.V_last),
                     (fused.bodies.V, stages.bodies.V), (fused.bodies.V_free, stages.bodies.V_free),
                     (fused.bodies.R, stages.bodies.R), (fused.bodies.p, stages.bodies.p), (x.forces, y.forces),
                     *zip(x.previous, y.previous)):
            np.testing.assert_array_equal(p, q, err_msg=f"step {k}")
        assert (x.contacts is None) == (y.contacts is None), k
        if x.contacts is not None:
            for name in ("point", "normal", "depth", "pair"):
                np.testing.assert_array_equal(getattr(x.contacts, name), getattr(y.contacts, name), err_msg=name)
        assert fused.solver_stats == stages.solver_stats, k
        most = max(most, len(x.contacts) if x.contacts is not None else 0)
        free += x.contacts is None
        rows = max([rows] + [g.rows for g in fused.solver_stats["groups"]])
    assert fused.contact_report() == stages.contact_report()
    return most, rows, free


@pytest.mark.parametrize("n", [1, 5, 40])
def test_cubes_apart_step_as_stage_by_stage(tmp_path, n):
    fused, stages = _pair(tmp_path / "apart.xml", apart(n))
    most, rows, free = _assert_same_steps(fused, stages, 500)
    assert free > 0 and most >= 4 * n and rows == 12            # a flight, then every cube on its 4 corners
    assert len(fused.solver_stats["groups"]) == n


def test_a_pile_steps_as_stage_by_stage(tmp_path, monkeypatch):
    fused, stages = _pair(tmp_path / "pile.xml", pile())
    stage, handed = fused.contact_stage, []
    rigid_step = stage._rigid_step
    monkeypatch.setattr(stage, "_rigid_step", lambda c, dt: handed.append(len(c)) or rigid_step(c, dt))
    most, rows, _ = _assert_same_steps(fused, stages, 500)
    assert rows >= 48 and most > 20                               # cubes on cubes: groups past the kept factor's rows
    assert handed and min(handed) >= 16                           # … handed to _rigid_step, which made room


def test_the_one_call_is_for_free_bodies_alone(tmp_path):
    """A robot in the world, a contact solver plugin or the dense Delassus method: the readable stages."""
    path = tmp_path / "robot.xml"
    path.write_text(f'<Universe><Material name="m"/>{apart(2)}{GROUND}<MultiBody name="arm">'
                    f'<File>{engine.__path__[0]}/../assets/robots/five_bar.xml</File></MultiBody></Universe>')
    assert not engine.Simulation(engine.load_universe(path)).engine.one_call
    path.write_text(f'<Universe><Settings><Solver delassus="dense"/></Settings><Material name="m"/>{apart(2)}'
                    f'{GROUND}</Universe>')
    assert not engine.Simulation(engine.load_universe(path)).engine.one_call


def test_a_warm_start_in_other_layouts_continues_as_the_state_itself(tmp_path):
    """``set_state`` of a state captured mid-run, then again with its warm start in other memory layouts
    (Fortran-ordered points and forces, an int32 pair index, as a file may give them): the one call, compiled for
    C-contiguous float64 / int64 warm starts (which ``set_state`` makes of them), continues the same, step for
    step, to the last bit."""
    fused, _ = _pair(tmp_path / "apart.xml", apart(5))
    fused.step(200)
    state = fused.state
    warm = dict(state.warm_start, pair=np.asarray(state.warm_start["pair"], np.int32),
                point=np.asfortranarray(state.warm_start["point"]), force=np.asfortranarray(state.warm_start["force"]))
    assert len(warm["pair"]) >= 20 and not warm["point"].flags.c_contiguous
    runs = []
    for start in (state, engine.State(state.t, state.step, state.q, state.v, warm)):
        fused.set_state(start)
        runs.append([])
        for _ in range(100):
            fused.step()
            runs[-1].append(np.concatenate([fused.batch.q.ravel(), fused.batch.v.ravel(),
                                            fused.contact_stage.forces.ravel()]))
    np.testing.assert_array_equal(runs[1], runs[0])


@plugins.register("test-sensor-raising-once")
class RaisingOnce:
    """Reads nothing; raises on its ``at``-th reading."""
    kind, stage = "sensor", "sense"
    signals = {}

    def __init__(self, multibody, target, at=0):
        self.at, self.calls, self.name = int(at), 0, "raising-once"

    def measure(self, sim):
        self.calls += 1
        if self.calls == self.at:
            raise KeyError("once")
        return {}


def test_a_fault_restores_the_warm_start_the_faulted_step_did_not_write(tmp_path):
    """The one call writes its contacts and forces into one of two slots in turn (``FreeBodies.step``): a step
    that faults after the call (here a sensor raising on step 201) has written the slot the last good state's warm
    start does not use, so the run restored to step 200 has the warm start of step 200 (that of a twin run that
    never faulted, captured by ``State.capture``) and continues as the twin set to that state, to the last bit."""
    bodies = apart(5)
    path = tmp_path / "sensed.xml"
    path.write_text(f'<Universe><Material name="m" friction="0.6"/>{bodies}{GROUND}'
                    f'<Sensor plugin="test-sensor-raising-once" target="c0" at="201"/></Universe>')
    faulted = engine.Simulation(engine.load_universe(path))
    twin, _ = _pair(tmp_path / "twin.xml", bodies)
    assert faulted.engine.one_call
    faulted.step(200)
    twin.step(200)
    state = twin.state
    with pytest.raises(engine.PluginError):
        faulted.step()
    assert faulted.step_count == 200 and len(state.warm_start["pair"]) >= 20
    for name, x in zip(("pair", "point", "force"), faulted.contact_stage.previous):
        np.testing.assert_array_equal(x, state.warm_start[name], err_msg=name)
    faulted.disable_plugin("test-sensor-raising-once")
    twin.set_state(state)
    runs = []
    for sim in (faulted, twin):
        runs.append([])
        for _ in range(100):
            sim.step()
            runs[-1].append(np.concatenate([sim.batch.q.ravel(), sim.batch.v.ravel(),
                                            sim.contact_stage.forces.ravel()]))
    np.testing.assert_array_equal(runs[0], runs[1])
