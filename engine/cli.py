"""Headless runner: ``articula run SCENE --duration 5 --out run.npz`` (also ``python main.py run ...``).

Prints a progress bar and a summary (simulated and wall time, real-time factor, per-stage breakdown), and writes
the logged time series (t, q, v, energy, contact forces) to ``.npz`` and ``.csv``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_SCENE = Path(__file__).resolve().parent.parent / "scenes" / "default.xml"


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
        root_tag = next(etree.iterparse(str(path), events=("start",)))[1].tag
    except etree.XMLSyntaxError as exc:
        raise UniverseError(f"malformed XML: {exc.msg}", str(path), exc.lineno) from None
    return universe_from_urdf(path) if root_tag == "robot" else load_universe(path, trust_plugins)


class Log:
    """Time series kept during a headless run, every ``every`` steps."""

    def __init__(self, sim, every):
        self.sim, self.every = sim, max(1, int(every))
        self.t, self.q, self.v, self.energy, self.contact_force = [], [], [], [], []

    def record(self):
        sim = self.sim
        if sim.step_count % self.every:
            return
        self.t.append(sim.time)
        self.q.append(np.concatenate([r.q for r in sim.runs]))
        self.v.append(np.concatenate([r.v for r in sim.runs]))
        self.energy.append(sim.energy())
        self.contact_force.append(float(np.linalg.norm(sim.contacts.force, axis=1).sum()))

    def columns(self):
        names = ["t", "kinetic_energy", "potential_energy", "contact_force_sum"]
        for run in self.sim.runs:
            names += [f"{run.instance.name}.q{i}" for i in range(run.model.nq)]
        for run in self.sim.runs:
            names += [f"{run.instance.name}.v{i}" for i in range(run.model.nv)]
        table = np.column_stack([np.array(self.t), np.array(self.energy).reshape(-1, 2),
                                 np.array(self.contact_force), np.array(self.q), np.array(self.v)])
        return names, table

    def save(self, out: Path):
        names, table = self.columns()
        np.savez_compressed(out.with_suffix(".npz"), columns=np.array(names), data=table,
                            t=np.array(self.t), q=np.array(self.q), v=np.array(self.v),
                            energy=np.array(self.energy), contact_force_sum=np.array(self.contact_force))
        np.savetxt(out.with_suffix(".csv"), table, delimiter=",", header=",".join(names), comments="")


def run(scene, duration=1.0, out=None, log_every=10, trust_plugins=False, quiet=False) -> int:
    from engine.interaction.devices import LockstepDevices
    from engine.simulation import Simulation
    universe = open_scene(scene, trust_plugins)
    sim = Simulation(universe)
    devices = LockstepDevices(sim)     # the scene's devices (e.g. a scripted replay), on simulated time
    steps = int(round(duration / sim.dt))
    log = Log(sim, log_every)
    log.record()
    start, shown = time.perf_counter(), -1
    live = not quiet and sys.stderr.isatty()
    for k in range(steps):
        devices.before_step()
        sim.step()
        log.record()
        percent = (100 * (k + 1)) // max(steps, 1)
        if live and percent != shown:
            shown = percent
            print(f"\r[{'#' * (percent // 4):<25}] {percent:3d}%  t = {sim.time:.3f} s", end="", file=sys.stderr,
                  flush=True)
    wall = time.perf_counter() - start
    devices.stop()
    if live:
        print(file=sys.stderr)
    print(summary(universe, sim, wall))
    if out:
        log.save(Path(out))
        print(f"wrote {Path(out).with_suffix('.npz')} and {Path(out).with_suffix('.csv')}")
    return 0


def summary(universe, sim, wall) -> str:
    stages = sim.timer.summary()
    rtf = sim.time / wall if wall > 0 else float("inf")
    lines = [f"scene      {universe.source}",
             f"simulated  {sim.time:.3f} s in {sim.step_count} steps of {sim.dt * 1e3:g} ms",
             f"wall time  {wall:.3f} s   real-time factor {rtf:.2f}",
             "per step   " + "  ".join(f"{k} {v * 1e6:.1f} us" for k, v in stages.items() if v > 0 or k == "total")]
    return "\n".join(lines)


def main(argv=None) -> int:
    from engine.errors import ArticulaError
    parser = argparse.ArgumentParser(prog="articula", description="Articula headless runner")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run a scene headless and log it")
    p.add_argument("scene", nargs="?", default=str(DEFAULT_SCENE))
    p.add_argument("--duration", type=float, default=1.0, help="simulated seconds (default 1)")
    p.add_argument("--out", help="write the logged time series to OUT.npz and OUT.csv")
    p.add_argument("--log-every", type=int, default=10, help="log one sample every N steps (default 10)")
    p.add_argument("--trust-scene-plugins", action="store_true", help="let the scene import plugin code")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if not args.duration > 0:
        parser.error(f"--duration must be > 0 (got {args.duration})")
    try:
        return run(args.scene, args.duration, args.out, args.log_every, args.trust_scene_plugins, args.quiet)
    except ArticulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
