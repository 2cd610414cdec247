"""Small scenes for the collision tests: free bodies from one-link URDFs, static grounds, placements."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

import engine
from engine import spatial
from engine.collision import CollisionSettings, CollisionWorld, PairFilter
from engine.model.model import Geometry

I3 = np.eye(3)


def free_body(tmp_path, name, shape_xml, **geometry_fields):
    """A multibody ``name`` made of one free-floating link carrying the collision shape ``shape_xml``
    (e.g. ``'<box size="1 1 1"/>'``); ``geometry_fields`` replace fields of its Geometry."""
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<robot name="{name}"><link name="{name}"><inertial><mass value="1"/>'
                    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
                    f'<collision><geometry>{shape_xml}</geometry></collision></link></robot>')
    model = engine.load_model(path, floating_base=True)
    if geometry_fields:
        model = dataclasses.replace(model, geometries=tuple(dataclasses.replace(g, **geometry_fields)
                                                            for g in model.geometries))
    return SimpleNamespace(name=name, model=model, R=I3, p=np.zeros(3))


def static(name, kind="plane", size=(), R=I3, p=(0.0, 0.0, 0.0), **fields):
    """A static body with one collision geometry placed in the world."""
    return SimpleNamespace(name=name, geometries=[Geometry(name, -1, kind, tuple(size), np.asarray(R, float),
                                                           np.asarray(p, float), **fields)])


def world(bodies, statics=(), materials=None, margin=0.0, **filter_fields):
    return CollisionWorld(bodies, statics, materials,
                          CollisionSettings(margin=margin, filter=PairFilter(**filter_fields)))


def place(world_, poses):
    """Update the world with one (R, p) per single-link body."""
    world_.update([(np.asarray(R, float)[None], np.asarray(p, float)[None]) for R, p in poses])


def rot(axis, degrees):
    return spatial.rotation_axis_angle(axis, np.radians(degrees))
