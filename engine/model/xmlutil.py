"""Small XML reading helpers shared by the URDF, robot-XML and universe loaders: every error names the file,
the line and the value."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from lxml import etree

from engine.errors import did_you_mean

_BAD_DECLARATION = re.compile(rb'^<\?xml\s+version\s*=\s*["\']0\.0["\']')
_XACRO = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)")


def parse_xml(path: str, error_type):
    """Parse ``path`` with line numbers; malformed XML and missing files raise ``error_type``."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise error_type(f"cannot read file: {exc.strerror or exc}", str(path)) from None
    # Files in the wild (pybullet_data) carry '<?xml version="0.0"?>' or blank lines before the
    # declaration; every robotics tool reads them, so do we. Blank lines are kept so line numbers hold.
    lines_before = text[:len(text) - len(text.lstrip())].count(b"\n")
    text = b"\n" * lines_before + _BAD_DECLARATION.sub(b'<?xml version="1.0"', text.lstrip(), count=1)
    try:
        parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)
        return etree.fromstring(text, parser, base_url=str(path)).getroottree().getroot()
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        raise error_type(f"malformed XML: {exc.msg}", str(path), line) from None


class Reader:
    """Reads attributes and texts of one file's elements, raising ``error_type`` with file:line on bad values."""

    def __init__(self, path: str, error_type):
        self.path, self.error = str(path), error_type

    def fail(self, el, message, value=None):
        raise self.error(message, self.path, getattr(el, "sourceline", None), value)

    def _raw(self, el, name, text=False):
        raw = (el.text or "") if text else el.get(name)
        if raw is not None and _XACRO.search(raw):
            self.fail(el, f"<{el.tag}> {'text' if text else name!r} holds an unexpanded xacro expression; "
                          f"run xacro on the file first", raw.strip())
        return raw

    def has(self, el, name):
        return el.get(name) is not None

    def string(self, el, name, default=None, required=False):
        raw = self._raw(el, name)
        if raw is None:
            if required:
                self.fail(el, f"<{el.tag}> needs the attribute '{name}'")
            return default
        return raw

    def floats(self, el, name, n=None, default=None, text=False, required=False):
        raw = self._raw(el, name, text=text)
        if raw is None or (text and not raw.strip()):
            if required or (default is None and n is not None and text):
                self.fail(el, f"<{el.tag}> needs {'a value' if text else repr(name)}")
            return None if default is None else np.array(default, dtype=float)
        try:
            values = np.array([float(t) for t in raw.replace(",", " ").split()], dtype=float)
        except ValueError:
            self.fail(el, f"<{el.tag}> {'value' if text else repr(name)} is not a list of numbers", raw.strip())
        if n is not None and values.size != n:
            self.fail(el, f"<{el.tag}> {'value' if text else repr(name)} needs {n} numbers, has {values.size}",
                      raw.strip())
        if not np.all(np.isfinite(values)):
            self.fail(el, f"<{el.tag}> {'value' if text else repr(name)} must be finite", raw.strip())
        return values

    def number(self, el, name, default=None, text=False, required=False, positive=False, nonnegative=False):
        values = self.floats(el, name, n=1, default=None if default is None else [default], text=text,
                             required=required)
        if values is None:
            return None
        x = float(values[0])
        if positive and not x > 0.0:
            self.fail(el, f"<{el.tag}> {'value' if text else repr(name)} must be > 0", x)
        if nonnegative and not x >= 0.0:
            self.fail(el, f"<{el.tag}> {'value' if text else repr(name)} must be >= 0", x)
        return x

    def boolean(self, el, name, default=False):
        raw = self.string(el, name)
        if raw is None:
            return default
        if raw.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if raw.strip().lower() in ("0", "false", "no", "off"):
            return False
        self.fail(el, f"<{el.tag}> {name!r} must be true or false", raw)

    def check_attributes(self, el, allowed):
        for name in el.keys():
            if name not in allowed:
                self.fail(el, f"<{el.tag}> has no attribute '{name}'{did_you_mean(name, allowed)}", name)

    def check_children(self, el, allowed, ignored=()):
        """Unknown child tags are errors; ``ignored`` tags (other tools' extensions) pass silently."""
        for child in el:
            if not isinstance(child.tag, str) or child.tag in allowed or child.tag in ignored:
                continue
            self.fail(child, f"<{el.tag}> has no child <{child.tag}>{did_you_mean(child.tag, allowed)}", child.tag)


def degrees(x):
    return x * math.pi / 180.0
