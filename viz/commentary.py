"""Running commentary: one plain sentence per animation frame saying what is happening now and
which panel shows it, from the phase the frame's time falls in (`Analysis.phases`, named by
`viz.wording`) and the trajectory's own numbers at that frame (largest ‖w_j‖, the loss, the
training accuracy, active neurons).

Pure and cheap: Trajectory + Analysis + frame indices → sentences (no physics, only values the
run recorded). The figures pass them to the player as `Animation.captions`, shown under the
slider. `Where` names the panels of the figure the sentence is read beside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dynamics.annotations import Analysis, Phase, PhaseText, TimeMarker
from dynamics.papers import PAPERS
from dynamics.trajectory import Trajectory

from .style import phase_key
from .wording import FOLDABLE, STORY, marker_words, phase_words

_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Where:
    """How the figure shows each quantity, as words ("the markers on the left")."""

    directions: str = "the neurons on the left"
    start: str = "them turn"
    turn: str = "the neurons on the left swing to the rays"
    norms: str = "the norms ‖w_j‖ (top right)"
    loss: str = "the loss panel"
    accuracy: str = "bottom right"


MAIN = Where()
REAL_DATA = Where(directions="the mean neurons w̄₊, w̄₋ (right)", start="w̄₊, w̄₋ (right)",
                  turn="w̄₊, w̄₋ turn to their class sums (cos → 1, left)", norms="‖W‖²₂",
                  loss="the loss panel", accuracy="bottom row")


def num(v: float, digits: int = 3) -> str:
    """A number for a sentence: `digits` significant digits, powers of ten as ·10⁻⁶."""
    if not math.isfinite(v):
        return "—"
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-3 <= a < 1e4:
        return f"{v:.{digits}g}"
    m, e = f"{v:.{digits - 1}e}".split("e")
    m = m.rstrip("0").rstrip(".")
    exp = str(int(e)).translate(_SUP)
    return f"10{exp}" if m == "1" else f"{m}·10{exp}"


def times(r: float) -> str:
    """A growth factor: ×1.3, ×40, ×2·10⁵."""
    if not math.isfinite(r) or r <= 0:
        return "×—"
    if r < 10:
        return f"×{r:.2g}"
    return f"×{r:.0f}" if r < 1e4 else "×10" + str(round(math.log10(r))).translate(_SUP)


def _phase_at(analysis: Analysis | None, t: float) -> tuple[Phase | None, Phase | None]:
    """(the story phase, the paper's own phase) that time t falls in: detected before
    predicted, then the one that started last."""
    if analysis is None:
        return None, None
    here = sorted((p for p in analysis.phases if p.start <= t <= p.end),
                  key=lambda p: (p.source != "detected", -p.start))
    story = next((p for p in here if phase_key(p.name) in STORY), None)
    own = next((p for p in here if phase_key(p.name) not in STORY
                and phase_key(p.name) not in FOLDABLE), None)
    return story, own


def _after_alignment(analysis: Analysis | None, t: float) -> bool:
    if analysis is None:
        return False
    ends = [p.end for p in analysis.phases if phase_key(p.name) == "alignment"]
    starts = [p.start for p in analysis.phases if phase_key(p.name) == "fitting"]
    return bool(ends) and t > min(ends) and (not starts or t < min(starts))


def _plateau_at(analysis: Analysis | None, t: float) -> Phase | None:
    if analysis is None:
        return None
    return next((p for p in analysis.phases if phase_key(p.name) in FOLDABLE
                 and p.start <= t <= p.end), None)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


TINY = 0.01  # the start is "tiny" when the largest ‖w_j‖ has two decades or more to grow
LAZY = 1.5  # a run whose largest ‖w_j‖ never exceeds this times its start: the norms stay put


# a paper's phases the sentences describe in their own words (over the run's story phase):
# each paper declares them, `Paper.phase_text` (those with a sentence, `PhaseText.says`)
PAPER_TEXT: dict[str, PhaseText] = {name: text for paper in PAPERS.values()
                                    for name, text in paper.phase_text.items() if text.says}
OWN = frozenset(PAPER_TEXT)


class _Run(NamedTuple):
    """What a run's sentences compare each frame with: its first loss, the largest ‖w_j‖ it
    reaches (`peak`) and starts with (`top0`), its last time."""

    loss0: float
    peak: float
    t_last: float = math.inf
    top0: float = math.nan


class _Frame(NamedTuple):
    """One frame's numbers: the largest ‖w_j‖ (`top`) and its growth from the start as words
    (`grow`), the loss, the training accuracy, the active neurons; `first`: the run's start."""

    top: float
    grow: str
    loss: float
    acc: float
    n_active: float
    first: bool


def _sentence(ph: Phase | None, key: str, w: Where, fr: _Frame, run: _Run) -> str:
    top, grow, loss, acc, n_active, first = fr
    loss0, peak, t_last, top0 = run
    plain = _cap(phase_words(ph).plain) if ph is not None else ""
    big = num(top, 2)
    if first and not top <= TINY * peak and not peak > LAZY * top:  # lazy: no growth at all
        return (f"Start: the neurons are not small (largest ‖w‖ {big}) and hardly grow in "
                f"this run (at most {num(peak, 2)}): press ▶, watch the loss fall while "
                "they barely move.")
    if first and not top <= TINY * peak:  # a large start: the norms have little to grow
        return (f"Start: the neurons are not small (largest ‖w‖ {big}, the largest it gets "
                f"is {num(peak, 2)}), so there is no long stretch of tiny norms: press ▶, "
                "watch them turn and grow together.")
    if first:
        return (f"Start: every neuron is tiny (largest ‖w‖ {big}, against {num(peak, 2)} "
                f"later) and points its own way: press ▶, watch {w.start}.")
    if key == "alignment":
        return f"{plain}: {w.turn}; largest ‖w‖ {big} ({grow}), loss still {num(loss)}."
    if key == "aligned":
        return (f"Aligned: the directions have settled; now {w.norms} rise ({grow}), the "
                f"loss still {num(loss)}.")
    if key == "fitting" and peak <= LAZY * top0:  # the loss falls, the norms stay put
        return (f"Loss falls: the norms hardly move (largest ‖w‖ {big}, {grow} its start); "
                f"loss {num(loss)}, from {num(loss0)}.")
    if key == "fitting":
        return (f"{plain}: the aligned neurons grow together (largest ‖w‖ {big}); loss "
                f"{num(loss)}, from {num(loss0)}.")
    if key == "convergence":
        return (f"{plain}: the loss is {num(loss)} (from {num(loss0)}) and shrinks slowly "
                f"now.")
    if key == "settled":
        return (f"{plain}: the loss stays at {num(loss)} (from {num(loss0)}) and falls no "
                f"further in this run; largest ‖w‖ {big}.")
    said = PAPER_TEXT.get(key)
    if said is not None and ph is not None:  # a paper's phase, in the paper's words
        until = said.says_until and ph.end < t_last * (1 - 1e-6)  # it ends: say when
        return (said.says_until if until else said.says).format(
            plain=plain, big=big, grow=grow, loss=num(loss), loss0=num(loss0), acc=acc,
            n_active=n_active, end=num(ph.end), directions=w.directions,
            norms_panel=w.norms, loss_panel=w.loss, accuracy_panel=w.accuracy)
    if key in FOLDABLE:
        return (f"{plain}: the loss stays at {num(loss)} (flat on {w.loss}); largest ‖w‖ "
                f"{big} ({grow}).")
    if ph is not None:
        return f"{plain}: largest ‖w‖ {big} ({grow}), loss {num(loss)}."
    return f"Largest ‖w‖ {big} ({grow} its start), loss {num(loss)}."


MAX_CHARS = 112  # one line under the slider at 1280 px in presenter mode (~10 px a letter)


def _passed(markers: Sequence[TimeMarker], t_prev: float, t: float) -> str:
    names = [marker_words(m) for m in markers if t_prev < m.time <= t]
    return f" Now: {names[0]}." if names else ""


def captions(traj: Trajectory, analysis: Analysis | None, frames: Sequence[int],
             where: Where = MAIN) -> list[str]:
    """The sentence under the slider at each of `frames` (trajectory frame indices)."""
    t = np.asarray(traj.t, float)
    norms = np.asarray(traj.norms, float)
    loss = np.asarray(traj.loss, float)
    acc = np.asarray(traj.accuracy, float) if traj.classification else np.full(t.size, np.nan)
    n_active = np.asarray(traj.frame_metrics.get("n_active", np.full(t.size, np.nan)), float)
    with np.errstate(all="ignore"):
        tops = np.nanmax(np.where(np.isfinite(norms), norms, np.nan), axis=1) \
            if norms.size else np.zeros(t.size)
    top0 = float(tops[0]) if tops.size else float("nan")
    with np.errstate(all="ignore"):
        peak = float(np.nanmax(tops)) if np.isfinite(tops).any() else float("nan")
    loss0 = float(loss[0]) if loss.size else float("nan")
    run = _Run(loss0, peak, float(t[-1]) if t.size else math.inf, top0)
    markers = analysis.markers if analysis is not None else ()
    out: list[str] = []
    prev = -math.inf
    for f in (int(k) for k in frames):
        tf = float(t[f])
        if not math.isfinite(float(loss[f])):
            out.append(f"The run stopped here ({traj.status}): the loss is not finite.")
            prev = tf
            continue
        story, own = _phase_at(analysis, tf)
        # a paper's phase when the sentence has its own words for it, else the run's story
        ph = own if own is not None and (story is None or phase_key(own.name) in OWN) \
            else story
        key = phase_key(ph.name) if ph is not None else ""
        if ph is None and _after_alignment(analysis, tf):
            key = "aligned"
        elif ph is None:
            ph = _plateau_at(analysis, tf)
            key = phase_key(ph.name) if ph is not None else ""
        grow = times(float(tops[f]) / top0) if top0 > 0 else "×—"
        text = _sentence(ph, key, where, _Frame(float(tops[f]), grow, float(loss[f]),
                                                float(acc[f]), float(n_active[f]),
                                                f == 0 or tf == 0.0), run)
        now = _passed(markers, prev, tf) if f > 0 else ""
        if now and len(text) + len(now) > MAX_CHARS:  # the event, and the phase it is in
            event = now.removeprefix(" Now: ").rstrip(".")
            phase = f"; phase: {phase_words(ph).plain}" if ph is not None else ""
            text, now = (f"Now: {event} (loss {num(float(loss[f]))}, largest ‖w‖ "
                         f"{num(float(tops[f]), 2)}){phase}."), ""
        out.append(text + now)
        prev = tf
    return out


def compare_captions(runs: Sequence[tuple[str, Trajectory, Analysis | None]],
                     frames: Sequence[Sequence[int]]) -> list[str]:
    """Compare: per grid frame, each run's phase in plain words and its loss ("A: neurons
    turn, norms tiny (loss 0.69) · B: …"). `frames[k][n]`: run k's frame at grid step n."""
    n = len(frames[0]) if frames else 0
    out: list[str] = []
    for i in range(n):
        parts = []
        for (name, traj, an), fr in zip(runs, frames, strict=True):
            f = int(fr[i])
            tf = float(traj.t[f])
            story, own = _phase_at(an, tf)
            ph = own or story or _plateau_at(an, tf)
            if ph is not None:
                what = phase_words(ph).plain
            elif _after_alignment(an, tf):
                what = "aligned, about to grow"
            else:
                what = "between phases"
            parts.append(f"{name}: {what} (loss {num(float(traj.loss[f]))})")
        out.append(" · ".join(parts))
    return out


__all__ = ["MAIN", "REAL_DATA", "Where", "captions", "compare_captions", "num", "times"]
