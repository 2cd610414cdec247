"""A small VRML97 reader for the meshes AMELIF universes point to (``.wrl``, seed 000 §2).

Reads the node tree (``DEF``/``USE``, ``Transform``, ``Group``, ``Shape``, ``IndexedFaceSet`` with
``Coordinate``, ``Material.diffuseColor``) and returns one triangle mesh in the file's frame; polygons are fanned
into triangles. Nodes that carry no geometry (``Viewpoint``, lights, ``NavigationInfo``...) are skipped.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from engine import spatial
from engine.errors import ModelError

_TOKEN = re.compile(r'"[^"]*"|[\[\]{}]|[^\s\[\]{},]+')


def _tokens(text):
    text = re.sub(r"#[^\n]*", "", text)
    return [(m.group(0), text.count("\n", 0, m.start()) + 1) for m in _TOKEN.finditer(text)]


class _Parser:
    def __init__(self, path, tokens):
        self.path, self.tokens, self.i, self.defs = path, tokens, 0, {}

    def fail(self, message, value=None):
        line = self.tokens[min(self.i, len(self.tokens) - 1)][1] if self.tokens else None
        raise ModelError(f"VRML: {message}", str(self.path), line, value)

    def peek(self):
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        if self.i >= len(self.tokens):
            self.fail("unexpected end of file")
        tok = self.tokens[self.i][0]
        if expected is not None and tok != expected:
            self.fail(f"expected '{expected}'", tok)
        self.i += 1
        return tok

    def node(self):
        """A node: ``[DEF name] Type { field value ... }`` or ``USE name``; returns (type, fields)."""
        tok = self.take()
        if tok == "USE":
            name = self.take()
            if name not in self.defs:
                self.fail("USE of an undefined node", name)
            return self.defs[name]
        name = None
        if tok == "DEF":
            name, tok = self.take(), self.take()
        self.take("{")
        fields = {}
        while self.peek() != "}":
            key = self.take()
            if key in ("ROUTE", "PROTO", "EXTERNPROTO"):
                self.fail("PROTO and ROUTE are not supported", key)
            fields[key] = self.value()
        self.take("}")
        result = (tok, fields)
        if name:
            self.defs[name] = result
        return result

    def value(self):
        tok = self.peek()
        if tok == "[":
            self.take()
            items = []
            while self.peek() != "]":
                items.append(self.value())
            self.take()
            return items
        nxt = self.tokens[self.i + 1][0] if self.i + 1 < len(self.tokens) else None
        if tok in ("DEF", "USE") or nxt == "{":
            return self.node()
        numbers = []
        while self.peek() is not None and _is_number(self.peek()):
            numbers.append(float(self.take()))
        return numbers if numbers else self.take()


def _is_number(tok):
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _flatten(v):
    out = []
    for x in v if isinstance(v, list) else [v]:
        out.extend(_flatten(x) if isinstance(x, list) else [x])
    return out


def read_vrml(path):
    """(vertices (n, 3), faces (k, 3), rgba) of all IndexedFaceSets in ``path``."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise ModelError(f"cannot read VRML file: {exc.strerror or exc}", str(path)) from None
    if not text.startswith("#VRML"):
        raise ModelError("not a VRML file (no '#VRML' header)", str(path), 1, text[:20])
    p = _Parser(path, _tokens(text))
    roots = []
    while p.peek() is not None:
        roots.append(p.node())
    vertices, faces, colors = [], [], []
    _collect(roots, np.eye(3), np.zeros(3), np.ones(3), vertices, faces, colors, p)
    if not faces:
        raise ModelError("VRML file holds no IndexedFaceSet geometry", str(path))
    rgba = tuple(colors[0]) + (1.0,) if colors else (0.7, 0.7, 0.7, 1.0)
    return np.vstack(vertices), np.vstack(faces), rgba


def _collect(nodes, R, t, s, vertices, faces, colors, p):
    for kind, fields in (n for n in nodes if isinstance(n, tuple)):
        if kind == "Transform":
            tr = np.array(fields.get("translation", [0, 0, 0]), float)
            rot = np.array(fields.get("rotation", [0, 0, 1, 0]), float)
            sc = np.array(fields.get("scale", [1, 1, 1]), float)
            cR = spatial.rotation_axis_angle(rot[:3], rot[3])
            # x_parent = R (s * (cR (sc * x)) ) + t, kept as (R', t', s') with uniform-axis scale folded in
            _collect(_children(fields), R @ cR, R @ (s * tr) + t, s * sc, vertices, faces, colors, p)
        elif kind in ("Group", "Collision", "Anchor", "Billboard", "LOD", "Switch"):
            _collect(_children(fields), R, t, s, vertices, faces, colors, p)
        elif kind == "Shape":
            geometry = fields.get("geometry")
            if isinstance(geometry, tuple) and geometry[0] == "IndexedFaceSet":
                _face_set(geometry[1], R, t, s, vertices, faces, p)
                color = _diffuse(fields.get("appearance"))
                if color is not None:
                    colors.append(color)


def _children(fields):
    c = fields.get("children", [])
    return c if isinstance(c, list) else [c]


def _diffuse(appearance):
    if isinstance(appearance, tuple):
        material = appearance[1].get("material")
        if isinstance(material, tuple) and "diffuseColor" in material[1]:
            return tuple(float(x) for x in _flatten(material[1]["diffuseColor"])[:3])
    return None


def _face_set(fields, R, t, s, vertices, faces, p):
    coord = fields.get("coord")
    if not (isinstance(coord, tuple) and coord[0] == "Coordinate"):
        p.fail("IndexedFaceSet without a Coordinate node")
    points = np.array(_flatten(coord[1].get("point", [])), float)
    if points.size % 3:
        p.fail("Coordinate point list is not a multiple of 3", points.size)
    points = points.reshape(-1, 3)
    index = [int(x) for x in _flatten(fields.get("coordIndex", []))]
    base = sum(len(v) for v in vertices)
    polygon, tris = [], []
    for k in index + [-1]:
        if k >= 0:
            if k >= len(points):
                p.fail("coordIndex refers past the point list", k)
            polygon.append(k)
            continue
        tris += [(polygon[0], polygon[j], polygon[j + 1]) for j in range(1, len(polygon) - 1)]
        polygon = []
    vertices.append((points * s) @ R.T + t)
    if tris:
        faces.append(np.array(tris, dtype=np.int64) + base)
