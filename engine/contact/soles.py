"""Deformable soles in the contact stage: the hybrid rigid + FEM contact of seed 000 §3.8–3.9 (thesis §4.3–4.5),
solved inside the same frictional contact problem as every rigid contact.

A sole (``engine.model.sole_xml.SoleSpec``) is glued under a body; its candidate contact nodes sit at
X + U_c in the sole frame, U_c (3c,) their displacement, part of the simulation's state. Each step:

1. **Detection** (``sole_geometry``): the thesis's node test (§4.3.4) against planes, boxes and meshes — a node
   within the contact margin is a contact of the sole's body at the displaced node, weight 1 on it — and
   spheres (granular ground, §4.5) against the bottom triangles, the contact spread on a triangle's three nodes
   with barycentric weights d (P_i = [d₁I d₂I d₃I], eqs. 4.23–4.29). Obstacles are static or carried by a body
   of another multibody (a box the foot steps on, a ball under it; ``Obstacle``): the contact then couples the
   two bodies in one group like any rigid contact.
2. **The compliance block** (4.15–4.21, 4.32, corrected as in ``engine.deformable.hybrid``): after Λ, the
   group's W gains Σ_ab d_ia d_lb C_i R K_c⁻¹[s_ia, s_lb] Rᵀ C_lᵀ / δt between contacts i, l of one sole and
   its free velocity −C_i R P_i U_c / δt (R: the sole frame in world axes, C_i the contact frame): the
   contact point's motion relative to its body over the step, P U̇_c = P (K_c⁻¹ F_c − U_cᵗ)/δt (4.17, 4.22).
3. **The node update** (4.22): after the solve, F_c = Pᵀ f in the sole frame and U_c = K_c⁻¹ F_c.

The sole is quasi-static (massless, as in the thesis): a node that leaves the ground springs back at once. Its
elastic energy is ½ U_c · K_c U_c. Strain beyond the small-strain limit (10 %, ``engine.deformable.strain``)
is warned about once per sole and counted in ``summary()``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from engine.collision.contacts import Contacts, ContactTables
from engine.collision.materials import pair_material
from engine.contact import _sole_kernels as SK
from engine.contact import _stepping_kernels as K
from engine.contact import sole_geometry as G
from engine.deformable.strain import SMALL_STRAIN, SmallStrainWarning, max_strain
from engine.model.meshes import load_geometry_mesh
from engine.state import SoleState

STRAIN_PROBE = 0.5   # the exact strain is computed once the node compression passes this fraction of the limit
STIFFNESS_CACHE = 8  # node sets whose stiffness (``SoleContacts._stiffness``) is kept, per sole
NODE_TESTS = {"plane": G.plane_nodes, "box": G.box_nodes, "mesh": G.mesh_nodes}
STICK_TRIES = 3      # stick-first solves a step, each letting go of the contacts that pulled in the last


class SoleContacts:
    """The soles of a universe against its planes, boxes, spheres and meshes, static or moving (``detect``,
    ``add_compliance``, ``update``).

    ``specs``: (multibody index, SoleSpec) pairs; ``world``: the CollisionWorld whose objects and tables the
    sole contacts extend (one extra pair per sole and obstacle, after the world's, so contacts stay sorted by
    pair); ``bodies``: the contact stage's WorldBodies.
    """

    def __init__(self, specs, world, bodies, margin: float):
        self.specs, self.bodies, self.margin = [s for _, s in specs], bodies, margin
        self.global_body = np.array([bodies.offset[m] + s.body for m, s in specs], dtype=np.int64)
        self.rest = [s.sole.mesh.node_position[s.sole.contact_node] for s in self.specs]
        self.U = [np.zeros(3 * len(s.sole.contact_node)) for s in self.specs]
        self.F = [np.zeros((len(s.sole.contact_node), 3)) for s in self.specs]     # last node forces, sole frame
        self.obstacles = obstacles(world, bodies)
        self.bounds = np.array([o.bounds for o in self.obstacles]).reshape(-1, 2, 3)     # (lo, hi) per obstacle
        self.own = np.array([[o.multibody == m for o in self.obstacles] for m, _ in specs], bool).reshape(
            len(specs), len(self.obstacles))            # a sole does not meet its own robot
        #: the moving obstacles, their bodies and reach (a ball: centre in the body frame, radius)
        self.moving = np.array([j for j, o in enumerate(self.obstacles) if o.body >= 0 and not self.own[:, j].all()],
                               np.int64)
        self.moving_body = np.array([self.obstacles[j].body for j in self.moving], np.int64)
        reach = [self.obstacles[j].reach() for j in self.moving]
        self.reach_centre = np.array([c for c, _ in reach], float).reshape(-1, 3)
        self.reach_radius = np.array([r for _, r in reach], float)
        self.tables, self.pair, self.object_names = _extended_tables(world, specs, self.obstacles)
        self.bottom = [s.sole.contact_triangle for s in self.specs]       # (t, 3) slots of the bottom triangles
        self.strain = [0.0] * len(self.specs)              # the largest strain met, per sole
        self._probed = [0.0] * len(self.specs)             # compression at the last exact strain
        self._warned = set()
        self._work = np.zeros((0, 0))                      # add_sole_compliance's rows K_c⁻¹ P_Fᵀ
        self._x = [np.empty_like(r) for r in self.rest]    # the displaced nodes, world frame (``detect``), …
        self._R, self._p = np.empty((len(self.specs), 3, 3)), np.empty((len(self.specs), 3))   # … each sole's frame
        self._box, self._near = np.empty((2, 3)), np.empty((len(self.specs), len(self.obstacles)), np.int64)
        self.static_plane = np.array([o.kind == "plane" and o.body < 0 for o in self.obstacles], bool).reshape(-1)
        self.plane_normal = np.array([o.shape[0] if p else np.zeros(3)
                                      for o, p in zip(self.obstacles, self.static_plane)]).reshape(-1, 3)
        self.plane_offset = np.array([o.shape[1] if p else 0.0 for o, p in zip(self.obstacles, self.static_plane)])
        rows = sum(len(r) for r in self.rest) * max(int(self.static_plane.sum()), 1)   # room for every node on each
        self._planes = (np.empty((rows, 3)), np.empty((rows, 3)), np.empty(rows), np.empty(rows, np.int64),
                        np.empty((rows, 3), np.int64), np.empty((rows, 3)))    # the soles' contacts with the planes
        self._found = np.empty((len(self.specs), 2), np.int64)                # per sole: obstacles near, contacts
        #: the arguments of ``soles_on_near_planes`` (``detect``): arrays and views of arrays updated in place, the
        #: same every step
        self._detection = ((tuple(self.rest), tuple(self.U), tuple(self._x), self.global_body, bodies.R, bodies.p,
                            np.array([s.R for s in self.specs], float), np.array([s.p for s in self.specs], float),
                            margin, self._R, self._p, self._box, self.moving, self.moving_body, self.reach_centre,
                            self.reach_radius, self.bounds, self.own, self._near, self.static_plane, self.plane_normal,
                            self.plane_offset, self.pair) + self._planes + (self._found,))
        self._contact = []      # per sole: [contact indices, slots, weights, frames, node contacts, each node once]
        #: per sole, what ``stick_first`` reads of it besides its contacts: K_c⁻¹, U_c and F_c (updated in place)
        self._kept = [(s.sole.K_c_inv, U, F) for s, U, F in zip(self.specs, self.U, self.F)]
        self._stiffnesses = [{} for _ in self.specs]       # per sole: ``_stiffness`` of the node sets met
        self._solved = set()                               # the soles whose U_c ``stick_first`` left this step
        self.stick_first_solves = [0, 0]                   # groups solved stick-first, of those tried

    def __len__(self):
        return len(self.specs)

    # ----- state ----------------------------------------------------------------------------------------------

    def displacements(self) -> list:
        """Copies of every sole's U_c (3c,), m, sole frame."""
        return [U.copy() for U in self.U]

    def set_displacements(self, U):
        """Restore ``displacements()``; ``None`` or empty: every sole at rest."""
        for k, own in enumerate(self.U):
            own[:] = 0.0 if not U else np.asarray(U[k], dtype=float)

    def elastic_energy(self) -> float:
        """Σ ½ U_c · K_c U_c over the soles (J)."""
        return float(sum(0.5 * U @ s.sole.K_c @ U for s, U in zip(self.specs, self.U)))

    # ----- per step -------------------------------------------------------------------------------------------

    def placement(self, k) -> tuple[np.ndarray, np.ndarray]:
        """World placement (R, p) of sole k's frame."""
        g, s = self.global_body[k], self.specs[k]
        return self.bodies.R[g] @ s.R, self.bodies.R[g] @ s.p + self.bodies.p[g]

    def detect(self, contacts: Contacts) -> Contacts:
        """``contacts`` followed by those of every sole with the obstacles within reach (``sole_geometry``), static
        or carried by another multibody (a box on the floor, another robot): planes, boxes and meshes by the node
        test, spheres (grains) against the bottom triangles."""
        SK.soles_on_near_planes(*self._detection)
        n, parts, self._contact, placed = len(contacts), [], [], set()
        row = start = 0                                  # the soles' rows in ``_planes``; those not yet in ``parts``
        for k, (near, m) in enumerate(self._found.tolist()):
            if m >= 0:                                   # static planes alone (the ground): found by the kernel
                slot, weight = self._planes[4:]
                self._contact.append([np.arange(n, n + m), slot[row:row + m], weight[row:row + m], None, True])
                n, row = n + m, row + m
                continue
            if row > start:
                parts.append(tuple([b[start:row] for b in self._planes[:4]]))
                start = row
            x = self._x[k]
            found = []
            for j in self._near[k, :near]:
                ob = self.obstacles[j]
                if ob.body >= 0 and j not in placed:
                    ob.place(self.bodies.R[ob.body], self.bodies.p[ob.body])
                    placed.add(j)
                kind, shape = ob.kind, ob.shape
                if kind == "sphere":
                    triangle, point, normal, depth, weight = G.sphere_triangles(x, self.bottom[k], *shape,
                                                                               self.margin)
                    slot = self.bottom[k][triangle]
                else:
                    nodes, point, normal, depth, weight = NODE_TESTS[kind](x, *shape, self.margin)
                    slot = np.repeat(nodes[:, None], 3, axis=1)
                if len(depth):
                    parts.append((point, normal, depth, np.full(len(depth), self.pair[k, j], dtype=np.int64)))
                    found.append((slot, weight, kind))
            if len(found) == 1:
                slot, weight = found[0][:2]
            else:
                slot = np.concatenate([f[0] for f in found]) if found else np.zeros((0, 3), np.int64)
                weight = np.concatenate([f[1] for f in found]) if found else np.zeros((0, 3))
            nodes = all(f[2] != "sphere" for f in found) and (len(found) == 1 or
                                                               len(np.unique(slot[:, 0])) == len(slot))
            self._contact.append([np.arange(n, n + len(slot)), slot, weight, None, nodes])
            n += len(slot)
        if row > start:
            parts.append(tuple([b[start:row] for b in self._planes[:4]]))
        if not parts:
            return Contacts(contacts.point, contacts.normal, contacts.depth, contacts.pair, self.tables)
        point, normal, depth, pair = zip(*parts)
        return Contacts(np.concatenate((contacts.point,) + point), np.concatenate((contacts.normal,) + normal),
                        np.concatenate((contacts.depth,) + depth), np.concatenate((contacts.pair,) + pair), self.tables)

    def shift(self, a, dt):
        """Each sole contact's frame F_i = C_i R (sole frame → contact frame, R this step's sole placement from
        ``detect``) and its free velocity u_i −= C_i R P_i U_c / δt (module docstring, step 2;
        ``_stepping_kernels.sole_frames``); ``a``: the contact stage's layout."""
        self._solved = set()
        for k, item in enumerate(self._contact):
            index, slot, weight = item[:3]
            item[3] = np.empty((len(index), 3, 3))
            if len(index):
                K.sole_frames(a["contact_row"], index, a["C"], self._R[k], slot, weight, self.U[k], dt, a["u_all"],
                              item[3])

    def add_compliance(self, a, W, dt):
        """W_g += Σ d d C R K_c⁻¹ Rᵀ Cᵀ / δt between each sole's contacts (module docstring, step 2;
        ``_stepping_kernels.add_sole_compliance``), after ``shift``; ``a``: the contact stage's layout. The soles
        of a group solved stick-first (``stick_first``) have no W."""
        for k, (index, slot, weight, frames, _) in enumerate(self._contact):
            if not len(index) or k in self._solved:     # a sole of a group solved stick-first
                continue
            g = int(np.searchsorted(a["row_start"], a["contact_row"][index[0]], side="right")) - 1
            r0, r1, w0 = a["row_start"][g], a["row_start"][g + 1], a["w_start"][g]
            K_inv = self.specs[k].sole.K_c_inv
            if self._work.shape[0] < 3 * len(index) or self._work.shape[1] < len(K_inv):
                self._work = np.empty((3 * len(index), len(K_inv)))
            K.add_sole_compliance(W[w0:w0 + (r1 - r0) ** 2].reshape(r1 - r0, r1 - r0), r0, a["contact_row"], index,
                                  frames, K_inv, slot, weight, dt, self._work)

    def stick_terms(self, a, g) -> tuple | None:
        """What ``stick_first`` needs of group g's soles (tuples, one entry per sole): their indices, contacts, the
        contacts' frames, nodes and active flags (all), then ``_kept``'s K_c⁻¹, U_c and F_c; None unless every
        contact of the group is a node contact of a sole (no grain between nodes, no node met twice), after
        ``shift``."""
        r0, r1 = a["row_start"][g], a["row_start"][g + 1]
        soles, rows = [], 0
        for k, (contacts, slot, _, F, node_contacts) in enumerate(self._contact):
            if not len(contacts) or not r0 <= a["contact_row"][contacts[0]] < r1:
                continue
            if not node_contacts:
                return None
            node = np.ascontiguousarray(slot[:, 0])     # one layout for every sole (a tuple numba indexes)
            soles.append((k, contacts, F, node, np.ones(len(node), bool)) + self._kept[k])
            rows += 3 * len(contacts)
        if not rows or rows != r1 - r0:
            return None
        return tuple(zip(*soles))

    def stick_first(self, a, g, terms, factor_terms, dt, tol) -> tuple | None:
        """(Delassus method, solver stats as ``_stepping_kernels.solve_groups``) of group g, its forces into a["f"],
        if its contacts stick or carry nothing (``_sole_kernels.stick_first``), with its soles' node forces and
        displacements (4.22; ``update`` keeps them): ``terms`` from ``stick_terms``, ``factor_terms`` the arguments
        of ``_group_delassus_kernels.multibody_factors`` from ``lo`` to ``method`` (the group's one multibody: the factors
        of δt Λ and the first solve in one call, ``_sole_kernels.factored_stick_first``). The contacts that pull
        are let go, and the solve repeated, up to STICK_TRIES times. None if a contact would slip or an idle one
        sink: the caller then assembles W and solves."""
        r0, r1 = a["row_start"][g], a["row_start"][g + 1]
        b0, b1 = a["block_offset"][g], a["block_offset"][g + 1]
        soles, index, frames, node, active, K_inv, U, F = terms
        stats = np.empty(7)
        self.stick_first_solves[1] += 1
        u, contacts = a["u_all"][r0:r1], (index, frames, node, active)
        rest = (K_inv, a["block_start"][b0 + g:b1 + g + 1], a["block_kind"][b0:b1], a["block_mu"][b0:b1], tol,
                a["f"][r0:r1], stats, U, F)
        G = tuple([self._stiffness(k, n) for k, n in zip(soles, node)])      # first every contact active
        code, method, X, Om = SK.factored_stick_first(*factor_terms, u, dt, r0, *contacts, G, *rest)
        tries = 1
        while code == SK.PULLING and tries < STICK_TRIES:    # let go of the contacts that pulled
            tries += 1
            G = tuple([self._stiffness(k, n[flags]) for k, n, flags in zip(soles, node, active)])
            code = SK.stick_first(u, X, Om, dt, r0, a["contact_row"], *contacts, G, *rest)
        if code != SK.KEPT:
            return None
        self._solved.update(soles)
        self.stick_first_solves[0] += 1
        stats[0] = tries
        return method, stats

    def _stiffness(self, k, nodes):
        """G = (K_c⁻¹[s, s])⁻¹ of sole k for contacts at its nodes s (in that order): the stiffness of those nodes
        with the others free (the Schur complement of K_c); K_c itself when s is every candidate node in order,
        else a Cholesky inverse, cached per node set."""
        key = nodes.tobytes()
        cache = self._stiffnesses[k]
        if key not in cache:
            sole = self.specs[k].sole
            if len(nodes) == len(self.rest[k]) and (nodes == np.arange(len(nodes))).all():
                cache[key] = sole.K_c
            elif not len(nodes):
                cache[key] = np.zeros((0, 0))
            else:
                dofs = (3 * nodes[:, None] + np.arange(3)).ravel()
                G = cho_solve(cho_factor(sole.K_c_inv[np.ix_(dofs, dofs)]), np.eye(len(dofs)))
                cache[key] = 0.5 * (G + G.T)
            if len(cache) > STIFFNESS_CACHE:           # contact sets that changed: forget the oldest
                del cache[next(iter(cache))]
        return cache[key]

    def update(self, f_local):
        """U_c = K_c⁻¹ Pᵀ f (4.22) from the solved contact forces ``f_local`` (nc, 3; contact frames, on the
        sole), and the small-strain check."""
        for k, (index, slot, weight, frames, _) in enumerate(self._contact):
            if k in self._solved:                           # F_c and U_c from the stick-first solve
                self._check_strain(k)
                continue
            F = self.F[k]
            if len(index):                                  # F_n = P_iᵀ f_p (4.26 as corrected): d_j f on node j
                K.sole_node_forces(frames, f_local, index, slot, weight, F)
            else:
                F[:] = 0.0
            np.dot(self.specs[k].sole.K_c_inv, F.ravel(), out=self.U[k])
            self._check_strain(k)

    def relax(self):
        """No contact this step: every sole springs back to rest."""
        for U, F in zip(self.U, self.F):
            U[:] = 0.0
            F[:] = 0.0
        self._contact = [[np.zeros(0, np.int64), np.zeros((0, 3), np.int64), np.zeros((0, 3)), None, True]
                         for _ in self.specs]

    def states(self) -> tuple:
        """A frozen ``SoleState`` per sole: its world placement, node displacements and forces (for viewers)."""
        out = []
        for k, (U, F) in enumerate(zip(self.U, self.F)):
            R, p = self.placement(k)
            out.append(SoleState(*(_frozen(np.array(a, dtype=float)) for a in (R, p, U.reshape(-1, 3), F))))
        return tuple(out)

    def _check_strain(self, k):
        """The exact largest strain (all nodes recovered, 4.22) when the contact nodes' compression passes
        ``STRAIN_PROBE`` of the limit and 5 % beyond the compression of the last exact check (a new peak); a
        warning the first time the strain passes the limit."""
        spec = self.specs[k]
        compression, probed = SK.largest_magnitude(self.U[k]) / spec.thickness, self._probed[k]
        if compression < max(STRAIN_PROBE * SMALL_STRAIN, 1.05 * probed):
            if not probed:                              # small: the compression stands for the strain
                self.strain[k] = max(self.strain[k], compression)
            return
        self._probed[k] = compression
        strain = max_strain(spec.sole.mesh, spec.sole.displacement(self.U[k]))
        self.strain[k] = max(self.strain[k], strain)
        if strain > SMALL_STRAIN and k not in self._warned:
            self._warned.add(k)
            warnings.warn(f"{spec.source}: the sole under {spec.multibody}/{spec.link} is strained {strain:.3g}, "
                          f"beyond the small-strain limit {SMALL_STRAIN:g} of the linear model: the deformation "
                          f"is not physical (a stiffer material or a thicker sole?)", SmallStrainWarning,
                          stacklevel=2)

    def summary(self) -> str:
        """One line for a run summary: the soles, their largest strain, and those past the limit."""
        worst = ", ".join(f"{s.multibody}/{s.link} {e:.2%}" for s, e in zip(self.specs, self.strain))
        past = sum(e > SMALL_STRAIN for e in self.strain)
        solved, tried = self.stick_first_solves
        return (f"soles: {len(self.specs)}, largest strain {worst}" + (f"; {past} past the small-strain limit "
                                                                         f"{SMALL_STRAIN:.0%}" if past else "")
                + f"; stick-first solves {solved} of {tried}")


@dataclass
class Obstacle:
    """A plane, box, spheres or mesh a sole can meet: ``local`` its shape in the frame of the body carrying it
    (the world frame for a static body, the base frame for a fixed base), ``body`` that body's global index in
    WorldBodies (−1: not moving, placed once) and its ``multibody`` (−1: a static body); ``shape`` and ``bounds``
    (lo, hi) in the world frame, from the carrier's placement (``place``, before each detection for a moving
    one). Shapes: a plane (normal, offset) is the half-space z ≤ 0 of its frame, n · x ≤ offset (unbounded); a box
    (R, p, half extents); the spheres of one object (centres (s, 3), radii (s,)); a mesh (vertices, faces, unit
    face normals, per-triangle bounds lo, hi)."""

    kind: str
    local: tuple
    object: int                    # index in world.objects
    geometry: object               # the Geometry (its material)
    body: int = -1
    multibody: int = -1
    shape: tuple = ()
    bounds: np.ndarray = None

    def reach(self) -> tuple:
        """(centre, radius) of a ball holding the local shape (infinite for a plane): cheap world bounds for a
        moving obstacle before its shape is placed."""
        if self.kind == "plane":
            return np.zeros(3), np.inf
        if self.kind == "box":
            R_box, p_box, half = self.local
            return p_box, float(np.linalg.norm(half))
        points = self.local[0]
        lo, hi = points.min(axis=0), points.max(axis=0)
        extra = self.local[1].max() if self.kind == "sphere" else 0.0
        return 0.5 * (lo + hi), float(0.5 * np.linalg.norm(hi - lo) + extra)

    def place(self, R, p):
        """``shape`` and ``bounds`` for the carrier at (R, p)."""
        if self.kind == "plane":
            normal, offset = self.local
            n = R @ normal
            self.shape, self.bounds = (n, offset + n @ p), np.array([np.full(3, -np.inf), np.full(3, np.inf)])
        elif self.kind == "box":
            R_box, p_box, half = self.local
            centre, axes = R @ p_box + p, R @ R_box
            reach = np.abs(axes) @ half
            self.shape, self.bounds = (axes, centre, half), np.array([centre - reach, centre + reach])
        elif self.kind == "sphere":
            centre, radius = self.local
            centre = centre @ R.T + p
            self.shape = (centre, radius)
            self.bounds = np.array([(centre - radius[:, None]).min(axis=0), (centre + radius[:, None]).max(axis=0)])
        else:
            vertices, faces, normals = self.local
            vertices = np.ascontiguousarray(vertices @ R.T + p)
            corners = vertices[faces]
            lo, hi = corners.min(axis=1), corners.max(axis=1)
            self.shape = (vertices, faces, np.ascontiguousarray(normals @ R.T), lo, hi)
            self.bounds = np.array([lo.min(axis=0), hi.max(axis=0)])


def obstacles(world, bodies) -> list:
    """An ``Obstacle`` for every plane, box, sphere and mesh of the world, static bodies and fixed bases placed
    once, the others on their moving body (global index from ``bodies``, WorldBodies); the spheres of one object
    gathered into one obstacle."""
    out, spheres = [], {}
    for g in world.geometries:
        if g.role != "collision" or g.kind not in ("plane", "box", "sphere", "mesh"):
            continue
        o = _owner(world, g)
        if g.kind == "sphere":
            spheres.setdefault(o, []).append(g)
            continue
        if g.kind == "plane":
            local = (g.R[:, 2], float(g.R[:, 2] @ g.p))
        elif g.kind == "box":
            local = (g.R, g.p, 0.5 * np.asarray(g.size, float))
        else:
            mesh = load_geometry_mesh(g, g.name)
            local = (np.asarray(mesh.vertices, float) @ g.R.T + g.p, np.ascontiguousarray(mesh.faces, np.int64),
                     np.asarray(mesh.face_normals, float) @ g.R.T)
        out.append(_obstacle(world, bodies, g.kind, local, o, g))
    for o, items in spheres.items():
        local = (np.array([g.p for g in items]), np.array([g.size[0] for g in items]))
        out.append(_obstacle(world, bodies, "sphere", local, o, items[0]))
    return out


def _obstacle(world, bodies, kind, local, o, geometry) -> Obstacle:
    """The Obstacle of object o; placed unless it moves."""
    obj = world.objects[o]
    if obj.mobile:                                       # placed at each detection
        return Obstacle(kind, local, o, geometry, int(bodies.offset[obj.multibody] + obj.body), obj.multibody,
                        bounds=np.array([np.full(3, -np.inf), np.full(3, np.inf)]))
    ob = Obstacle(kind, local, o, geometry, -1, obj.multibody)
    if obj.multibody >= 0:                               # a fixed base: where its multibody is placed
        ob.place(world.multibodies[obj.multibody].R, world.multibodies[obj.multibody].p)
    else:
        ob.place(np.eye(3), np.zeros(3))
    return ob


def _owner(world, geometry) -> int:
    """The object index owning ``geometry`` (by the shapes built from it)."""
    g = next(i for i, item in enumerate(world.geometries) if item is geometry)
    return int(world.shape_object[np.flatnonzero(world.shape_geometry == g)[0]])


def _extended_tables(world, specs, obstacles) -> tuple[ContactTables, np.ndarray, list]:
    """The world's ContactTables with one object per sole body (reused when the body already carries shapes)
    and one pair per (sole, obstacle); returns them, the (soles, obstacles) pair indices and the added objects' names
    ("multibody/link")."""
    t = world.tables
    objects = {(o.multibody, o.body): i for i, o in enumerate(world.objects)}
    object_multibody, object_body, names = list(t.object_multibody), list(t.object_body), []
    pair_object, pair_geometry = [t.pair_object], [t.pair_geometry]
    pair_mu, pair_restitution = [t.pair_mu], [t.pair_restitution]
    index = np.zeros((len(specs), len(obstacles)), dtype=np.int64)
    npairs = len(t.pair_mu)
    geometry_index = {id(g): i for i, g in enumerate(world.geometries)}
    for k, (m, spec) in enumerate(specs):
        o = objects.get((m, spec.body))
        if o is None:
            o = objects[(m, spec.body)] = len(object_multibody)
            object_multibody.append(m)
            object_body.append(spec.body)
            names.append(f"{spec.multibody}/{spec.link}")
        for j, ob in enumerate(obstacles):
            mu, restitution = pair_material(world.material_table, spec.surface, ob.geometry.material)
            pair_object.append([[o, ob.object]])
            pair_geometry.append([[-1, geometry_index[id(ob.geometry)]]])
            pair_mu.append([mu])
            pair_restitution.append([restitution])
            index[k, j] = npairs
            npairs += 1
    frozen = [np.concatenate(a).astype(a[0].dtype) for a in (pair_object, pair_geometry, pair_mu, pair_restitution)]
    for a in frozen:
        a.flags.writeable = False
    tables = ContactTables(*frozen, object_multibody=_frozen(np.array(object_multibody, np.int64)),
                           object_body=_frozen(np.array(object_body, np.int64)))
    return tables, index, names


def _frozen(a):
    a.flags.writeable = False
    return a

