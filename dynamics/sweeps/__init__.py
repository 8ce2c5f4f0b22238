"""Parameter sweeps: a validated `Sweep` spec (`spec.py`), run point by point on Dask or in this
process (`engine.py`), summarised per run (`summaries.py`), as tables (`io.py`); the built-ins
come from the paper modules (`builtins.py`); ``python -m dynamics sweep`` is `cli.py`.

A sweep is a base `Config`, axes (any dotted config field with explicit values or a log/linear
range), seeds, and the summaries to record. Every combination of axis values (seeds innermost)
is one point; an invalid point becomes a row with status "invalid" and the ConfigError message,
a run that diverges or fails a row with its status and message: a sweep never fails because of
one point.
"""

from __future__ import annotations

from .builtins import BUILTINS, builtin_sweep
from .engine import (
    Clusters,
    ProgressCallback,
    cancel_futures,
    default_clusters,
    get_client,
    n_workers_of,
    prestart,
    run_sweep,
    run_sweep_serial,
    scheduler_address,
    submission_order,
    warm_up,
)
from .io import (
    FIXED_COLUMNS,
    SweepResult,
    make_frame,
    sweep_from_frame,
    to_csv_bytes,
    to_parquet_bytes,
)
from .spec import (
    MAX_NESTING,
    Axis,
    Point,
    Sweep,
    SweepError,
    json_nesting,
    max_points,
    size_errors,
)
from .summaries import SUMMARIES, compute_point, needs_phases, summarise

__all__ = ["BUILTINS", "FIXED_COLUMNS", "MAX_NESTING", "SUMMARIES", "Axis", "Clusters", "Point",
           "ProgressCallback", "Sweep", "SweepError", "SweepResult", "builtin_sweep",
           "cancel_futures", "compute_point", "default_clusters", "get_client", "json_nesting",
           "make_frame", "max_points", "n_workers_of", "needs_phases", "prestart", "run_sweep",
           "run_sweep_serial", "scheduler_address", "size_errors", "submission_order", "summarise",
           "sweep_from_frame", "to_csv_bytes", "to_parquet_bytes", "warm_up"]
