"""Borrowed arrays: the one-call kernels' arguments without numba's reference counting.

numba counts the references of every array it handles, with an atomic increment and decrement (``lock inc``,
``lock dec``: ≈ 6 ns each) wherever a variable takes or drops one: at each call that passes it and each field
read of a structure. A one-call step hands a hundred arrays down a tree of kernels: on one resting cube these
atomics were 22 % of the step's samples (``perf``, ``NRT_incref`` and ``NRT_decref``). An array whose meminfo is
null is not counted (numba's ``NRT_incref(NULL)`` returns at once).

``borrowed(x)`` returns x — an array, or a tuple (named or not) of them, nested — as such uncounted views of the
same memory. They are valid while their owner holds the memory: the entry kernels (``free_step``,
``rigid_contacts``, ``tree_contacts``, ``detect_native_of``) borrow the fields of their structure, and views of
them, for the calls they make, which neither keep them nor reassign those fields. Never borrow an array the kernel
itself allocates (``borrowed((np.zeros(0), …))``): numba may free it before the borrowed view is used. Nothing
borrowed may be returned to Python, stored in a structure or outlive the call (its parent object is null too).
Arrays the kernels allocate are counted as usual. Under NUMBA_DISABLE_JIT ``borrowed`` is the identity.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload


def borrowed(x):
    """x, as uncounted views (compiled code; the identity in Python)."""
    return x


def _borrow(context, builder, typ, value):
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        for i, item in enumerate(typ.types):
            value = builder.insert_value(value, _borrow(context, builder, item, builder.extract_value(value, i)), i)
    return value


@intrinsic
def _borrowed(typingctx, x):
    def codegen(context, builder, signature, args):
        return _borrow(context, builder, signature.args[0], args[0])
    return x(x), codegen


@overload(borrowed, inline="always")
def _borrowed_overload(x):
    return lambda x: _borrowed(x)
