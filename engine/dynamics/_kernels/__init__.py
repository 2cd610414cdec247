"""numba kernels of the dynamics algorithms, one module per algorithm, over the packed Model
(``engine.dynamics.pack``) and Data's preallocated workspaces: ``@njit(cache=True, nogil=True)``, no
allocation (see ``algebra.kernel``, ``algebra.entry``).  Their on-disk cache follows every engine module they
import, not just each function's own file (``cache``)."""
from engine.dynamics._kernels import cache  # noqa: F401  (registers the cache locator before any kernel)
