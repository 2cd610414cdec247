"""Collision detection time per step, Articula (engine.collision) against pybullet, on the same geometry in one run.

Scenes:
  (a) Talos (example-robot-data talos_reduced.urdf, collision meshes, floating base) standing on a plane in
      its neutral pose; pybullet loads the same URDF (its meshes become convex hulls, as ours do).  pybullet is
      timed without self-collision (its default) and with self-collision (URDF_USE_SELF_COLLISION); Articula
      always tracks the self pairs it keeps after its parent-child and neutral-pose filters.
  (b) 30 cubes (0.1 m) in a pile on a plane: three 3 x 3 layers (3 cm apart) and 3 on top, slightly yawed
      and offset, each resting 1 mm into the one below.

One step: pybullet ``performCollisionDetection()`` (its bodies' transforms are already in its world);
Articula ``world.update()`` + ``world.detect()`` with the body placements already written in place (the
``world.body_placements`` views the simulation fills), and, for information, ``world.update(placements)``
(copying one (R, p) array pair per multibody) + ``world.detect()``.
Each timing is the median of ``--repeats`` runs of ``--steps`` steps, the runs of the two engines
interleaved so that both see the same machine load; the ratio is Articula / pybullet (< 1: Articula
faster).  Run from the repository root:  python bench/collision.py
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pybullet as pb  # noqa: E402

import engine  # noqa: E402
from engine import spatial  # noqa: E402
from engine.collision import CollisionSettings, CollisionWorld, placements_at  # noqa: E402
from engine.model.model import Geometry  # noqa: E402
from engine.model.paths import example_robot_data_dir  # noqa: E402

CUBE = 0.1


def step_times(steps, repeats, *step_functions):
    """Median time per call of each function, the repeats interleaved so that all see the same load."""
    runs = [[] for _ in step_functions]
    for f in step_functions:
        f()
    for _ in range(repeats):
        for f, out in zip(step_functions, runs):
            t = time.perf_counter()
            for _ in range(steps):
                f()
            out.append((time.perf_counter() - t) / steps)
    return [float(np.median(r)) for r in runs]


def ground():
    return SimpleNamespace(name="ground", geometries=[Geometry("ground", -1, "plane", (), np.eye(3), np.zeros(3))])


def talos_scene():
    """Articula world, placements and pybullet bodies for Talos standing on the plane."""
    urdf = example_robot_data_dir() / "talos_data" / "robots" / "talos_reduced.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints simulated as independent joints
        model = engine.load_model(urdf, floating_base=True)
    mb = SimpleNamespace(name="talos", model=model, R=np.eye(3), p=np.zeros(3))
    world = CollisionWorld([mb], [ground()])
    q = engine.neutral(model)
    world.update(placements_at([mb], [q]))
    z_sole = world.workspace.lo[world.shapes.kind != 6, 2].min()
    q[2] = -z_sole - 0.001  # soles 1 mm into the ground
    placements = placements_at([mb], [q])

    def pybullet_talos(flags):
        client = pb.connect(pb.DIRECT)
        pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client), physicsClientId=client)
        body = pb.loadURDF(str(urdf), [0, 0, 0], flags=flags, physicsClientId=client)
        com = np.array(pb.getDynamicsInfo(body, -1, physicsClientId=client)[3])  # pybullet places a base by
        pb.resetBasePositionAndOrientation(body, (q[:3] + com).tolist(), [0, 0, 0, 1],  # its inertial frame
                                           physicsClientId=client)
        for j in range(pb.getNumJoints(body, physicsClientId=client)):
            pb.resetJointState(body, j, 0.0, physicsClientId=client)
        return client
    return world, placements, pybullet_talos


def pile_poses():
    rng = np.random.default_rng(7)
    poses = []
    for layer in range(4):
        cells = [(i, j) for i in range(3) for j in range(3)] if layer < 3 else [(0, 1), (1, 1), (2, 1)]
        for i, j in cells:
            R = spatial.rotation_axis_angle([0, 0, 1], rng.uniform(-0.1, 0.1))
            p = np.array([(i - 1) * 0.13 + rng.uniform(-0.005, 0.005), (j - 1) * 0.13 + rng.uniform(-0.005, 0.005),
                          CUBE / 2 + layer * (CUBE - 0.001) - 0.001])
            poses.append((R, p))
    return poses


def cubes_scene(tmp):
    poses = pile_poses()
    path = Path(tmp) / "cube.urdf"
    path.write_text(f'<robot name="cube"><link name="cube"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
                    f'izz="1" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><box size="{CUBE} {CUBE} '
                    f'{CUBE}"/></geometry></collision></link></robot>')
    model = engine.load_model(path, floating_base=True)
    mbs = [SimpleNamespace(name=f"cube{i}", model=model, R=np.eye(3), p=np.zeros(3)) for i in range(len(poses))]
    world = CollisionWorld(mbs, [ground()], settings=CollisionSettings())
    placements = [(R[None], p[None]) for R, p in poses]

    def pybullet_cubes():
        client = pb.connect(pb.DIRECT)
        pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client), physicsClientId=client)
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[CUBE / 2] * 3, physicsClientId=client)
        for R, p in poses:
            pb.createMultiBody(1.0, shape, basePosition=p.tolist(),
                               baseOrientation=spatial.rotation_to_quaternion(R).tolist(), physicsClientId=client)
        return client
    return world, placements, pybullet_cubes


def compare(name, world, placements, client, steps, repeats):
    for (R, p), (R_view, p_view) in zip(placements, world.body_placements):
        R_view[:], p_view[:] = R, p

    def ours():
        world.update()
        return world.detect()

    def ours_copying():
        world.update(placements)
        return world.detect()

    def pybullet():
        pb.performCollisionDetection(physicsClientId=client)

    t_ours, t_copy, t_pb = step_times(steps, repeats, ours, ours_copying, pybullet)
    print(f"{name:<32} articula {t_ours * 1e6:6.1f} us ({len(ours()):3d} contacts; {t_copy * 1e6:6.1f} us copying "
          f"placements)   pybullet {t_pb * 1e6:7.1f} us ({len(pb.getContactPoints(physicsClientId=client)):3d} "
          f"contacts)   ratio {t_ours / t_pb:5.2f} ({t_copy / t_pb:5.2f} copying)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"collision detection per step, median of {args.repeats} x {args.steps} steps "
          f"({os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f})")
    world, placements, pybullet_talos = talos_scene()
    compare("(a) Talos on plane, pb no self", world, placements, pybullet_talos(0), args.steps, args.repeats)
    compare("(a) Talos on plane, pb self", world, placements, pybullet_talos(pb.URDF_USE_SELF_COLLISION),
            args.steps, args.repeats)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        world, placements, pybullet_cubes = cubes_scene(tmp)
        compare("(b) 30 cubes in a pile", world, placements, pybullet_cubes(), args.steps, args.repeats)


if __name__ == "__main__":
    main()
