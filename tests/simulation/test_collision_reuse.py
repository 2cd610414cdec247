"""The contact stage reuses a hull pair's contacts while it barely moves (engine/collision/_reuse.py, reuse
distance slop/20); the kept contacts travel with the State's warm start."""
import numpy as np
import trimesh

import engine
from engine.collision._reuse import pack
from tests.simulation.test_contact_stage import continues_as

CUBE = """<robot name="cube"><link name="cube"><inertial><mass value="1"/>
  <inertia ixx="0.0017" iyy="0.0017" izz="0.0017" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><mesh filename="cube.stl"/></geometry></collision></link></robot>"""


def hull_cubes(tmp_path):
    """Two 0.1 m convex-hull cubes (STL) stacked on the ground, slightly offset: hull–plane and hull–hull pairs."""
    trimesh.creation.box((0.1, 0.1, 0.1)).export(tmp_path / "cube.stl")
    (tmp_path / "cube.urdf").write_text(CUBE)
    cubes = "".join(f'<MultiBody name="c{i}"><File>cube.urdf</File><FloatingBase>true</FloatingBase>'
                    f'<Translation x="{0.01 * i}" y="0" z="{0.05 + 0.1 * i}"/></MultiBody>' for i in range(2))
    path = tmp_path / "cubes.xml"
    path.write_text(f"""<Universe><Settings/>{cubes}
        <Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>""")
    return engine.load_universe(path)


def test_state_carries_the_kept_contacts(tmp_path):
    """Restored into a fresh Simulation after 40 steps, the stack's next 30 steps are the same to the bit; without
    the kept contacts (``kept_*`` left out of the warm start) the pairs are detected afresh and the run differs."""
    universe = hull_cubes(tmp_path)
    original = engine.Simulation(universe)
    original.step(40)
    saved = original.state
    assert len(saved.warm_start["kept_pair"]) == 2                  # both pairs in contact are kept
    original.step(30)
    without = {k: v for k, v in saved.warm_start.items() if not k.startswith("kept_")}
    for warm_start, equal in ((saved.warm_start, True), (without, False)):
        assert continues_as(original, universe, saved, warm_start, 30) == equal


def test_kept_is_packed_again_only_when_a_kept_contact_changed(tmp_path):
    """``CollisionWorld.kept`` copies the kept contacts only when the cache's version changed: at every step of the
    stack settling and resting, and after a restore to an earlier state, it equals a fresh pack of the cache
    (_reuse.pack), and while the stack rests it hands the same arrays again."""
    sim = engine.Simulation(hull_cubes(tmp_path))
    world = sim.contact_stage.world
    c = world.cache
    saved, same = None, 0
    for step in range(300):
        previous = world.kept()
        sim.step()
        if step == 100:
            saved = sim.state
        kept = world.kept()
        pairs, rows = np.empty(len(c.reach), np.int64), np.empty((len(c.reach), 14 + 9 * c.point_a.shape[1]))
        m = pack(c, pairs, rows, np.empty(1))
        np.testing.assert_array_equal(kept["kept_pair"], pairs[:m])
        np.testing.assert_array_equal(kept["kept_rows"], rows[:m])
        assert kept["kept_margin"] == c.margin
        same += kept["kept_rows"] is previous.get("kept_rows")
    assert len(kept["kept_pair"]) == 2 and same > 100
    sim.set_state(saved)
    kept = world.kept()
    np.testing.assert_array_equal(kept["kept_rows"], saved.warm_start["kept_rows"])
