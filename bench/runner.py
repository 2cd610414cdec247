"""What streaming the headless log to disk costs (issue 18 §3: at most 5 % of the run's wall time).

    python bench/runner.py [--scene scenes/default.xml] [--duration 2] [--repeat 5] [--log-every 10]

The same run of the scene, in one process, alternately with the log kept in memory (the former runner) and
streamed to disk in atomic chunks (engine/logstore.py, a chunk at least every second of wall time, then the
final .npz and .csv written by renaming). Each run restarts from the same state; the times are the stepping
loop plus writing the files (the in-memory run writes the same .npz and .csv at its end, as the former runner
did), medians over ``--repeat`` pairs, with the load average.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.cli import Log, open_scene  # noqa: E402
from engine.logstore import StreamedLog  # noqa: E402
from engine.simulation import Simulation  # noqa: E402


def one_run(sim, steps, every, prefix, streamed) -> float:
    sim.reset()
    log = Log(sim, every, StreamedLog(prefix, Log.columns(sim)) if streamed else None)
    start = time.perf_counter()
    log.record()
    for _ in range(steps):
        sim.step()
        log.record()
    if streamed:
        log.stream.close(log.arrays)
    else:                                   # the former runner: everything written at the end
        table = log.table()
        np.savez(f"{prefix}.npz", columns=np.array(log.names), data=table, **log.arrays(table))
        np.savetxt(f"{prefix}.csv", table, delimiter=",", header=",".join(log.names), comments="")
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(Path(__file__).resolve().parent.parent / "scenes" / "default.xml"))
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # the scene's mesh notices: not what is measured
        sim = Simulation(open_scene(args.scene))
    steps = int(round(args.duration / sim.dt))
    times = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        one_run(sim, 100, args.log_every, f"{tmp}/warm", True)            # compile and cache everything once
        for k in range(args.repeat):
            for streamed in ((False, True) if k % 2 == 0 else (True, False)):
                times[streamed].append(one_run(sim, steps, args.log_every, f"{tmp}/run{k}{streamed}", streamed))
    memory, streamed = np.median(times[False]), np.median(times[True])
    print(f"scene {args.scene}: {args.duration:g} s ({steps} steps), one row every {args.log_every} steps, "
          f"{args.repeat} pairs, load average {os.getloadavg()[0]:.2f}")
    runs = {k: np.round(np.array(v) * 1e3, 1) for k, v in times.items()}
    print(f"in memory, written at the end   {memory * 1e3:8.1f} ms  (runs {runs[False]})")
    print(f"streamed in chunks (logstore)   {streamed * 1e3:8.1f} ms  (runs {runs[True]})")
    print(f"streaming overhead              {100 * (streamed / memory - 1):+8.1f} %")


if __name__ == "__main__":
    main()
