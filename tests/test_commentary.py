"""The running commentary (viz.commentary) and the plain words (viz.wording): one sentence per
frame naming what happens now and where to look, from the run's own phases and numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dynamics.annotations import Analysis, Phase, TimeMarker
from dynamics.config import Config
from dynamics.simulate import simulate
from viz.commentary import MAX_CHARS, captions, compare_captions, num, times
from viz.wording import phase_words


@pytest.fixture(scope="module")
def traj():
    return simulate(Config.from_dict({"model": {"width": 12}, "integrator": {"t_end": 40.0},
                                      "record": {"frames": 41, "scalars": 60}}))


def _at(traj, t: float) -> int:
    return int(np.argmin(np.abs(np.asarray(traj.t) - t)))


def test_each_frame_says_what_happens_and_where(traj):
    an = Analysis(phases=(Phase("alignment", 0.0, 10.0), Phase("fitting", 15.0, 30.0),
                          Phase("convergence", 30.0, 40.0)),
                  markers=(TimeMarker("saddle escape", 15.0, "detected"),))
    frames = list(range(traj.n_frames))
    got = captions(traj, an, frames)
    assert len(got) == traj.n_frames and all(got)
    assert got[0].startswith("Start:")
    assert got[_at(traj, 5.0)].startswith("Neurons turn, norms tiny:")
    assert "the neurons on the left" in got[_at(traj, 5.0)]  # where to look
    assert got[_at(traj, 12.0)].startswith("Aligned:")  # between alignment and fitting
    assert got[_at(traj, 20.0)].startswith("Norms grow, loss falls:")
    assert got[_at(traj, 35.0)].startswith("Fitted")
    # the numbers are the run's own at that frame
    k = _at(traj, 20.0)
    assert num(float(traj.loss[k])) in got[k]
    # a marker passed since the previous frame is named once, when it is passed
    assert sum("Now: loss starts to fall" in c for c in got) == 1
    assert "norms grow, loss falls" in next(c for c in got if "Now:" in c).lower()
    # one line under the slider at 1280 px in presenter mode
    assert max(len(c) for c in got) <= MAX_CHARS + 12


def test_a_paper_phase_takes_precedence_and_no_analysis_still_speaks(traj):
    an = Analysis(phases=(Phase("fitting", 1.0, 40.0), Phase("OLS plateau", 10.0, 40.0)))
    got = captions(traj, an, [0, _at(traj, 5.0), _at(traj, 20.0)])
    assert got[1].startswith("Norms grow, loss falls")
    assert got[2].startswith("Stuck on the least-squares line")  # the paper's words
    bare = captions(traj, None, [0, traj.n_frames - 1])
    assert bare[0].startswith("Start:") and bare[1].startswith("Largest ‖w‖")


def test_a_settled_loss_is_not_said_to_fall(traj):
    """After fitting, a loss that settled above zero is said to stay (with the run's loss at
    that frame), not "norms grow, loss falls"."""
    an = Analysis(phases=(Phase("fitting", 1.0, 20.0), Phase("settled", 20.0, 40.0)))
    k = _at(traj, 30.0)
    got = captions(traj, an, [0, k])[1]
    assert got.startswith("Loss settles above zero") and "falls no further" in got
    assert num(float(traj.loss[k])) in got


@dataclass(frozen=True)
class NamedPhase(Phase):
    """A phase as the papers will give it: with its own plain words."""

    plain: str = ""


def test_plain_words_come_from_the_phase_when_it_has_them(traj):
    own = NamedPhase("alignment", 0.0, 10.0, plain="the neurons line up")
    assert phase_words(own).plain == "the neurons line up"
    assert phase_words(Phase("alignment", 0.0, 10.0)).plain == "neurons turn, norms tiny"
    assert phase_words(Phase("a brand new phase", 0.0, 1.0)).plain == "a brand new phase"
    got = captions(traj, Analysis(phases=(own,)), [_at(traj, 5.0)])
    assert got[0].startswith("The neurons line up:")


def test_compare_names_each_runs_phase(traj):
    a = Analysis(phases=(Phase("alignment", 0.0, 40.0),))
    b = Analysis(phases=(Phase("fitting", 0.0, 40.0),))
    fr = [[0, 20], [0, 20]]
    got = compare_captions([("A", traj, a), ("B", traj, b)], fr)
    assert got[1].startswith("A: neurons turn, norms tiny (loss ")
    assert " · B: norms grow, loss falls (loss " in got[1]


def test_numbers_are_written_for_reading():
    assert num(3.2e-6) == "3.2·10⁻⁶" and num(1e-20) == "10⁻²⁰" and num(0.693) == "0.693"
    assert num(float("nan")) == "—"
    assert times(1.34) == "×1.3" and times(40.2) == "×40" and times(2e5) == "×10⁵"


def test_the_start_is_called_tiny_only_when_it_is():
    """Boursier & Flammarion's large-init preset (λ = 1) opened with "every neuron is tiny
    (largest ‖w‖ 0.25)": a start is tiny when the norms have two decades to grow."""
    from dynamics.papers import PAPERS

    small = simulate(Config.from_dict({"model": {"width": 12}, "init": {"scale": 1e-4},
                                       "record": {"frames": 20}}))
    large = simulate(PAPERS["boursier"].presets(True)["three_point_large_init"])
    tiny, big = captions(small, None, [0])[0], captions(large, None, [0])[0]
    assert tiny.startswith("Start: every neuron is tiny")
    top = float(np.nanmax(large.norms[0]))
    assert top > 0.01 * float(np.nanmax(large.norms))  # not tiny: the rule's input
    assert "tiny" not in big.split("(")[0] and big.startswith("Start: the neurons are not small")
    assert num(top, 2) in big


def test_a_plateau_is_called_final_only_when_the_run_stays_on_it():
    """"Stuck on the least-squares line … goes no lower" was shown on the leaky preset, which
    leaves that plateau and fits the data: the sentence says when a run leaves it."""
    from dynamics.analysis import analyse
    from dynamics.papers import PAPERS

    for name, stays in (("three_point_balanced", True), ("three_point_leaky", False)):
        tr = simulate(PAPERS["boursier"].presets(True)[name])
        an = analyse(tr)
        ols = next(p for p in an.phases if p.name == "OLS plateau")
        f = int(np.searchsorted(tr.t, (ols.start + ols.end) / 2))
        text = captions(tr, an, range(tr.n_frames))[f]
        assert text.startswith("Stuck on the least-squares line"), (name, text)
        assert ("no lower" in text) is stays and ("until t ≈" in text) is (not stays), text
        assert (float(tr.loss[-1]) < 0.5 * float(tr.loss[f])) is (not stays)  # what it says


def test_a_lazy_run_is_not_said_to_grow():
    """Kunin et al.'s downstream start keeps its norms (largest ‖w‖ 1 → 1) while the loss
    falls: the sentences said "watch them turn and grow together" and "the aligned neurons
    grow together"; they say the norms hardly move, and only where they do not."""
    from dynamics.analysis import analyse
    from dynamics.papers import PAPERS

    tr = simulate(PAPERS["kunin"].presets(True)["downstream"])
    tops = np.nanmax(np.asarray(tr.norms, float), axis=1)
    assert tops.max() <= 1.5 * tops[0]  # the run is lazy: the rule's input
    texts = captions(tr, analyse(tr), range(tr.n_frames))
    assert "hardly grow" in texts[0] and not any("grow together" in t for t in texts)
    assert any(t.startswith("Loss falls: the norms hardly move") for t in texts)


def test_each_paper_declares_its_phases_words_and_the_sentences_read_them(traj):
    """A paper's phases are named once, in its module (`Paper.phase_text`): no two papers
    share a phase name, every sentence fills from the commentary's vocabulary only, and a
    phase declared by a paper is described by its own sentence (here a made-up one)."""
    import dataclasses
    import string

    from dynamics.annotations import PhaseText
    from dynamics.papers import PAPERS
    from viz import commentary

    names = [n for p in PAPERS.values() for n in p.phase_text]
    assert len(names) == len(set(names)) and {"Phase I", "OLS plateau"} <= set(names)
    fields = {"plain", "big", "grow", "loss", "loss0", "acc", "n_active", "end", "directions",
              "norms_panel", "loss_panel", "accuracy_panel"}
    for p in PAPERS.values():
        for name, said in p.phase_text.items():
            for text in (said.says, said.says_until):
                used = {f for _, f, _, _ in string.Formatter().parse(text) if f}
                assert used <= fields, (p.key, name, used - fields)
            assert said.plain, (p.key, name)
    own = dataclasses.replace(commentary.PAPER_TEXT["Phase III"],
                              says="{plain}: a made-up sentence, loss {loss}.")
    an = Analysis(phases=(Phase("fitting", 1.0, 40.0),
                          Phase("Phase III", 10.0, 40.0, plain="III: words")))
    old = commentary.PAPER_TEXT["Phase III"]
    commentary.PAPER_TEXT["Phase III"] = own
    try:
        text = captions(traj, an, [_at(traj, 20.0)])[0]
    finally:
        commentary.PAPER_TEXT["Phase III"] = old
    assert text.startswith("III: words: a made-up sentence, loss "), text
    assert isinstance(own, PhaseText)


def test_wording_names_only_the_generic_phases_and_each_paper_names_its_own():
    """A paper is one file: viz.wording's table holds the phases every run is read for
    (`dynamics.phases`), and every phase a paper's module draws (`Phase("…", …)` in its
    source) is declared there, in `Paper.phase_text`, whose words the strip shows (its short
    words and tag, named as by the paper)."""
    import ast
    import inspect

    from dynamics import phases
    from dynamics.papers import PAPERS
    from viz.wording import PAPER_WORDS, PHASE_WORDS

    assert set(PHASE_WORDS) == {*phases.PLAIN, "saddle escape"}
    for paper in PAPERS.values():
        tree = ast.parse(inspect.getsource(inspect.getmodule(paper.annotate)))
        drawn = {n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", "") == "Phase" and n.args
                 and isinstance(n.args[0], ast.Constant)}
        assert drawn <= set(paper.phase_text), (paper.key, drawn - set(paper.phase_text))
        assert not set(paper.phase_text) & set(PHASE_WORDS), paper.key
        for name, text in paper.phase_text.items():
            w = phase_words(Phase(name, 0.0, 1.0, plain=text.plain))
            assert (w.plain, w.short, w.tag) == (text.plain, text.short or text.plain,
                                                  text.tag)
            assert PAPER_WORDS[name].source == paper.short
    assert phase_words(Phase("Phase IV", 0.0, 1.0, plain="x")).short == "IV: − on x₊"
    assert phase_words("Phase IV").tag == "IV"


def test_a_papers_markers_carry_their_own_words():
    """viz.wording's marker table holds only the markers every run gets (`dynamics.phases`);
    a paper's marker says its words itself (`TimeMarker.plain`), as Min et al.'s bound and
    cone time do on their preset."""
    import inspect

    from dynamics import phases
    from dynamics.analysis import analyse
    from dynamics.papers import PAPERS
    from viz.wording import MARKER_WORDS, marker_words

    assert all(f'TimeMarker("{name}"' in inspect.getsource(phases) for name in MARKER_WORDS)
    an = analyse(simulate(PAPERS["min"].presets(True)["toy_2d_alpha1e-6"]))
    said = {m.name: marker_words(m) for m in an.markers}
    assert said["Min et al. T bound"] == "theory: aligned by T"
    assert said["Min et al. cones reached"] == "neurons in their cones"
    assert not set(said) - set(MARKER_WORDS) - {"Min et al. T bound", "Min et al. cones reached"}
    assert marker_words(TimeMarker("Min et al. T bound", 1.0, plain="theory: aligned by T")) \
        == "theory: aligned by T"
    assert marker_words(TimeMarker("saddle escape", 1.0)) == "loss starts to fall"
    assert marker_words(TimeMarker("a paper's event (predicted)", 1.0)) == "a paper's event"
