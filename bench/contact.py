"""Constraint-based contact benchmarks (issue 5 point 8), one function per part.

    python bench/contact.py [--part a|b|c|d|e] [--rounds 200] [--seconds 2] [--starts-nm 0 1 -1]

(a) The Delassus operator Λ = J M⁻¹ Jᵀ by the thesis's three methods (seed 000 §3.2, Fig 3.12) on Talos
    (example-robot-data, floating base) standing: 2 feet × 4 points (m = 8, as HRP-2 in the thesis), and the
    same-branch case (right hand + forearm, 4 points each, L1808).  Methods: test-force (Alg. 3),
    chang-khatib (Alg. 4), thesis (Alg. 5), dense (CRBA + Cholesky, reference) and auto.  Talos's feet are
    the 6th body after the base like HRP-2's, so the thesis's operation counts (Tables 3.1-3.3) apply as is.
    "full": the call computes the articulated inertias (IA, D, U at q); "reuse": it takes them from the free
    dynamics' ABA at the same q (``reuse_aba=True``), as Algs. 3-5 take S, I, H as data.  Calls are
    interleaved across methods (rounds × batches of 20), times are per call, medians over rounds.
(b) A full 1 ms step of Talos standing on a ground plane (floating base, the half-sitting posture of
    scenes/default.xml, ``stance-pd`` kp = 2000, kd = 20), ours against pybullet on the same URDF and ground in the
    same run: pybullet DIRECT, setTimeStep(0.001), driven by the same controller's torques (TORQUE_CONTROL) or
    holding the posture with its POSITION_CONTROL motors.  Steps are interleaved in blocks of 100 between the
    engines; per-step medians, our per-stage breakdown (``sim.timer``) and the feet drift of each engine.
    MuJoCo 4 (bench/peers.py: the same URDF through its URDF compiler, the same torques) runs beside them.
(c) k = 1 … 30 cubes resting on the ground: k separate collision groups (cost linear in k) against the same k
    cubes side by side, touching, in one group, whose Newton steps solve in body space (W = B Bᵀ, 6k columns;
    ``_factor_kernels``) beside the same run with the linear solves on W (dense).  Blocks of steps interleaved,
    per-step medians, steps left unconverged.
(d) Talos dropped from the half-sitting pose with no controller: it falls (t < 1 s) and lies on the floor
    (1 s ≤ t < 2 s), ours beside MuJoCo and pybullet (self-collisions on in all, and pybullet without them),
    blocks of 100 steps interleaved; one run per start height of ours (0, +1, −1 nm above the recorded one,
    ``--starts-nm``: the fall is chaotic and the lying cost follows the pose it ends in), the steps of the runs
    pooled. Ours: nonsmooth-newton with the URDF's joint limits and dry friction as rows of the solve (``<Solver
    joint_limits="constraint" joint_friction="constraint">``), the headline the issue's targets are read on
    (lie/MuJoCo ≤ 3, lie/pybullet ≤ 1): MuJoCo's URDF compiler makes the same robot (32 limited joints, and the
    friction of 20 joints as ``frictionloss``, which its solver takes as constraints too); then with the limits
    alone (the joints' friction as the explicit torque −μ_d sign(q̇): a light joint such as a gripper, I ≈ 1.2e-3
    kg m² and μ_d = 1 N m, turns its velocity round every step, ± 0.9 rad/s, and the robot never comes to rest),
    and nonsmooth-newton and the thesis's gauss-seidel-newton with the universe's defaults (no limits: Talos's
    joints fold through their stops and its links pile onto each other, a different problem). Per-step medians per
    phase and the mean lying step, contacts and self-contacts of each engine, our steps left unconverged and our
    per-stage breakdown while lying; for our unconverged steps, how far they are (quantiles of residual / ‖f‖) and
    what they cost (the solver stage's median, unconverged against converged).
(e) N = 1, 5, 10, 20, 40 free cubes resting on the ground, apart: ours beside MuJoCo and pybullet, interleaved.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from time import perf_counter

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import engine                                                           # noqa: E402
from engine.contact import opcount                                      # noqa: E402
from engine.contact.delassus import BlockMaps, choose_method, delassus  # noqa: E402
from engine.dynamics import aba, forward_kinematics, frame_jacobian     # noqa: E402
from engine.control.stance import StancePD                              # noqa: E402
from engine.model.paths import example_robot_data_dir                   # noqa: E402
from engine.model.universe_xml import load_universe                     # noqa: E402
from engine.simulation import Simulation                                # noqa: E402
from engine.spatial import skew                                         # noqa: E402
from peers import BulletFalling, MujocoTalos, bullet_cubes, mujoco_cubes  # noqa: E402

METHODS = ("test-force", "chang-khatib", "thesis", "auto", "dense")  # dense last: it flushes the caches
THESIS_RATIO = 6.5  # test-force / new method, HRP-2 standing (seed 000 Fig 3.12, L1759)


def talos():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <mimic> joints simulated as independent joints
        return engine.load_model(str(example_robot_data_dir() / "talos_data/robots/talos_reduced.urdf"),
                                 floating_base=True)


def corner_blocks(model, data, body, corners):
    """Frictional contacts (n = +z, t1 = x, t2 = y of the base) at points given in the body frame:
    X = C [1, −[r]×] with r the point's offset from the body origin in base axes."""
    R = data.oMi_R[body]
    C = np.eye(3)[[2, 0, 1]]
    X = np.array([C @ np.hstack([np.eye(3), -skew(R @ c)]) for c in corners])
    return np.full(len(corners), body), X


def delassus_case(model, bodies, corners):
    """(BlockMaps, contact bodies) for 4 corners on each body at the neutral configuration."""
    data = model.create_data()
    forward_kinematics(model, data, engine.neutral(model))
    parts = [corner_blocks(model, data, b, corners) for b in bodies]
    body, X = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return BlockMaps.from_arrays(np.arange(len(body)), body, X)


def time_methods(model, maps, rounds, batch=20):
    """Median µs per delassus call of each method, calls interleaved across methods: computing the articulated
    inertias (``full``) or reusing those of the free dynamics' ABA at the same q (``reuse``, Algs. 3-5 take
    S, I, H as data)."""
    data, q = model.create_data(), engine.neutral(model)
    aba(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    calls = {(m, reuse): (lambda m=m, reuse=reuse: delassus(model, data, q, maps, m, reuse_aba=reuse))
             for m in METHODS for reuse in ((False, True) if m != "dense" else (False,))}
    times = {key: [] for key in calls}
    for call in calls.values():
        call()  # compile / warm up
    for _ in range(rounds):
        for key, call in calls.items():
            t0 = perf_counter()
            for _ in range(batch):
                call()
            times[key].append((perf_counter() - t0) / batch)
    return {key: 1e6 * float(np.median(t)) for key, t in times.items()}


def literal_test_force(model, maps, rounds):
    """Alg. 3 read literally ("on effectue 3m fois l'algorithme de Featherstone", L1557): one full ABA call
    (articulated inertias included) per constraint row with the unit wrench as f_ext, v = 0, tau = 0, g = 0,
    then Λ[:, j] = J ddq.  Returns (median µs, Λ)."""
    data, q, zero = model.create_data(), engine.neutral(model), np.zeros(model.nv)
    forward_kinematics(model, data, q)
    J = {b: frame_jacobian(model, data, q, model.frame_index(model.joint_name[b]), "local_world_aligned")
         for b in maps.bodies}
    rows = np.vstack([maps.term_X[t, :3] @ J[b] for t, b in enumerate(maps.term_body)])
    wrench, Lam, times = np.zeros((model.nbodies, 6)), np.zeros((maps.nrows, maps.nrows)), []
    for _ in range(max(rounds // 10, 5)):
        t0 = perf_counter()
        for t, b in enumerate(maps.term_body):
            R = data.oMi_R[b]
            for e in range(3):
                wrench[b] = np.r_[R.T @ maps.term_X[t, e, :3], R.T @ maps.term_X[t, e, 3:]]  # to the body frame
                Lam[:, 3 * t + e] = rows @ aba(model, data, q, zero, zero, f_ext=wrench, gravity=np.zeros(3))
            wrench[b] = 0.0
        times.append(perf_counter() - t0)
    return 1e6 * float(np.median(times)), Lam


def part_a(rounds):
    """Delassus methods on Talos standing and on the same-branch case."""
    model = talos()
    sole = model.frame_p[model.frame_index("left_sole_link")]  # 10.7 cm below the ankle
    sole = [sole + (x, y, 0.0) for x in (-0.1, 0.1) for y in (-0.065, 0.065)]
    palm = [(x, y, -0.05) for x in (-0.03, 0.03) for y in (-0.03, 0.03)]
    cases = {"Talos standing (2 feet × 4 points, m = 8)": ("leg_left_6_link", "leg_right_6_link"),
             "same branch (right hand + forearm, 4 points each)": ("arm_right_7_link", "arm_right_5_link")}
    hrp2 = dict(m=8, s=12, C=2, beta_m=48, alpha_C=12, beta_C=12)
    ops = {"test-force": opcount.initial_method_ops(hrp2["m"], hrp2["s"], hrp2["beta_m"]).total,
           "chang-khatib": opcount.chang_khatib_ops(hrp2["m"], hrp2["s"], hrp2["C"], hrp2["alpha_C"]).total,
           "thesis": opcount.thesis_method_ops(hrp2["m"], hrp2["s"], hrp2["C"], hrp2["beta_C"]).total}
    print(f"(a) Delassus operator, {model.name}: nv = {model.nv}, {model.nbodies} bodies; {rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f} (timings under load)")
    for label, names in cases.items():
        bodies = [model.body_index(n) for n in names]
        maps = delassus_case(model, bodies, palm if "hand" in label else sole)
        us = time_methods(model, maps, rounds)
        literal, Lam = literal_test_force(model, maps, rounds)
        assert np.allclose(Lam, delassus(model, model.create_data(), engine.neutral(model), maps, "thesis"))
        print(f"\n  {label}: Λ {maps.nrows}×{maps.nrows}, auto → {choose_method(model, bodies)}")
        print(f"  {'method':14s} {'full µs':>9s} {'/ thesis':>9s} {'reuse µs':>9s} {'/ thesis':>9s} "
              f"{'thesis ops':>11s}")
        for m in METHODS:
            count = f"{ops[m]:11d}" if m in ops and "standing" in label else f"{'':11s}"
            reuse = (f"{us[m, True]:9.1f} {us[m, True] / us['thesis', True]:9.2f}" if (m, True) in us
                     else f"{'':9s} {'':9s}")
            print(f"  {m:14s} {us[m, False]:9.1f} {us[m, False] / us['thesis', False]:9.2f} {reuse} {count}")
        print(f"  {'test-force, 3m aba calls':26s} {literal:9.1f} {literal / us['thesis', False]:9.2f}   "
              f"(Alg. 3 read literally: {maps.nrows} full ABA calls with f_ext)")
        for reuse in (False, True):
            print(f"  {'reuse' if reuse else 'full'}: test-force / thesis = "
                  f"{us['test-force', reuse] / us['thesis', reuse]:.2f}x (thesis measured ~{THESIS_RATIO}x on HRP-2), "
                  f"chang-khatib / thesis = {us['chang-khatib', reuse] / us['thesis', reuse]:.2f}x")


# ---- (b) a full step of Talos standing, ours against pybullet --------------------------------------------------

TALOS_URDF = "talos_data/robots/talos_reduced.urdf"
TALOS_SCENE = """<Universe name="talos-standing">
  <Settings><TimeStep>0.001</TimeStep><Solver name="gauss-seidel-newton" tolerance="1e-6" max_iterations="100"/>
    <Contact margin="0.005" max_points="4" correction="baumgarte" erp="0.2" slop="0.0005"/></Settings>
  <Material name="floor" friction="0.9" restitution="0.0"/>
  <MultiBody name="talos"><File>{urdf}</File><FloatingBase>true</FloatingBase><Material>floor</Material>
    {joints}</MultiBody>
  <Body name="ground"><Plane/><Mass>0</Mass><Material>floor</Material></Body>
  <Controller plugin="stance-pd" target="talos" kp="2000" kd="20"/>
</Universe>
"""
BLOCK = 100  # steps per engine before switching to the other one


def talos_simulation(tmp, controller=True, solver="nonsmooth-newton", limits="none", friction="torque"):
    """Our Talos on the ground, in the half-sitting posture of scenes/default.xml, held by ``stance-pd`` or not;
    ``limits``, ``friction``: the solver's ``joint_limits`` and ``joint_friction``."""
    talos = ET.parse(ROOT / "scenes/default.xml").getroot().find("MultiBody")
    joints = "\n    ".join(ET.tostring(j, encoding="unicode").strip() for j in talos.findall("Joint"))
    path = Path(tmp) / f"talos_{controller}_{solver}_{limits}_{friction}.xml"
    scene = TALOS_SCENE.replace('"gauss-seidel-newton"',
                                f'"{solver}" joint_limits="{limits}" joint_friction="{friction}"')
    if not controller:
        scene = "\n".join(line for line in scene.splitlines() if "<Controller" not in line)
    path.write_text(scene.format(urdf=example_robot_data_dir() / TALOS_URDF, joints=joints))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Simulation(load_universe(path))


class BulletTalos:
    """The same URDF, posture and ground in pybullet (DIRECT, 1 ms): ``torque`` applies the torques of the same
    ``stance-pd`` controller, ``position`` holds q0 with pybullet's POSITION_CONTROL motors (effort limits)."""

    def __init__(self, sim, mode):
        import pybullet as pb
        import pybullet_data
        self.pb, self.mode, run = pb, mode, sim.runs[0]
        self.c = c = pb.connect(pb.DIRECT)
        pb.setAdditionalSearchPath(str(example_robot_data_dir().parent.parent), physicsClientId=c)
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        pb.setTimeStep(0.001, physicsClientId=c)
        pb.loadURDF(str(Path(pybullet_data.getDataPath()) / "plane.urdf"), physicsClientId=c)
        q0, model = run.instance.q0, run.model
        self.robot = pb.loadURDF(str(example_robot_data_dir() / TALOS_URDF), q0[:3], q0[3:7],
                                 flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        index = {pb.getJointInfo(self.robot, j, physicsClientId=c)[1].decode(): j
                 for j in range(pb.getNumJoints(self.robot, physicsClientId=c))}
        self.map = [(index[j.name], j.idx_q, j.idx_v) for j in model.joints if j.nv == 1 and j.name in index]
        self.joints = [j for j, _, _ in self.map]
        for j, iq, _ in self.map:
            pb.resetJointState(self.robot, j, q0[iq], physicsClientId=c)
        if mode == "torque":
            pb.setJointMotorControlArray(self.robot, self.joints, pb.VELOCITY_CONTROL, forces=[0.0] * len(self.map),
                                         physicsClientId=c)
            self.controller = StancePD(model, q0, sim.universe.gravity, kp=2000.0, kd=20.0)
        else:
            pb.setJointMotorControlArray(self.robot, self.joints, pb.POSITION_CONTROL, physicsClientId=c,
                                         targetPositions=[q0[iq] for _, iq, _ in self.map],
                                         forces=[model.dof_effort_limit[iv] for _, _, iv in self.map])
        self.q, self.v = q0.copy(), np.zeros(model.nv)
        self.feet = [index["leg_left_6_joint"], index["leg_right_6_joint"]]
        self.start = self.positions()

    def step(self):
        """One step; returns the time of stepSimulation (the torques are computed before, untimed)."""
        pb, c = self.pb, self.c
        if self.mode == "torque":
            for (_, iq, iv), (qj, vj, _, _) in zip(self.map, pb.getJointStates(self.robot, self.joints,
                                                                                 physicsClientId=c)):
                self.q[iq], self.v[iv] = qj, vj
            tau = self.controller.control(0.0, self.q, self.v)
            pb.setJointMotorControlArray(self.robot, self.joints, pb.TORQUE_CONTROL, physicsClientId=c,
                                         forces=[tau[iv] for _, _, iv in self.map])
        t0 = perf_counter()
        pb.stepSimulation(physicsClientId=c)
        return perf_counter() - t0

    def positions(self):
        base = self.pb.getBasePositionAndOrientation(self.robot, physicsClientId=self.c)[0]
        feet = [self.pb.getLinkState(self.robot, f, physicsClientId=self.c)[4] for f in self.feet]
        return np.array([base] + feet)


def our_positions(sim):
    model = sim.runs[0].model
    feet = [sim.body_placement(0, model.body_index(f))[1] for f in ("leg_left_6_link", "leg_right_6_link")]
    return np.array([sim.runs[0].q[:3]] + feet)


def part_b(rounds):
    """Talos standing: µs per 1 ms step, ours vs pybullet, interleaved blocks of ``BLOCK`` steps."""
    with tempfile.TemporaryDirectory() as tmp:
        sim = talos_simulation(tmp)
        bullets = {mode: BulletTalos(sim, mode) for mode in ("torque", "position")}
        bullets["mujoco"] = MujocoTalos(tmp, sim, StancePD(sim.runs[0].model, sim.runs[0].instance.q0,
                                                           sim.universe.gravity, kp=2000.0, kd=20.0))
    start = our_positions(sim)
    sim.step(BLOCK)                                   # compile / warm up
    for b in bullets.values():
        for _ in range(BLOCK):
            b.step()
    ours, stages, theirs = [], [], {mode: [] for mode in bullets}
    for _ in range(rounds):
        for _ in range(BLOCK):
            t0 = perf_counter()
            sim.step()
            ours.append(perf_counter() - t0)
            stages.append(dict(sim.timer.last))
        for mode, b in bullets.items():
            theirs[mode] += [b.step() for _ in range(BLOCK)]
    us = {k: 1e6 * float(np.median(v)) for k, v in [("ours", ours)] + list(theirs.items())}
    print(f"\n(b) Talos standing (nv = {sim.runs[0].model.nv}, stance-pd kp = 2000, kd = 20), 1 ms steps: "
          f"{rounds} rounds × {BLOCK} steps per engine, interleaved; load average {os.getloadavg()[0]:.1f} "
          f"(timings under load)")
    print(f"  {'engine':34s} {'µs/step':>8s} {'ours /':>7s} {'real time':>10s} {'base, feet drift mm':>22s}")
    drift = {"ours": our_positions(sim) - start}
    drift.update({mode: b.positions() - b.start for mode, b in bullets.items()})
    labels = {"ours": "ours (sim.step, control included)", "torque": "pybullet, same torques",
              "position": "pybullet, POSITION_CONTROL", "mujoco": "MuJoCo, same torques"}
    for key, label in labels.items():
        d = np.linalg.norm(drift[key], axis=1) * 1e3
        print(f"  {label:34s} {us[key]:8.1f} {us['ours'] / us[key]:7.2f} {1e3 / us[key]:9.2f}x "
              f"{d[0]:8.2f} {d[1]:6.2f} {d[2]:6.2f}")
    print(f"  ours, median per stage (µs), {len(sim.contacts)} contacts, {sim.solver_stats['iterations']} "
          f"iterations, Delassus {sim.solver_stats['delassus']}:")
    print("   " + "  ".join(f"{k} {1e6 * np.median([s[k] for s in stages]):.1f}" for k in stages[0]))


# ---- (c) k cubes: k groups against one group ---------------------------------------------------------------------

CUBES = """<Universe><Settings><TimeStep>0.001</TimeStep></Settings>
  {cubes}
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
</Universe>
"""
CUBE = '<Body name="cube{i}"><Box size="0.1 0.1 0.1"/><Mass>1</Mass><Translation x="{x}" y="0" z="{z}"/></Body>'


def cubes(tmp, k, spacing, z=0.05):
    path = Path(tmp) / f"cubes_{k}_{spacing}_{z}.xml"
    path.write_text(CUBES.format(cubes="\n  ".join(CUBE.format(i=i, x=i * spacing, z=z) for i in range(k))))
    return Simulation(load_universe(path))


def dense_solves(sim):
    """``sim`` with the Newton steps' linear solves on W itself: the body-space factor of free rigid bodies
    (``_factor_kernels``) dropped after each Delassus stage — the reference (before) of part (c); its stages run
    one by one (not ``FreeBodies.step``'s or ``ContactStage._rigid_step``'s one call)."""
    stage = sim.contact_stage
    sim.engine.one_call = stage.rigid_only = False
    delassus = stage._delassus

    def without_factor(a, W, ng, dt, solved=()):
        methods = delassus(a, W, ng, dt, solved)
        a["B_width"][:] = 0
        return methods

    stage._delassus = without_factor
    return sim


def part_c(rounds):
    """Median µs per step of k cubes on the ground, apart (k groups) and side by side touching (one group), the
    touching ones with the linear solves in body space (ours) and on W (dense), interleaved in blocks."""
    print(f"\n(c) k cubes (0.1 m, 1 kg) resting on the ground, 1 ms steps, {rounds} × {BLOCK} steps each, "
          f"interleaved; load average {os.getloadavg()[0]:.1f} (timings under load)")
    print(f"  {'k':>3s} | {'apart: groups':>13s} {'contacts':>8s} {'µs/step':>8s} {'µs/cube':>8s} | "
          f"{'touching: groups':>16s} {'contacts':>8s} {'µs/step':>8s} {'dense µs':>9s} {'dense/ours':>10s} "
          f"{'unconverged':>11s} | {'touching/apart':>14s}")
    ks, apart = (1, 2, 5, 10, 20, 30), []
    with tempfile.TemporaryDirectory() as tmp:
        for k in ks:
            sims = [cubes(tmp, k, 0.3), cubes(tmp, k, 0.1), dense_solves(cubes(tmp, k, 0.1))]
            times = [[] for _ in sims]
            for sim in sims:
                sim.step(BLOCK)
            start = [sim.contact_report().unconverged_steps for sim in sims]
            for _ in range(rounds):
                for sim, t in zip(sims, times):
                    for _ in range(BLOCK):
                        t0 = perf_counter()
                        sim.step()
                        t.append(perf_counter() - t0)
            ta, tt, td = (1e6 * float(np.median(t)) for t in times)
            (ga, gt, _), (ca, ct, _) = ([len(sim.solver_stats["groups"]) for sim in sims],
                                        [len(sim.contacts) for sim in sims])
            unconverged = [sim.contact_report().unconverged_steps - s for sim, s in zip(sims, start)]
            apart.append(ta)
            print(f"  {k:3d} | {ga:13d} {ca:8d} {ta:8.1f} {ta / k:8.1f} | {gt:16d} {ct:8d} {tt:8.1f} {td:9.1f} "
                  f"{td / tt:10.2f} {unconverged[1]:5d} {unconverged[2]:5d} | {tt / ta:14.2f}")
    slope, intercept = np.polyfit(ks, apart, 1)
    fit = np.polyval((slope, intercept), ks)
    r2 = 1 - np.sum((np.array(apart) - fit) ** 2) / np.sum((np.array(apart) - np.mean(apart)) ** 2)
    print(f"  apart: {intercept:.0f} µs + {slope:.1f} µs per cube (linear fit, R² = {r2:.4f}); unconverged: "
          f"touching steps left above tolerance, ours and dense")


# ---- (d) Talos falling, then lying on the floor ---------------------------------------------------------------------

class OurFalling:
    """Our Talos without controller; records each step's contacts, self-contacts, stage times, convergence and,
    for an unconverged step, its largest natural residual over the norm of all contact forces (an upper bound of
    the relative residual the solver's tolerance applies to)."""

    def __init__(self, tmp, solver, limits="none", start_nm=0.0, friction="torque"):
        self.sim = talos_simulation(tmp, controller=False, solver=solver, limits=limits, friction=friction)
        self.sim.runs[0].q[2] += 1e-9 * start_nm
        self.stages, self.unconverged, self.relative = [], [], []

    def step(self):
        t0 = perf_counter()
        self.sim.step()
        elapsed = perf_counter() - t0
        self.stages.append(dict(self.sim.timer.last))
        groups = self.sim.solver_stats["groups"]
        self.unconverged.append(not all(g.converged for g in groups))
        if self.unconverged[-1]:
            force = np.linalg.norm(self.sim.contact_stage.forces)
            self.relative.append(max(g.residual for g in groups if not g.converged) / max(force, 1e-300))
        return elapsed

    def contacts(self):
        c = self.sim.contact_stage.contacts
        if c is None or not len(c):
            return 0, 0
        return len(c), int(np.count_nonzero(c.multibody_a == c.multibody_b))

    def base_height(self):
        return float(self.sim.runs[0].q[2])


HEADLINE = "ours, NSN, limits+friction"   # part (d)'s configuration: the robot MuJoCo simulates


def part_d(seconds=2.0, starts_nm=(0.0,)):
    """Talos falling then lying: µs per step per phase, ours against MuJoCo and pybullet, one run per start height
    of ours (``starts_nm``, nm above the recorded one: the fall is chaotic and the lying cost follows the pose it
    ends in), the steps of all runs pooled."""
    steps, fall = int(round(seconds / 1e-3)), int(round(0.5 * seconds / 1e-3))
    ours = (HEADLINE, "ours, NSN + joint limits", "ours, nonsmooth-newton", "ours, gauss-seidel-newton")
    times, counts, runs = {}, {}, {name: [] for name in ours}         # pooled; our runs, per start
    for start in starts_nm:
        with tempfile.TemporaryDirectory() as tmp:
            engines = {HEADLINE: OurFalling(tmp, "nonsmooth-newton", "constraint", start, "constraint"),  # targets
                       ours[1]: OurFalling(tmp, "nonsmooth-newton", "constraint", start),
                       ours[2]: OurFalling(tmp, "nonsmooth-newton", start_nm=start),
                       ours[3]: OurFalling(tmp, "gauss-seidel-newton", start_nm=start)}
            sim = engines[HEADLINE].sim
            engines["MuJoCo"] = MujocoTalos(tmp, sim)
            engines["pybullet"] = BulletFalling(sim)
            engines["pybullet, no self-collision"] = BulletFalling(sim, self_collision=False)
            run_times = {name: [] for name in engines}
            for _ in range(steps // BLOCK):
                for name, engine in engines.items():
                    for _ in range(BLOCK):
                        run_times[name].append(engine.step())
                        if len(run_times[name]) > fall:
                            counts.setdefault(name, []).append(engine.contacts())
            for name, t in run_times.items():
                falling, lying = times.setdefault(name, ([], []))
                falling += t[:fall]
                lying += t[fall:]
            for name in ours:
                runs[name].append(engines[name])
            base_z = {name: engine.base_height() for name, engine in engines.items()}
    print(f"\n(d) Talos (nv = {sim.runs[0].model.nv}) dropped with no controller: falling t < {fall / 1e3:g} s, "
          f"lying {fall / 1e3:g} s ≤ t < {seconds:g} s; blocks of {BLOCK} steps interleaved; {len(starts_nm)} run(s), "
          f"ours from {', '.join(f'{x:+g}' for x in starts_nm)} nm, pooled; load average {os.getloadavg()[0]:.1f} "
          f"(timings under load)")
    print(f"  {'engine':27s} {'fall µs':>8s} {'lie µs':>8s} {'lie mean':>8s} {'lie/MuJoCo':>10s} "
          f"{'lie/pybullet':>12s} {'fall/MuJoCo':>11s} {'contacts':>8s} {'self':>5s} {'base z':>7s}")
    lie = {name: 1e6 * float(np.median(t[1])) for name, t in times.items()}
    falling = {name: 1e6 * float(np.median(t[0])) for name, t in times.items()}
    for name in times:
        c = np.array(counts[name])
        print(f"  {name:27s} {falling[name]:8.0f} {lie[name]:8.0f} {1e6 * np.mean(times[name][1]):8.0f} "
              f"{lie[name] / lie['MuJoCo']:10.2f} {lie[name] / lie['pybullet']:12.2f} "
              f"{falling[name] / falling['MuJoCo']:11.2f} {c[:, 0].mean():8.1f} {c[:, 1].mean():5.1f} "
              f"{base_z[name]:7.3f}")
    print(f"  headline ({HEADLINE}: the joints' limits and dry friction as constraints, as MuJoCo takes them): lying "
          f"{lie[HEADLINE] / lie['MuJoCo']:.2f}× MuJoCo (target ≤ 3), "
          f"{lie[HEADLINE] / lie['pybullet']:.2f}× pybullet (target ≤ 1)")
    for name in ours:
        stages = [s for run in runs[name] for s in run.stages[fall:]]
        unconverged = np.array([u for run in runs[name] for u in run.unconverged[fall:]])
        solver = 1e6 * np.array([s["solver"] for s in stages])
        per_start = ", ".join(f"{sum(run.unconverged[:fall])} + {sum(run.unconverged[fall:])}" for run in runs[name])
        print(f"  {name}: steps unconverged {sum(sum(run.unconverged[:fall]) for run in runs[name])} of "
              f"{fall * len(starts_nm)} falling, {unconverged.sum()} of {len(unconverged)} lying (per start: "
              f"{per_start}); lying, median per stage (µs): "
              + "  ".join(f"{k} {1e6 * np.median([s[k] for s in stages]):.0f}" for k in stages[0]))
        if unconverged.any():
            q = np.quantile([r for run in runs[name] for r in run.relative], [0.1, 0.5, 0.9])
            print(f"    unconverged steps (falling and lying): residual / ‖f‖ 10 %, 50 %, 90 % quantiles "
                  f"{q[0]:.1e} {q[1]:.1e} {q[2]:.1e} (tolerance 1e-6); lying, solver stage median "
                  f"{np.median(solver[unconverged]):.0f} µs unconverged, "
                  f"{np.median(solver[~unconverged]) if not unconverged.all() else np.nan:.0f} µs converged")


# ---- (e) N free cubes ------------------------------------------------------------------------------------------------

def part_e(rounds):
    """N cubes resting on the ground apart: µs per step, ours against MuJoCo and pybullet, interleaved; last, one
    cube in flight (dropped from 10 m: no contact in the steps timed)."""
    print(f"\n(e) N free cubes (0.1 m, 1 kg) resting apart on the ground, 1 ms steps, {rounds} × {BLOCK} steps per "
          f"engine, interleaved; load average {os.getloadavg()[0]:.1f} (timings under load)")
    print(f"  {'N':>3s} | {'ours µs':>8s} {'MuJoCo µs':>9s} {'pybullet µs':>11s} | {'ours/MuJoCo':>11s} "
          f"{'ours/pybullet':>13s} | contacts: {'ours':>4s} {'MuJoCo':>6s} {'pybullet':>8s} | ours unconverged")
    with tempfile.TemporaryDirectory() as tmp:
        for n, z in ((1, 0.05), (5, 0.05), (10, 0.05), (20, 0.05), (40, 0.05), (1, 10.0)):
            sim = cubes(tmp, n, 0.3, z)
            ours = sim.step
            engines = {"ours": None, "MuJoCo": mujoco_cubes(n, 0.3, z), "pybullet": bullet_cubes(n, 0.3, z)}
            times = {name: [] for name in engines}
            for step, _ in list(engines.values())[1:]:
                for _ in range(BLOCK):
                    step()
            sim.step(BLOCK)
            start = sim.contact_report().unconverged_steps
            for _ in range(rounds):
                for _ in range(BLOCK):
                    t0 = perf_counter()
                    ours()
                    times["ours"].append(perf_counter() - t0)
                for name in ("MuJoCo", "pybullet"):
                    step = engines[name][0]
                    times[name] += [step() for _ in range(BLOCK)]
            us = {name: 1e6 * float(np.median(t)) for name, t in times.items()}
            label = f"{n:3d}" + (" in flight" if z > 1 else "")
            print(f"  {label} | {us['ours']:8.1f} {us['MuJoCo']:9.1f} {us['pybullet']:11.1f} | "
                  f"{us['ours'] / us['MuJoCo']:11.2f} {us['ours'] / us['pybullet']:13.2f} | "
                  f"{'':10s}{len(sim.contacts):4d} {engines['MuJoCo'][1]():6d} {engines['pybullet'][1]():8d} | "
                  f"{sim.contact_report().unconverged_steps - start}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("a", "b", "c", "d", "e"), default=None,
                        help="run one part (default: all)")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=2.0, help="(d): simulated time, the second half lying")
    parser.add_argument("--starts-nm", type=float, nargs="+", default=[0.0, 1.0, -1.0],
                        help="(d): one run per start height of ours above the recorded one (nm), pooled")
    args = parser.parse_args()
    if args.part in (None, "a"):
        part_a(args.rounds)
    if args.part in (None, "b"):
        part_b(max(args.rounds // 20, 5))
    if args.part in (None, "c"):
        part_c(max(args.rounds // 40, 3))
    if args.part in (None, "d"):
        part_d(args.seconds, args.starts_nm)
    if args.part in (None, "e"):
        part_e(max(args.rounds // 40, 3))


if __name__ == "__main__":
    main()
