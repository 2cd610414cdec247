"""Parameter sweeps on Dask (engine/sweep.py): runs per second of the same sweep done serially in this process and
on a local cluster of 1 and 2 worker processes, in one session. Goal (issue 15): ≥ 1.8× with 2 workers.

    python bench/sweep.py [--runs 8] [--duration 0.5]

The sweep: the thesis's drop on FEM soles (scenes/drop_soles.xml, Talos from 1 cm) over Young's modulus, peak
torso acceleration. A cluster's time includes starting it; the runs per second are over the whole sweep.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.sweep import parse_parameter, sweep   # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--duration", type=float, default=0.5)
    args = parser.parse_args()
    parameters = [parse_parameter(f"Sole.Material.E=1e6:1e7:{args.runs}")]
    scene = ROOT / "scenes" / "drop_soles.xml"
    print(f"sweep: {scene.name}, {args.runs} runs of {args.duration:g} s, metric peak_torso_acc; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    rows, reference = [], None
    for label, workers in (("serial (this process)", 0), ("1 worker", 1), ("2 workers", 2)):
        with tempfile.TemporaryDirectory() as folder:
            result = sweep(scene, parameters, ["peak_torso_acc"], args.duration, workers, Path(folder) / "sweep")
        reference = result.metrics if reference is None else reference
        same = "yes" if (result.metrics == reference).all() else "NO"
        rows.append((label, result.wall, args.runs / result.wall, same))
    one = rows[1][2]
    print(f"{'':24s} {'wall s':>8s} {'runs/s':>8s} {'x 1 worker':>11s} {'same numbers':>13s}")
    for label, wall, rate, same in rows:
        print(f"{label:24s} {wall:8.2f} {rate:8.3f} {rate / one:11.2f} {same:>13s}")


if __name__ == "__main__":
    main()
