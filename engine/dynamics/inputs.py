"""Input checking at the public boundary of the dynamics algorithms, at no cost on the fast path.

A driver hands the caller's arrays straight to its kernel.  Each kernel is compiled for one signature
(C-contiguous, writable float64 arrays, see ``_kernels.algebra.entry``) and checks sizes, finiteness and
unit quaternions itself, returning a status.  Anything else (a list, a float32 or read-only array, a wrong
size, a NaN, the kernel's very first call) takes the slow path ``rerun``: compile or load the kernel, convert
each input (``ValueError`` naming the argument and its expected shape), run again and ``report`` the first
non-finite value by argument and index.

Unit quaternions (spherical and free-flyer joints) and the planar joint's (cos t, sin t): the kernels always
use them normalised.  If ``| |quat| - 1 |`` is at most 1e-6 (integration round-off) this is silent; up to
1e-3 it is done with a ``RuntimeWarning`` naming the joint; beyond 1e-3 (or a zero or non-finite
quaternion) the call is rejected with a ``ValueError``: such a q is a caller's bug, not round-off.
"""
from __future__ import annotations

import warnings

import numpy as np

from engine.dynamics._kernels.algebra import SIGNATURES
from engine.dynamics._kernels.kinematics import BAD, OK, UNIT_SILENT, UNIT_WARN
from engine.model.model import JointType

GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s^2, the default (the universe may set another)
GRAVITY.setflags(write=False)
GRAVITY_ARRAY = GRAVITY.copy()  # its writable twin, handed to the kernels
RETRY = -1                 # status of a call the kernel refused (first call, or inputs to convert)
#: what a kernel raises for arguments it was not compiled for (or, with the JIT disabled, for a list)
REFUSED = (TypeError, AttributeError)


def gravity_array(gravity):
    """The gravity vector as the kernels take it: a tuple or list would be refused by the compiled signature
    and go through the slow path (~0.7 ms), so it is converted here (a float64 array passes as is)."""
    if gravity is GRAVITY:
        return GRAVITY_ARRAY
    return gravity if type(gravity) is np.ndarray else np.array(gravity, dtype=np.float64)


def pack_of(model, data):
    """The kernel view of ``model`` held by ``data``; a Data must be used with the Model that created it."""
    pack = data.model_pack
    if pack.owner is not model:
        wrong_data(model, data)
    return pack


def wrong_data(model, data):
    raise ValueError(f"data was created for {data.model_pack.owner!r}, not for {model!r}: use model.create_data()")


def vector(x, n, name):
    """x as a C-contiguous, writable float64 array of shape (n,)."""
    x = np.array(x, dtype=np.float64)  # a copy: never share memory with the caller's array
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got shape {x.shape}")
    return x


def index_of(model, name, i, count):
    """A body or frame index as a Python int in [0, count)."""
    if type(i) is int and 0 <= i < count:
        return i
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < count:
        raise ValueError(f"{name} must be an integer in [0, {count}) for {model.name!r}, got {i!r}")
    return int(i)


def rerun(kernel, model, head, inputs, tail=(), stacklevel=4):
    """The slow path of a driver: ``kernel(*head, *inputs.values(), *tail)`` after compiling the kernel for
    its signature (first call) and converting each named input to its expected shape; then report bad values.
    Returns the kernel's result."""
    _compile(kernel)
    inputs = {name: _conform(model, name, x) for name, x in inputs.items()}
    result = kernel(*head, *inputs.values(), *tail)
    report(result[0] if isinstance(result, tuple) else result, model, stacklevel=stacklevel, **inputs)
    return result


def _compile(kernel):
    signature = SIGNATURES.get(kernel)
    if signature is not None and not kernel.signatures:
        kernel.disable_compile(False)
        kernel.compile(signature)  # or load it from numba's cache
        kernel.disable_compile(True)


def _conform(model, name, x):
    if name == "f_ext":
        f = np.array(x, dtype=np.float64)
        if f.shape != (model.nbodies, 6):
            raise ValueError(f"f_ext must have shape ({model.nbodies}, 6) (one body-frame wrench per body), "
                             f"got shape {f.shape}")
        return f
    if name in ("frame_index", "body"):
        return index_of(model, name, x, len(model.frame_name) if name == "frame_index" else model.nbodies)
    size = {"q": model.nq, "gravity": 3, "point_body": 3}.get(name, model.nv)
    return vector(x, size, name)


def report(status, model, stacklevel=3, **arrays):
    """Raise a ValueError naming the first non-finite input (status BAD), or warn about a renormalised
    quaternion (status WARN).  ``arrays`` are the kernel's inputs in argument order, q first if present."""
    if not status:
        return
    for name, x in arrays.items():
        bad = np.argwhere(~np.isfinite(x)) if isinstance(x, np.ndarray) else []
        if len(bad):
            index = tuple(int(j) for j in bad[0])
            where = index[0] if len(index) == 1 else index
            body = f" (body '{model.body_name[index[0]]}')" if name == "f_ext" else ""
            raise ValueError(f"{name}[{where}]{body} is {x[index]}: inputs must be finite")
    for name, k, n, what in _unit_blocks(model, arrays.get("q")):
        norm = float(np.linalg.norm(arrays["q"][k:k + n]))
        error = abs(norm - 1.0)
        if error > UNIT_WARN:
            raise ValueError(f"q[{k}:{k + n}] ({what} of joint '{name}') has norm {norm:.9g}; a unit vector is "
                             f"expected (|norm - 1| <= {UNIT_WARN:g} is normalised with a warning)")
        if error > UNIT_SILENT:
            warnings.warn(f"q[{k}:{k + n}] ({what} of joint '{name}') has norm {norm:.9g}; used normalised",
                          RuntimeWarning, stacklevel=stacklevel)
    if status == BAD:  # not expected: the kernel and this diagnosis disagree
        raise ValueError(f"invalid input to {model!r}")


def _unit_blocks(model, q):
    if q is None:
        return
    for j in model.joints:
        if j.type == JointType.SPHERICAL:
            yield j.name, j.idx_q, 4, "quaternion"
        elif j.type == JointType.FREE:
            yield j.name, j.idx_q + 3, 4, "quaternion"
        elif j.type == JointType.PLANAR:
            yield j.name, j.idx_q + 2, 2, "(cos, sin)"


__all__ = ["BAD", "GRAVITY", "GRAVITY_ARRAY", "gravity_array", "OK", "REFUSED", "RETRY", "UNIT_SILENT", "UNIT_WARN", "index_of",
           "pack_of", "report", "rerun", "vector", "wrong_data"]
