"""Flat SVG badges (``label | value``), self-contained: no font or image is fetched."""

from __future__ import annotations

from .data import Tally
from .escape import esc

__all__ = ["badge", "summary_of"]

_COLOURS = {"good": "#2e7d32", "partial": "#b26a00", "bad": "#c62828", "none": "#757575"}


def summary_of(tally: Tally) -> tuple[str, str]:
    """The value and colour class of a tally: pass count over the cases that apply."""
    applicable = tally.total - tally.counts["n/a"]
    if applicable == 0:
        return "not applicable", "none"
    value = f"{tally.counts['pass']}/{applicable} pass"
    if tally.counts["expected"]:
        value += f", {tally.counts['expected']} expected"
    if tally.counts["fail"]:
        return value + f", {tally.counts['fail']} fail", "bad"
    return value, "partial" if tally.counts["expected"] else "good"


def _width(text: str) -> int:
    return 10 + round(6.6 * len(text))


def badge(label: str, value: str, tone: str) -> str:
    left, right = _width(label), _width(value)
    total = left + right
    colour = _COLOURS[tone]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{esc(label)}: {esc(value)}"><title>{esc(label)}: {esc(value)}</title>'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2}" y="14" text-anchor="middle">{esc(label)}</text>'
        f'<text x="{left + right / 2}" y="14" text-anchor="middle">{esc(value)}</text>'
        "</g></svg>\n")
