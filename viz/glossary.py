"""The symbols a figure shows, each defined in words and formula: one glossary line under the
figure, listing only the symbols its visible text uses (title, panel and axis titles, the
strip's words and markers, the panel's labels, the commentary).

`SYMBOLS` is the one table (pattern that finds a symbol in a text → how the line writes it →
what it means); `used(texts)` the entries a figure's texts use, in table order;
`glossary_line(texts)` the line; `undefined(text, entries)` what is left of a text once every
defined symbol and number is taken out (the tests: nothing symbolic may be left). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Symbol:
    """A symbol as a figure writes it (`pattern`, a regular expression), as the glossary
    names it (`shown`) and what it is, in words and formula (`meaning`)."""

    pattern: str
    shown: str
    meaning: str


SYMBOLS: tuple[Symbol, ...] = (
    Symbol(r"\bm = \d+|width m\b", "m", "hidden neurons"),
    Symbol(r"ε", "ε", "initial weight scale"),
    Symbol(r"λ", "λ", "initial weight scale (the paper's ε)"),
    Symbol(r"γ = \d|leaky ReLU γ|slope γ", "γ", "leaky slope, σ(u) = max(u, γu)"),
    Symbol(r"α = \d|slope α", "α", "leaky slope, σ(u) = max(u, αu)"),
    Symbol(r"η = \d|step η", "η", "gradient descent's step"),
    Symbol(r"‖w_j‖|‖w‖", "‖w_j‖", "length of neuron j's weights w_j"),
    Symbol(r"max‖w‖|max ‖w‖", "max‖w‖", "the largest ‖w_j‖"),
    Symbol(r"‖W‖²₂|‖W‖²_F|‖W‖₂|‖W‖_F", "‖W‖₂, ‖W‖_F", "the first layer's largest singular "
           "value, and the root of its squared entries' sum"),
    Symbol(r"w̄₊|w̄₋", "w̄₊, w̄₋", "mean neuron of those with a_j > 0 (a_j < 0)"),
    Symbol(r"x̄₊|x̄₋", "x̄₊, x̄₋", "mean image of the +1 (−1) class"),
    Symbol(r"a_j", "a_j", "neuron j's output weight"),
    Symbol(r"x₁|x₂", "x₁, x₂", "input coordinates"),
    Symbol(r"γ_\[n\]", "γ_[n]", "(1/n) Σᵢ yᵢ xᵢ, where positive neurons go"),
    Symbol(r"v\*", "v*", "the teacher neuron"),
    Symbol(r"⊥", "⊥", "perpendicular to"),
    Symbol(r"x₊|x₋", "x₊, x₋", "the +1 and −1 data directions (sums of their points)"),
    Symbol(r"\bPC1\b|\bPC2\b", "PC1, PC2", "the data's two main directions"),
    Symbol(r"\bbias\b", "bias", "the constant input 1 appended to x"),
    Symbol(r"\bT\b", "T", "Min et al.'s bound on the alignment time, ln(1/(√m ε))/(4n Xₘₐₓ)"),
    Symbol(r"\bt = |time t\b|\bt /", "t", "training time (gradient descent: steps × η)"),
)
_NUMBER = re.compile(r"[-−]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:·?10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?|10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+"
                     r"|×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_TAG = re.compile(r"<[^>]+>")
# what counts as symbolic in a text: Greek letters, norms, sub- and superscripts, ⊥, *, _
SYMBOLIC = re.compile(r"[α-ωΑ-Ω‖₀-₉₊₋ₐ-ₜ⊥*_√Σ²]")


def _plain(text: str) -> str:
    return _TAG.sub(" ", text or "")


def used(texts: Iterable[str]) -> list[Symbol]:
    """The table's symbols that `texts` use, in table order."""
    blob = " ".join(_plain(t) for t in texts)
    return [s for s in SYMBOLS if re.search(s.pattern, blob)]


def glossary_line(texts: Iterable[str]) -> str:
    """"Symbols — m: hidden neurons · ε: initial weight scale …" for the symbols `texts` use
    ("" when they use none)."""
    entries = used(texts)
    if not entries:
        return ""
    return "Symbols — " + " · ".join(f"{s.shown}: {s.meaning}" for s in entries)


def undefined(text: str, entries: Sequence[Symbol] = SYMBOLS) -> str:
    """What is symbolic in `text` once `entries`' symbols and the numbers are taken out (""
    when every symbol it shows is defined)."""
    left = _plain(text)
    for s in entries:
        left = re.sub(s.pattern, " ", left)
    left = _NUMBER.sub(" ", left)
    return "".join(SYMBOLIC.findall(left))


__all__ = ["SYMBOLIC", "SYMBOLS", "Symbol", "glossary_line", "undefined", "used"]
