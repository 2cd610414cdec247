"""Dynamics engines side by side (issue 15): one universe stepped by several engines in lockstep, and how far
they drift apart (``articula compare``, docs/architecture.md).

    articula compare scenes/default.xml --engines articula,pybullet --duration 5 --out runs/talos

* The universe is loaded once and each engine builds its Simulation from it, so all start from the same state
  with the same controllers (they come from the universe). From Python, ``compare`` also takes one universe per
  engine: the same engine on a perturbed scene, say.
* Every step, for each engine: the time, the position of the first body of each multibody (its base, world frame,
  m), the normal force of the contacts on each multibody (N), the total energy (kinetic + potential, J) and the
  wall time of the step (s). Row 0 is the initial state.
* An engine that faults (``SimulationError``) stops there with its rows kept; the others go on.
* Against the first engine (``Comparison.table()``): the largest and final distance between the bases |Δp|, the
  time |Δp| first exceeds 1 cm, the largest |ΔE|, the RMS of ΔF_n, and the median step time with its ratio to the
  first engine's. ``PREFIX.npz`` holds every series; ``PREFIX.png`` draws them (app/compare_plot.py).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import SimulationError, UniverseError, did_you_mean

PARTED = 0.01                # m: the |Δp| at which two engines count as parted


def known_engines() -> tuple:
    """The names ``engine.Simulation(universe, engine=name)`` accepts."""
    from engine import engines
    return tuple(engines.names())


def check_engines(names, unique: bool = False) -> tuple:
    """``names`` (a sequence, or one string "a,b") as a tuple; ValueError for an unknown name (with a
    did-you-mean and the known ones), fewer than two, or, when ``unique``, a name given twice."""
    names = tuple(n.strip() for n in (names.split(",") if isinstance(names, str) else names))
    known = known_engines()
    for name in names:
        if name not in known:
            raise ValueError(f"unknown engine {name!r}{did_you_mean(name, known)}; the engines are "
                             f"{', '.join(known)}")
    if len(names) < 2:
        raise ValueError(f"a comparison needs at least two engines, the first as the reference "
                         f"(got {','.join(names) or 'none'})")
    twice = sorted({n for n in names if names.count(n) > 1})
    if unique and twice:
        raise ValueError(f"engine {twice[0]!r} is given twice (the same engine on the same universe gives the same "
                         f"run; compare two universes from Python: engine.compare.compare)")
    return names


def normal_force(contacts, multibodies) -> np.ndarray:
    """(len(multibodies),) N: Σ f·n over the contacts with a body of the multibody on either side (its bodies
    are named "multibody/body"). f is the force on body a and n points from b to a (``ActiveContacts``), so f·n
    is the compressive normal force whichever side the multibody is on; a self-contact counts once."""
    fn = np.einsum("ni,ni->n", np.asarray(contacts.force, float).reshape(-1, 3),
                   np.asarray(contacts.normal, float).reshape(-1, 3))
    out = np.zeros(len(multibodies))
    for m, name in enumerate(multibodies):
        prefix = f"{name}/"
        ours = np.array([a.startswith(prefix) or b.startswith(prefix)
                         for a, b in zip(contacts.body_a, contacts.body_b)], dtype=bool).reshape(-1)
        out[m] = fn[ours].sum()
    return out


@dataclass
class Series:
    """One engine's run, rows 0 … n (row 0: the initial state): ``t`` (n+1,) s; ``base_p`` (n+1, multibodies, 3)
    the first body of each multibody, world frame, m; ``contact_force`` (n+1, multibodies) N (``normal_force``);
    ``energy`` (n+1,) J, kinetic + potential; ``step_time`` (n+1,) s, wall time of the step (NaN in row 0).
    ``fault``: the message of the fault that stopped it at step ``fault_step`` (None when it ran to the end)."""

    name: str
    label: str
    t: np.ndarray
    base_p: np.ndarray
    contact_force: np.ndarray
    energy: np.ndarray
    step_time: np.ndarray
    fault: str | None = None
    fault_step: int | None = None

    def median_step(self) -> float:
        """s; NaN before the first step."""
        return float(np.median(self.step_time[1:])) if len(self.t) > 1 else math.nan


class _Recorder:
    """Steps one engine's Simulation and fills its rows of a ``Series``."""

    def __init__(self, sim, multibodies, name, label, steps):
        self.sim, self.multibodies, self.rows = sim, multibodies, 0
        n, nm = steps + 1, len(multibodies)
        self.series = Series(name, label, np.zeros(n), np.zeros((n, nm, 3)), np.zeros((n, nm)), np.zeros(n),
                             np.full(n, math.nan))
        self.record(math.nan)

    def record(self, wall):
        s, sim, k = self.series, self.sim, self.rows
        s.t[k], s.step_time[k] = sim.time, wall
        for m in range(len(self.multibodies)):
            s.base_p[k, m] = sim.body_placement(m, 0)[1]
        s.contact_force[k] = normal_force(sim.contacts, self.multibodies)
        s.energy[k] = sum(sim.energy())
        self.rows += 1

    def advance(self):
        """One step, timed, then its row; a fault is kept in the series and ends this engine's run."""
        start = time.perf_counter()
        try:
            self.sim.step()
        except SimulationError as exc:
            self.series.fault, self.series.fault_step = str(exc), self.rows
            return
        self.record(time.perf_counter() - start)

    def done(self) -> Series:
        s, n = self.series, self.rows
        return Series(s.name, s.label, s.t[:n], s.base_p[:n], s.contact_force[:n], s.energy[:n], s.step_time[:n],
                      s.fault, s.fault_step)


@dataclass(frozen=True)
class Divergence:
    """An engine against the reference over the rows both have (up to ``until`` s): ``max_dp`` and ``final_dp``
    (m) of |Δp|, the largest distance between the two runs' bases over the multibodies; ``parted_at`` (s) the
    first time |Δp| > ``PARTED`` (None: never); ``max_dE`` (J) of |ΔE|; ``rms_dF`` (N) the RMS of ΔF_n over rows
    and multibodies; ``median_step`` (s) and ``step_ratio`` to the reference's."""

    label: str
    until: float
    max_dp: float
    final_dp: float
    parted_at: float | None
    max_dE: float
    rms_dF: float
    median_step: float
    step_ratio: float


def divergence(ref: Series, other: Series) -> Divergence:
    n = min(len(ref.t), len(other.t))
    dp = np.linalg.norm(other.base_p[:n] - ref.base_p[:n], axis=2).max(axis=1, initial=0.0)
    dF = other.contact_force[:n] - ref.contact_force[:n]
    parted = np.flatnonzero(dp > PARTED)
    median = other.median_step()
    return Divergence(other.label, float(ref.t[n - 1]), float(dp.max()), float(dp[-1]),
                      float(ref.t[parted[0]]) if len(parted) else None,
                      float(np.abs(other.energy[:n] - ref.energy[:n]).max()),
                      float(np.sqrt(np.mean(dF ** 2))) if dF.size else 0.0, median, median / ref.median_step())


@dataclass
class Comparison:
    """The ``series`` of each engine, in the order given (the first is the reference), on a universe of these
    ``multibodies``, stepped at ``dt`` s for up to ``steps`` steps."""

    series: list
    multibodies: tuple
    dt: float
    steps: int

    def divergences(self) -> list:
        """A ``Divergence`` per engine after the first."""
        return [divergence(self.series[0], s) for s in self.series[1:]]

    def table(self) -> str:
        """The divergences as a table, one row per engine, then a line per fault and per shortened comparison."""
        ref, width = self.series[0], max(8, *(len(s.label) for s in self.series))
        head = ("max |dp|", "final |dp|", "|dp| > 1 cm", "max |dE|", "RMS dF_n", "median step", "ratio")
        lines = [f"{'engine':<{width}}" + "".join(f"{h:>13}" for h in head),
                 " " * width + "".join(f"{u:>13}" for u in ("mm", "mm", "s", "J", "N", "us", "")),
                 f"{ref.label:<{width}}{'reference':>13}" + " " * 13 * 4 + f"{ref.median_step() * 1e6:13.1f}"
                 f"{1.0:13.2f}"]
        for d in self.divergences():
            parted = "never" if d.parted_at is None else f"{d.parted_at:.3f}"
            lines.append(f"{d.label:<{width}}{d.max_dp * 1e3:13.3f}{d.final_dp * 1e3:13.3f}{parted:>13}"
                         f"{d.max_dE:13.4g}{d.rms_dF:13.4g}{d.median_step * 1e6:13.1f}{d.step_ratio:13.2f}")
        for s in self.series:
            if s.fault is not None:
                lines.append(f"{s.label} faulted at step {s.fault_step} (its {len(s.t) - 1} steps before are "
                             f"kept): {s.fault}")
        lines += [f"{d.label} is compared up to t = {d.until:.3f} s (the rows both runs have)"
                  for d, s in zip(self.divergences(), self.series[1:]) if len(s.t) != len(ref.t)]
        return "\n".join(lines)

    def save(self, path):
        """Every series to ``path`` (.npz), under "<label>.t", "<label>.base_p", …, with "engines", "labels",
        "multibodies", "dt", "fault" and "fault_step" (-1: none) per engine, and the "table"; written under a
        temporary name, then renamed."""
        path = Path(path)
        arrays = {"engines": np.array([s.name for s in self.series], dtype=str),
                  "labels": np.array([s.label for s in self.series], dtype=str),
                  "multibodies": np.array(self.multibodies, dtype=str), "dt": np.array(self.dt),
                  "fault": np.array([s.fault or "" for s in self.series], dtype=str),
                  "fault_step": np.array([-1 if s.fault_step is None else s.fault_step for s in self.series]),
                  "table": np.array(self.table())}
        for s in self.series:
            for key in ("t", "base_p", "contact_force", "energy", "step_time"):
                arrays[f"{s.label}.{key}"] = getattr(s, key)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, path)


def labels(names) -> list:
    """The engines' names, numbered where one is given twice: articula_1, articula_2."""
    seen = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(f"{name}_{seen[name]}" if names.count(name) > 1 else name)
    return out


def compare(universe, engines, duration: float, stop=None, progress=None) -> Comparison:
    """Step ``engines`` (names, ``known_engines()``; one may appear twice) side by side for ``duration`` simulated
    seconds on ``universe``, or on a sequence of universes, one per engine (the same multibodies). ``stop()``
    true ends the run after the current step; ``progress(step, steps)`` follows it. ValueError for an unknown
    engine, fewer than two, a duration that is not > 0, or engines stepping at different time steps."""
    from engine.cli import MAX_STEPS
    from engine.model.universe import Universe
    engines = check_engines(engines)
    universes = [universe] * len(engines) if isinstance(universe, Universe) else list(universe)
    if len(universes) != len(engines):
        raise ValueError(f"{len(universes)} universes for {len(engines)} engines")
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"the duration must be a finite number of seconds > 0 (got {duration!r})")
    from engine.simulation import Simulation
    sims = [Simulation(u, engine=name) for u, name in zip(universes, engines)]
    if len({sim.dt for sim in sims}) > 1:
        raise ValueError(f"the engines step at different time steps ({', '.join(f'{s.dt:g}' for s in sims)} s)")
    dt = sims[0].dt
    steps = int(round(duration / dt))
    if steps > MAX_STEPS:
        raise ValueError(f"{duration:g} s at a time step of {dt:g} s is {steps:,} steps (more than {MAX_STEPS:,})")
    multibodies = tuple(mb.name for mb in universes[0].multibodies)
    runs = [_Recorder(sim, multibodies, name, label, steps)
            for sim, name, label in zip(sims, engines, labels(engines))]
    for k in range(steps):
        live = [r for r in runs if r.series.fault is None]
        if not live or (stop is not None and stop()):
            break
        for r in live:
            r.advance()
        if progress is not None:
            progress(k + 1, steps)
    return Comparison([r.done() for r in runs], multibodies, dt, steps)


# ---- the command line ---------------------------------------------------------------------------------------
def _engines_argument(text: str) -> tuple:
    try:
        return check_engines(text, unique=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _duration_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0 (got {text})")
    return value


def add_compare_parser(subparsers):
    """Register ``articula compare`` on an argparse ``subparsers``; the parsed namespace's ``run(args)`` does it."""
    p = subparsers.add_parser("compare", help="run a scene with several dynamics engines side by side",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("scene", help="a universe XML, robot XML or URDF")
    p.add_argument("--engines", type=_engines_argument, required=True, metavar="NAME,NAME[,...]",
                   help=f"the engines, the first as the reference (known: {', '.join(known_engines())})")
    p.add_argument("--duration", type=_duration_argument, default=1.0, help="simulated seconds (default 1)")
    p.add_argument("--out", metavar="PREFIX", default="compare", help="PREFIX.npz (every series) and PREFIX.png "
                   "(their plots); default 'compare'")
    p.add_argument("--trust-scene-plugins", action="store_true", help="let the scene import plugin code")
    p.set_defaults(run=_run)
    return p


def _progress(step: int, steps: int):
    if step % max(1, steps // 100) == 0 or step == steps:
        print(f"\r[{'#' * (25 * step // steps):<25}] {100 * step // steps:3d}%", end="\n" if step == steps else "",
              file=sys.stderr, flush=True)


def _run(args) -> int:
    from engine.cli import Stop, open_scene, report_warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in (DeprecationWarning, PendingDeprecationWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        universe = open_scene(args.scene, args.trust_scene_plugins)
        live = not args.quiet and sys.stderr.isatty()
        with Stop() as stop:
            try:
                result = compare(universe, args.engines, args.duration, lambda: stop.signal is not None,
                                 _progress if live else None)
            except ValueError as exc:
                raise UniverseError(str(exc), universe.source) from None
    report_warnings(caught, args.verbose, args.quiet)
    print(result.table())
    prefix = str(args.out).removesuffix(".npz").removesuffix(".png")
    npz, png = Path(prefix + ".npz"), Path(prefix + ".png")
    result.save(npz)
    from app.compare_plot import write_plot
    write_plot(png, result)
    print(f"wrote {npz} and {png}")
    if stop.signal:
        steps = max(len(s.t) for s in result.series) - 1
        print(f"stopped by {stop.signal.name} after {steps} steps (their rows are written)", file=sys.stderr)
        return 128 + int(stop.signal)
    return 1 if any(s.fault is not None for s in result.series) else 0
