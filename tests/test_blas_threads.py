"""Runs are reproducible to the last bit: threaded OpenBLAS is not (its threads split sums differently from call
to call: the walk on flexible ankles, four runs at once, ended 0.18 apart in q after 1.5 s), so ``import engine``
limits BLAS to one thread, even in a script that imported numpy first (engine/__init__.py)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import numpy, threadpoolctl
def blas_threads():
    return max(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")
before = blas_threads()
import engine
print(before, blas_threads())
"""


def test_engine_holds_blas_to_one_thread_when_numpy_was_imported_first():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    before, after = int(out[0]), int(out[1])
    assert before > 1 or os.cpu_count() == 1          # numpy alone: a thread per core
    assert after == 1
