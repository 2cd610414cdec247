"""The FCL narrowphase: the pairs the numba pipeline cannot do in closed form (convex hulls, triangle meshes,
cylinders, capsule-box ...), called only for pairs whose bounding boxes overlap.

FCL conventions converted here: FCL's normal points from the contact's ``o1`` geometry to its ``o2`` (FCL
puts a BVH first whatever the call order), ours from B to A; its depth is taken in absolute value (sphere -
triangle reports it negative); its contact position is midway between the surfaces for convex pairs and on
the triangle for a mesh, moved here to the midway point.  In penetration FCL gives GJK/EPA's single
contact for convex pairs (for polytopes, face_manifold then rebuilds the whole face contact around that
normal) and the triangle-triangle contacts of a BVH mesh (reduced afterwards).  Within the margin and not
penetrating, ``fcl.distance`` gives the nearest points: normal = (x_A - x_B)/|x_A - x_B|, depth = -distance.
"""
from __future__ import annotations

import math

import fcl
import numpy as np

from engine.collision.geometry import MESH


class FclNarrowphase:
    """FCL objects of every shape and the request/result objects, reused every step."""

    def __init__(self, shapes, max_contacts: int):
        self.geometries = [s.fcl_geometry for s in shapes]
        self.objects = [fcl.CollisionObject(g) for g in self.geometries]
        self.placed_at = np.full(len(shapes), -1, dtype=np.int64)  # step at which each object was last placed
        self.request = fcl.CollisionRequest(num_max_contacts=max_contacts, enable_contact=True)
        self.distance_request = fcl.DistanceRequest(enable_nearest_points=True)

    def _place(self, ws, s, step):
        if self.placed_at[s] != step:
            self.objects[s].setTransform(fcl.Transform(ws.R[s], ws.p[s]))
            self.placed_at[s] = step
        return self.objects[s]

    def run(self, sh, pairs, ws, nf, nc, step, margin, append):
        """Contacts of the pairs ``ws.fcl_pairs[:nf]``, appended to the output from row ``nc`` by
        ``append(pair, a, b, count, manifold, margin, nc) -> new count`` (``_kernels.append_fcl_contacts`` on the
        world's arrays); new count."""
        for k in ws.fcl_pairs[:nf]:
            a, b = pairs.a[k], pairs.b[k]
            oa, ob = self._place(ws, a, step), self._place(ws, b, step)
            result = fcl.CollisionResult()
            if fcl.collide(oa, ob, self.request, result) > 0:
                mesh_side = 1.0 if sh.kind[a] == MESH else (-1.0 if sh.kind[b] == MESH else 0.0)
                found = self._convert(result.contacts, self.geometries[a], mesh_side, ws.raw)
                if found:
                    nc = append(k, a, b, found, pairs.manifold[k], margin, nc)
            elif margin > 0.0:
                nc = self._proximity(ws, k, a, b, oa, ob, margin, nc, pairs.manifold[k], append)
        return nc

    @staticmethod
    def _convert(contacts, geometry_a, mesh_side, raw):
        """FCL contacts into the rows of ``raw`` (point, normal B -> A, depth >= 0); those without a normal
        are dropped.  ``mesh_side``: +1 (-1) when A (B) is a triangle mesh, whose surface FCL's position is on:
        the midpoint is then x +- depth/2 n."""
        k = 0
        for c in contacts[:raw.shape[0]]:
            length = math.sqrt(c.normal @ c.normal)
            if length < 0.5:  # EPA on touching pieces may return a zero normal
                continue
            n = (-c.normal if c.o1 is geometry_a else c.normal) / length
            depth = abs(c.penetration_depth)
            raw[k, :3] = c.pos + (0.5 * mesh_side * depth) * n
            raw[k, 3:6] = n
            raw[k, 6] = depth
            k += 1
        return k

    def _proximity(self, ws, k, a, b, oa, ob, margin, nc, manifold, append):
        result = fcl.DistanceResult()
        d = fcl.distance(oa, ob, self.distance_request, result)
        if not (0.0 < d <= margin):
            return nc
        xa, xb = result.nearest_points
        gap = xa - xb
        length = math.sqrt(gap @ gap)
        if length < 1e-12:
            return nc
        ws.raw[0, :3], ws.raw[0, 3:6], ws.raw[0, 6] = 0.5 * (xa + xb), gap / length, -length
        return append(k, a, b, 1, manifold, margin, nc)
