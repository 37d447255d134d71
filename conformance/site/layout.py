"""The page frame and the style sheet: plain HTML and CSS, system fonts, nothing fetched; wide
tables scroll inside their box so a page reads at 1280 px and on a phone."""

from __future__ import annotations

from .escape import esc

__all__ = ["CSS", "OUTCOME_LABEL", "OUTCOME_MARK", "page"]

OUTCOME_MARK = {"pass": "✓", "fail": "✗", "expected": "⚑", "n/a": "\u2013"}
OUTCOME_LABEL = {"pass": "pass", "fail": "unexpected failure", "expected": "expected failure",
                 "n/a": "not applicable"}

CSS = """\
:root { --pass: #2e7d32; --fail: #c62828; --expected: #b26a00; --na: #757575;
  --line: #d0d7de; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; background: #fff; }
header { background: #24292f; color: #fff; padding: .6rem 1rem; }
header a { color: #fff; margin-right: 1rem; text-decoration: none; font-weight: 600; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
a { color: #0969da; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left;
  vertical-align: top; }
th { background: var(--soft); position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); } .fail { color: var(--fail); font-weight: 700; }
.expected { color: var(--expected); } .na { color: var(--na); } .zero { color: #afb8c1; }
td.cell { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.cell a { text-decoration: none; }
td.good { background: #e6f4ea; } td.partial { background: #fff4e0; }
td.bad { background: #fdecea; } td.none { background: var(--soft); }
pre { background: var(--soft); border: 1px solid var(--line); padding: .5rem; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font-size: 13px; }
code { font-size: 13px; }
.meta td:first-child { font-weight: 600; overflow-wrap: normal; }
.meta td { overflow-wrap: anywhere; }
p, li, .note { overflow-wrap: anywhere; }
.note { border-left: 4px solid var(--expected); background: #fffaf0; padding: .4rem .8rem;
  margin: .5rem 0; }
.legend span { margin-right: 1rem; display: inline-block; }
footer { color: var(--na); font-size: 13px; padding: 1rem; text-align: center; }
@media (max-width: 640px) { body { font-size: 14px; } main { padding: .5rem; }
  th, td { padding: .2rem .3rem; } td .label { display: none; } header a { display: inline-block; margin: .1rem .6rem .1rem 0; } }
"""


def page(title: str, body: str, depth: int, footer: str) -> str:
    root = "../" * depth
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{esc(title)} · dshkit compliance</title>\n"
        f"<link rel=\"stylesheet\" href=\"{root}style.css\">\n</head>\n<body>\n"
        f"<header><a href=\"{root}index.html\">Compliance matrix</a>"
        f"<a href=\"{root}req/index.html\">Requirements</a></header>\n"
        f"<main>\n<h1>{esc(title)}</h1>\n{body}\n</main>\n"
        f"<footer>{footer}</footer>\n</body>\n</html>\n")
