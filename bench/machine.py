"""What the benchmark ran on: CPU, BLAS libraries, versions, load, thread settings."""

from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path
from typing import Any

from . import peers

#: Environment variables that change how BLAS and numba use threads.
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
            "NUMBA_NUM_THREADS")


def loadavg() -> tuple[float, float, float]:
    """1-, 5- and 15-minute load averages (NaN where the OS does not tell)."""
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def loadavg_text() -> str:
    """The 1-, 5- and 15-minute load averages as text ("0.52 1.10 1.31"; "nan" where unknown)."""
    return " ".join(f"{v:.2f}" for v in loadavg())


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo; "unknown" elsewhere) and the core count: speed
    figures hold for one class of host."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def machine() -> dict[str, Any]:
    """CPU model, cores, BLAS libraries in use, versions, environment that changes BLAS."""
    cpu = cpu_model().rsplit(",", 1)[0]
    blas: list[str] = []
    try:
        import scipy.linalg  # loads SciPy's OpenBLAS, so that threadpoolctl lists it
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            blas.append(f"{info.get('internal_api')} {info.get('version')} "
                        f"({Path(info.get('filepath', '')).name}, "
                        f"kernel {info.get('architecture')}, {info.get('num_threads')} threads)")
    except Exception as e:  # threadpoolctl missing: fall back to numpy's build info
        blas.append(f"threadpoolctl unavailable ({type(e).__name__}); see numpy.show_config()")
    import numba
    import scipy

    vers = {"python": platform.python_version(), "numba": numba.__version__,
            "scipy": scipy.__version__, **peers.versions()}
    env = {k: os.environ[k] for k in BLAS_ENV if k in os.environ}
    return {"cpu": cpu, "cores": os.cpu_count(), "blas": blas, "versions": vers,
            "load": loadavg(), "env": env, "platform": platform.platform(),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")}


def core_threads() -> dict[str, Any]:
    """The core's threading as this process sees it: EAE_CORE_THREADS (or "auto"), usable
    CPUs, and the work n·d·m from which one GD step is split over threads."""
    from dynamics.kernels import SPLIT_MIN_WORK, usable_cpus
    from dynamics.limits import get_settings

    return {"env": str(get_settings().core_threads or "auto"), "cpus": usable_cpus(),
            "split_min_work": SPLIT_MIN_WORK}


def core_blas_threads() -> str:
    """Threads of SciPy's OpenBLAS (the one numba's np.dot calls), as a string."""
    try:
        from threadpoolctl import threadpool_info

        got = [str(i["num_threads"]) for i in threadpool_info()
               if "scipy" in Path(i.get("filepath", "")).parent.name]
        return ", ".join(got) or "unknown"
    except Exception:
        return "unknown"
