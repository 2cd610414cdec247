"""The disk cache of precomputed soles and meshes: hits, keys, atomic writes, damaged entries."""
import os

import numpy as np
import pytest

from engine.deformable import Material, box_mesh, build_sole, cache, top_face, two_layer_sole
from engine.deformable import shapes, sole as sole_module

RUBBER = [Material(3e6, 0.4)]


def _entries(folder):
    return sorted(p.name for p in folder.glob("*.npz")) if folder.is_dir() else []


def _no_condensation(*args):
    raise AssertionError("the sole was condensed again instead of read from the cache")


def test_directory_follows_the_environment(fem_cache, monkeypatch):
    assert cache.directory() == fem_cache
    monkeypatch.delenv("ARTICULA_CACHE_DIR")
    assert cache.directory() == cache.Path.home() / ".cache" / "articula" / "fem"


def test_second_build_reads_the_cache(fem_cache, monkeypatch):
    mesh = box_mesh((0.06, 0.04, 0.02), h=0.01)
    cold = build_sole(mesh, RUBBER)
    assert len(_entries(fem_cache)) == 1 and not list(fem_cache.glob("*.tmp"))
    monkeypatch.setattr(sole_module, "_condense", _no_condensation)
    warm = build_sole(mesh, RUBBER)
    np.testing.assert_array_equal(warm.K_c, cold.K_c)
    np.testing.assert_array_equal(warm.K_c_inv, cold.K_c_inv)
    np.testing.assert_array_equal(warm.contact_triangle, cold.contact_triangle)


def test_every_input_of_the_matrices_changes_the_key(fem_cache):
    mesh = box_mesh((0.06, 0.04, 0.02), h=0.01)
    top = top_face(mesh)
    build_sole(mesh, RUBBER)
    build_sole(mesh, [Material(3e6, 0.3)])
    build_sole(mesh, [Material(2e6, 0.4)])
    build_sole(mesh, RUBBER, dirichlet=top[1:])
    build_sole(mesh, RUBBER, contact=np.flatnonzero(np.isclose(mesh.node_position[:, 0], 0.03)))
    build_sole(box_mesh((0.06, 0.04, 0.021), h=0.01), RUBBER)
    assert len(_entries(fem_cache)) == 6
    build_sole(mesh, [Material(3e6, 0.4, name="renamed")])      # the name is not an input of K
    assert len(_entries(fem_cache)) == 6


def test_a_damaged_entry_is_recomputed_and_replaced(fem_cache):
    mesh = box_mesh((0.06, 0.04, 0.02), h=0.01)
    cold = build_sole(mesh, RUBBER)
    (entry,) = fem_cache.glob("*.npz")
    entry.write_bytes(b"PK\x03\x04 truncated")
    again = build_sole(mesh, RUBBER)
    np.testing.assert_allclose(again.K_c, cold.K_c, rtol=1e-12)
    assert cache.get(entry.stem) is not None


def test_an_unwritable_cache_only_warns(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ARTICULA_CACHE_DIR", str(blocker))
    with pytest.warns(cache.CacheWarning, match="FEM cache not written"):
        sole = build_sole(box_mesh((0.06, 0.04, 0.02), h=0.02), RUBBER)
    np.linalg.cholesky(sole.K_c)


def test_use_cache_false_neither_reads_nor_writes(fem_cache):
    build_sole(box_mesh((0.06, 0.04, 0.02), h=0.02), RUBBER, use_cache=False)
    assert _entries(fem_cache) == []


def test_gmsh_meshes_are_cached_by_their_parameters(fem_cache, monkeypatch):
    first = two_layer_sole(h=0.03)
    monkeypatch.setattr(shapes, "gmsh_session", _no_condensation)
    second = two_layer_sole(h=0.03)
    np.testing.assert_array_equal(first.node_position, second.node_position)
    np.testing.assert_array_equal(first.tet_node, second.tet_node)
    with pytest.raises(AssertionError):
        two_layer_sole(h=0.031)


def test_clear_removes_entries_and_left_over_temporaries(fem_cache):
    build_sole(box_mesh((0.06, 0.04, 0.02), h=0.02), RUBBER)
    (fem_cache / ".abc.tmp").write_bytes(b"half")
    cache.clear()
    assert os.listdir(fem_cache) == []


def test_key_hashes_types_and_values():
    a = np.arange(6, dtype=np.int64)
    assert cache.key(a) != cache.key(a.astype(np.int32)) != cache.key(a.reshape(2, 3))
    assert cache.key(1) != cache.key(1.0) != cache.key("1")
    assert cache.key(np.float64(0.4)) == cache.key(0.4)
    with pytest.raises(TypeError, match="cannot hash object"):
        cache.key(object())
