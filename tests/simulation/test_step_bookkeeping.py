"""What ``Simulation.step`` keeps besides the physics, now that the step hands references instead of copies: a
State is still a copy (writing into its warm start changes nothing of the run), and the stage timer still times
each step after a reset (its stage contexts hold the dicts ``reset`` clears)."""
import numpy as np
import pytest

import engine

CUBES = "".join(f'<Body name="c{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation x="{0.3 * i}" y="0" '
                f'z="0.06"/></Body>' for i in range(3))


def cubes(tmp_path):
    path = tmp_path / "cubes.xml"
    path.write_text(f'<Universe>{CUBES}<Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>')
    return engine.Simulation(engine.load_universe(path))


def test_writing_into_a_states_warm_start_changes_nothing_of_the_run(tmp_path):
    scribbled, twin = cubes(tmp_path), cubes(tmp_path)
    scribbled.step(100)
    twin.step(100)
    warm = scribbled.state.warm_start
    assert len(warm["pair"]) == 12                          # three cubes on their 4 corners: a warm start to spoil
    warm["point"] += 1.0
    warm["force"] *= 1e3
    for key, x in scribbled.engine.warm_start().items():    # the run's own warm start is untouched
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, twin.engine.warm_start()[key], err_msg=key)
    scribbled.step(50)
    twin.step(50)
    for a, b in zip(scribbled.state.q + scribbled.state.v, twin.state.q + twin.state.v):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(scribbled.contact_stage.forces, twin.contact_stage.forces)


def test_the_stage_times_after_a_reset_are_the_new_steps(tmp_path):
    sim = cubes(tmp_path)
    sim.step(20)
    sim.reset()
    assert sim.timer.steps == 0 and not any(sim.timer.total.values()) and not any(sim.timer.last.values())
    sim.step(5)
    last, total = sim.timer.last, sim.timer.total
    assert sim.timer.steps == 5
    assert 0 < last["solver"] < total["solver"]             # the last step's time, and five steps' sum
    assert sim.timer.summary()["total"] == pytest.approx(sum(total.values()) / 5, rel=1e-12)   # mean of the sums
