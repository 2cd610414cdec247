"""The on-disk cache (engine/model/diskcache.py): a mesh's convex decomposition is computed once per machine, a
second process reads it back, and a broken entry or an unwritable folder never stops a load."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.model import diskcache
from engine.model.paths import example_robot_data_dir

ROOT = Path(__file__).resolve().parents[2]
MESH = example_robot_data_dir() / "ur_description/meshes/ur5/collision/forearm.stl"
DECOMPOSE = f"""
import logging, sys, time
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stdout)
import trimesh
from engine.model import meshes
start = time.perf_counter()
pieces = meshes.convex_decomposition({str(MESH)!r})
print("RESULT", time.perf_counter() - start, len(pieces), sum(p.volume for p in pieces))
"""


def decompose(cache):
    env = dict(os.environ, ARTICULA_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", DECOMPOSE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    seconds, pieces, volume = done.stdout.split("RESULT")[1].split()
    return float(seconds), int(pieces), float(volume), done.stdout + done.stderr


def test_a_second_process_reads_the_decomposition_back_at_least_10_times_faster(tmp_path):
    first, pieces, volume, out = decompose(tmp_path)
    assert "convex decomposition of forearm.stl" in out
    assert len(list((tmp_path / "decomposition").glob("*.npz"))) == 1
    second, pieces_again, volume_again, out = decompose(tmp_path)
    assert "convex decomposition of" not in out                  # not computed again
    assert pieces_again == pieces and volume_again == pytest.approx(volume, rel=1e-12)
    assert second * 10 <= first, (first, second)


def test_a_truncated_entry_is_discarded_and_rebuilt_with_one_log_line(tmp_path):
    decompose(tmp_path)
    entry = next((tmp_path / "decomposition").glob("*.npz"))
    entry.write_bytes(entry.read_bytes()[:100])
    _, _, _, out = decompose(tmp_path)
    assert out.count("is unreadable") == 1 and "discarded and rebuilt" in out
    assert "convex decomposition of forearm.stl" in out
    with np.load(entry) as f:                                     # rewritten whole
        assert f["vertex_count"].sum() == len(f["vertices"]) and f["face_count"].sum() == len(f["faces"])


def test_an_entry_of_another_format_is_discarded(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("ARTICULA_CACHE_DIR", str(tmp_path))
    k = diskcache.key("test", 1)
    (tmp_path / "ns").mkdir()
    np.savez(tmp_path / "ns" / f"{k}.npz", __format__=np.array("articula-cache-0"), x=np.zeros(3))
    assert diskcache.load("ns", k) is None and "another version" in caplog.text
    assert not (tmp_path / "ns" / f"{k}.npz").exists()
    diskcache.save("ns", k, {"x": np.arange(3.0)})
    assert np.array_equal(diskcache.load("ns", k)["x"], np.arange(3.0))


def test_an_unwritable_cache_folder_falls_back_to_memory_with_a_warning(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("ARTICULA_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    k = diskcache.key("test", 2)
    with pytest.warns(UserWarning, match="cannot be written.*kept in memory"):
        diskcache.save("ns", k, {"x": np.ones(2)})
    assert np.array_equal(diskcache.load("ns", k)["x"], np.ones(2))
    files, _ = diskcache.clear()
    assert files == 0 and diskcache.load("ns", k) is None


def test_clear_removes_every_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("ARTICULA_CACHE_DIR", str(tmp_path))
    diskcache.save("ns", diskcache.key("a"), {"x": np.ones(1000)})
    files, size = diskcache.clear()
    assert files == 1 and size > 8000 and not tmp_path.exists()
