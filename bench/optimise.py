"""Benchmark: trajectory optimisation (``articula optimise``) and the inverse dynamics it is built on.

    python bench/optimise.py [--repeat 3] [--rounds 30] [--number 300]

1. Wall time (transcription + IPOPT) and the evaluations IPOPT asked for, per shipped problem: the 5-bar
   transfer (seed 003 §3.1, 0.42 s, published J_e = 12.0 J), RABBIT's single support (§3.2, 0.425 s,
   18.2 J), the same with a torque on the trunk and J_e as the cost (what the 18.2 J needs: docs/plugins.md)
   and the double support before it (0.103 s, 6.7 J, same boundary data as the test's), RABBIT's single support
   with the margins its replay with contacts needs, and BIP's single support of the cyclic step (§3.3, 0.5 s,
   109.5 J).  Medians over ``--repeat`` solves; the energy found beside the thesis'; the 5-bar again at 4x the
   intervals.  Then seed 004's smooth-step synthesis on our exemplary gymnast (all its mesh levels; evaluations
   summed).
2. Inverse dynamics of seed 004's gymnast (assets/robots/gymnast.xml: 15 bodies, 20 dofs with the compliant
   bar and shoulders) in one run: Articula's ``rnea`` (numba), Pinocchio's, the CasADi export evaluated by
   CasADi's virtual machine, and the same export as generated C compiled with ``cc -O3`` (seed 004 quotes
   ≈ 8 µs for MDA's generated C++ on 15 dofs, i5-7300U).  Each round times ``number`` Python calls of each;
   medians over rounds, so the Python call overhead is in every figure: ~1 µs for numba and Pinocchio, ~100 µs
   for a CasADi Function (its numpy conversions), hence also a batch of 1000 evaluations in one call (``map``),
   the cost of one evaluation inside the optimiser.
Numbers depend on the machine and its load (2 shared cores here): repeat, read the medians.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import casadi as ca
import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.dynamics.integrators import random_configuration  # noqa: E402
from engine.optimise.command import optimise  # noqa: E402
from engine.optimise.problem import load_problem  # noqa: E402
from engine.optimise.symbolic import rnea_function  # noqa: E402
from tests.dynamics.random_trees import to_pinocchio  # noqa: E402

BATCH = 1000
PROBLEMS = [("5-bar transfer", "five_bar.xml", "five_bar_transfer.toml", 12.0),
            ("RABBIT single support", "rabbit.xml", "rabbit_single_support.toml", 18.2),
            ("  + torque on the trunk", "rabbit.xml", "rabbit_single_support_trunk_torque.toml", 18.2),
            ("RABBIT double support", "rabbit.xml", "rabbit_double_support.toml", 6.7),
            ("RABBIT SS, for replay", "rabbit.xml", "rabbit_single_support_replay.toml", 18.2),
            ("BIP single support", "bip.xml", "bip_single_support.toml", 109.5)]


def optimisations(repeat):
    print(f"1. optimisations (medians over {repeat} solves; evaluations: f, g, grad f, jac g, hess L)")
    print(f"  {'problem':24s} {'status':18s} {'iter':>5s} {'evaluations':>26s} {'wall (s)':>9s} "
          f"{'J_e (J)':>8s} {'thesis':>7s}")
    for title, scene, toml, published in PROBLEMS:
        universe = engine.load_universe(ROOT / "scenes" / scene)
        problem = load_problem(ROOT / "scenes" / "problems" / toml)
        runs = [optimise(universe, problem) for _ in range(repeat)]
        r = runs[-1]
        ev = r.evaluations
        counts = "/".join(str(ev.get(k, 0)) for k in ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l"))
        print(f"  {title:24s} {r.status[:18]:18s} {r.iterations:5d} {counts:>26s} "
              f"{np.median([x.wall_time for x in runs]):9.2f} {r.energy:8.2f} {published:7.1f}")
        if title.startswith("5-bar"):
            fine = optimise(universe, dataclasses.replace(problem, intervals=4 * problem.intervals))
            print(f"  {'  (x4 intervals)':24s} {fine.status[:18]:18s} {fine.iterations:5d} {'':>26s} "
                  f"{fine.wall_time:9.2f} {fine.energy:8.2f}")


def smooth_step(repeat):
    """Seed 004's synthesis: 23.82 s, 21 iterations, 354 cost evaluations with fmincon (raw L2104-2110)."""
    universe = engine.load_universe(ROOT / "scenes" / "gymnast_exemplary.xml")
    problem = load_problem(ROOT / "scenes" / "problems" / "gymnast_smooth_step.toml")
    runs = [optimise(universe, problem) for _ in range(repeat)]
    r, m = runs[-1], runs[-1].meta
    print(f"  gymnast smooth step      {r.status[:18]:18s} {r.iterations:5d} {sum(r.evaluations.values()):>26d} "
          f"{np.median([x.wall_time for x in runs]):9.2f}   t_f {m['t_f']:.3f} s, t_M {m['t_M']:.3f} s, "
          f"phi_M {np.degrees(m['phi_M']):.1f} deg (thesis 2.405, 1.468, 160; 23.82 s, 354 evaluations)")


def compiled(F, directory):
    """F generated as C, compiled with cc -O3, loaded back as a casadi.Function."""
    source = F.generate(f"{F.name()}_gen.c", {"with_header": False})
    target = Path(directory) / f"{F.name()}_gen.so"
    subprocess.run(["cc", "-O3", "-march=native", "-shared", "-fPIC", source, "-o", str(target)], check=True)
    Path(source).unlink()
    return ca.external(F.name(), str(target))


def per_call(f, number):
    start = time.perf_counter()
    for _ in range(number):
        f()
    return (time.perf_counter() - start) / number * 1e6


def inverse_dynamics(rounds, number):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = engine.load_model(ROOT / "assets" / "robots" / "gymnast.xml")
    data, pm = model.create_data(), to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, v, a = random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    F = rnea_function(model)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            C = compiled(F, tmp)
        finally:
            os.chdir(cwd)
        ours = engine.rnea(model, data, q, v, a)
        passive = model.dof_damping * v + model.dof_stiffness * (q - model.dof_spring_reference)
        gaps = [np.abs(ours - passive - pin.rnea(pm, pd, q, v, a)).max()] + \
            [np.abs(ours - np.asarray(G(q, v, a)).ravel()).max() for G in (F, C)]   # Pinocchio: no joint springs
        Qb, Vb, Ab = (np.repeat(x[:, None], BATCH, axis=1) for x in (q, v, a))
        F_batch, C_batch = F.map(BATCH), C.map(BATCH)
        calls = {"articula rnea (numba)": (lambda: engine.rnea(model, data, q, v, a), 1),
                 "pinocchio rnea": (lambda: pin.rnea(pm, pd, q, v, a), 1),
                 "casadi export (SX VM)": (lambda: F(q, v, a), 1),
                 "casadi export (C, -O3)": (lambda: C(q, v, a), 1),
                 f"casadi VM, batch of {BATCH}": (lambda: F_batch(Qb, Vb, Ab), BATCH),
                 f"casadi C, batch of {BATCH}": (lambda: C_batch(Qb, Vb, Ab), BATCH)}
        times = {name: [] for name in calls}
        for _ in range(rounds):
            for name, (f, per) in calls.items():
                times[name].append(per_call(f, max(1, number // per)) / per)
    print(f"\n2. gymnast inverse dynamics, {int((model.body_mass > 0).sum())} bodies, nv = {model.nv} "
          f"(medians over {rounds} rounds of {number} calls; pinocchio {pin.__version__}, casadi {ca.__version__})")
    print(f"  agreement with articula: pinocchio {gaps[0]:.1e}, casadi VM {gaps[1]:.1e}, casadi C {gaps[2]:.1e} N m")
    ref = np.median(times["pinocchio rnea"])
    for name, t in times.items():
        print(f"  {name:26s} {np.median(t):8.2f} µs   x{np.median(t) / ref:5.2f} pinocchio")
    print("  seed 004: ≈ 8 µs for MDA's generated C++, 15 dofs, i5-7300U (Table 2)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--number", type=int, default=300)
    args = p.parse_args(argv)
    optimisations(args.repeat)
    smooth_step(args.repeat)
    inverse_dynamics(args.rounds, args.number)


if __name__ == "__main__":
    main()
