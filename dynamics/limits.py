"""Every ``EAE_*`` environment variable is read here, and nowhere else.

`Limits`: explicit bounds on size and compute. Every limit has a safe default for a small shared
machine and can be raised or lowered by the operator (documented in the README). Validation
(`config/checks.py`) and uploads check against them before any work starts, and name the limit
and the value in the message.

`Settings`: where things live and how many threads they use (cache directory, kernel, BLAS and
NumPy threads). They never change a result's bits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Upper bounds for one run. Environment variable: ``EAE_`` + the upper-case field name."""

    max_width: int = 5000  # hidden neurons m
    max_points: int = 20000  # data points n
    max_dim: int = 1024  # input dimension d (bias included)
    max_frames: int = 400  # animation frames recorded
    max_scalars: int = 20000  # dense scalar samples
    max_steps: int = 20_000_000  # GD steps, or GF accepted+rejected steps
    max_compute: float = 2e12  # steps × n × d × m (multiply-adds per forward pass, roughly)
    deadline_s: float = 900.0  # wall-clock seconds per run before it stops with a partial result
    max_upload_mb: float = 10.0  # uploaded data files
    full_w_budget_mb: float = 64.0  # full W per frame recorded only below this size
    max_concurrent: int = 0  # simultaneous simulations in one server; 0 = number of cores
    memory_cache_entries: int = 64  # in-process cache: entries
    memory_cache_mb: float = 512.0  # in-process cache: bytes
    disk_cache_mb: float = 2048.0  # persistent cache: bytes
    max_sweep_points: int = 5000  # points in one sweep
    max_spec_mb: float = 16.0  # a sweep spec's JSON text (MB of 1,048,576 bytes)
    click_to_run_s: float = 5.0  # runs estimated to take longer wait for the visitor's click
    session_upload_files: int = 4  # files one session may hold on the server at once
    session_upload_mb: float = 30.0  # bytes of those files (MB of 1,048,576 bytes)

    def env_name(self, field: str) -> str:
        return "EAE_" + field.upper()


LIMIT_HELP: dict[str, str] = {
    "max_width": "hidden neurons m",
    "max_points": "data points n",
    "max_dim": "input dimension d (bias included)",
    "max_frames": "animation frames recorded",
    "max_scalars": "dense scalar samples",
    "max_steps": "GD steps, or GF accepted + rejected steps",
    "max_compute": "multiply-adds of a run: GD steps × n·d·m; gf 600 × n·d·m (at least)",
    "deadline_s": "seconds per run before it stops with a partial result",
    "max_upload_mb": "size of an uploaded data file (MB)",
    "full_w_budget_mb": "full W per frame recorded only below this size (MB)",
    "max_concurrent": "simultaneous simulations in one server (0 = number of cores)",
    "memory_cache_entries": "in-process cache: entries",
    "memory_cache_mb": "in-process cache: size (MB)",
    "disk_cache_mb": "persistent cache: size (MB)",
    "max_sweep_points": "points in one sweep",
    "max_spec_mb": "size of a sweep spec's JSON text (MB)",
    "click_to_run_s": "estimated seconds above which a run waits for the visitor's click",
    "session_upload_files": "uploaded files one session may hold on the server at once",
    "session_upload_mb": "size of the files one session holds (MB)",
}
"""One phrase per limit, for the status page and the docs."""


def get_limits() -> Limits:
    """Limits from the environment (``EAE_MAX_WIDTH=...``); bad values fall back to defaults."""
    values: dict[str, Any] = {}  # int or float per field, as the field's type says
    for f in fields(Limits):
        raw = os.environ.get("EAE_" + f.name.upper())
        if raw is None:
            continue
        try:
            val = float(raw)
        except ValueError:
            continue
        if val != val or val < 0:  # NaN or negative: ignore
            continue
        if f.name == "max_sweep_points" and val == 0:
            continue
        values[f.name] = int(val) if f.type in ("int", int) else val
    return Limits(**values)


@dataclass(frozen=True)
class Settings:
    """Placement, threads and hosting. Environment variable: ``EAE_`` + the upper-case field
    name."""

    cache_dir: str = ""  # persistent cache directory; "" = ~/.cache/early-alignment-explorer
    core_threads: int = 0  # blocks of a large GD step run at once; 0 = the usable CPUs
    core_blas_threads: int = 1  # BLAS threads of the kernels' large products; 0 = library default
    numpy_blas_threads: int = 1  # NumPy's BLAS threads in a service process; 0 = library default
    prefetch: int = 1  # speculative runs and figures of the neighbouring settings; 0 = off
    page_runs: int = 1  # page scripts running at once (the others wait in order); 0 = no limit
    allowed_hosts: tuple[str, ...] = ()  # Host names served; () = loopback + this machine's
    operator: bool = False  # the About & status page shows internals and operator controls
    dask_dashboard: str = "off"  # "off" or "loopback" (127.0.0.1, a free port)


SETTING_HELP: dict[str, str] = {
    "cache_dir": "persistent cache directory (shared by replicas and Dask workers)",
    "core_threads": "threads one large GD run uses (auto = usable CPUs; 1 = one at a time)",
    "core_blas_threads": "BLAS threads of the kernels' large products (0 = library default)",
    "numpy_blas_threads": "NumPy's BLAS threads in a process running the service (0 = default)",
    "prefetch": "1: compute the neighbouring settings and scrub families while idle; 0: off",
    "page_runs": "page scripts of all sessions running at once; the others wait their turn in "
                 "arrival order (0 = no limit)",
    "allowed_hosts": "Host header names served, comma-separated (*.example.org matches "
                     "subdomains, * any); empty = localhost, 127.0.0.1, ::1 and this machine's "
                     "name and address",
    "operator": "1 shows paths, environment variable names, counters and cache clearing on "
                "the About & status page (and serves /_stcore/metrics); 0 hides them",
    "dask_dashboard": "the sweeps' Dask dashboard: off, or loopback (127.0.0.1 only)",
}


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "auto"):
        return default
    try:
        v = int(float(raw))
    except ValueError:
        return default
    return v if v >= 0 else default


def _hosts_env(name: str) -> tuple[str, ...]:
    raw = os.environ.get(name, "")
    return tuple(h.strip().lower() for h in raw.split(",") if h.strip())


def _flag_env(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def get_settings() -> Settings:
    """Settings from the environment; bad values fall back to defaults."""
    dashboard = os.environ.get("EAE_DASK_DASHBOARD", "").strip().lower()
    return Settings(
        cache_dir=os.environ.get("EAE_CACHE_DIR", "").strip(),
        core_threads=_int_env("EAE_CORE_THREADS", 0),
        core_blas_threads=_int_env("EAE_CORE_BLAS_THREADS", 1),
        numpy_blas_threads=_int_env("EAE_NUMPY_BLAS_THREADS", 1),
        prefetch=_int_env("EAE_PREFETCH", 1),
        page_runs=_int_env("EAE_PAGE_RUNS", 1),
        allowed_hosts=_hosts_env("EAE_ALLOWED_HOSTS"),
        operator=_flag_env("EAE_OPERATOR"),
        dask_dashboard="loopback" if dashboard == "loopback" else "off",
    )
