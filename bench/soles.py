"""Deformable soles (seed 000 §3.8): the cost of precomputing a sole.

    python bench/soles.py [--part precompute|compliance] [--repeat 5]

Part "precompute": the thesis's sole (22 × 13 × 2 cm, E = 3 MPa, ν = 0.4, §4.4) meshed by scikit-fem's
structured generator at three element sizes (2, 1 and 0.7 cm: 1, 2 and 3 layers of cells), and the two-layer
sole with pads (Gmsh). For each: nodes, candidate contact nodes (the bottom face), the time to mesh, and
``build_sole`` (assembly, Dirichlet reduction, condensation onto the contact nodes, K_c⁻¹) cold (empty cache)
and from the disk cache; medians of ``--repeat`` runs, each cold run with a fresh cache directory. Targets (issue 11): < 5 s cold and < 0.2 s cached
with ≥ 40 contact nodes. Peer: the same K_c⁻¹ read off the dense inverse of K^r (numpy), what the condensation
avoids, where it fits in a few seconds.

Part "compliance": what the contact stage will pay per collision group and step, for k contact points on the
1 cm sole: the barycentric weights (``contact_weights``) and the block P K_c⁻¹ Pᵀ/δt with its free-velocity
shift in the contact frames (``compliance``); medians of 20 batches.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.deformable import (Material, box_mesh, build_sole, compliance, contact_weights,   # noqa: E402
                               two_layer_sole)
from engine.deformable.assembly import stiffness                                # noqa: E402

RUBBER = [Material(3e6, 0.4)]
LAYERS = [Material(3e6, 0.25), Material(1e6, 0.25)]        # the thesis's two-layer sole (§4.6)
DENSE_LIMIT = 4000                                           # DOFs of K^r up to which the dense peer runs


def _timed(fn):
    t0 = perf_counter()
    result = fn()
    return perf_counter() - t0, result


def _dense_compliance(sole):
    """Peer: K_c⁻¹ as the contact block of (K^r)⁻¹, the reduced stiffness inverted densely."""
    free = sole.free_dof
    K_r = stiffness(sole.mesh, sole.materials)[free][:, free].toarray()
    rows = np.searchsorted(free, (3 * sole.contact_node[:, None] + np.arange(3)).ravel())
    return np.linalg.inv(K_r)[np.ix_(rows, rows)]


def precompute(repeat: int):
    cases = [(f"box h = {h * 100:g} cm", lambda h=h: box_mesh(h=h), RUBBER) for h in (0.02, 0.01, 0.007)]
    cases.append(("two-layer, pads, h = 1 cm", lambda: two_layer_sole(h=0.01), LAYERS))
    build_sole(box_mesh((0.04, 0.04, 0.02), h=0.02), RUBBER, use_cache=False)    # imports, first calls
    print(f"precompute: 22 x 13 x 2 cm sole; medians of {repeat}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores before the runs")
    print(f"{'mesh':28s} {'nodes':>6s} {'contact':>7s} {'mesh s':>7s} {'cold s':>7s} {'cached s':>8s} "
          f"{'dense s':>8s} {'dense/cold':>10s}")
    for name, build_mesh, materials in cases:
        mesh_times, cold, warm, dense = [], [], [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as folder:
                os.environ["ARTICULA_CACHE_DIR"] = folder
                t, mesh = _timed(build_mesh)
                mesh_times.append(t)
                t, sole = _timed(lambda: build_sole(mesh, materials))
                cold.append(t)
                warm.append(_timed(lambda: build_sole(mesh, materials))[0])
        if len(sole.free_dof) <= DENSE_LIMIT:
            t, C = _timed(lambda: _dense_compliance(sole))
            dense.append(t)
            assert np.allclose(C, sole.K_c_inv, rtol=1e-6, atol=1e-9 * np.abs(C).max())
        cold_s = statistics.median(cold)
        dense_cell = (f"{dense[0]:8.2f} {dense[0] / cold_s:10.1f}" if dense else f"{'-':>8s} {'-':>10s}")
        print(f"{name:28s} {len(mesh.node_position):6d} {len(sole.contact_node):7d} "
              f"{statistics.median(mesh_times):7.2f} {cold_s:7.2f} {statistics.median(warm):8.3f} {dense_cell}")
    print(f"load average {os.getloadavg()[0]:.1f} after the runs")


def compliance_cost(repeat: int):
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ARTICULA_CACHE_DIR"] = folder
        sole = build_sole(box_mesh(h=0.01), RUBBER)
    rng = np.random.default_rng(0)
    print(f"compliance: 1 cm sole, {len(sole.contact_node)} contact nodes; load average {os.getloadavg()[0]:.1f}")
    print(f"{'contacts':>8s} {'weights us':>10s} {'block us':>9s}")
    for k in (4, 8, 16, 32, 64):
        triangle = rng.choice(len(sole.contact_triangle), k, replace=False)
        corners = sole.mesh.node_position[sole.contact_node][sole.contact_triangle[triangle]]
        points = np.einsum("kj,kjx->kx", rng.dirichlet(np.ones(3), size=k), corners)
        U_c, frames = np.zeros(len(sole.K_c)), np.repeat(np.eye(3)[None], k, axis=0)
        weights = contact_weights(sole, triangle, points)
        number = max(10, 2000 // k)
        times = {"weights": [], "block": []}
        for _ in range(max(repeat, 20)):
            times["weights"].append(_timed(lambda: [contact_weights(sole, triangle, points)
                                                    for _ in range(number)])[0] / number)
            times["block"].append(_timed(lambda: [compliance(sole, weights, 1e-3, U_c, frames)
                                                  for _ in range(number)])[0] / number)
        weights_us, block_us = (statistics.median(times[name]) * 1e6 for name in ("weights", "block"))
        print(f"{k:8d} {weights_us:10.0f} {block_us:9.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("precompute", "compliance"), default=None, help="default: both")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.part in (None, "precompute"):
        precompute(args.repeat)
    if args.part in (None, "compliance"):
        compliance_cost(args.repeat)


if __name__ == "__main__":
    main()
