"""proxsuite, its generic build: a controller's QP gives the same bits in every process.

proxsuite's wheels carry one library built three times (generic x86-64, AVX2, AVX-512), and its package loads the
widest build the CPU runs. The vectorised builds' warm-started dense solves are not reproducible: the same
sequence of QPs, replayed in fresh solvers of one process, ends in one of two answers ~1e-11 apart, depending on
where the solver's workspace lands in memory (most likely where its vectorised loops split at an alignment
boundary). On the flexible-ankle walk (scenes/talos_walk_ankles.xml) that difference (1.7e-12 N m in τ at the 19th
step) grew to 9e-3 in (q, v) by the 40th step and to 1.1 after 2 s: runs of one scene disagreed from one process
to another. The generic build gives one answer, for 15–30 % more time per solve (the rigid walk's QP 0.12 →
0.138 ms). ``tests/control/test_proxsuite.py`` replays a warm-started sequence in fresh solvers.

Import proxsuite from here, before anything else imports it: once a build is loaded, another cannot be (its
types are registered), so a proxsuite imported first by other code is kept, with a warning.
"""
from __future__ import annotations

import sys
import types
import warnings

GENERIC = "proxsuite.proxsuite_pywrap"

if "proxsuite" not in sys.modules:
    _cpu = types.ModuleType("proxsuite.instructionset")            # what the package asks before choosing a build
    _cpu.has_AVX512F = _cpu.has_AVX2 = lambda: False
    sys.modules["proxsuite.instructionset"] = _cpu
    try:
        import proxsuite
    finally:
        del sys.modules["proxsuite.instructionset"]
else:
    import proxsuite

if getattr(getattr(proxsuite, "_submodule", None), "__name__", None) != GENERIC:
    warnings.warn("proxsuite was loaded with a vectorised build before Articula could choose its generic one: "
                  "the walking controller's QPs may differ in their last bits from one process to another",
                  RuntimeWarning, stacklevel=2)

proxqp = proxsuite.proxqp
