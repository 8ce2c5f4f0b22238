"""Trajectory: everything a run recorded, as plain arrays; saved as .npz + .json, no pickle.

Frames (F snapshots at times `t`, t[0] = 0): loss, accuracy, output weights `a` (F, m),
neuron norms ‖w_j‖ (F, m), a 2D projection `proj` (F, m, 2) of every w_j onto the orthonormal
`plane` (2, d), per-frame metrics (`frame_metrics`, each (F,)), cosines of every neuron to the
named directions (`cosines`, each (F, m)), activation patterns `active` (F, m, n) when they fit
the budget, and full W at frames `W_frames` (all when they fit the budget, else start, end and
evenly spaced ones). Dense scalars (`scalars`: t, loss, norm_rate, dir_rate) come from the
integrator's own steps. Activation-change events (neuron j gains/loses point i between two
frames) are stored with the time of the later frame.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .config import Config
from .status import Status


@dataclass
class Trajectory:
    config: Config
    t: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    a: np.ndarray
    norms: np.ndarray
    proj: np.ndarray
    plane: np.ndarray
    plane_names: tuple[str, str]
    W: np.ndarray
    W_frames: np.ndarray
    X: np.ndarray
    y: np.ndarray
    sw: np.ndarray
    active: np.ndarray | None
    events: dict[str, np.ndarray]
    frame_metrics: dict[str, np.ndarray]
    cosines: dict[str, np.ndarray]
    directions: dict[str, np.ndarray]
    scalars: dict[str, np.ndarray]
    status: Status = Status.COMPLETED  # stored as its value string ("completed", ...)
    message: str = ""
    n_evals: int = 0
    n_steps: int = 0
    wall_time: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # also accepts the stored string

    # -- convenience ------------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return int(self.t.shape[0])

    @property
    def width(self) -> int:
        return int(self.a.shape[1])

    @property
    def classification(self) -> bool:
        return bool(np.all(np.isin(self.y, (-1.0, 1.0))))

    @property
    def completed(self) -> bool:
        """The run reached t_end (status COMPLETED)."""
        return self.status is Status.COMPLETED

    def key(self) -> str:
        """The one key of a produced trajectory (what its analysis and its figures are keyed
        by): its config's cache key, status, frame count and last time, and "provisional" for
        a run computed while the kernels compiled (`dynamics.service.result_key` is the key of
        a *request*: a config under the limits that change what is recorded)."""
        last = float(self.t[-1]) if self.n_frames else 0.0
        mark = ":provisional" if self.meta.get("provisional") else ""
        return f"{self.config.cache_key()}:{self.status}:{self.n_frames}:{last!r}{mark}"

    def W_at(self, frame: int) -> np.ndarray | None:
        """Full W at a frame if it was stored, else None."""
        frame = frame % self.n_frames
        hit = np.flatnonzero(self.W_frames == frame)
        return self.W[hit[0]] if hit.size else None

    @property
    def W_final(self) -> np.ndarray:
        return self.W[-1]

    @property
    def W_initial(self) -> np.ndarray:
        return self.W[0]

    def frame_at(self, time: float) -> int:
        """Index of the last frame with t ≤ time."""
        return max(0, int(np.searchsorted(self.t, time, side="right")) - 1)

    def nbytes(self) -> int:
        tot = 0
        for v in self.__dict__.values():
            if isinstance(v, np.ndarray):
                tot += v.nbytes
            elif isinstance(v, dict):
                tot += sum(x.nbytes for x in v.values() if isinstance(x, np.ndarray))
        return tot

    # -- save / load ------------------------------------------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        arrs: dict[str, np.ndarray] = {}
        for name in ("t", "loss", "accuracy", "a", "norms", "proj", "plane", "W", "W_frames",
                     "X", "y", "sw"):
            arrs[name] = np.asarray(getattr(self, name))
        if self.active is not None:
            arrs["active"] = np.asarray(self.active, dtype=bool)
        for group in ("events", "frame_metrics", "cosines", "directions", "scalars"):
            for k, v in getattr(self, group).items():
                arrs[f"{group}/{k}"] = np.asarray(v)
        return arrs

    def header(self) -> dict[str, Any]:
        return {
            "format": "early-alignment-trajectory/1",
            "config": self.config.to_dict(),
            "plane_names": list(self.plane_names),
            "status": self.status.value,
            "message": self.message,
            "n_evals": int(self.n_evals),
            "n_steps": int(self.n_steps),
            "wall_time": float(self.wall_time),
            "meta": _jsonable(self.meta),
        }

    def save(self, path: str | Path) -> tuple[Path, Path]:
        """Write `path` (.npz, compressed) and the same name with .json (header + config)."""
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_suffix(".npz")
        p.parent.mkdir(parents=True, exist_ok=True)
        # allow_pickle spelled out (it is NumPy's default): with it unfilled, a type checker
        # matches the ** mapping against that bool parameter too.
        np.savez_compressed(p, allow_pickle=True, **self.to_arrays())
        j = p.with_suffix(".json")
        j.write_text(json.dumps(self.header(), indent=2, ensure_ascii=False))
        return p, j

    def to_npz_bytes(self, compress: bool = True) -> bytes:
        buf = io.BytesIO()
        (np.savez_compressed if compress else np.savez)(buf, allow_pickle=True,
                                                        **self.to_arrays())
        return buf.getvalue()

    @classmethod
    def load(cls, path: str | Path) -> Trajectory:
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_suffix(".npz")
        header = json.loads(p.with_suffix(".json").read_text())
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        return cls.from_parts(header, arrays)

    @classmethod
    def from_parts(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Trajectory:
        groups: dict[str, dict[str, np.ndarray]] = {
            g: {} for g in ("events", "frame_metrics", "cosines", "directions", "scalars")}
        plain: dict[str, np.ndarray] = {}
        for k, v in arrays.items():
            if "/" in k:
                g, name = k.split("/", 1)
                groups[g][name] = v
            else:
                plain[k] = v
        return cls(
            config=Config.from_dict(header["config"]),
            t=plain["t"], loss=plain["loss"], accuracy=plain["accuracy"], a=plain["a"],
            norms=plain["norms"], proj=plain["proj"], plane=plain["plane"],
            plane_names=tuple(header["plane_names"]),
            W=plain["W"], W_frames=plain["W_frames"], X=plain["X"], y=plain["y"],
            sw=plain["sw"], active=plain.get("active"), **groups,
            status=Status(header["status"]), message=header["message"],
            n_evals=header["n_evals"], n_steps=header["n_steps"],
            wall_time=header["wall_time"], meta=header.get("meta", {}),
        )

    def to_bytes(self) -> bytes:
        """One self-contained blob (zip of an uncompressed .npz and the .json) for caches:
        uncompressed because zlib dominated cache read/write time."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("trajectory.npz", self.to_npz_bytes(compress=False))
            zf.writestr("trajectory.json", json.dumps(self.header(), ensure_ascii=False))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> Trajectory:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            header = json.loads(zf.read("trajectory.json"))
            with np.load(io.BytesIO(zf.read("trajectory.npz")), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        return cls.from_parts(header, arrays)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
