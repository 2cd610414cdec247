"""Sole meshes: a box from scikit-fem's structured generator, and shaped soles meshed by Gmsh (thesis §4.3.1, §4.6).

Every sole is in its own frame: x forward (heel at x = −length/2, toe at +length/2), y to the left, z up, the
top face (glued to the foot) at z = 0 and the sole below it. Lengths in metres, ``h`` the element size.

* ``box_mesh``: the thesis's parallelepiped (22 × 13 × 2 cm, §4.4), one material.
* ``two_layer_sole``: a stiff top layer (material 0) on a large rear pad and a small front pad (material 1),
  the "two layers of materials and pads" of §4.6 (Fig. 4.13; E = 3 / 1 MPa, ν = 0.25 there). The thesis gives
  no pad dimensions; the defaults are this module's choice.
* ``rounded_sole``: the box with its four bottom edges rounded (``edge="round"``, Fig. 4.15) or bevelled
  (``edge="bevel"``).

Gmsh meshes are cached on disk by their parameters and Gmsh's version (``engine.deformable.cache``), so a
sole opens again without remeshing; Gmsh runs single-threaded, which keeps its output reproducible.
``gmsh_session`` is the one way to run Gmsh here (also for a user's own shapes): it keeps the process's
signal dispositions as they were.
"""
from __future__ import annotations

import ctypes
import signal
import threading
from contextlib import contextmanager

import numpy as np

from engine.deformable import cache
from engine.deformable.mesh import SoleMesh, signed_volume6, sole_mesh
from engine.errors import SoleError

THESIS_SOLE = (0.22, 0.13, 0.02)   # length, width, thickness (m), seed 000 §4.4
_GMSH_LOCK = threading.Lock()      # Gmsh keeps one global state


def box_mesh(size=THESIS_SOLE, h: float = 0.01) -> SoleMesh:
    """A structured box of ``size`` (length, width, thickness), about ``h`` per cell edge, each hexahedral cell
    cut into 6 tetrahedra by ``skfem.MeshTet.init_tensor``."""
    from skfem import MeshTet      # imported here: scikit-fem takes 0.5 s to import, a cached sole needs none

    _check_lengths(size=size, h=h)
    axes = [np.linspace(lo, lo + s, max(1, int(round(s / h))) + 1)
            for lo, s in zip((-size[0] / 2, -size[1] / 2, -size[2]), size)]
    m = MeshTet.init_tensor(*axes)
    x, tets = m.p.T, m.t.T
    negative = signed_volume6(x, tets) < 0
    tets[negative] = tets[negative][:, [0, 2, 1, 3]]   # scikit-fem does not orient its tetrahedra
    return sole_mesh(x, tets)


def two_layer_sole(length=0.22, width=0.13, layer=0.01, pad=0.01, rear_pad=0.09, front_pad=0.05,
                   h: float = 0.01) -> SoleMesh:
    """Top layer (length × width × ``layer``, material 0) over a rear pad (``rear_pad`` long, from the heel) and
    a front pad (``front_pad`` long, to the toe), both ``pad`` thick and as wide as the sole (material 1)."""
    _check_lengths(length=length, width=width, layer=layer, pad=pad, rear_pad=rear_pad, front_pad=front_pad, h=h)
    if rear_pad + front_pad >= length:
        raise SoleError("two-layer sole: the pads overlap (rear_pad + front_pad >= length)", None, None,
                        rear_pad + front_pad)

    def build(gmsh):
        occ = gmsh.model.occ
        top = occ.addBox(-length / 2, -width / 2, -layer, length, width, layer)
        rear = occ.addBox(-length / 2, -width / 2, -layer - pad, rear_pad, width, pad)
        front = occ.addBox(length / 2 - front_pad, -width / 2, -layer - pad, front_pad, width, pad)
        _, pieces = occ.fragment([(3, top)], [(3, rear), (3, front)])
        occ.synchronize()
        return [[t for _, t in pieces[0]], [t for piece in pieces[1:] for _, t in piece]]

    return _gmsh_mesh("two_layer_sole", (length, width, layer, pad, rear_pad, front_pad), h, build)


def rounded_sole(size=THESIS_SOLE, radius: float = 0.01, edge: str = "round", h: float = 0.01) -> SoleMesh:
    """The box ``size`` with its four bottom edges rounded (radius ``radius``) or bevelled (45°, ``radius`` on
    each face). ``radius`` must be below the thickness and half the width."""
    _check_lengths(size=size, radius=radius, h=h)
    if edge not in ("round", "bevel"):
        raise SoleError("rounded sole: edge must be 'round' or 'bevel'", None, None, edge)
    length, width, thickness = size
    if radius >= min(thickness, width / 2):
        raise SoleError(f"rounded sole: the edge radius must be below the thickness {thickness} and half the "
                        f"width", None, None, radius)

    def build(gmsh):
        occ = gmsh.model.occ
        box = occ.addBox(-length / 2, -width / 2, -thickness, length, width, thickness)
        occ.synchronize()
        eps = 1e-6 * length
        bottom = [t for _, t in gmsh.model.getEntitiesInBoundingBox(
            -length, -width, -thickness - eps, length, width, -thickness + eps, 1)]
        if edge == "round":
            solid = occ.fillet([box], bottom, [radius])
        else:
            face = gmsh.model.getEntitiesInBoundingBox(-length, -width, -thickness - eps, length, width,
                                                       -thickness + eps, 2)[0][1]
            solid = occ.chamfer([box], bottom, [face] * len(bottom), [radius])
        occ.synchronize()
        return [[t for _, t in solid]]

    return _gmsh_mesh("rounded_sole", (tuple(size), radius, edge), h, build)


def _check_lengths(**lengths):
    for name, value in lengths.items():
        values = np.atleast_1d(np.asarray(value, dtype=float))
        if values.size == 0 or not (np.isfinite(values).all() and (values > 0).all()):
            raise SoleError(f"sole shape: {name} must be finite and > 0 (m)", None, None, value)


def _gmsh_mesh(shape: str, params, h: float, build) -> SoleMesh:
    """Mesh the volumes ``build(gmsh)`` creates (it returns one list of volume tags per material) with element
    size ``h``, or read them from the cache."""
    import gmsh

    entry = cache.key("gmsh", shape, params, h, gmsh.__version__)
    stored = cache.get(entry)
    if stored is None:
        with gmsh_session(shape) as session:
            groups = build(session)
            session.option.setNumber("Mesh.MeshSizeMin", h)
            session.option.setNumber("Mesh.MeshSizeMax", h)
            session.model.mesh.generate(3)
            stored = _extract(session, groups)
        cache.put(entry, stored)
    return sole_mesh(stored["node_position"], stored["tet_node"], stored["tet_material"])


@contextmanager
def gmsh_session(name: str):
    """A fresh Gmsh model named ``name``, quiet and single-threaded, removed on exit; Gmsh is initialised here
    (and finalised after) unless the caller already did. One session at a time (Gmsh has one global state).

    Gmsh's initialisation resets SIGPIPE to its default action (terminate the process), which Python ignores so
    that writing to a closed pipe raises ``BrokenPipeError``; the disposition is put back, else a child process
    that dies (the haptic process) kills its parent."""
    import gmsh                    # imported where used, as scikit-fem and meshio are

    with _GMSH_LOCK:
        own = not gmsh.isInitialized()
        if own:
            pipe = signal.getsignal(signal.SIGPIPE)
            gmsh.initialize(interruptible=False)   # no SIGINT handler: usable from any thread
            _set_sigpipe(pipe)
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.option.setNumber("General.NumThreads", 1)
        gmsh.model.add(f"articula-{name}")
        try:
            yield gmsh
        finally:
            gmsh.model.remove()
            if own:
                gmsh.finalize()


def _set_sigpipe(handler):
    """Restore SIGPIPE's disposition: through ``signal`` in the main thread, through libc elsewhere (only the
    SIG_IGN / SIG_DFL dispositions exist outside the main thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, handler)
    elif handler in (signal.SIG_IGN, signal.SIG_DFL):
        ctypes.CDLL(None).signal(signal.SIGPIPE, ctypes.c_void_p(int(handler)))


def _extract(gmsh, groups) -> dict:
    """Nodes, linear tetrahedra and their material (the index of the group holding their volume)."""
    tags, coords, _ = gmsh.model.mesh.getNodes()
    index = np.zeros(int(tags.max()) + 1, np.int64)
    index[tags.astype(np.int64)] = np.arange(len(tags))
    tets, material = [], []
    for i, volumes in enumerate(groups):
        for volume in volumes:
            _, nodes = gmsh.model.mesh.getElementsByType(4, volume)     # 4: the 4-node tetrahedron
            tets.append(index[nodes.astype(np.int64)].reshape(-1, 4))
            material.append(np.full(len(tets[-1]), i))
    return {"node_position": coords.reshape(-1, 3), "tet_node": np.vstack(tets),
            "tet_material": np.concatenate(material)}
