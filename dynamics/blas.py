"""NumPy's BLAS threads in a process that runs simulations side by side (the service).

Every simulation makes small NumPy products (data, initialisation, per-frame metrics:
angles between neurons, SVD, projections). On NumPy's default multi-threaded OpenBLAS each
such call leaves worker threads spin-waiting for ~0.1 s (OpenBLAS's thread timeout), taking
the core that another simulation's kernel runs on: two simulations in two threads took
1.6–2.0× one; with NumPy's BLAS on one thread 1.0–1.3× (bench/REPORT.md, threads). A limit
set and restored around each run does not help: raising the count again wakes the workers,
which spin. So the service holds it at EAE_NUMPY_BLAS_THREADS (default 1; 0 keeps the
library's default) for the whole process. Results do not depend on it. Without threadpoolctl or with
an unknown BLAS it does nothing.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from . import kernels
from .limits import get_settings

ENV = "EAE_NUMPY_BLAS_THREADS"
_lock = threading.Lock()
_selection: Any = None  # threadpoolctl selection of NumPy's BLAS; False if unavailable


def _wanted() -> int:
    return get_settings().numpy_blas_threads


def _numpy_blas() -> Any:
    """threadpoolctl's controller restricted to NumPy's BLAS, found once (None if none)."""
    global _selection
    if _selection is None:
        _selection = False
        try:
            import numpy as np
            from threadpoolctl import ThreadpoolController

            np.ones((2, 2)) @ np.ones((2, 2))  # make sure NumPy's BLAS is loaded
            ctl = ThreadpoolController()
            paths = [i["filepath"] for i in ctl.info() if i.get("user_api") == "blas"
                     and "numpy" in os.path.basename(os.path.dirname(i["filepath"]))]
            if paths:
                _selection = ctl.select(filepath=paths)
        except Exception:  # no threadpoolctl or an unknown BLAS: keep the library default
            pass
    return _selection or None


def apply_numpy_blas_threads() -> int | None:
    """Hold NumPy's BLAS at EAE_NUMPY_BLAS_THREADS threads; returns the count (None if left
    alone or not possible). Called when the service starts and before each computation: it
    only ever lowers the count (lowering wakes no spinning workers), so other code that
    raised it again (seen once in a long test session, cause not found) is undone cheaply."""
    k = _wanted()
    if k <= 0:
        return None
    with _lock:
        sel = _numpy_blas()
        if sel is None:
            return None
        try:
            if any(i["num_threads"] != k for i in sel.info()):
                sel.limit(limits=k)
        except Exception:
            return None
    return k


def thread_settings() -> list[dict[str, str]]:
    """The process's threading settings, one row each: setting, environment variable, value
    in effect, meaning (for the About & status page). None of them changes a result's bits."""
    settings = get_settings()
    try:
        from threadpoolctl import threadpool_info

        libs = {("numpy" if "numpy" in i["filepath"] else "scipy"): str(i["num_threads"])
                for i in threadpool_info() if i.get("user_api") == "blas"}
    except Exception:
        libs = {}
    core = settings.core_threads
    return [
        {"setting": "GD threads for large runs", "environment variable": "EAE_CORE_THREADS",
         "value": f"{core or 'auto'} ({kernels.worker_threads(kernels.MAX_BLOCKS)} threads used)",
         "meaning": f"GD runs with n·d·m ≥ {kernels.SPLIT_MIN_WORK:,} cut their samples into "
                    "blocks (how many depends only on the size); this many blocks run at once"},
        {"setting": "kernel BLAS threads", "environment variable": "EAE_CORE_BLAS_THREADS",
         "value": libs.get("scipy", f"{settings.core_blas_threads} (set at the first large "
                                    "run)"),
         "meaning": "threads of each GEMM inside the kernels (SciPy's OpenBLAS)"},
        {"setting": "NumPy BLAS threads", "environment variable": ENV,
         "value": libs.get("numpy", "unknown"),
         "meaning": "held by the service; more than 1 slows concurrent runs (spin-waits)"},
    ]
