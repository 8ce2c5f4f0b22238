"""Threads the kernels use: SciPy's BLAS (the GEMMs of the BLAS path) and the workers of the
multi-block GD step. Both come from `limits.get_settings()`; neither changes a result's bits.

* ``core_blas_threads`` (EAE_CORE_BLAS_THREADS, default 1; 0 = the library's default): set
  once, when the first BLAS-path object is built. numba's ``np.dot`` calls SciPy's OpenBLAS, a
  library separate from NumPy's. On a shared 2-core host a 2-thread GEMM next to another
  session spin-waits and runs up to ~8× slower than one thread (measured: (2000, 64, 200) GD
  step 17 ms with 1 thread vs 138 ms with 2 under load). GEMM splits no sums, so the count
  does not change results.
* ``core_threads`` (EAE_CORE_THREADS, default 0 = the CPUs this process may use): how many of
  a multi-block GD step's blocks run at once. The number of blocks is fixed by the problem
  (gd_split.blocks_for), so the bits are the same on any host.
"""

from __future__ import annotations

import os
import threading

from ..limits import get_settings

_blas_lock = threading.Lock()
_blas_done = False


def usable_cpus() -> int:
    """CPUs this process may run on (affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_threads(blocks: int) -> int:
    """Threads that step ``blocks`` sample blocks at once: EAE_CORE_THREADS (0 = usable CPUs),
    at most ``blocks``, at least 1."""
    k = get_settings().core_threads or usable_cpus()
    return max(1, min(k, blocks))


def limit_core_blas() -> None:
    """Apply EAE_CORE_BLAS_THREADS (default 1) to SciPy's BLAS, once; silent if unavailable."""
    global _blas_done
    if _blas_done:
        return
    with _blas_lock:
        if _blas_done:
            return
        _blas_done = True
        k = get_settings().core_blas_threads
        if k <= 0:
            return
        try:
            import scipy.linalg.cython_blas  # noqa: F401  (the library numba binds)
            from threadpoolctl import ThreadpoolController

            ctl = ThreadpoolController()
            paths = [i["filepath"] for i in ctl.info() if i.get("user_api") == "blas"
                     and "scipy" in os.path.basename(os.path.dirname(i["filepath"]))]
            if paths:
                ctl.select(filepath=paths).limit(limits=k)
        except Exception:  # no threadpoolctl or an unknown BLAS: keep the library default
            pass
