"""Compile every numba kernel once (``python -m engine.warmup``), so the first window opens in seconds.

Numba caches the machine code next to the sources (``cache=True``); this runs each algorithm on small models
covering every joint type, rotors, closures, the collision narrowphases and each contact solver.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

FIVE_BAR = """<MultiBody name="five_bar"><File>{root}/assets/robots/five_bar.xml</File>
    <Translation x="3" y="0" z="1"/>
    <Joint name="j1" value="1.5707963267948966"/><Joint name="j2" value="-1.5707963267948966"/>
    <Joint name="j4" value="-1.5707963267948966"/></MultiBody>"""

WARMUP_SCENE = """<Universe>
  <Settings><Solver name="{solver}"/></Settings>
  <MultiBody name="arm"><File>{root}/scenes/AFResources/xml/robot_vrml.xml</File></MultiBody>
  {closed_chain}
  <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="1" y="0" z="0.1"/></Body>
  <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="1" y="1" z="0.1"/></Body>
  <Body name="pill"><Capsule radius="0.05" length="0.2"/><Mass>1</Mass><Inertia>0.01 0 0 0 0.01 0 0 0 0.01</Inertia>
    <Translation x="1" y="-1" z="0.2"/></Body>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Controller plugin="pd" target="arm" gravity_compensation="1"/>
</Universe>
"""


def warm_up(verbose: bool = True) -> float:
    import tempfile

    import engine
    from engine.dynamics import crba, frame_jacobian, rnea
    from engine.interaction.scene_proximity import SceneProximity
    from engine.model.universe_xml import load_universe
    from engine.simulation import Simulation
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for solver in ("nonsmooth-newton", "gauss-seidel-newton", "gauss-seidel", "lemke"):
            scene = Path(tmp) / f"warmup_{solver}.xml"
            closed_chain = FIVE_BAR.format(root=ROOT) if solver != "lemke" else ""  # Lemke: unilateral only
            scene.write_text(WARMUP_SCENE.format(root=ROOT, solver=solver, closed_chain=closed_chain))
            sim = Simulation(load_universe(scene))
            sim.step(20)
        snapshot = sim.snapshot()                     # touch mode's scene query
        SceneProximity(sim.universe, lambda: (snapshot.body_R, snapshot.body_p))(np.zeros(3))
    model = engine.load_model(ROOT / "scenes/AFResources/xml/robot_vrml.xml")
    data, q, v = model.create_data(), engine.neutral(model), np.zeros(model.nv)
    rnea(model, data, q, v, v)
    crba(model, data, q)
    frame_jacobian(model, data, q, 0)
    elapsed = time.perf_counter() - start
    if verbose:
        print(f"numba kernels ready ({elapsed:.1f} s)")
    return elapsed


if __name__ == "__main__":
    warm_up()
