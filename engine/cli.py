"""The command line: ``articula`` (also ``python main.py``).

    articula [-v | -q] [--version] [gui] [SCENE]      the window on SCENE (headless for 1 s without a display)
    articula run [SCENE] --duration 5 --out PREFIX    a headless run, logged to PREFIX.npz and PREFIX.csv
    articula compare SCENE --engines a,b              dynamics engines side by side (engine/compare.py)
    articula cache info | clear                       the on-disk caches (meshes' convex pieces, hulls, ...)
    articula optimise SCENE --problem P.toml -o OUT   an optimal trajectory (engine/optimise, docs/plugins.md)

A headless run prints a progress bar and a summary (simulated and wall time, real-time factor, per-stage
breakdown). Its log is streamed to disk (engine/logstore.py) at least every second, so nothing is lost to a
crash or a kill; SIGTERM and Ctrl-C end it after the current step with the files written; a fault of the
simulation (a plugin error, a divergence) writes what was logged and exits 2 with one line (``-v`` adds the
traceback). Warnings while loading are collapsed to one line per kind (``-v`` lists them, PREFIX.log keeps them).
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

DEFAULT_SCENE = Path(__file__).resolve().parent.parent / "scenes" / "default.xml"
COMMANDS = ("gui", "run", "cache", "avatar", "sweep", "compare", "optimise")
MAX_STEPS = 10_000_000          # a run longer than this needs --force (a time step far too small, say)


def open_scene(path, trust_plugins: bool = False):
    """A Universe from a universe XML, a robot XML or a URDF (dropped on a ground plane, floating base)."""
    from lxml import etree

    from engine.errors import UniverseError
    from engine.model.universe import universe_from_urdf
    from engine.model.universe_xml import load_universe
    path = Path(path)
    if not path.is_file():
        raise UniverseError("scene file not found", str(path))
    if path.suffix.lower() == ".urdf":
        return universe_from_urdf(path)
    try:
        with open(path, "rb") as f:
            root_tag = next(etree.iterparse(f, events=("start",)))[1].tag
    except etree.XMLSyntaxError as exc:
        raise UniverseError(f"malformed XML: {exc.msg}", str(path), exc.lineno) from None
    return universe_from_urdf(path) if root_tag == "robot" else load_universe(path, trust_plugins)


class Log:
    """The time series of a headless run, one row every ``every`` steps: t, kinetic and potential energy, the
    sum of contact force norms, then q and v of each multibody. Kept in memory, or streamed to disk through a
    ``StreamedLog`` when given one."""

    def __init__(self, sim, every, stream=None):
        self.sim, self.every, self.stream = sim, max(1, int(every)), stream
        self.names = self.columns(sim)
        self.row = np.zeros(len(self.names))
        self.rows = []

    @staticmethod
    def columns(sim) -> list:
        names = ["t", "kinetic_energy", "potential_energy", "contact_force_sum"]
        names += [f"{run.instance.name}.q{i}" for run in sim.runs for i in range(run.model.nq)]
        return names + [f"{run.instance.name}.v{i}" for run in sim.runs for i in range(run.model.nv)]

    def record(self):
        sim, row = self.sim, self.row
        if sim.step_count % self.every:
            return
        row[0] = sim.time
        row[1:3] = sim.energy()
        row[3] = float(np.linalg.norm(sim.contacts.force, axis=1).sum())
        k = 4
        for x in [r.q for r in sim.runs] + [r.v for r in sim.runs]:
            row[k:k + len(x)] = x
            k += len(x)
        if self.stream is not None:
            self.stream.append(row)
        else:
            self.rows.append(row.copy())

    def table(self) -> np.ndarray:
        return np.array(self.rows).reshape(-1, len(self.names))

    def arrays(self, table) -> dict:
        """The named arrays of PREFIX.npz besides the table: t, q, v (multibodies side by side), energy."""
        nq = sum(r.model.nq for r in self.sim.runs)
        return {"t": table[:, 0], "energy": table[:, 1:3], "contact_force_sum": table[:, 3],
                "q": table[:, 4:4 + nq], "v": table[:, 4 + nq:]}


class Stop:
    """SIGTERM and SIGINT (Ctrl-C) set ``signal`` instead of killing: the run stops after the current step."""

    def __init__(self):
        self.signal = None

    def __enter__(self):
        self.previous = {s: signal.signal(s, self._handle) for s in (signal.SIGTERM, signal.SIGINT)}
        return self

    def _handle(self, signum, frame):
        self.signal = signal.Signals(signum)

    def __exit__(self, *exc):
        for s, handler in self.previous.items():
            signal.signal(s, handler)


def run(scene, duration=1.0, out=None, log_every=10, trust_plugins=False, quiet=False, verbose=False,
        force=False, export_problems=None, engine=None) -> int:
    """A headless run of ``scene`` for ``duration`` simulated seconds; returns the exit code (0, 2 on a fault,
    128 + the signal number when stopped by SIGTERM or SIGINT). ``export_problems``: a directory that receives
    every contact problem solved (``engine.contact.conic``). ``engine``: the dynamics engine, if not the
    universe's."""
    from engine.errors import UniverseError
    from engine.interaction.devices import LockstepDevices
    from engine.logstore import StreamedLog, output_paths
    log_path = output_paths(out)[3] if out else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")                  # every one, counted; but not the libraries' notices
        for category in (DeprecationWarning, PendingDeprecationWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        try:
            universe, sim, steps = _load(scene, duration, trust_plugins, force, engine)
        finally:                                         # the warnings of a scene that fails to load too
            loaded = len(caught)
            report_warnings(caught, verbose, quiet, log_path)
        if not sim.runs and not quiet:
            print("note: the scene has no moving body; only time advances", file=sys.stderr)
        if export_problems:
            if sim.contact_stage is None:
                raise UniverseError(f"--export-problems writes Articula's contact problems; the "
                                    f"'{sim.engine.name}' engine solves its own", universe.source)
            sim.contact_stage.export_problems(export_problems)
        log = Log(sim, log_every, StreamedLog(out, Log.columns(sim)) if out else None)
        devices = LockstepDevices(sim)     # the scene's devices (e.g. a scripted replay), on simulated time
        with Stop() as stop:
            try:
                wall, fault = _loop(sim, devices, log, steps, stop, live=not quiet and sys.stderr.isatty())
            finally:
                devices.stop()
                written = _save(log, out)
        report_warnings(caught[loaded:], verbose, quiet, log_path)
    if log_path and caught:
        log_path.write_text("".join(f"{w.category.__name__}: {w.message}\n" for w in caught))
    print(summary(universe, sim, wall))
    if written:
        print(written)
    if export_problems:
        print(f"contact problems: {sim.contact_stage.export.written} written to {export_problems}")
    if fault is not None:
        print(f"error: {fault}", file=sys.stderr)
        if verbose:
            import traceback
            traceback.print_exception(fault)
        return 2
    if stop.signal:
        print(f"stopped by {stop.signal.name} at t = {sim.time:.3f} s after {sim.step_count} steps",
              file=sys.stderr)
        return 128 + int(stop.signal)
    return 0


def _load(scene, duration, trust_plugins, force, engine=None):
    """(universe, simulation, steps); a run of more than ``MAX_STEPS`` steps needs ``force`` (the universe
    loader already warned of a time step out of the usual range)."""
    from engine.errors import UniverseError
    from engine.simulation import Simulation
    universe = open_scene(scene, trust_plugins)
    sim = Simulation(universe, engine)
    steps = int(round(duration / sim.dt))
    if steps > MAX_STEPS and not force:
        raise UniverseError(f"{duration:g} s at a time step of {sim.dt:g} s is {steps:,} steps (more than "
                            f"{MAX_STEPS:,}); pass --force to run it anyway", universe.source, value=sim.dt)
    return universe, sim, steps


def _loop(sim, devices, log, steps, stop, live):
    """Step and log until ``steps`` or a signal; returns (wall time, the fault that stopped it or None)."""
    from engine.errors import ArticulaError
    start, shown = time.perf_counter(), -1
    log.record()
    try:
        for k in range(steps):
            if stop.signal:
                break
            devices.before_step()
            sim.step()
            log.record()
            percent = (100 * (k + 1)) // max(steps, 1)
            if live and percent != shown:
                shown = percent
                print(f"\r[{'#' * (percent // 4):<25}] {percent:3d}%  t = {sim.time:.3f} s", end="",
                      file=sys.stderr, flush=True)
    except ArticulaError as exc:
        return time.perf_counter() - start, exc
    finally:
        if live:
            print(file=sys.stderr)
    return time.perf_counter() - start, None


def _save(log, out) -> str:
    """Write the log's final files (PREFIX.npz, PREFIX.csv); what to print about them."""
    if not out:
        return ""
    table = log.stream.close(log.arrays)
    return f"wrote {log.stream.npz} and {log.stream.csv} ({len(table)} rows)"


def report_warnings(caught, verbose, quiet, log_path=None):
    """Warnings of the same kind collapse to one line with a count (``verbose``: every one); ``log_path`` is
    where the full list will be."""
    if quiet or not caught:
        return
    if verbose:
        for w in caught:
            print(f"warning: {w.category.__name__}: {w.message}", file=sys.stderr)
        return
    kinds = defaultdict(list)
    for w in caught:
        kinds[w.category.__name__].append(str(w.message))
    for kind, messages in kinds.items():
        where = f", {log_path} lists them" if log_path else ""
        more = f" (and {len(messages) - 1} more {kind}s; -v shows them{where})" if len(messages) > 1 else ""
        print(f"warning: {messages[0]}{more}", file=sys.stderr)


def summary(universe, sim, wall) -> str:
    stages = sim.timer.summary()
    rtf = sim.time / wall if wall > 0 else float("inf")
    lines = [f"scene      {universe.source}",
             f"simulated  {sim.time:.3f} s in {sim.step_count} steps of {sim.dt * 1e3:g} ms on the "
             f"{sim.engine.name} engine",
             f"wall time  {wall:.3f} s   real-time factor {rtf:.2f}",
             "per step   " + "  ".join(f"{k} {v * 1e6:.1f} us" for k, v in stages.items() if v > 0 or k == "total"),
             sim.contact_report().summary()]
    if sim.contact_stage is not None and sim.contact_stage.soles:
        lines.append(sim.contact_stage.soles.summary())
    return "\n".join(lines)


def cache(action) -> int:
    from engine.model import diskcache
    if action == "clear":
        files, size = diskcache.clear()
        print(f"removed {files} files ({size / 1e6:.1f} MB) from {diskcache.directory()}")
    else:
        files = [p for p in diskcache.directory().rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"{diskcache.directory()}: {len(files)} files, {size / 1e6:.1f} MB")
    return 0


def gui(scene, quiet=False, engine=None) -> int:
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        print("no display: running the scene headless for 1 s (use xvfb-run or a desktop for the GUI)",
              file=sys.stderr)
        return run(scene, 1.0, quiet=quiet, engine=engine)
    from app import run_gui
    return run_gui(scene, engine)


def version() -> str:
    from importlib import metadata
    try:
        return metadata.version("articula")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="articula", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Articula: an interactive simulator of poly-articulated bodies.\n"
                    "Without a command, opens the window on SCENE (the default scene when none is given).",
        epilog="examples:\n  articula scenes/amelif_example.xml\n  articula run scenes/default.xml --duration 5 "
               "--out runs/talos\n  articula compare scenes/default.xml --engines articula,pybullet --duration 5\n"
               "  articula cache clear\n"
               "  articula avatar --height 1.75 --mass 70 --sex m -o avatar.xml\n"
               "  articula optimise scenes/five_bar.xml --problem scenes/problems/five_bar_transfer.toml -o fb.npz")
    top.add_argument("--version", action="version", version=f"articula {version()}")
    level = top.add_mutually_exclusive_group()
    level.add_argument("-v", "--verbose", action="store_true", help="every warning, tracebacks on errors")
    level.add_argument("-q", "--quiet", action="store_true", help="errors and the run summary only")
    sub = top.add_subparsers(dest="command", metavar="{gui,run,sweep,compare,optimise,cache,avatar}")
    g = sub.add_parser("gui", help="open the window on a scene (the default when no command is given)")
    g.add_argument("scene", nargs="?", default=str(DEFAULT_SCENE), help="a universe XML, robot XML or URDF")
    g.add_argument("--engine", metavar="NAME", help="the dynamics engine (articula, pybullet), instead of the "
                   "universe's <Settings engine>")
    r = sub.add_parser("run", help="run a scene headless and log it")
    r.add_argument("scene", nargs="?", default=str(DEFAULT_SCENE), help="a universe XML, robot XML or URDF")
    r.add_argument("--duration", type=float, default=1.0, help="simulated seconds (default 1)")
    r.add_argument("--out", metavar="PREFIX", help="stream the log to PREFIX.npz and PREFIX.csv (and PREFIX.log "
                   "for the warnings); PREFIX is never cut at a dot")
    r.add_argument("--log-every", type=int, default=10, help="log one row every N steps (default 10)")
    r.add_argument("--trust-scene-plugins", action="store_true", help="let the scene import plugin code")
    r.add_argument("--force", action="store_true", help=f"run even if it takes more than {MAX_STEPS:,} steps")
    r.add_argument("--quiet", dest="run_quiet", action="store_true", help="the same as articula -q run")
    r.add_argument("--engine", metavar="NAME", help="the dynamics engine (articula, pybullet), instead of the "
                   "universe's <Settings engine>")
    r.add_argument("--export-problems", metavar="DIR", help="write every contact problem solved to DIR, one .npz per "
                   "collision group and step (engine/contact/conic.py)")
    c = sub.add_parser("cache", help="show or clear the on-disk caches")
    c.add_argument("action", choices=("info", "clear"))
    from engine.compare import add_compare_parser
    from engine.model.avatar import add_avatar_parser
    from engine.optimise.command import add_optimise_parser
    from engine.sweep import add_sweep_parser
    add_avatar_parser(sub)
    add_sweep_parser(sub)
    add_compare_parser(sub)
    add_optimise_parser(sub)
    return top


def _log_to_stderr(quiet):
    """The engine's progress lines (a mesh being decomposed, ...) on stderr; only its warnings when quiet."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("engine")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


def _is_scene(arg) -> bool:
    """A scene file rather than a command: an existing file, or a name ending as one."""
    return arg not in COMMANDS and (Path(arg).suffix.lower() in (".xml", ".urdf") or Path(arg).is_file())


def main(argv=None) -> int:
    from engine.errors import ArticulaError
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if a not in ("-v", "--verbose", "-q", "--quiet")), None)
    if first is None or _is_scene(first):                  # no command, or a scene alone: the window
        argv.insert(len(argv) if first is None else argv.index(first), "gui")
    p = parser()
    args = p.parse_args(argv)
    if getattr(args, "engine", None) is not None and args.command in ("run", "gui"):
        from engine import engines
        try:
            engines.engine_class(args.engine)
        except ValueError as exc:
            p.error(f"--engine: {exc}")
    if args.command == "run":
        if not args.duration > 0:
            p.error(f"--duration must be > 0 (got {args.duration})")
        if args.log_every < 1:
            p.error(f"--log-every must be >= 1 (got {args.log_every})")
    _log_to_stderr(quiet=args.quiet or getattr(args, "run_quiet", False))
    try:
        if args.command == "run":
            return run(args.scene, args.duration, args.out, args.log_every, args.trust_scene_plugins,
                       args.quiet or args.run_quiet, args.verbose, args.force, args.export_problems, args.engine)
        if args.command == "cache":
            return cache(args.action)
        if args.command in ("avatar", "sweep", "compare", "optimise"):
            return args.run(args)
        return gui(args.scene, args.quiet, args.engine)
    except ArticulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if args.verbose:
            raise
        return 2
    except KeyboardInterrupt:                      # Ctrl-C while loading (a run in progress stops by itself)
        print("interrupted", file=sys.stderr)
        return 128 + int(signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
