"""Parameter sweeps: a validated `Sweep` spec, run point by point on Dask, summarised per run.

A sweep is a base `Config`, axes (any dotted config field with explicit values or a log/linear
range), seeds, and the summaries to record for each run. Every combination of axis values (the
grid, seeds innermost) is one *point*; a point whose config is invalid becomes a row with status
"invalid" and the ConfigError message, a run that diverges or fails becomes a row with its status
and message: a sweep never fails because of one point.

Execution is on `dask.distributed`: a `LocalCluster` (worker processes with one thread each,
n_workers = cores, reused for the life of the process) by default, or the cluster whose scheduler
`DASK_SCHEDULER_ADDRESS` / ``scheduler=`` names. Workers compute through the service layer
(`default_service().run`), so points already computed anywhere come from the shared disk cache:
the client's EAE_CACHE_DIR is handed to LocalCluster workers, and to any worker that has none.
Remote workers need this package importable (install it or set PYTHONPATH).

Summaries (one column each; NaN where they do not apply):

- ``final_loss``, ``min_loss``; ``max_angle``, ``mean_angle`` (degrees, between active neurons),
  ``stable_rank``, ``nuclear_norm``, ``theta_sq``, ``n_active`` at the last frame;
- ``t_align``: end of the detected "alignment" phase (`Service.analyse`; `phases.detect_phases`
  when the analysis has none); ``t_phase_I``, ``t_phase_II``: ends of Wang & Ma's Phases I
  and II (two-signal data; NaN when Phase II lasts to the end);
  ``t_half_loss``: first time the loss has made half of its total drop; ``t_cone``: Min et al.'s
  alignment time, the first frame at which every non-dead neuron is in S₊ (a_j > 0) or S₋
  (a_j < 0); ``phases``: every detected phase as "name [start, end]";
- ``gamma_norm`` ‖γ_[n]‖, ``mu`` (Min et al.'s separability min cos(y_i x_i, y_j x_j)),
  ``t_theory`` = ln(1/λ)/‖γ_[n]‖ (`theory.chistikov_alignment_time`), ``t_min_bound`` (Min et
  al.'s T, `theory.min_alignment_bound`);
- ``ols_loss`` (the least-squares plateau, `theory.ols_fit`; square loss only) and ``trapped``:
  final loss ≥ ``trap_threshold`` when one is given, else |final loss − OLS loss| ≤ ``trap_tol``
  (Boursier & Flammarion's spurious stationary point).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import itertools
import json
import logging
import math
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config import (
    Config,
    ConfigError,
    _CrossError,
    _field_annotation,
    _json_default,
    _parse_value,
    _set_path,
    _to_config_error,
)

ENV_MAX_POINTS = "EAE_MAX_SWEEP_POINTS"
DEFAULT_MAX_POINTS = 5000
ENV_SCHEDULER = "DASK_SCHEDULER_ADDRESS"
REPO_ROOT = Path(__file__).resolve().parent.parent

SUMMARIES: dict[str, str] = {
    "final_loss": "loss at the last frame",
    "min_loss": "smallest loss over the frames",
    "t_align": "end of the detected alignment phase",
    "t_phase_I": "end of Wang & Ma's Phase I (two-signal data)",
    "t_phase_II": "end of Wang & Ma's Phase II, the accuracy plateau (NaN: no escape)",
    "t_half_loss": "first time the loss has made half of its total drop",
    "t_cone": "Min et al.: first time every non-dead neuron is in S₊ (a>0) or S₋ (a<0)",
    "phases": "detected phases, 'name [start, end]'",
    "max_angle": "max angle between active neurons at the end (degrees)",
    "mean_angle": "mean angle between active neurons at the end (degrees)",
    "stable_rank": "‖W‖_F²/‖W‖₂² at the end",
    "nuclear_norm": "nuclear norm of W at the end",
    "theta_sq": "‖θ‖² at the end",
    "n_active": "active neurons at the end",
    "gamma_norm": "‖γ_[n]‖ = ‖(1/n) Σ s_i y_i x_i‖",
    "mu": "Min et al.'s separability min cos(y_i x_i, y_j x_j)",
    "t_theory": "ln(1/λ)/‖γ_[n]‖ in our time (Chistikov et al.)",
    "t_min_bound": "Min et al.'s alignment bound T in our time",
    "ols_loss": "least-squares (OLS) loss of the data (square loss)",
    "trapped": "the run ended at the spurious OLS plateau (or above trap_threshold)",
}
FIXED_COLUMNS = ("index", "seed", "status", "message", "cache_key", "wall_time_s")
STATUSES = ("completed", "diverged", "deadline", "cancelled", "max_steps", "invalid", "error")

ProgressCallback = Callable[[int, int, dict[str, Any]], None]
log = logging.getLogger(__name__)


class SweepError(ConfigError):
    """Every problem with a sweep spec: (dotted path, message) pairs, like ConfigError."""


def max_points() -> int:
    """The point limit (env EAE_MAX_SWEEP_POINTS, default 5000; bad values: the default)."""
    raw = os.environ.get(ENV_MAX_POINTS)
    try:
        v = int(float(raw)) if raw is not None else DEFAULT_MAX_POINTS
    except ValueError:
        return DEFAULT_MAX_POINTS
    return v if v > 0 else DEFAULT_MAX_POINTS


# ============================================================================ the spec
Scalar = bool | int | float | str | None


class Axis(BaseModel):
    """One swept field: explicit ``values``, or ``log``/``linear`` = [start, stop, count]."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: Annotated[str, Field(min_length=1, max_length=64)]
    values: tuple[Scalar | tuple[Scalar, ...], ...] | None = None
    log: tuple[float, float, int] | None = None
    linear: tuple[float, float, int] | None = None

    def points(self) -> tuple[Any, ...]:
        """The axis values, ranges expanded (12 significant digits; integers for int fields)."""
        if self.values is not None:
            return tuple(list(v) if isinstance(v, tuple) else v for v in self.values)
        lo, hi, n = self.log if self.log is not None else self.linear  # type: ignore[misc]
        grid = np.geomspace(lo, hi, n) if self.log is not None else np.linspace(lo, hi, n)
        vals = [float(f"{v:.12g}") for v in grid]
        if _is_int_field(self.field):
            vals = list(dict.fromkeys(round(v) for v in vals))
        return tuple(vals)

    @property
    def label(self) -> str:
        return self.field


def _is_int_field(path: str) -> bool:
    for kind in ("teacher", "clusters", "points"):
        ann = _field_annotation(path, kind)
        if ann is not None:
            s = repr(ann)
            return ("int" in s) and ("float" not in s) and ("tuple" not in s)
    return False


class Sweep(BaseModel):
    """A validated sweep. Build with `Sweep.from_dict` / `from_json` for clear messages."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, Field(max_length=80)] = "sweep"
    description: Annotated[str, Field(max_length=2000)] = ""
    builtin: str | None = None  # the built-in this spec came from (figures use it)
    base: Config = Field(default_factory=Config)
    axes: tuple[Axis, ...] = ()
    seeds: tuple[Annotated[int, Field(ge=0, le=2**32 - 1)], ...] = (0,)
    record: tuple[str, ...] = tuple(SUMMARIES)
    trap_tol: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1e-3
    trap_threshold: Annotated[float, Field(allow_inf_nan=False)] | None = None

    @field_validator("seeds", mode="before")
    @classmethod
    def _seed_count(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 1:
                raise ValueError("give at least one seed")
            return tuple(range(v))
        return v

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | bytes) -> Sweep:
        try:
            d = json.loads(text)
        except ValueError as e:
            raise SweepError([("sweep", f"is not valid JSON ({e})")]) from None
        if not isinstance(d, dict):
            raise SweepError([("sweep", "must be a JSON object")])
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sweep:
        """Validate everything and raise one SweepError listing every problem."""
        errors: list[tuple[str, str]] = []
        base: Config | None = None
        raw_base = d.get("base", {})
        if isinstance(raw_base, Config):
            base = raw_base
        elif not isinstance(raw_base, Mapping):
            errors.append(("base", "must be a configuration object"))
        else:
            try:
                base = Config.from_dict(raw_base)
            except ConfigError as e:
                errors.extend((f"base.{p}" if p else "base", m) for p, m in e.errors)
        rest = {k: v for k, v in d.items() if k != "base"}
        spec: Sweep | None = None
        try:
            spec = cls.model_validate({**rest, "base": base or Config()})
        except ValidationError as e:
            errors.extend(_to_config_error(e).errors)
        if spec is not None:
            errors.extend(spec._semantic_errors())
        if errors:
            raise SweepError(errors)
        assert spec is not None
        return spec

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def with_seeds(self, seeds: Sequence[int]) -> Sweep:
        return Sweep.from_dict({**self.to_dict(), "seeds": list(seeds)})

    # -- validation -------------------------------------------------------------------------
    def _semantic_errors(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        kinds = {self.base.data.kind}
        for ax in self.axes:
            if ax.field == "data.kind" and ax.values is not None:
                kinds |= {str(v) for v in ax.values}
        seen: set[str] = set()
        for i, ax in enumerate(self.axes):
            p = f"axes[{i}]"
            given = [k for k in ("values", "log", "linear") if getattr(ax, k) is not None]
            if len(given) != 1:
                errs.append((p, f"give exactly one of values, log or linear for {ax.field!r} "
                             f"(got {', '.join(given) or 'none'})"))
                continue
            if ax.field in ("seed", "seeds"):
                errs.append((f"{p}.field", "sweep seeds with the 'seeds' list, not an axis"))
                continue
            if ax.field in seen:
                errs.append((f"{p}.field", f"{ax.field!r} is swept twice"))
            seen.add(ax.field)
            if all(_field_annotation(ax.field, k) is None for k in kinds | {"points"}):
                errs.append((f"{p}.field", f"{ax.field!r} is not a configuration field "
                             "(dotted path such as init.scale, model.width, data.angle_deg)"))
                continue
            if ax.values is not None and len(ax.values) == 0:
                errs.append((f"{p}.values", "give at least one value"))
                continue
            rng = ax.log if ax.log is not None else ax.linear
            if rng is not None:
                lo, hi, n = rng
                key = "log" if ax.log is not None else "linear"
                if n < 1:
                    errs.append((f"{p}.{key}", f"the count must be at least 1 (got {n})"))
                    continue
                if ax.log is not None and (lo <= 0 or hi <= 0):
                    errs.append((f"{p}.log", f"a log range needs positive ends (got {lo:g}, "
                                 f"{hi:g})"))
                    continue
            if "data.kind" in seen and ax.field.startswith("data."):
                continue  # its values are checked point by point, with the kind of each point
            for j, v in enumerate(ax.points()):
                msg = _bad_value(self.base, ax.field, v)
                if msg:
                    errs.append((f"{p}.values[{j}]", f"{ax.field} = {_show(v)}: {msg}"))
        bad = [r for r in self.record if r not in SUMMARIES]
        if bad:
            errs.append(("record", f"unknown summaries {bad}; choose from {list(SUMMARIES)}"))
        if len(set(self.seeds)) != len(self.seeds):
            errs.append(("seeds", "seeds repeat"))
        if not errs:
            n = self.n_points()
            cap = max_points()
            if n > cap:
                sizes = " × ".join(str(len(ax.points())) for ax in self.axes)
                sizes = f"{sizes} × " if sizes else ""
                errs.append(("axes", f"this sweep has {sizes}{len(self.seeds)} seeds = {n} "
                             f"points, over the limit {cap} ({ENV_MAX_POINTS}); use fewer "
                             "values or seeds"))
        return errs

    # -- points -----------------------------------------------------------------------------
    def n_points(self) -> int:
        n = len(self.seeds)
        for ax in self.axes:
            n *= len(ax.points())
        return n

    def points(self) -> list[Point]:
        """Every point (grid over the axes, seeds innermost), each with its config or error."""
        out: list[Point] = []
        grids = [ax.points() for ax in self.axes]
        fields = [ax.field for ax in self.axes]
        for combo in itertools.product(*grids):
            values = dict(zip(fields, combo, strict=True))
            for seed in self.seeds:
                idx = len(out)
                try:
                    cfg = self.base.with_updates({**values, "seed": seed})
                    out.append(Point(idx, values, seed, cfg, ""))
                except ConfigError as e:
                    out.append(Point(idx, values, seed, None, str(e)))
        return out

    @property
    def axis_fields(self) -> tuple[str, ...]:
        return tuple(ax.field for ax in self.axes)


def _show(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _bad_value(base: Config, path: str, value: Any) -> str:
    """The message when `value` is wrong for `path` in itself: a field-level error. Checks
    across fields run only once every field is valid, so a cross-field error means the value
    is fine alone and only the combination is wrong (that point becomes an "invalid" row)."""
    d = base.to_dict()
    _set_path(d, path, _parse_value(path, value, d) if isinstance(value, str) else value)
    try:
        Config.model_validate_json(json.dumps(d, default=_json_default), strict=True)
    except ValidationError as e:
        if any(isinstance((err.get("ctx") or {}).get("error"), _CrossError)
               for err in e.errors(include_url=False)):
            return ""
        own = [m for p, m in _to_config_error(e).errors if p == path or p.startswith(path + "[")]
        return "; ".join(own) or "; ".join(f"{p}: {m}" for p, m in _to_config_error(e).errors)
    except (TypeError, ValueError) as e:
        return str(e)
    return ""


@dataclass(frozen=True)
class Point:
    index: int
    values: dict[str, Any]
    seed: int
    config: Config | None
    error: str


# ============================================================================ summaries
def _f(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v


def summarise(traj: Any, analysis: Any = None, *, record: Sequence[str] = tuple(SUMMARIES),
              trap_tol: float = 1e-3, trap_threshold: float | None = None) -> dict[str, Any]:
    """The summaries (see the module docstring) of one trajectory and its analysis."""
    from . import phases as phmod
    from . import theory

    want = set(record)
    out: dict[str, Any] = {}
    cfg = traj.config
    fm = traj.frame_metrics
    loss = np.asarray(traj.loss, float)
    final = _f(loss[-1]) if loss.size else float("nan")
    out["final_loss"] = final
    out["min_loss"] = _f(np.nanmin(loss)) if loss.size and np.isfinite(loss).any() else np.nan
    for k in ("max_angle", "mean_angle", "stable_rank", "nuclear_norm", "theta_sq", "n_active"):
        arr = np.asarray(fm.get(k, []), float)
        out[k] = _f(arr[-1]) if arr.size else float("nan")
    # phases: the analysis' detected ones, else the rules of phases.py
    detected = [p for p in getattr(analysis, "phases", ()) if p.source == "detected"]
    if not detected and traj.n_frames >= 2:
        try:
            detected, _ = phmod.detect_phases(traj)
            if cfg.data.kind == "two_signals":
                detected += phmod.wang_ma_phases(traj)[0]
        except Exception as e:  # never lose the row for a detection problem
            log.debug("phase detection failed: %s", e)
            detected = []
    out["phases"] = "; ".join(f"{p.name} [{p.start:.4g}, {p.end:.4g}]" for p in detected)
    out["t_align"] = next((p.end for p in detected if p.name == "alignment"), np.nan)
    out["t_phase_I"] = next((p.end for p in detected if p.name == "Phase I"), np.nan)
    t_last = float(traj.t[-1]) if traj.n_frames else np.nan
    out["t_phase_II"] = next((p.end for p in detected if p.name == "Phase II"
                              and p.end < t_last * (1 - 1e-9)), np.nan)
    out["t_half_loss"] = _half_loss_time(traj)
    out["t_cone"] = _cone_time(traj) if "t_cone" in want else np.nan
    g = traj.directions.get("γ_[n]")
    out["gamma_norm"] = _f(np.linalg.norm(g)) if g is not None else 0.0
    out["mu"] = _separability(traj.X, traj.y) if "mu" in want else np.nan
    try:
        out["t_theory"] = _f(theory.chistikov_alignment_time(cfg))
    except Exception:
        out["t_theory"] = np.nan
    out["t_min_bound"] = np.nan
    if cfg.is_classification:
        with contextlib.suppress(Exception):
            out["t_min_bound"] = _f(theory.min_alignment_bound(cfg).T_ours)
    out["ols_loss"] = ols_loss(cfg)
    ols = out["ols_loss"]
    trapped: bool | None = None
    if trap_threshold is not None:
        trapped = bool(np.isfinite(final) and final >= trap_threshold)
    elif np.isfinite(ols) and ols > trap_tol and np.isfinite(final):
        trapped = bool(abs(final - ols) <= trap_tol)
    out["trapped"] = trapped
    for k in [k for k in out if k not in want]:
        del out[k]
    return {k: (_f(v) if isinstance(v, np.floating | np.integer) else v) for k, v in out.items()}


def ols_loss(config: Config) -> float:
    """The least-squares loss of the config's data under its square loss (NaN otherwise), from
    `theory.ols_fit` (np.linalg.lstsq of y on the inputs, bias column included)."""
    if config.loss.kind != "square":
        return float("nan")
    from .theory import ols_fit

    try:
        return float(ols_fit(config).loss)
    except Exception:
        return float("nan")


def _half_loss_time(traj: Any) -> float:
    s = traj.scalars
    t = np.asarray(s.get("t", []), float)
    L = np.asarray(s.get("loss", []), float)
    if t.size == 0 or not np.isfinite(traj.loss[0]):
        t, L = np.asarray(traj.t, float), np.asarray(traj.loss, float)
    L0, L1 = float(traj.loss[0]), float(traj.loss[-1])
    if not (np.isfinite(L0) and np.isfinite(L1)) or L0 - L1 <= 1e-12 * max(abs(L0), 1e-300):
        return float("nan")
    hit = np.flatnonzero(L <= L0 - 0.5 * (L0 - L1))
    return float(t[hit[0]]) if hit.size else float("nan")


def _cone_time(traj: Any) -> float:
    """First frame at which every neuron is dead, or in S₊ with a_j > 0, or in S₋ with a_j < 0
    (Min et al.'s cones; regression data: S₊ = active on every point with y > 0)."""
    y = np.asarray(traj.y)
    pos = y > 0
    neg = y < 0
    X = traj.X
    for f in range(traj.n_frames):
        if traj.active is not None:
            act = np.asarray(traj.active[f], bool)
        else:
            W = traj.W_at(f)
            if W is None:
                continue
            act = (W @ X.T) > 0
        a = np.asarray(traj.a[f])
        dead = ~act.any(axis=1)
        ok = dead | (np.all(act == pos, axis=1) & (a > 0)) | (np.all(act == neg, axis=1) & (a < 0))
        if ok.all():
            return float(traj.t[f])
    return float("nan")


def _separability(X: np.ndarray, y: np.ndarray) -> float:
    if len(y) < 2 or len(y) > 4000:
        return float("nan")
    Z = np.asarray(X, float) * np.asarray(y, float)[:, None]
    nz = np.linalg.norm(Z, axis=1)
    ok = nz > 0
    if ok.sum() < 2:
        return float("nan")
    U = Z[ok] / nz[ok, None]
    return float(np.min(U @ U.T))


# ============================================================================ one point
def compute_point(config: Config, *, record: Sequence[str] = tuple(SUMMARIES),
                  trap_tol: float = 1e-3, trap_threshold: float | None = None,
                  cancel: Any = None, service: Any = None) -> dict[str, Any]:
    """Run one config through the service and summarise it; never raises."""
    row: dict[str, Any] = {"cache_key": config.cache_key()}
    try:
        if service is None:
            from .service import default_service

            service = default_service()
        traj = service.run(config, cancel=cancel)
        try:
            analysis = service.analyse(traj)
        except Exception as e:  # the summaries fall back to phases.py
            log.debug("analysis failed: %s", e)
            analysis = None
        row.update(status=traj.status, message=traj.message,
                   wall_time_s=float(traj.wall_time))
        row.update(summarise(traj, analysis, record=record, trap_tol=trap_tol,
                             trap_threshold=trap_threshold))
    except Exception as e:
        row.update(status="error", message=f"{type(e).__name__}: {e}")
    return row


class _RemoteCancel:
    """Event-like view of a distributed.Event, polled at most every `every` seconds."""

    def __init__(self, name: str, every: float = 0.25):
        self.name, self.every = name, every
        self._ev: Any = None
        self._last = -math.inf
        self._set = False

    def is_set(self) -> bool:
        if self._set:
            return True
        now = time.monotonic()
        if now - self._last < self.every:
            return False
        self._last = now
        try:
            if self._ev is None:
                from distributed import Event

                self._ev = Event(self.name)
            self._set = bool(self._ev.is_set())
        except Exception:
            return False
        return self._set


def _run_point(config_json: str, cache_dir: str | None, cancel_name: str | None,
               opts: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: one point on a worker (gets the client's cache dir if it has none)."""
    if cache_dir and not os.environ.get("EAE_CACHE_DIR"):
        os.environ["EAE_CACHE_DIR"] = cache_dir
    config = Config.from_json(config_json)
    cancel = _RemoteCancel(cancel_name) if cancel_name else None
    return compute_point(config, cancel=cancel, **opts)


# ============================================================================ clusters
_clients_lock = threading.Lock()
_local: dict[str, Any] = {}
_remote: dict[str, Any] = {}
_local_atexit: list[bool] = []


def scheduler_address(scheduler: str | None = None) -> str | None:
    """`scheduler`, else env DASK_SCHEDULER_ADDRESS, else None (a LocalCluster)."""
    return scheduler or os.environ.get(ENV_SCHEDULER) or None


def local_client(n_workers: int | None = None) -> Any:
    """This process's LocalCluster client (worker processes, one thread each, n = cores),
    started on first use and reused while the cache dir and worker count stay the same."""
    from distributed import Client, LocalCluster

    from .service import default_cache_dir

    n = n_workers or os.cpu_count() or 1
    cache_dir = str(default_cache_dir())
    with _clients_lock:
        cur = _local.get("client")
        if cur is not None:
            same = _local["cache_dir"] == cache_dir and (n_workers is None
                                                          or _local["n_workers"] == n)
            if same and cur.status == "running":
                return cur
            _close_local()
        pp = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR,
                               env={"EAE_CACHE_DIR": cache_dir, "PYTHONPATH": pp})
        client = Client(cluster, set_as_default=False)
        if not _local_atexit:
            atexit.register(close_clients)
            _local_atexit.append(True)
        _local.update(cluster=cluster, client=client, cache_dir=cache_dir, n_workers=n)
        return client


def _close_local() -> None:
    client, cluster = _local.pop("client", None), _local.pop("cluster", None)
    for obj in (client, cluster):
        if obj is not None:
            with contextlib.suppress(Exception):
                obj.close()
    _local.clear()


def close_clients() -> None:
    """Close this process's LocalCluster and remote clients (the remote clusters keep running)."""
    with _clients_lock:
        _close_local()
        for c in _remote.values():
            with contextlib.suppress(Exception):
                c.close()
        _remote.clear()


def close_remote(address: str) -> None:
    """Close this process's client of the cluster at `address` (the cluster keeps running)."""
    with _clients_lock:
        c = _remote.pop(address, None)
    if c is not None:
        with contextlib.suppress(Exception):
            c.close()


def remote_client(address: str, timeout: float = 10.0) -> Any:
    """A client of the cluster at `address` (cached per address)."""
    from distributed import Client

    with _clients_lock:
        cur = _remote.get(address)
        if cur is not None and cur.status == "running":
            return cur
        client = Client(address, set_as_default=False, timeout=timeout)
        _remote[address] = client
        return client


def get_client(scheduler: str | None = None, n_workers: int | None = None) -> Any:
    """The cluster client a sweep uses: remote when an address is named, else local."""
    addr = scheduler_address(scheduler)
    return remote_client(addr) if addr else local_client(n_workers)


def n_workers_of(client: Any) -> int:
    try:
        return len(client.scheduler_info(n_workers=-1)["workers"])
    except Exception:
        return 0


# ============================================================================ running
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
    return df.to_csv(index=False).encode("utf-8")


def to_parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _axis_cell(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v)
    return v


def make_frame(sweep: Sweep, rows: Mapping[int, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point in index order; fixed columns, axis columns, seed, summaries."""
    points = sweep.points()
    recs = []
    for p in points:
        r: dict[str, Any] = {"index": p.index}
        for f in sweep.axis_fields:
            r[f] = _axis_cell(p.values[f])
        r["seed"] = p.seed
        got = dict(rows.get(p.index, {}))
        r["status"] = got.pop("status", "cancelled")
        r["message"] = got.pop("message", "The sweep stopped before this point finished.")
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


def _point_opts(sweep: Sweep) -> dict[str, Any]:
    return {"record": tuple(sweep.record), "trap_tol": sweep.trap_tol,
            "trap_threshold": sweep.trap_threshold}


def _is_cancelled(cancel: Any) -> bool:
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


def _invalid_row(p: Point) -> dict[str, Any]:
    return {"status": "invalid", "message": p.error}


def run_sweep(sweep: Sweep, *, client: Any = None, scheduler: str | None = None,
              n_workers: int | None = None, progress: ProgressCallback | None = None,
              cancel: Any = None, cancel_timeout: float = 15.0) -> SweepResult:
    """Run every point on Dask and return the table.

    `client`: a distributed.Client to use (else `get_client(scheduler, n_workers)`).
    `progress(done, total, row)` is called in this thread as points finish (invalid points
    first). `cancel`: an Event-like object (or a callable) polled every 50 ms; when set, the
    outstanding futures are cancelled, running simulations are told to stop, and this returns
    once the scheduler has no task of this sweep left processing (at most `cancel_timeout` s);
    the points that did not finish are rows with status "cancelled". If `progress` raises, the
    outstanding work is cancelled the same way and the exception propagates.
    """
    from distributed import as_completed

    start = time.perf_counter()
    points = sweep.points()
    total = len(points)
    rows: dict[int, dict[str, Any]] = {}
    done = 0
    for p in points:
        if p.config is None:
            rows[p.index] = _invalid_row(p)
            done += 1
            if progress is not None:
                progress(done, total, {"index": p.index, **p.values, "seed": p.seed,
                                       **rows[p.index]})
    valid = [p for p in points if p.config is not None]
    cancelled = False
    address = ""
    workers = 0
    if valid:
        client = client if client is not None else get_client(scheduler, n_workers)
        address = str(getattr(client.scheduler, "address", "") or "")
        workers = n_workers_of(client)
        from .service import default_cache_dir

        token = uuid.uuid4().hex[:12]
        ev_name = f"eae-sweep-cancel-{token}"
        cache_dir = str(default_cache_dir())
        opts = _point_opts(sweep)
        futs: dict[Any, Point] = {}
        for p in valid:
            assert p.config is not None
            f = client.submit(_run_point, p.config.to_json(), cache_dir,
                              ev_name if cancel is not None else None, opts,
                              key=f"eae-sweep-{token}-{p.index}", pure=False, retries=0)
            futs[f] = p
        pending = set(futs)
        ac = as_completed(list(futs), loop=client.loop)
        ok = False
        try:
            while pending:
                if _is_cancelled(cancel):
                    cancelled = True
                    break
                if not ac.has_ready():
                    time.sleep(0.05)
                    continue
                for f in ac.next_batch(block=False):
                    pending.discard(f)
                    p = futs[f]
                    rows[p.index] = _collect(f)
                    done += 1
                    if progress is not None:
                        progress(done, total, {"index": p.index, **p.values, "seed": p.seed,
                                               **rows[p.index]})
            ok = True
        finally:
            if pending or not ok:
                _cancel_futures(client, list(pending), ev_name, cancel_timeout)
                cancelled = True
            with contextlib.suppress(Exception):
                ac.clear()
            del futs, pending  # the event is only ever set on cancel, and stays set
    df = make_frame(sweep, rows)
    return SweepResult(sweep=sweep, frame=df, cancelled=cancelled,
                       elapsed_s=time.perf_counter() - start, scheduler=address,
                       n_workers=workers)


def _collect(f: Any) -> dict[str, Any]:
    try:
        if f.status == "finished":
            row = f.result()
            return dict(row) if isinstance(row, Mapping) else {
                "status": "error", "message": f"unexpected task result {type(row).__name__}"}
        if f.status == "error":
            exc = f.exception()
            return {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
        return {"status": "cancelled", "message": f"the task was {f.status}"}
    except Exception as e:
        return {"status": "error", "message": f"{type(e).__name__}: {e}"}


def _cancel_futures(client: Any, futures: list[Any], ev_name: str, timeout: float) -> None:
    """Tell running simulations to stop, cancel the futures, wait until the scheduler has none
    of them processing."""
    from distributed import Event

    if not futures:
        return
    keys = {f.key for f in futures}
    with contextlib.suppress(Exception):
        Event(ev_name, client=client).set()
    with contextlib.suppress(Exception):
        client.cancel(futures, force=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            busy = {k for ks in client.processing().values() for k in ks}
        except Exception:
            return
        if not (busy & keys):
            return
        time.sleep(0.05)
    log.warning("sweep cancel: tasks still processing after %.0f s", timeout)


def run_sweep_serial(sweep: Sweep, *, progress: ProgressCallback | None = None,
                     cancel: Any = None, service: Any = None) -> SweepResult:
    """The same sweep in this process, one point after another (reference and benchmark)."""
    start = time.perf_counter()
    points = sweep.points()
    rows: dict[int, dict[str, Any]] = {}
    cancelled = False
    opts = _point_opts(sweep)
    for done, p in enumerate(points, 1):
        if _is_cancelled(cancel):
            cancelled = True
            break
        rows[p.index] = (_invalid_row(p) if p.config is None
                         else compute_point(p.config, service=service, **opts))
        if progress is not None:
            progress(done, len(points), {"index": p.index, **p.values, "seed": p.seed,
                                         **rows[p.index]})
    return SweepResult(sweep=sweep, frame=make_frame(sweep, rows), cancelled=cancelled,
                       elapsed_s=time.perf_counter() - start, scheduler="in-process",
                       n_workers=1)


# ============================================================================ built-ins
@dataclass(frozen=True)
class Builtin:
    """A built-in sweep: a paper's scaling claim as a picture."""

    name: str
    title: str
    paper: str
    claim: str
    build: Callable[[bool], dict[str, Any]]


def _teacher_base(d: int, m: int, t_end: float, method: str = "gf",
                  max_steps: int = 2_000_000) -> dict[str, Any]:
    return {"data": {"kind": "teacher", "d": d, "scheme": "centred"},
            "model": {"width": m},
            "init": {"scheme": "balanced", "normalisation": "sqrt_dm", "scale": 1e-3},
            "loss": {"kind": "square", "reduction": "mean"},
            "integrator": {"method": method, "t_end": t_end, "lr": 0.01,
                           "max_steps": max_steps},
            "record": {"frames": 60, "scalars": 300}}


def _b_alignment_vs_scale(quick: bool) -> dict[str, Any]:
    return {
        "name": "alignment time vs ln(1/λ)",
        "description": "Teacher data (centred, n = d), balanced init with Chistikov et al.'s "
                       "normalisation: the alignment phase ends (and the loss drops) after "
                       "≈ ln(1/λ)/‖γ_[n]‖.",
        "base": _teacher_base(8 if quick else 16, 50 if quick else 200, 60 if quick else 150),
        "axes": [{"field": "init.scale",
                  "log": [4.0**-12, 4.0**-2, 6] if quick else [4.0**-13, 4.0**-1, 13]}],
        "seeds": 2 if quick else 5,
    }


def _b_max_angle(quick: bool) -> dict[str, Any]:
    base = _teacher_base(4, 200, 300 if quick else 2000,
                         max_steps=100_000 if quick else 2_000_000)
    ks = [0, -4, -8] if quick else [2, 0, -2, -4, -5, -6, -7, -8, -10, -13]
    return {
        "name": "max angle between active neurons vs λ",
        "description": "Chistikov et al., Figure 1/7 and Table 1: final max angle between "
                       "active neurons, centred teacher data, n = d, m = 200; the paper's "
                       "medians of 5 trials beside ours.",
        "base": base,
        "axes": [{"field": "data.d", "values": [4, 16]},
                 {"field": "init.scale", "values": [4.0**k for k in ks]}],
        "seeds": 3 if quick else 5,
    }


def _b_trap(quick: bool) -> dict[str, Any]:
    return {
        "name": "spurious OLS trap: probability",
        "description": "Boursier & Flammarion's three-point data: the fraction of seeds that "
                       "end on the least-squares line (final loss within 1e-3 of the OLS "
                       "loss) by init scale, init scheme and leaky slope γ.",
        "base": {"data": {"kind": "three_point"}, "model": {"width": 50 if quick else 200},
                 "init": {"scheme": "balanced", "normalisation": "sqrt_m", "scale": 1e-3},
                 "loss": {"kind": "square", "reduction": "mean"},
                 "integrator": {"method": "gd", "lr": 0.01 if quick else 0.005,
                                "t_end": 600 if quick else 2000},
                 "record": {"frames": 50, "scalars": 300}},
        "axes": [{"field": "init.scale", "log": [1e-3, 1.0, 4] if quick else [1e-4, 1.0, 9]},
                 {"field": "init.scheme", "values": ["balanced", "gaussian", "dominated"]},
                 {"field": "model.gamma", "values": [0.0, 0.05] if quick else [0.0, 0.05, 0.1]}],
        "seeds": 2 if quick else 8,
        "trap_tol": 1e-3,
    }


def _b_alignment_vs_mu(quick: bool) -> dict[str, Any]:
    mus = [0.01, 0.03, 0.1, 0.3, 0.6] if quick else [0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4,
                                                    0.6, 0.8]
    angles = [[0.0, float(f"{90 - math.degrees(math.asin(m)):.6g}")] for m in mus]
    return {
        "name": "alignment time vs separation μ",
        "description": "Min et al., Appendix A.2: two points labelled +1 at angle 90° − "
                       "asin μ; the time until every non-dead neuron is in its cone S₊/S₋ "
                       "(their t₁ = O(log n/√μ)).",
        "base": {"data": {"kind": "points", "angles_deg": [0.0, 84.27], "radii": [1.0, 1.0],
                          "labels": [1.0, 1.0]},
                 "model": {"width": 50},
                 "init": {"scheme": "gaussian", "normalisation": "none", "scale": 1e-6},
                 "loss": {"kind": "exponential", "reduction": "sum"},
                 "integrator": {"method": "gf", "t_end": 60},
                 "record": {"frames": 120, "scalars": 400}},
        "axes": [{"field": "data.angles_deg", "values": angles}],
        "seeds": 3 if quick else 8,
    }


def _b_condensation_vs_angle(quick: bool) -> dict[str, Any]:
    angles = [20.0, 40.0, 60.0, 80.0] if quick else [10.0, 17.19, 25.0, 35.0, 45.0, 55.0,
                                                      65.0, 75.0, 85.0]
    return {
        "name": "Phase I time vs angle between x₊ and x₋",
        "description": "Wang & Ma's two-signal data, frozen output layer, exponential loss: "
                       "the detected end of Phase I (condensation and saddle escape) by the "
                       "angle between the signals. The paper's phase-time formulas are not "
                       "available: measured only.",
        "base": {"data": {"kind": "two_signals", "angle_deg": 17.19, "p": 2.0},
                 "model": {"width": 50, "train_output": False},
                 "init": {"scheme": "fixed_output", "normalisation": "none", "scale": 1e-2,
                          "output_value": 1.0, "output_norm": "sqrt_m"},
                 "loss": {"kind": "exponential", "reduction": "sum"},
                 "integrator": {"method": "gd", "lr": 0.01, "t_end": 200},
                 "record": {"frames": 120, "scalars": 400}},
        "axes": [{"field": "data.angle_deg", "values": angles}],
        "seeds": 2 if quick else 6,
    }


BUILTINS: dict[str, Builtin] = {b.name: b for b in (
    Builtin("alignment_vs_scale", "Alignment time against ln(1/λ)",
            "Chistikov et al. (Lemma 5); Min et al. (Theorem 1)",
            "the alignment phase lasts ≈ ln(1/λ)/‖γ_[n]‖: slope 1/‖γ_[n]‖ in ln(1/λ)",
            _b_alignment_vs_scale),
    Builtin("max_angle_vs_lambda", "Final max angle between active neurons against λ",
            "Chistikov et al. (Table 1, Figure 7)",
            "for small λ the bundle's max angle shrinks ∝ λ (slope 1, log–log)",
            _b_max_angle),
    Builtin("trap_probability", "Probability of the spurious OLS trap",
            "Boursier & Flammarion (Section 5)",
            "balanced/dominated ReLU from small init stay on the OLS line; gaussian init, "
            "leaky γ > 0 or large λ escape", _b_trap),
    Builtin("alignment_vs_mu", "Alignment time against the separation μ",
            "Min et al. (Theorem 1, Appendix A.2)",
            "t₁ = O(log n/√μ): smaller μ, slower alignment", _b_alignment_vs_mu),
    Builtin("phase1_vs_angle", "Phase I time against the angle of the two signals",
            "Wang & Ma (two-signal data)",
            "measured only: the paper's phase-time formulas are not available",
            _b_condensation_vs_angle),
)}


def builtin_sweep(name: str, quick: bool = True) -> Sweep:
    """A built-in sweep by name ('quick' size for pages and tests, else 'full')."""
    if name not in BUILTINS:
        raise SweepError([("builtin", f"unknown built-in {name!r}; choose from "
                           f"{', '.join(BUILTINS)}")])
    d = BUILTINS[name].build(quick)
    d = {**d, "builtin": name, "name": f"{d['name']} ({'quick' if quick else 'full'})"}
    return Sweep.from_dict(d)


def sweep_from_frame(df: pd.DataFrame) -> Sweep | None:
    """The spec a results table was made from (stored in df.attrs, kept by Parquet)."""
    raw = df.attrs.get("sweep")
    if not raw:
        return None
    try:
        return Sweep.from_json(raw)
    except SweepError:
        return None


# ============================================================================ CLI
def cli_main(argv: Sequence[str] | None = None) -> int:
    """python -m dynamics sweep SWEEP.json --out results.parquet [--scheduler ADDR]
    [--builtin NAME [--quick | --full]] [--workers N]."""
    ap = argparse.ArgumentParser(prog="python -m dynamics sweep",
                                 description="Run a parameter sweep on Dask (a LocalCluster, or "
                                 "the scheduler named by --scheduler / DASK_SCHEDULER_ADDRESS).")
    ap.add_argument("spec", nargs="?", help="sweep JSON file (or use --builtin)")
    ap.add_argument("--out", default="sweep.parquet", help="results: .parquet or .csv")
    ap.add_argument("--scheduler", default=None, help="address of a running dask scheduler")
    ap.add_argument("--builtin", default=None, choices=sorted(BUILTINS),
                    help="run a built-in sweep instead of a file")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="built-in: quick size (default)")
    size.add_argument("--full", action="store_true", help="built-in: full size")
    ap.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: "
                    "cores)")
    ap.add_argument("--list", action="store_true", help="list the built-ins and exit")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.list:
        for b in BUILTINS.values():
            print(f"{b.name:22s} {b.title} — {b.paper}")
        return 0
    try:
        if args.builtin:
            sweep = builtin_sweep(args.builtin, quick=not args.full)
        elif args.spec:
            p = Path(args.spec)
            if not p.exists():
                raise SweepError([("SWEEP", f"no such file: {args.spec}")])
            sweep = Sweep.from_json(p.read_text())
        else:
            ap.error("give a sweep JSON file or --builtin NAME")
    except SweepError as e:
        print("The sweep is not valid:", file=sys.stderr)
        for path, msg in e.errors:
            print(f"  - {path}: {msg}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv"):
        print(f"error: --out must end in .parquet or .csv (got {out.name})", file=sys.stderr)
        return 2
    shown = [-1]

    def progress(done: int, total: int, row: dict[str, Any]) -> None:
        step = max(1, total // 20)
        if not args.quiet and (done == total or done - shown[0] >= step):
            shown[0] = done
            print(f"  {done}/{total} points  (last: {row.get('status')})", file=sys.stderr)

    cancel = threading.Event()
    where = scheduler_address(args.scheduler) or f"LocalCluster ({args.workers or os.cpu_count()}"\
        " workers)"
    if not args.quiet:
        print(f"sweep {sweep.name!r}: {sweep.n_points()} points on {where}", file=sys.stderr)
    try:
        res = run_sweep(sweep, scheduler=args.scheduler, n_workers=args.workers,
                        progress=progress, cancel=cancel)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"error: could not reach the Dask cluster: {e}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(res.to_csv_bytes() if out.suffix == ".csv" else res.to_parquet_bytes())
    summary = {"name": sweep.name, "points": len(res.frame), "statuses": res.status_counts(),
               "elapsed_s": round(res.elapsed_s, 2), "scheduler": res.scheduler,
               "workers": res.n_workers, "out": str(out)}
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    close_clients()
    return 1 if res.cancelled else 0
