"""Presets and the papers' claims (dynamics.papers). Fast versions here; full-size ones are
marked slow."""

from __future__ import annotations

import json

import pytest

from dynamics import papers, reproduce
from dynamics.config import Config


def test_presets_are_valid_and_cover_every_paper():
    for quick in (True, False):
        p = {k: paper.presets(quick) for k, paper in papers.PAPERS.items()}
        assert list(p) == list(papers.PAPERS)
        for cfgs in p.values():
            assert cfgs and all(isinstance(c, Config) for c in cfgs.values())


def test_unknown_paper_is_an_error():
    with pytest.raises(ValueError):
        papers.check_claims("nobody")


@pytest.mark.slow
@pytest.mark.parametrize("paper", list(papers.PAPERS))
def test_claims_quick_versions_slow(paper):
    claims = papers.check_claims(paper, quick=True)
    failed = [(c.name, c.measured, c.expected) for c in claims if c.passed is False]
    assert not failed, failed


# the full sizes: Chistikov's and Boursier's took more than the suite's 600 s per test on two
# cores (both were stopped by pytest-timeout there), so these have a bound of their own
@pytest.mark.slow
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("paper", list(papers.PAPERS))
def test_claims_full(paper, tmp_path):
    """The full claims as `python -m dynamics reproduce --full` checks them: a paper's
    prefetch sweeps (Chistikov et al.'s 450-run Table 1) on a Dask LocalCluster first, then
    the claims through the cached service."""
    claims, _ = reproduce.reproduce([paper], False, tmp_path)
    claims = claims[paper]
    failed = [(c.name, c.measured, c.expected) for c in claims if c.passed is False]
    assert not failed, failed
    assert all(c.name.startswith(f"{paper}.") for c in claims)


def test_report_writer(tmp_path, monkeypatch):
    fake = [papers.Claim("x.y", "a statement", 1.0, 1.0, "exact", True, "why",
                         [{"seed": 0, "v": 1.5}], justification="because",
                         integrator="gf rtol 1e-06"),
            papers.Claim("x.z", "a picture", "3 of 4", "—", "—", None)]
    monkeypatch.setattr(reproduce, "check_claims", lambda p, quick, run=None: fake)
    first = next(iter(papers.PAPERS))
    rc = reproduce.cli_main([first, "--out", str(tmp_path), "--serial"])
    assert rc == 0
    text = (tmp_path / f"claims_{first}.md").read_text()
    assert ("| x.y: a statement | pass | 1 | 1 | exact | because | gf rtol 1e-06 |" in text
            and "| 0 | 1.5 |" in text)
    assert "| x.z: a picture | illustration |" in text and "shown" not in text
    assert "1 pass, 0 fail, 1 illustration(s), not counted" in text
    data = json.loads((tmp_path / f"claims_{first}.json").read_text())[first]
    assert data[0]["name"] == "x.y" and data[0]["table"] == [{"seed": 0, "v": 1.5}]
    assert data[0]["verdict"] == "pass" and data[1]["verdict"] == "illustration"
    assert not list(tmp_path.glob("*.png"))  # the library draws no figures


# slow: every claim of every paper once more (~30 s); each paper's own test file checks its
# claims on its presets in the suite (tests/test_paper_*.py)
@pytest.mark.slow
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
    for p in papers.PAPERS.values():  # each paper's data files for its page are written
        if p.artifacts is not None:
            assert f"_{p.key}: " in text and "wrote `" in text


