"""The pictures of Real data's figure (`viz.real_data`): the mean neurons w̄₊, w̄₋ beside the
class means x̄₊, x̄₋, as images when the data are images (`meta["image_shape"]`, a heatmap
each) else as bars over the input coordinates (at most MAX_BAR_COORDS), each divided by its
own largest |entry| (the neurons' norms grow by orders of magnitude; the shape is what is
compared). The numbers come from `dynamics.readouts`.
"""

from __future__ import annotations

import math

import numpy as np

from dynamics.readouts import class_means, mean_neurons
from dynamics.trajectory import Trajectory

from .scene import Panel, Scene
from .style import GRID, INK, NEGATIVE, POSITIVE

IMAGE_SCALE = [[0.0, "#B2182B"], [0.25, "#EF8A62"], [0.5, "#F7F7F7"], [0.75, "#67A9CF"],
               [1.0, "#2166AC"]]  # diverging, 0 = white; readable in grey and for CVD
MAX_BAR_COORDS = 64


def _strip_bias(traj: Trajectory, v: np.ndarray) -> np.ndarray:
    return v[:-1] if traj.meta.get("bias") else v


def picture(traj: Trajectory, v: np.ndarray | None) -> np.ndarray | None:
    """A vector as the data's image (bias coordinate dropped), or None if it is not one."""
    shape = traj.meta.get("image_shape")
    if v is None or shape is None:
        return None
    v = _strip_bias(traj, np.asarray(v, float))
    h, w = (int(s) for s in shape)
    return v.reshape(h, w) if v.size == h * w else None


def unit_scaled(v: np.ndarray) -> np.ndarray:
    """v / max|v| (zeros stay zeros; NaNs stay NaNs)."""
    v = np.asarray(v, float)
    top = float(np.nanmax(np.abs(v))) if v.size and np.isfinite(v).any() else 0.0
    return v / top if top > 0 else v


def picture_frames(traj: Trajectory, fidx: np.ndarray) -> list[list[np.ndarray | None]]:
    """[w̄₊, x̄₊, w̄₋, x̄₋] at each frame of `fidx` as unit-scaled pictures (or vectors); None
    where the frame has no stored W."""
    mp, mm = class_means(traj)
    stored = set((np.asarray(traj.W_frames, dtype=int) % max(traj.n_frames, 1)).tolist())
    plus, minus = mean_neurons(traj, +1), mean_neurons(traj, -1)
    fixed = [_shown(traj, mp), _shown(traj, mm)]
    out: list[list[np.ndarray | None]] = []
    for f in (int(f) for f in fidx):
        if f in stored:
            out.append([_shown(traj, plus[f]), fixed[0], _shown(traj, minus[f]), fixed[1]])
        else:
            out.append([None, fixed[0], None, fixed[1]])
    return out


def _shown(traj: Trajectory, v: np.ndarray) -> np.ndarray:
    img = picture(traj, v)
    return unit_scaled(img if img is not None else _strip_bias(traj, v))


def image_traces(scene: Scene, at: dict[tuple[int, int], Panel],
                  pics: list[list[np.ndarray | None]]) -> None:
    """w̄± (moving: one image per frame) and x̄± (fixed) as heatmaps, each ÷ its max|·|."""
    names = ("w̄₊", "x̄₊", "w̄₋", "x̄₋")
    cells = ((0, 2), (0, 3), (1, 2), (1, 3))
    for k, (cell, name) in enumerate(zip(cells, names, strict=True)):
        panel = at[cell]
        frames = [p[k] if p[k] is not None else np.full((8, 8), np.nan) for p in pics]
        z0 = frames[0]
        trace = {"type": "heatmap", "z": np.round(z0, 4).tolist(), "zmin": -1, "zmax": 1,
                 "colorscale": IMAGE_SCALE, "showscale": k == 3, "name": name,
                 "colorbar": {"len": 0.55, "y": 0.72, "thickness": 12,
                              "title": {"text": "÷ max|·|", "side": "right"}},
                 "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{z:.3f}} (÷ max|·|)"
                                  "<extra></extra>"}
        tracks = []
        if k in (0, 2):  # the mean neurons move; the class means do not
            tracks = [{"attr": "z", "values": scene.array(f"pic{k}", np.stack(frames))}]
        scene.trace(panel, trace, tracks=tracks)
        panel.xaxis.update(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                           constrain="domain")
        panel.yaxis.update(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                           autorange="reversed", scaleanchor=panel.x, constrain="domain")


def bar_traces(scene: Scene, at: dict[tuple[int, int], Panel],
                pics: list[list[np.ndarray | None]]) -> None:
    """w̄± (moving) beside x̄± (outlined) per input coordinate, each ÷ its max|·|."""
    for row, (iw, im), colour, sgn in ((0, (0, 1), POSITIVE, "₊"), (1, (2, 3), NEGATIVE, "₋")):
        panel = at[(row, 2)]
        m_v = pics[0][im]
        d = 0 if m_v is None else min(m_v.size, MAX_BAR_COORDS)
        xs = [f"x{i + 1}" for i in range(d)]
        ys = np.stack([_bar_values(p[iw], d) for p in pics]) if d else np.zeros((len(pics), 0))
        scene.trace(panel, {"type": "bar", "x": xs, "y": _clean(ys[0]), "name": f"w̄{sgn}",
                            "marker": {"color": colour}, "showlegend": False,
                            "hovertemplate": f"w̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"},
                    tracks=[{"attr": "y", "values": scene.array(f"bars{row}", ys)}])
        scene.trace(panel, {"type": "bar", "x": xs, "y": _clean(_bar_values(m_v, d)),
                            "name": f"x̄{sgn}",
                            "marker": {"color": "rgba(0,0,0,0)", "line": {"color": INK,
                                                                          "width": 2}},
                            "showlegend": False,
                            "hovertemplate": f"x̄{sgn} %{{x}}: %{{y:.3f}}<extra></extra>"})
        panel.yaxis.update(range=[-1.1, 1.1], gridcolor=GRID)


def _clean(v: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else round(float(x), 4) for x in v]


def _bar_values(v: np.ndarray | None, d: int) -> np.ndarray:
    if v is None:
        return np.full(d, np.nan)
    return np.asarray(v[:d], dtype=float)


__all__ = ["IMAGE_SCALE", "MAX_BAR_COORDS", "bar_traces", "image_traces", "picture",
           "picture_frames", "unit_scaled"]
