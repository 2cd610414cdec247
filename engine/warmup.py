"""Compile every numba kernel once (``python -m engine.warmup``), so the first window opens in seconds.

numba caches the machine code on disk (``cache=True``; engine/dynamics/_kernels/cache.py says where), so the
kernels compile once per machine and load in milliseconds afterwards. This runs each algorithm on small models
covering every joint type, rotors, closures, the collision narrowphases, each contact solver and touch mode's
proximity query.

Compilation is single-threaded and takes about 90 s of CPU on a cold machine, so the warm-up runs one worker
process per core (at most ``len(JOBS)``). The workers walk the same jobs in different orders: each starts on
kernels the others reach last, and a kernel that another worker has already compiled is loaded from the shared
disk cache instead of being compiled again (numba writes its cache files atomically). No partition of the
kernels has to be kept by hand. The parent shows which kernel was compiled last and how many are ready (a bar
rewritten in place on a terminal, a line every 3 s in a log).
Measured on the 2-core development machine, cold cache: 87–89 s in one process, 54 s in two (98 s of CPU:
the two workers compiled the same kernel for about 14 s in all) when the engine had half today's kernels; in
session 12, 108 s in two processes (228 kernels), 133 s (235) with the one-robot job, which saves a fresh clone's
first walk its 14 s of compilation (16.8 → 2.6 s for 50 steps of scenes/talos_walk.xml); in session 13, 147 s
(250).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
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


def scene(solver: str):
    """Step the warm-up universe with ``solver`` (every stage of the loop), then touch mode's scene query."""
    import tempfile

    from engine.interaction.scene_proximity import SceneProximity
    from engine.model.universe_xml import load_universe
    from engine.simulation import Simulation
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"warmup_{solver}.xml"
        closed_chain = FIVE_BAR.format(root=ROOT) if solver != "lemke" else ""  # Lemke: unilateral only
        path.write_text(WARMUP_SCENE.format(root=ROOT, solver=solver, closed_chain=closed_chain))
        sim = Simulation(load_universe(path))
        sim.step(20)
    snapshot = sim.snapshot()
    SceneProximity(sim.universe, lambda: (snapshot.body_R, snapshot.body_p))(np.zeros(3))


def dynamics():
    """The dynamics algorithms and every free-motion integrator on the arm."""
    import engine
    from engine.dynamics import crba, frame_jacobian, rnea
    from engine.dynamics.integrators import STEPPERS
    model = engine.load_model(ROOT / "scenes/AFResources/xml/robot_vrml.xml")
    data, q, v = model.create_data(), engine.neutral(model), np.zeros(model.nv)
    rnea(model, data, q, v, v)
    crba(model, data, q)
    engine.aba(model, data, q, v, v)
    frame_jacobian(model, data, q, 0)
    gravity, f_ext = np.array([0.0, 0.0, -9.81]), np.zeros((model.nbodies, 6))
    for step in STEPPERS.values():
        step(model, data, q, v, v, 1e-3, f_ext, gravity)


def solvers():
    """The contact stage's solve of its groups (``_stepping_kernels.solve_groups``, whose chain of kernels —
    Newton, the interior-point and proximal attempts — is the warm-up's longest: the job a worker starts with),
    then the contact solvers through their public functions (a small frictional problem and its LCP)."""
    from engine.contact import _stepping_kernels as K
    from engine.contact import gauss_seidel, lemke
    from engine.contact._kernels import CONTACT
    from engine.contact._linalg_kernels import no_keep
    rng = np.random.default_rng(0)
    J = rng.standard_normal((6, 6))
    W, v_free, mu = J @ J.T + np.eye(6), -rng.random(6), np.full(2, 0.5)
    for solver in (K.NONSMOOTH_NEWTON, K.GAUSS_SEIDEL_NEWTON):      # one group of two contacts, the stage's types
        K.solve_groups(W.ravel(), np.array([0, 36]), v_free, np.zeros(6), np.array([0, 6]), np.array([0, 2]),
                       np.array([0, 3, 6]), np.full(2, CONTACT), mu, solver, 1e-6, 100, np.zeros((1, 7)), no_keep(),
                       np.full((6, 1), -1), np.zeros((6, 1, 1)), np.zeros(1, np.int64))
    for newton in (True, False):
        gauss_seidel(W, v_free, mu, newton=newton)
    lemke(W, v_free)


SOLE_BLOCK = """<robot name="block"><link name="block">
  <inertial><mass value="10"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
</robot>"""
SOLE_SCENE = """<Universe>
  <MultiBody name="b"><File>block.urdf</File><FloatingBase>true</FloatingBase><Translation z="0.045"/>
    <Sole link="block" size="0.22 0.13 0.02" h="0.03"><Translation z="-0.025"/><Material E="3e6" nu="0.4"/></Sole>
  </MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  <Body name="grain"><Sphere radius="0.01" xyz="0 0 0.001"/><Mass>0</Mass></Body>
  <Body name="terrain"><File>{root}/assets/terrain/bumpy.obj</File><Mass>0</Mass><Translation z="-0.0065"/></Body>
</Universe>"""


def soles():
    """A block standing on a deformable sole, a grain and a terrain (the sole kernels, LAPACK's factorisations)."""
    import tempfile

    from engine.model.universe_xml import load_universe
    from engine.simulation import Simulation
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "block.urdf").write_text(SOLE_BLOCK)
        (Path(tmp) / "soles.xml").write_text(SOLE_SCENE.format(root=ROOT))
        Simulation(load_universe(Path(tmp) / "soles.xml")).step(20)


def free_bodies():
    """A world of free bodies alone (a box and a ball on the ground): its one-call step
    (engines/_free_body_kernels.free_step)."""
    import tempfile

    from engine.model.universe_xml import load_universe
    from engine.simulation import Simulation
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "free_bodies.xml"
        path.write_text('<Universe><Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation z="0.1"/>'
                        '</Body><Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="1" z="0.1"/>'
                        '</Body><Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>')
        Simulation(load_universe(path)).step(20)


def one_robot():
    """One robot alone on the ground, walking (scenes/talos_walk.xml, 20 steps): the one-call stages of a single
    articulated multibody (``_tree_kernels``: dynamics, contacts, integration) and the walking controller's; then
    the default scene (5 steps) for its stance controller's kernel."""
    import warnings

    from engine.model.universe_xml import load_universe
    from engine.simulation import Simulation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # the URDF's mimic joints, the meshes' convex hulls
        Simulation(load_universe(ROOT / "scenes/talos_walk.xml")).step(20)
        Simulation(load_universe(ROOT / "scenes/default.xml")).step(5)


JOBS = {"gauss-seidel-newton": lambda: scene("gauss-seidel-newton"), "gauss-seidel": lambda: scene("gauss-seidel"),
        "nonsmooth-newton": lambda: scene("nonsmooth-newton"), "lemke": lambda: scene("lemke"), "soles": soles,
        "free bodies": free_bodies, "one robot": one_robot, "dynamics": dynamics, "solvers": solvers}


def _orders(workers: int) -> list:
    """Worker 0 walks the jobs forwards (the scenes: collision first), the others backwards from staggered starts
    (the solvers and the dynamics first), so that they meet on kernels already in the cache."""
    names = list(JOBS)
    return [names] + [names[::-1][k - 1:] + names[::-1][:k - 1] for k in range(1, workers)]


def _engine_kernels() -> dict:
    """Every numba dispatcher of the engine package, by qualified name (imports every engine module)."""
    import importlib
    import pkgutil

    import engine
    from numba.core.registry import CPUDispatcher
    found = {}
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        if info.name.endswith(("__main__", ".warmup", ".cli")):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == info.name:
                found[f"{info.name}.{obj.py_func.__qualname__}"] = obj
    return found


def _worker(order, events):
    """Run the jobs in ``order``, reporting (kind, name, seconds) for each kernel compiled and each job done."""
    from numba.core import event

    class Compiled(event.Listener):
        def __init__(self):
            self.started = {}

        def on_start(self, ev):
            self.started[id(ev.data["dispatcher"])] = time.perf_counter()

        def on_end(self, ev):
            func = ev.data["dispatcher"].py_func
            if (func.__module__ or "").startswith("engine."):      # a StructRef's constructor has no module
                elapsed = time.perf_counter() - self.started.pop(id(ev.data["dispatcher"]), time.perf_counter())
                events.put(("kernel", f"{func.__module__}.{func.__qualname__}", elapsed))

    event.register("numba:compile", Compiled())
    for name in order:
        start = time.perf_counter()
        JOBS[name]()
        events.put(("job", name, time.perf_counter() - start))


def warm_up(workers: int | None = None, verbose: bool = True) -> float:
    """Compile (or load from the cache) every kernel a run needs, in ``workers`` processes (default: one per
    core, at most 2 per core's worth of jobs); returns the wall time. Raises RuntimeError if a worker fails."""
    start = time.perf_counter()
    total = len(_engine_kernels())
    workers = max(1, min(workers or os.cpu_count() or 1, len(JOBS)))
    context = mp.get_context("spawn")          # a clean interpreter: no inherited numba or Qt state
    events = context.Queue()
    procs = [context.Process(target=_worker, args=(order, events), daemon=True) for order in _orders(workers)]
    for p in procs:
        p.start()
    compiled, jobs_done, shown = set(), set(), 0.0
    live = verbose and sys.stdout.isatty()
    while any(p.is_alive() for p in procs) or not events.empty():
        try:
            kind, name, seconds = events.get(timeout=0.2)
        except queue.Empty:                    # nothing new: poll the workers again
            continue
        (compiled if kind == "kernel" else jobs_done).add(name)
        now = time.perf_counter() - start
        if verbose and kind == "kernel" and (live or now - shown > 3.0):
            shown = now
            done = min(len(compiled), total)
            bar = "#" * (25 * done // max(total, 1))
            line = (f"compiling numba kernels [{bar:<25}] {done:3d}/{total}  {now:5.1f} s  "
                    f"{name.removeprefix('engine.')} ({seconds:.1f} s)")
            print(f"\r{line[:120]:<120}" if live else line, end="" if live else "\n", flush=True)
    failed = [p.exitcode for p in procs if p.exitcode]
    if failed or jobs_done != set(JOBS):
        raise RuntimeError(f"numba warm-up failed in a worker (exit codes {failed}; jobs done {sorted(jobs_done)})")
    elapsed = time.perf_counter() - start
    if verbose:
        what = f"{len(compiled)} compiled" if compiled else "all loaded from the cache"
        clear = "\r" + " " * 120 + "\r" if live else ""
        print(f"{clear}numba kernels ready ({what}; {elapsed:.1f} s with {workers} "
              f"process{'es' if workers > 1 else ''})", flush=True)
    return elapsed


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="compile Articula's numba kernels into the on-disk cache")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    args = parser.parse_args()
    warm_up(args.workers)
