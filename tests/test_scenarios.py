"""Presets and the papers' claims (dynamics.papers). Fast versions here; full-size ones are
marked slow."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynamics import papers, phases, theory
from dynamics.config import Config
from dynamics.papers import boursier, reproduce, wang_ma
from dynamics.simulate import simulate


def test_presets_are_valid_and_cover_every_paper():
    for fast in (True, False):
        p = {k: paper.presets(fast) for k, paper in papers.PAPERS.items()}
        assert set(p) == {"min", "chistikov", "boursier", "wang_ma"}
        for cfgs in p.values():
            assert cfgs and all(isinstance(c, Config) for c in cfgs.values())
    wm = papers.PAPERS["wang_ma"].presets(True)["four_phases"]
    assert wm.init.scheme == "fixed_output" and not wm.model.train_output
    assert wm.loss.kind == "exponential" and wm.init.output_norm == "sqrt_m"


def test_unknown_paper_is_an_error():
    with pytest.raises(ValueError):
        papers.check_claims("nobody")


def test_min_claims_fast():
    calls = []

    def run(cfg):  # the service can be plugged in; here a counting wrapper around simulate
        calls.append(cfg.cache_key())
        return simulate(cfg)

    claims = papers.check_claims("min", fast=True, run=run)
    assert len(calls) >= 4
    failed = [c.name for c in claims if c.passed is False]
    assert not failed, failed
    names = {c.name for c in claims}
    assert {"min.cones[toy_2d]", "min.time[toy_2d]", "min.time[toy_2d_alpha1e-6]",
            "min.digits.alignment", "min.digits.stable_rank", "min.first_layer_only"} <= names
    # every Min claim is counted (pass/fail), none "shown"
    assert all(c.passed is not None for c in claims)


def test_boursier_trap_and_leaky_escape_fast():
    """One seed each at m = 200 (3 s each): the balanced ReLU run sits at the computed OLS loss;
    the leaky one leaves it. The OLS loss is computed, never typed."""
    cfg = boursier.config("balanced", 0, 600.0, 200)
    L_ols = theory.ols_fit(cfg).loss
    tr = simulate(cfg)
    assert abs(tr.loss[-1] - L_ols) <= 1e-3  # the claim's tolerance (papers.md: 1e-3)
    # it sits there: over the last third of the run (their t 200–300) the loss moves by
    # ≤ 1e-9 (reference runs: unchanged to 1e-16 up to their t = 2000)
    f = tr.frame_at(400.0)
    assert np.ptp(tr.loss[f:]) <= 1e-9
    trl = simulate(boursier.config("leaky", 0, 600.0, 200))
    assert trl.loss[-1] <= 1e-4


def test_wang_ma_four_phases_in_order_fast():
    tr = simulate(wang_ma.config(t_end=1000.0))
    ph, counts, summary = phases.wang_ma_phases(tr)
    assert summary == "I → II → III → IV"
    starts = [p.start for p in ph]
    assert starts == sorted(starts)
    # the counts the reviewers describe: positives leave x₋, negatives return to x₊
    assert counts["pos_on_minus"][-1] < counts["pos_on_minus"].max()
    assert counts["neg_on_plus"][-1] > counts["neg_on_plus"].min()


@pytest.mark.slow
@pytest.mark.parametrize("paper", ["chistikov", "boursier", "wang_ma"])
def test_claims_fast_versions_slow(paper):
    claims = papers.check_claims(paper, fast=True)
    failed = [(c.name, c.measured, c.expected) for c in claims if c.passed is False]
    assert not failed, failed


@pytest.mark.slow
@pytest.mark.parametrize("paper", list(papers.PAPERS))
def test_claims_full(paper, tmp_path):
    """The full claims as `python -m dynamics reproduce --full` checks them: a paper's
    prefetch sweeps (Chistikov et al.'s 450-run Table 1) on a Dask LocalCluster first, then
    the claims through the cached service."""
    claims, _ = reproduce.reproduce([paper], False, tmp_path)
    claims = claims[paper]
    failed = [(c.name, c.measured, c.expected) for c in claims if c.passed is False]
    assert not failed, failed
    if paper == "chistikov":  # the right reason: the distribution, with 30 seeds per cell
        rows = {c.name: c for c in claims}
        for d in (4, 16, 64):
            t1 = rows[f"chistikov.table1[d={d}]"]
            assert len(t1.table) == 5 and all(r["n"] == 30 and r["inside"] for r in t1.table)
            assert abs(rows[f"chistikov.angle_scaling[d={d}]"].measured - 4.0) <= 0.3
        assert (tmp_path / "chistikov_table1_full.json").is_file()


def test_report_writer(tmp_path, monkeypatch):
    fake = [papers.Claim("x.y", "a statement", 1.0, 1.0, "exact", True, "why",
                         [{"seed": 0, "v": 1.5}], justification="because",
                         integrator="gf rtol 1e-06"),
            papers.Claim("x.z", "a picture", "3 of 4", "—", "—", None)]
    monkeypatch.setattr(reproduce, "check_claims", lambda p, fast, run=None: fake)
    rc = reproduce.cli_main(["min", "--out", str(tmp_path), "--serial"])
    assert rc == 0
    text = (tmp_path / "claims_min.md").read_text()
    assert ("| x.y: a statement | pass | 1 | 1 | exact | because | gf rtol 1e-06 |" in text
            and "| 0 | 1.5 |" in text)
    assert "| x.z: a picture | illustration |" in text and "shown" not in text
    assert "1 pass, 0 fail, 1 illustration(s), not counted" in text
    data = json.loads((tmp_path / "claims_min.json").read_text())
    assert data["min"][0]["name"] == "x.y" and data["min"][0]["table"] == [{"seed": 0, "v": 1.5}]
    assert data["min"][0]["verdict"] == "pass" and data["min"][1]["verdict"] == "illustration"
    assert not list(tmp_path.glob("*.png"))  # the library draws no figures


def test_reproduce_quick_report_every_claim(tmp_path):
    """CI: `python -m dynamics reproduce --quick` (in-process runs) writes claims.md/.json with
    every paper from the registry; every row has its verdict, measured, expected, tolerance,
    justification and integrator, and every counted claim passes."""
    rc = reproduce.cli_main(["--quick", "--serial", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "claims.json").read_text())
    assert list(data) == list(papers.PAPERS)
    text = (tmp_path / "claims.md").read_text()
    for paper, rows in data.items():
        assert rows, paper
        for r in rows:
            for k in ("name", "statement", "verdict", "tolerance", "justification",
                      "integrator"):
                assert str(r[k]).strip(), (paper, r["name"], k)
            for k in ("measured", "expected"):
                assert r[k] is not None and str(r[k]).strip() != "", (paper, r["name"], k)
            assert r["verdict"] in ("pass", "fail", "illustration")
            assert (r["verdict"] == "illustration") == (r["passed"] is None)
            assert r["name"] in text
    failed = [(p, r["name"], r["measured"]) for p, rows in data.items() for r in rows
              if r["verdict"] == "fail"]
    assert not failed and rc == 0, failed
    assert (tmp_path / "chistikov_table1_fast.json").is_file()


def test_claims_for_run_checks_the_current_run():
    """The Papers page's quick checks come from the library: a balanced ReLU three-point run
    ends trapped at the computed least-squares loss; a Min et al. toy run ends in its cones."""
    from dynamics.simulate import simulate

    tp = Config().with_updates({"data.kind": "three_point", "model.width": 40,
                                "integrator.t_end": 60.0, "record.frames": 30})
    (claim,) = papers.claims_for_run(simulate(tp), "boursier")
    assert claim.details == "trapped at the least-squares fit"
    assert abs(claim.measured - theory.ols_fit(tp).loss) <= 1e-3
    toy = Config().with_updates({"model.width": 20, "record.frames": 30, "loss.kind":
                                 "exponential", "loss.reduction": "sum"})
    checks = {c.name: c for c in papers.claims_for_run(simulate(toy), "min")}
    assert checks["this run: cones"].passed
    # 2-D inputs: the stable rank cannot exceed 2, so the row is an illustration
    assert checks["this run: stable rank"].verdict == "illustration"
