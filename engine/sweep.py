"""Parameter sweeps: a universe run over a grid of parameter values, each run in a worker process of a Dask cluster
(seed 000 §4: the thesis's sole study over E × ν; ``articula sweep``, docs/architecture.md).

    articula sweep scenes/drop_soles.xml --param "Sole.Material.E=1e6:1e7:10" --param "Sole.Material.nu=0.01:0.49:7"
                   --metric peak_torso_acc --duration 0.3 --workers 2 --out runs/soles

* A parameter is a universe path (``engine.model.overrides``: ``Sole.Material.E``, ``Material[floor].friction``,
  ``Settings.TimeStep``…) with values ``start:stop:count`` (evenly spaced, start ≤ stop) or ``v1,v2,…``; the
  grid is their Cartesian product, the first parameter varying slowest.
* Each run builds its Simulation in the worker from the universe file and its overrides (no GUI import), steps
  it for ``duration`` seconds and evaluates the metrics (``engine.metrics``, plugins of kind ``metric``). A run
  that faults, or a metric that raises, gives NaN for its metrics and its error, with the run's parameters, in
  the results; the sweep goes on.
* Dask (``dask.distributed``): a ``LocalCluster`` of ``workers`` single-threaded processes by default, or any
  scheduler address (a real cluster). Dask rather than Ray: a pure-Python dependency of a few MB that runs the
  same code on a laptop's processes and on an HPC cluster through ``dask-jobqueue`` (SLURM, PBS), with task
  retries and a nanny that restarts a worker that dies; Ray brings a 60 MB binary and its own object store for
  what is here a list of independent tasks of a few seconds. A task whose worker dies is run again (up to
  ``RETRIES`` times) on another one.
* Nothing is lost: every finished run is written at once to ``PREFIX.part/run00007.npz`` (under a temporary name,
  then renamed); a sweep started again with the same ``--out`` skips the runs already there; at the end the
  table goes to ``PREFIX.npz`` and ``PREFIX.csv`` (one row per run: the parameters, then the metrics).
"""
from __future__ import annotations

import itertools
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import ArticulaError, UniverseError

RETRIES = 3                  # runs of a task whose worker died, after the first
CONNECT_TIMEOUT = 10.0       # s to reach a scheduler address
# A worker's malloc: Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536, which makes glibc hand every freed large
# block back to the system; a contact solve allocates blocks of ~0.5 MB every step (Talos on FEM soles: W of
# 240 × 240), and each then costs fresh pages: runs 1.45× slower than in a plain process. Keep them.
WORKER_MALLOC = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": str(2 ** 30),
                 "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": str(2 ** 25)}


@dataclass(frozen=True)
class Parameter:
    """A universe path and its values."""

    path: str
    values: tuple


@dataclass
class SweepResult:
    """``names`` of the parameters, ``grid`` (runs, parameters) their values, ``metrics`` (runs, metrics) the
    results (NaN where a run failed), ``errors`` {run index: message}, ``wall`` seconds for the ``ran`` runs
    done now (the others were found on disk)."""

    names: tuple
    metric_names: tuple
    grid: np.ndarray
    metrics: np.ndarray
    errors: dict = field(default_factory=dict)
    wall: float = 0.0
    ran: int = 0


def parse_parameter(text: str) -> Parameter:
    """``PATH=start:stop:count`` or ``PATH=v1,v2,…`` (numbers without units); ValueError on anything else."""
    path, sep, spec = str(text).partition("=")
    path, spec = path.strip(), spec.strip()
    if not sep or not path or not spec:
        raise ValueError(f"a parameter is PATH=start:stop:count or PATH=v1,v2,… (got {text!r})")
    try:
        if ":" in spec:
            parts = spec.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), parts[2]
            if not count.strip().isdigit() or int(count) < 1:
                raise ValueError(f"the count of {path} must be a whole number >= 1 (got {count!r})")
            if stop < start:
                raise ValueError(f"the range of {path} goes down ({start:g} to {stop:g}): write it start:stop with "
                                 f"start <= stop")
            values = tuple(np.linspace(start, stop, int(count)).tolist())
        else:
            values = tuple(float(v) for v in spec.split(","))
    except ValueError as exc:
        if str(exc) and "could not convert" not in str(exc):
            raise
        raise ValueError(f"the values of {path} must be numbers in SI units without a unit, as start:stop:count "
                         f"or v1,v2,… (got {spec!r})") from None
    if not all(np.isfinite(values)):
        raise ValueError(f"the values of {path} must be finite (got {spec!r})")
    return Parameter(path, values)


def grid(parameters) -> list:
    """Every combination of the parameters' values, as {path: value} (the first parameter varying slowest)."""
    return [dict(zip([p.path for p in parameters], values))
            for values in itertools.product(*[p.values for p in parameters])]


def run_one(scene, overrides: dict, metrics, duration: float, trust_plugins: bool = False) -> dict:
    """One run in this process: {"metrics": [values], "error": None or the message, "wall": seconds}."""
    import warnings

    from engine import load_universe, plugins
    from engine.simulation import Simulation
    start = time.perf_counter()
    values, error = [float("nan")] * len(metrics), None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")               # a sweep's runs warn alike; the summary counts faults
            universe = load_universe(scene, trust_plugins, overrides)
            sim = Simulation(universe)
            observers = [plugins.get("metric", name)(sim) for name in metrics]
            for _ in range(int(round(duration / sim.dt))):
                sim.step()
                for m in observers:
                    m.observe(sim)
            values = [float(m.value()) for m in observers]
    except ArticulaError as exc:
        error = str(exc)
    except Exception as exc:                              # a metric's own fault: reported with the run
        error = f"{type(exc).__name__}: {exc}"
    return {"metrics": values, "error": error, "wall": time.perf_counter() - start}


class ResultStore:
    """The runs' results under ``prefix``.part/ as they arrive, and the final table (module docstring)."""

    def __init__(self, prefix):
        self.prefix = Path(prefix)
        self.part = self.prefix.parent / f"{self.prefix.name}.part"
        self.part.mkdir(parents=True, exist_ok=True)

    def path(self, index: int) -> Path:
        return self.part / f"run{index:05d}.npz"

    def done(self) -> set:
        return {int(p.stem[3:]) for p in self.part.glob("run*.npz")}

    def write(self, index: int, overrides: dict, result: dict):
        tmp = self.part / f".run{index:05d}.tmp.npz"
        np.savez(tmp, names=np.array(list(overrides), dtype=str), values=np.array(list(overrides.values()), float),
                 metrics=np.array(result["metrics"], float), error=np.array(result["error"] or ""),
                 wall=np.array(result["wall"]))
        os.replace(tmp, self.path(index))

    def read(self, index: int) -> dict:
        with np.load(self.path(index)) as d:
            return {"metrics": d["metrics"].tolist(), "error": str(d["error"]) or None, "wall": float(d["wall"])}

    def finish(self, result: SweepResult) -> tuple[Path, Path]:
        """PREFIX.npz and PREFIX.csv of the whole sweep."""
        npz, csv = self.prefix.with_name(self.prefix.name + ".npz"), self.prefix.with_name(self.prefix.name + ".csv")
        np.savez(npz, parameters=np.array(result.names, dtype=str), metric_names=np.array(result.metric_names, str),
                 grid=result.grid, metrics=result.metrics,
                 errors=np.array([result.errors.get(i, "") for i in range(len(result.grid))], dtype=str))
        header = ",".join(list(result.names) + list(result.metric_names) + ["error"])
        with open(csv, "w") as f:
            f.write(header + "\n")
            for i, (g, m) in enumerate(zip(result.grid, result.metrics)):
                error = result.errors.get(i, "").replace('"', "'")
                f.write(",".join(repr(float(x)) for x in list(g) + list(m)) + (f',"{error}"' if error else ",") + "\n")
        return npz, csv


def sweep(scene, parameters, metrics, duration: float, workers: int = 2, out=None, scheduler: str | None = None,
          trust_plugins: bool = False, progress=None) -> SweepResult:
    """Run the grid of ``parameters`` (``Parameter``s) on ``scene``; ``workers`` = 0 runs serially in this
    process. ``out``: the prefix of the files (module docstring); ``progress(done, total)`` is called as runs end.
    The paths, their values and the metrics are checked here first (an error names the file and line)."""
    from engine import load_universe, plugins
    scene = str(Path(scene).resolve())
    runs = grid(parameters)
    if not runs:
        raise ValueError("the sweep has no parameter")
    start = time.perf_counter()
    workers_ = None if workers == 0 and scheduler is None else Workers(workers, scheduler, scene, trust_plugins)
    try:
        load_universe(scene, trust_plugins, runs[0])      # paths and values, checked while the workers warm up
        load_universe(scene, trust_plugins, runs[-1])     # (and the scene's plugin code, its metrics, imported)
        for name in metrics:
            plugins.get("metric", name)
        return _sweep(scene, parameters, runs, metrics, duration, out, trust_plugins, progress, workers_, start)
    finally:
        if workers_ is not None:
            workers_.close()


def _sweep(scene, parameters, runs, metrics, duration, out, trust_plugins, progress, workers, start):
    store = ResultStore(out) if out else None
    results = {i: store.read(i) for i in store.done() if i < len(runs)} if store else {}
    todo = [i for i in range(len(runs)) if i not in results]

    def finished(i, result):
        results[i] = result
        if store:
            store.write(i, runs[i], result)
        if progress:
            progress(len(results), len(runs))

    if progress and results:
        progress(len(results), len(runs))
    if workers is None:
        for i in todo:
            finished(i, run_one(scene, runs[i], metrics, duration, trust_plugins))
    elif todo:
        workers.run(scene, runs, todo, metrics, duration, trust_plugins, finished)
    names = tuple(p.path for p in parameters)
    result = SweepResult(names, tuple(metrics), np.array([[r[n] for n in names] for r in runs], float),
                         np.array([results[i]["metrics"] for i in range(len(runs))], float).reshape(len(runs), -1),
                         {i: r["error"] for i, r in results.items() if r["error"]}, time.perf_counter() - start,
                         len(todo))
    if store:
        store.finish(result)
    return result


def warm_up(scene, trust_plugins):
    """A worker's first run compiles nothing but loads the kernels, the FEM and mesh caches and the libraries
    (~3 s): done once per worker while the main process checks the sweep."""
    import warnings

    from engine import load_universe
    from engine.simulation import Simulation
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Simulation(load_universe(scene, trust_plugins)).step(1)
    except ArticulaError:                                  # the runs themselves report what is wrong
        pass


class Workers:
    """The Dask cluster of a sweep: a ``LocalCluster`` of ``workers`` single-threaded processes or the
    ``scheduler`` at an address; each worker starts warming up (``warm_up``) as soon as it is there."""

    def __init__(self, workers, scheduler, scene, trust_plugins):
        import dask
        from dask.distributed import Client, LocalCluster
        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT:g}s")
            except (OSError, TimeoutError) as exc:
                raise UniverseError(f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT:g} s "
                                    f"({type(exc).__name__}: {exc})", value=scheduler) from None
        else:
            with dask.config.set(WORKER_MALLOC):
                self.cluster = LocalCluster(n_workers=max(1, int(workers)), threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
        self.warming = [self.client.submit(warm_up, scene, trust_plugins, workers=[address], pure=False,
                                           key=f"articula-warm-up-{k}-{os.getpid()}-{time.time_ns()}")
                        for k, address in enumerate(self.client.scheduler_info()["workers"])]

    def run(self, scene, runs, todo, metrics, duration, trust_plugins, finished):
        """The runs ``todo`` as tasks, each result handed to ``finished`` as it arrives."""
        from dask.distributed import as_completed
        futures = {self.client.submit(run_one, scene, runs[i], list(metrics), duration, trust_plugins, pure=False,
                                      retries=RETRIES, key=f"articula-run-{i}-{os.getpid()}-{time.time_ns()}"): i
                   for i in todo}
        for future in as_completed(futures):
            finished(futures[future], future.result())

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def progress_bar(done: int, total: int):
    """A progress line on stderr."""
    print(f"\r[{'#' * (25 * done // total):<25}] {done}/{total} runs", end="\n" if done == total else "",
          file=sys.stderr, flush=True)


def add_sweep_parser(subparsers):
    """Register ``articula sweep`` on an argparse ``subparsers``; the parsed namespace's ``run(args)`` does it."""
    p = subparsers.add_parser("sweep", help="run a scene over a grid of parameter values on a Dask cluster",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("scene", help="a universe XML")
    p.add_argument("--param", action="append", required=True, metavar="PATH=start:stop:count",
                   help="a universe path and its values (repeatable; engine/model/overrides.py)")
    p.add_argument("--metric", action="append", required=True, help="a metric of each run (repeatable): "
                   "peak_torso_acc, max_tilt, final_height, unconverged or a metric plugin")
    p.add_argument("--duration", type=float, default=1.0, help="simulated seconds per run (default 1)")
    p.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2; "
                   "0: serial, in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler to use instead (tcp://host:8786)")
    p.add_argument("--out", metavar="PREFIX", default="sweep", help="PREFIX.npz, PREFIX.csv and the runs as they "
                   "end in PREFIX.part/ (default 'sweep'); a sweep started again skips the runs found there")
    p.add_argument("--plot", metavar="PNG", help="write the first metric over the grid: a heat map for two "
                   "parameters, a curve for one")
    p.add_argument("--trust-scene-plugins", action="store_true", help="let the scene import plugin code")
    p.set_defaults(run=_run)
    return p


def _run(args) -> int:
    if not args.duration > 0:
        raise UniverseError("--duration must be > 0", value=args.duration)
    if args.workers < 0:
        raise UniverseError("--workers must be >= 0", value=args.workers)
    try:
        parameters = [parse_parameter(text) for text in args.param]
    except ValueError as exc:
        raise UniverseError(str(exc)) from None
    result = sweep(args.scene, parameters, args.metric, args.duration, args.workers, args.out, args.scheduler,
                   args.trust_scene_plugins, progress_bar)
    print(f"{len(result.grid)} runs, {result.ran} run now in {result.wall:.1f} s "
          f"({result.ran / max(result.wall, 1e-9):.2f} runs/s), {len(result.grid) - result.ran} found in {args.out}.part")
    print("  ".join(f"{n:>16s}" for n in result.names + result.metric_names))
    for g, m in zip(result.grid, result.metrics):
        print("  ".join(f"{x:16.6g}" for x in list(g) + list(m)))
    for i, error in sorted(result.errors.items()):
        values = ", ".join(f"{n}={x:g}" for n, x in zip(result.names, result.grid[i]))
        print(f"run {i} ({values}) failed: {error}", file=sys.stderr)
    print(f"wrote {args.out}.npz, {args.out}.csv")
    if args.plot:
        from app.sweep_plot import write_plot
        write_plot(args.plot, result)
        print(f"wrote {args.plot}")
    return 1 if result.errors else 0
