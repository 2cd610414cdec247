"""The collision world: every collision shape of a universe, the tracked pairs, and the per-step detection
(thesis seed 000 §2 "Collision detection": proximity or penetration, chosen pairs, contact point reduction).

    world = CollisionWorld(universe.multibodies, universe.statics, universe.materials, CollisionSettings())
    world.update(placements)     # per multibody: (body_R (nb, 3, 3), body_p (nb, 3)) world placements
    contacts = world.detect()    # Contacts (contacts.py), margin = settings.margin unless given

Each step: shape placements and bounding boxes, broadphase over the pair list (filtered once at load),
closed-form narrowphases in numba, FCL for the rest (narrowphase.py), reduction to at most N contacts per pair
(reduction.py).  Shapes never get re-created: FCL objects only receive their new transform, and only when a
pair needs them.  The result of a pair involving a convex hull or a mesh is kept and reused while the pair
barely moves (_reuse.py: apart, exactly; in contact, within ``settings.reuse_distance``, 0 by default); a new
pair list or margin starts afresh, and ``kept``/``restore`` save and restore what is kept with a state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from engine.collision import _kernels as K
from engine.collision._epa import MAX_FACES, MAX_ITERATIONS
from engine.collision._reuse import pair_cache, unpack
from engine.collision._world_arrays import FIELDS as WORLD_FIELDS
from engine.collision.contacts import Contacts, ContactTables
from engine.collision.filters import CollisionObject, PairFilter, candidate_pairs
from engine.collision.geometry import (BOX, CONVEX, CYLINDER, MESH, PLANE, POLYTOPES, SPHERE, SWEPT, pack_shapes,
                                      shapes_of)
from engine.collision.materials import material_table, pair_material
from engine.collision.narrowphase import FclNarrowphase
from engine.dynamics.kinematics import forward_kinematics
from engine.errors import SimulationError
from engine.model.model import neutral


@dataclass(frozen=True)
class CollisionSettings:
    margin: float = 0.0                  # m: gaps up to this are reported as proximity contacts (depth < 0)
    max_contacts_per_pair: int = 4       # N of the reduction
    merge_distance: float = 5e-4         # m: closer contacts of a pair merge into one
    face_tolerance: float = 1e-3         # m: contacts this close in depth to the deepest support one face
    fcl_max_contacts: int = 64           # triangle contacts FCL may return per mesh pair
    reuse_distance: float = 0.0          # m: a pair in contact keeps its contacts while it moves less (_reuse.py)
    filter: PairFilter = field(default_factory=PairFilter)

    def __post_init__(self):
        if not (np.isfinite(self.margin) and self.margin >= 0.0):
            raise ValueError(f"collision margin must be finite and >= 0, got {self.margin}")
        if not (1 <= self.max_contacts_per_pair <= 64):
            raise ValueError(f"max_contacts_per_pair must be in 1..64, got {self.max_contacts_per_pair}")
        if not self.merge_distance >= 0.0:
            raise ValueError(f"merge_distance must be >= 0, got {self.merge_distance}")
        if not (np.isfinite(self.face_tolerance) and self.face_tolerance >= 0.0):
            raise ValueError(f"face_tolerance must be finite and >= 0, got {self.face_tolerance}")
        if not (np.isfinite(self.reuse_distance) and self.reuse_distance >= 0.0):
            raise ValueError(f"reuse_distance must be finite and >= 0, got {self.reuse_distance}")
        object.__setattr__(self, "margin", float(self.margin))
        object.__setattr__(self, "merge_distance", float(self.merge_distance))
        object.__setattr__(self, "face_tolerance", float(self.face_tolerance))
        object.__setattr__(self, "reuse_distance", float(self.reuse_distance))
        object.__setattr__(self, "max_contacts_per_pair", int(self.max_contacts_per_pair))

    @property
    def reduction_tolerances(self) -> tuple:
        """(merge_distance, face_tolerance), as the reduction kernels take them (reduction.py)."""
        return self.merge_distance, self.face_tolerance


def world_placements(multibody, data):
    """World placements (R (nb, 3, 3), p (nb, 3)) of the bodies: (R_m, p_m) * oMi (data after kinematics)."""
    return multibody.R @ data.oMi_R, data.oMi_p @ multibody.R.T + multibody.p


def placements_at(multibodies, qs) -> list:
    """World placements of the bodies of every multibody at configurations ``qs`` (forward kinematics)."""
    out = []
    for mb, q in zip(multibodies, qs):
        data = mb.model.create_data()
        forward_kinematics(mb.model, data, np.asarray(q, dtype=float))
        out.append(world_placements(mb, data))
    return out


class CollisionWorld:
    """Collision shapes, tracked pairs and detection for a set of multibodies and static bodies.

    ``multibodies``: items with ``.name``, ``.model`` and the base placement ``.R``, ``.p`` in the world;
    ``statics``: items with ``.name`` and ``.geometries`` placed in the world frame.  Only geometries with
    ``role == "collision"`` are used.

    Public: ``objects`` (CollisionObject), ``geometries`` (Geometry), ``pairs`` (P, 2) tracked shape pairs,
    ``tables`` (ContactTables: objects, geometries and material of each pair), ``cache`` (the results kept for
    reuse, _reuse.PairCache), and ``body_placements[m]``:
    (R (nb, 3, 3), p (nb, 3)) views of the body placements of multibody m, which a caller may fill in place
    before ``update()`` instead of passing copies (``placements``: the same for every body, multibody after
    multibody). ``placements``: arrays (R (NB, 3, 3), p (NB, 3)) to be those placements, e.g. the rows of the
    simulation's ``WorldBodies`` its stages keep current (then ``update()`` has nothing to copy; the neutral-pose
    pair filter writes them once, here).
    """

    def __init__(self, multibodies=(), statics=(), materials=None, settings: CollisionSettings | None = None,
                 placements=None):
        self.settings = settings or CollisionSettings()
        self.multibodies = tuple(multibodies)
        self.body_offset = np.cumsum([0] + [mb.model.nbodies for mb in self.multibodies])
        self._collect(statics)
        self.shapes = pack_shapes(self._shape_list, self._slots, self._local_R, self._local_p)
        self._fcl = FclNarrowphase(self._shape_list, self.settings.fcl_max_contacts)
        self._step = 0
        self._allocate(len(self._shape_list), placements)
        K.place_shapes(self.shapes, self._ws_for(0), False)  # fixed shapes: placed once
        o = self.body_offset
        self.placements = (self._buffers["body_R"], self._buffers["body_p"])
        self.body_placements = [(self._buffers["body_R"][o[m]:o[m + 1]], self._buffers["body_p"][o[m]:o[m + 1]])
                                for m in range(len(self.multibodies))]
        self.material_table = material_table(materials)
        pairs, forced = candidate_pairs(self.objects, self.settings.filter)
        if self.settings.filter.exclude_neutral:
            pairs = self._without_neutral_contacts(pairs, forced)
        self._set_pairs(self._shape_pairs(pairs), self.material_table)

    # ----- construction -------------------------------------------------------------------------------------

    def _collect(self, statics):
        """Objects, geometries and their shapes, with the body slot and local placement of each shape."""
        objects, geometries, shape_object, shape_geometry = [], [], [], []
        self._shape_list, self._slots, self._local_R, self._local_p = [], [], [], []

        def add(obj, geoms, slot, place):
            pieces = [(g, s) for g in geoms for s in shapes_of(g, obj.mobile)]
            if not pieces:
                return
            objects.append(obj)
            for g, s in pieces:
                if not geometries or geometries[-1] is not g:
                    geometries.append(g)
                R, p = place(g)
                self._shape_list.append(s)
                self._slots.append(slot)
                self._local_R.append(R)
                self._local_p.append(p)
                shape_object.append(len(objects) - 1)
                shape_geometry.append(len(geometries) - 1)

        for m, mb in enumerate(self.multibodies):
            model = mb.model
            coll = [g for g in model.geometries if g.role == "collision"]
            base = [g for g in coll if g.body < 0]
            add(CollisionObject(f"{mb.name}/{_base_name(model)}", m, -1, False), base, -1,
                lambda g, mb=mb: (mb.R @ g.R, mb.R @ g.p + mb.p))
            for b in range(model.nbodies):
                add(CollisionObject(f"{mb.name}/{model.body_name[b]}", m, b, True, int(model.body_parent[b])),
                    [g for g in coll if g.body == b], self.body_offset[m] + b, lambda g: (g.R, g.p))
        for k, st in enumerate(statics):
            add(CollisionObject(st.name, -1, k, False), [g for g in st.geometries if g.role == "collision"], -1,
                lambda g: (g.R, g.p))
        self.objects, self.geometries = tuple(objects), tuple(geometries)
        self.shape_object = np.array(shape_object, dtype=np.int64)
        self.shape_geometry = np.array(shape_geometry, dtype=np.int64)

    def _allocate(self, nshapes, placements=None):
        """The workspace arrays that do not depend on the pair list (the body placements: ``placements``, if given)."""
        kmax = max([len(s.vertices) for s in self._shape_list] + [0]) + self.settings.fcl_max_contacts + 64
        nmax = self.settings.max_contacts_per_pair
        nbodies = int(self.body_offset[-1])
        if placements is None:
            placements = np.tile(np.eye(3), (nbodies, 1, 1)), np.zeros((nbodies, 3))
        R, p = placements
        if R.shape != (nbodies, 3, 3) or p.shape != (nbodies, 3) or not (R.flags.c_contiguous and p.flags.c_contiguous):
            raise ValueError(f"placements must be C-contiguous (R ({nbodies}, 3, 3), p ({nbodies}, 3)), got "
                             f"{R.shape}, {p.shape}")
        self._buffers = {
            "body_R": R, "body_p": p,
            "R": np.zeros((nshapes, 3, 3)), "p": np.zeros((nshapes, 3)), "lo": np.zeros((nshapes, 3)),
            "hi": np.zeros((nshapes, 3)), "raw": np.zeros((kmax, 7)), "polys": np.zeros((3, kmax, 3)),
            "uv": np.zeros((kmax, 2)), "selected": np.zeros(kmax, dtype=np.int64),
            "work": np.zeros(2 * (nmax + 1), dtype=np.int64)}

    def _ws_for(self, npairs):
        """A Workspace on the shared arrays with outputs sized for ``npairs`` pairs."""
        nmax = self.settings.max_contacts_per_pair
        return K.Workspace(**self._buffers, point=np.zeros((npairs * nmax, 3)), normal=np.zeros((npairs * nmax, 3)),
                           depth=np.zeros(npairs * nmax), pair=np.zeros(npairs * nmax, dtype=np.int64),
                           fcl_pairs=np.zeros(npairs, dtype=np.int64), axis=np.zeros((npairs, 3)),
                           simplex=np.zeros((3, 4 + MAX_ITERATIONS, 3)), epa_faces=np.zeros((MAX_FACES, 3), np.int64),
                           epa_normal=np.zeros((MAX_FACES, 3)), epa_distance=np.zeros(MAX_FACES))

    def _shape_pairs(self, object_pairs):
        """Shape pairs (a, b, kind) of the object pairs, in object-pair order; the plane is always B."""
        by_object = [[] for _ in self.objects]
        for s, o in enumerate(self.shape_object):
            by_object[o].append(s)
        kinds = self.shapes.kind
        out = []
        for i, j in object_pairs:
            for a in by_object[i]:
                for b in by_object[j]:
                    if kinds[a] == PLANE and kinds[b] == PLANE:
                        continue
                    if kinds[a] == PLANE:
                        a, b = b, a
                    out.append((a, b, _pair_kind(kinds[a], kinds[b])))
        return out

    def _set_pairs(self, shape_pairs, table):
        arr = np.array(shape_pairs, dtype=np.int64).reshape(-1, 3)
        self.pairs = arr[:, :2].copy()
        kind = self.shapes.kind
        clipped = POLYTOPES + SWEPT + (CYLINDER,)  # shapes with an incident feature (_manifold._incident)
        manifold = np.array([(kind[a] in POLYTOPES or kind[b] in POLYTOPES) and kind[a] in clipped
                             and kind[b] in clipped for a, b in self.pairs], dtype=bool)
        hull = (CONVEX, MESH)  # shapes whose narrowphase runs over hundreds of vertices
        reuse = (arr[:, 2] == K.CONVEX) | ((arr[:, 2] == K.HALFSPACE) & np.isin(kind[arr[:, 0]], hull))
        self.pair_arrays = K.PairArrays(a=arr[:, 0].copy(), b=arr[:, 1].copy(), kind=arr[:, 2].copy(),
                                        manifold=manifold, reuse=reuse)
        mats = np.array([pair_material(table, self.geometries[self.shape_geometry[a]].material,
                                       self.geometries[self.shape_geometry[b]].material) for a, b in self.pairs],
                        dtype=float).reshape(-1, 2)
        self.tables = ContactTables(
            pair_object=_frozen(self.shape_object[self.pairs].reshape(-1, 2)),
            pair_geometry=_frozen(self.shape_geometry[self.pairs].reshape(-1, 2)),
            pair_mu=_frozen(mats[:, 0].copy()), pair_restitution=_frozen(mats[:, 1].copy()),   # contiguous: one
            # type whatever the number of pairs (a column of one row is contiguous, of more rows not: the kernels
            # taking them compiled twice)
            object_multibody=_frozen(np.array([o.multibody for o in self.objects], dtype=np.int64)),
            object_body=_frozen(np.array([o.body for o in self.objects], dtype=np.int64)))
        self.workspace = self._ws_for(len(self.pairs))
        s = self.settings
        self.cache = c = pair_cache(len(self.pairs), s.max_contacts_per_pair)
        self._reusing = s.reuse_distance > 0.0 and bool(reuse.any())     # contacts may be kept (``kept``)
        self._kept = -1, {}                          # (cache version, ``kept()``) of the last pack
        n = int(reuse.sum()) if self._reusing else 0  # pairs that can be kept in contact: the slots' rows
        self._slots = (np.zeros((2, n), np.int64), np.zeros((2, n, 14 + 9 * s.max_contacts_per_pair)),
                       np.zeros((2, 1)), np.array([-1, 0, 0, 1], np.int64))   # ``kept``: packed, slot, m, handed
        arrays = self.shapes, self.pair_arrays, self.workspace, self.cache, *self._slots
        jit = hasattr(K.world_arrays, "overloads")      # under NUMBA_DISABLE_JIT, a namespace of the same fields
        self._arrays = K.world_arrays(*arrays) if jit else SimpleNamespace(**dict(zip(WORLD_FIELDS, arrays)))
        self._pack = K.bind(K.pack_kept, self._arrays)
        self._detect = K.bind(K.detect_native_of, self._arrays, 0.0, s.max_contacts_per_pair, s.reduction_tolerances,
                              s.reuse_distance)
        append = K.bind(K.append_fcl_contacts, self.shapes, self.workspace, self.cache, 0, 0, 0, 0, False, 0.0, 0,
                        s.max_contacts_per_pair, s.reduction_tolerances, s.reuse_distance)
        self._append = lambda k, a, b, count, manifold, margin, nc: append(
            self.shapes, self.workspace, self.cache, k, a, b, count, manifold, margin, nc, s.max_contacts_per_pair,
            s.reduction_tolerances, s.reuse_distance)

    def _without_neutral_contacts(self, object_pairs, forced):
        """Drop the same-multibody pairs already in contact (within neutral_margin) in the neutral pose."""
        own = [(i, j) for i, j in object_pairs if (i, j) not in forced
               and self.objects[i].multibody == self.objects[j].multibody >= 0]
        if not own:
            return object_pairs
        self._set_pairs(self._shape_pairs(own), self.material_table)
        self.update(placements_at(self.multibodies, [neutral(mb.model) for mb in self.multibodies]))
        contacts = self.detect(self.settings.filter.neutral_margin)
        touching = {(int(i), int(j)) for i, j in zip(contacts.object_a, contacts.object_b)}
        return [p for p in object_pairs if p not in touching]

    # ----- per step -----------------------------------------------------------------------------------------

    def update(self, placements=None):
        """Take the world placements of the bodies: one ``(R (nb, 3, 3), p (nb, 3))`` per multibody (copied),
        or, without argument, those the caller wrote into the views ``body_placements`` (no copy)."""
        ws = self.workspace
        if placements is None:
            self._step += 1
            return
        if len(placements) != len(self.multibodies):
            raise ValueError(f"update needs the placements of {len(self.multibodies)} multibodies, "
                             f"got {len(placements)}")
        if len(placements):
            try:
                np.concatenate([pl[0] for pl in placements], axis=0, out=ws.body_R)
                np.concatenate([pl[1] for pl in placements], axis=0, out=ws.body_p)
            except ValueError as exc:
                sizes = [mb.model.nbodies for mb in self.multibodies]
                raise ValueError(f"placements must be (R (nb, 3, 3), p (nb, 3)) per multibody with nb = {sizes}: "
                                 f"{exc}") from exc
        self._step += 1

    def detect(self, margin: float | None = None) -> Contacts:
        """Contacts of all tracked pairs at the last ``update`` (proximity contacts up to ``margin``)."""
        s = self.settings
        if margin is None:
            margin = s.margin
        elif not 0.0 <= margin < np.inf:
            raise ValueError(f"collision margin must be finite and >= 0, got {margin}")
        ws = self.workspace
        nc, nf = self._detect(self._arrays, float(margin), s.max_contacts_per_pair, s.reduction_tolerances,
                              s.reuse_distance)
        if nc < 0:
            self._raise_non_finite()
        if nf:
            native = nc
            nc = self._fcl.run(self.shapes, self.pair_arrays, ws, nf, nc, self._step, margin, self._append)
            if nc > native:  # FCL pairs come after the native ones: back to pair order
                order = np.argsort(ws.pair[:nc], kind="stable")
                return Contacts(ws.point[order], ws.normal[order], ws.depth[order], ws.pair[order], self.tables)
        return self.first_contacts(nc)

    def first_contacts(self, nc) -> Contacts:
        """The workspace's first ``nc`` contacts, copied (the next detection rewrites the workspace)."""
        ws = self.workspace
        return Contacts(ws.point[:nc].copy(), ws.normal[:nc].copy(), ws.depth[:nc].copy(), ws.pair[:nc].copy(),
                        self.tables)

    def kept(self) -> dict:
        """The kept results of the pairs in contact (``kept_pair``, ``kept_rows``: a copy, _reuse.pack) and the
        margin they hold for (``kept_margin``), which with the placements make ``detect`` continue exactly as it
        would have (``restore``); empty when no contact can be kept. The kept "apart" results are left out:
        reusing one gives what the narrowphase gives. The copy is made again only when a result kept in contact
        changed (the cache's ``version``): until then the same arrays, which nothing writes. The detection makes
        it (``_kernels.pack_kept``, while the cache is warm), else, when a result changed after it (FCL's pairs, a
        ``restore``), this call does, into the slot not handed out last: the next packs never write the slot
        handed out now, so the warm start ``Simulation`` keeps from the last good step stays as it was through
        the next step, as views of a slot (a ``State`` copies them)."""
        c = self.cache
        if not self._reusing:
            return {}
        if self._kept[0] != c.version[0]:               # packed again only when a result kept in contact changed
            pairs, rows, margin, packed = self._slots
            if packed[0] != c.version[0]:
                self._pack(self._arrays)
            slot, m = int(packed[1]), int(packed[2])
            packed[3] = slot
            self._kept = int(c.version[0]), dict(kept_pair=pairs[slot, :m], kept_rows=rows[slot, :m],
                                                 kept_margin=margin[slot])
        return dict(self._kept[1])

    def restore(self, kept=None):
        """Forget every kept result, then take back those of ``kept()`` (in a dict that may hold other keys;
        none when it has no ``kept_pair``)."""
        if kept and "kept_pair" in kept:
            unpack(self.cache, np.asarray(kept["kept_pair"], np.int64), np.asarray(kept["kept_rows"], float))
            self.cache.margin[:] = kept["kept_margin"]
        else:
            self.cache.reach[:] = 0.0
            self.cache.version[0] += 1

    def _raise_non_finite(self):
        ws = self.workspace
        bad = ~np.isfinite(ws.body_p).all(axis=1) | ~np.isfinite(ws.body_R).all(axis=(1, 2))
        names = sorted({self.multibodies[int(np.searchsorted(self.body_offset, b, side="right")) - 1].name
                        for b in np.flatnonzero(bad)})
        raise SimulationError("non-finite body placement given to collision detection", value=names)

    def object_name(self, i: int) -> str:
        return self.objects[i].name


def _pair_kind(ka, kb) -> int:
    if kb == PLANE:
        return K.HALFSPACE
    if ka in SWEPT and kb in SWEPT:
        return K.SWEPT
    if {ka, kb} == {SPHERE, BOX}:
        return K.SPHERE_BOX
    if ka == BOX and kb == BOX:
        return K.BOX_BOX
    return K.CONVEX


def _base_name(model) -> str:
    """Name of the link that is the multibody's base frame (the first frame on body -1), else 'base'."""
    for name, body in zip(model.frame_name, model.frame_body):
        if body < 0:
            return name
    return "base"


def _frozen(a):
    a.flags.writeable = False
    return a
