"""Sweep results as tables: the frame (one row per point), CSV/Parquet bytes, and the spec
read back from a saved table (kept in ``df.attrs["sweep"]``, which Parquet preserves)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exports import csv_bytes
from ..status import Status
from .spec import Sweep, SweepError

FIXED_COLUMNS = ("index", "seed", "status", "message", "cache_key", "wall_time_s")
NOT_RUN = "The sweep stopped before this point finished."


@dataclass
class SweepResult:
    """The table of a finished (or cancelled) sweep and how it ran."""

    sweep: Sweep
    frame: pd.DataFrame
    cancelled: bool = False
    elapsed_s: float = 0.0
    scheduler: str = ""
    n_workers: int = 0
    notes: list[str] = field(default_factory=list)

    def status_counts(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.frame["status"].value_counts().items()}

    def to_csv_bytes(self) -> bytes:
        return to_csv_bytes(self.frame)

    def to_parquet_bytes(self) -> bytes:
        return to_parquet_bytes(self.frame)


def to_csv_bytes(df: pd.DataFrame) -> bytes:
    """UTF-8 CSV whose text cells a spreadsheet cannot run (`dynamics.exports`)."""
    return csv_bytes(df)


def to_parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _axis_cell(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v)
    return v


def make_frame(sweep: Sweep, rows: Mapping[int, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point in index order; fixed columns, axis columns, seed, summaries. A point
    without a row is "cancelled" (the sweep stopped before it finished)."""
    points = sweep.points()
    recs = []
    for p in points:
        r: dict[str, Any] = {"index": p.index}
        for f in sweep.axis_fields:
            r[f] = _axis_cell(p.values[f])
        r["seed"] = p.seed
        got = dict(rows.get(p.index, {}))
        r["status"] = str(got.pop("status", Status.CANCELLED.value))
        r["message"] = got.pop("message", NOT_RUN)
        for k in sweep.record:
            r[k] = got.get(k, np.nan if k not in ("phases", "trapped") else None)
        r["cache_key"] = got.get("cache_key", p.config.cache_key() if p.config else "")
        r["wall_time_s"] = got.get("wall_time_s", np.nan)
        recs.append(r)
    cols = ["index", *sweep.axis_fields, "seed", "status", "message", *sweep.record,
            "cache_key", "wall_time_s"]
    df = pd.DataFrame.from_records(recs, columns=cols)
    for k in sweep.record:
        if k == "phases":
            df[k] = df[k].fillna("").astype(str)
        elif k == "trapped":
            df[k] = df[k].astype("boolean")
        else:
            df[k] = pd.to_numeric(df[k], errors="coerce").astype(float)
    for f in sweep.axis_fields:
        col = df[f]
        if col.map(lambda v: isinstance(v, bool)).all():
            df[f] = col.astype(bool)
        elif col.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool)).all():
            df[f] = col.astype(float if col.map(lambda v: isinstance(v, float)).any() else int)
        else:
            df[f] = col.astype(str)
    df.attrs["sweep"] = sweep.to_json()
    return df


def sweep_from_frame(df: pd.DataFrame) -> Sweep | None:
    """The spec a results table was made from (stored in df.attrs, kept by Parquet)."""
    raw = df.attrs.get("sweep")
    if not raw:
        return None
    try:
        return Sweep.from_json(raw)
    except SweepError:
        return None
