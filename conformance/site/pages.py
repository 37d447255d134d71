"""The pages of the site, each a function of :class:`Site` returning HTML."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..vectors import Case
from .badges import summary_of
from .data import OUTCOMES, CaseResult, Comparison, Implementation, Tally
from .escape import esc, json_block
from .layout import OUTCOME_LABEL, OUTCOME_MARK, page
from .links import SpecLinks
from .notes import Explanation, NoteIndex

__all__ = ["Site", "case_file", "case_page", "implementation_page", "index_page",
           "requirement_page", "requirements_page"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_CSS_CLASS = {"pass": "pass", "fail": "fail", "expected": "expected", "n/a": "na"}


def case_file(case_id: str) -> str:
    return "case/" + _SAFE.sub("_", case_id) + ".html"


@dataclass(frozen=True, slots=True)
class Site:
    impls: Sequence[Implementation]
    comparisons: Sequence[Comparison]
    notes: NoteIndex
    links: SpecLinks
    vectors: Mapping[str, Case]
    footer: str
    by_case: Mapping[str, tuple[CaseResult | None, ...]]  # case id -> one result per impl
    by_requirement: Mapping[str, tuple[str, ...]]  # requirement -> the ids of its cases

    @classmethod
    def of(cls, impls: Sequence[Implementation], comparisons: Sequence[Comparison],
           notes: NoteIndex, links: SpecLinks, vectors: Mapping[str, Case],
           footer: str) -> Site:
        tables = [impl.by_id() for impl in impls]
        ids: dict[str, None] = {}
        for impl in impls:
            ids.update(dict.fromkeys(case.id for case in impl.cases))
        by_case = {cid: tuple(table.get(cid) for table in tables) for cid in ids}
        by_requirement: dict[str, list[str]] = {}
        for cid, results in by_case.items():
            vector = vectors.get(cid)
            reqs = vector.requirements if vector else next(
                (r.requirements for r in results if r is not None), ())
            for req in reqs:
                by_requirement.setdefault(req, []).append(cid)
        return cls(impls, comparisons, notes, links, vectors, footer, by_case,
                   {req: tuple(cids) for req, cids in by_requirement.items()})

    def capabilities(self) -> list[str]:
        names: list[str] = []
        for impl in self.impls:
            names += [c for c in impl.capabilities if c not in names]
        return names

    def case_ids(self) -> list[str]:
        return list(self.by_case)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    out = [f"<div class=\"scroll\"><table{attr}><thead><tr>",
           *(f"<th>{h}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>"
                                    for cell in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _mark(outcome: str, href: str | None = None, title: str = "") -> str:
    text = f'<span class="{_CSS_CLASS[outcome]}" title="{esc(title or OUTCOME_LABEL[outcome])}">' \
           f'{OUTCOME_MARK[outcome]}<span class="label"> {esc(OUTCOME_LABEL[outcome])}</span></span>'
    return f'<a href="{esc(href)}">{text}</a>' if href else text


def _counts(tally: Tally) -> str:
    return " ".join(f'<span class="{_CSS_CLASS[o] if tally.counts[o] else "zero"}" '
                    f'title="{esc(OUTCOME_LABEL[o])}">'
                    f"{OUTCOME_MARK[o]}&nbsp;{tally.counts[o]}</span>" for o in OUTCOMES)


def _cell(tally: Tally, href: str) -> str:
    tone = summary_of(tally)[1]
    return f'<td class="cell {tone}"><a href="{esc(href)}">{_counts(tally)}</a></td>'


def _legend() -> str:
    return ('<p class="legend">' + "".join(
        f'<span class="{_CSS_CLASS[o]}">{OUTCOME_MARK[o]} {esc(OUTCOME_LABEL[o])}</span>'
        for o in OUTCOMES) + "</p>")


def _req_link(site: Site, requirement: str, depth: int) -> str:
    own = "../" * depth + f"req/{esc(requirement)}.html"
    return f'<a href="{own}">{esc(requirement)}</a>'


def _spec_link(site: Site, requirement: str, depth: int, text: str = "spec") -> str:
    href = site.links.requirement(requirement, depth)
    return f'<a class="spec" href="{esc(href)}">{esc(text)}</a>' if href else ""


def _explanation(site: Site, why: Explanation | None, depth: int) -> str:
    if why is None:
        return ""
    if why.kind == "class":
        href = site.links.chapter("divergences.md", why.label, depth)
        at = f" at {_req_link(site, why.requirement, depth)}" if why.requirement else ""
        return f'Divergence class <a href="{esc(href)}"><code>{esc(why.label)}</code></a>{at}'
    if why.kind == "gap":
        assert why.requirement is not None
        return (f"Gap note <strong>{esc(why.label)}</strong> at "
                f"{_req_link(site, why.requirement, depth)} "
                f"({_spec_link(site, why.requirement, depth, 'Divergence note')})")
    if why.kind == "found":
        at = f" ({_req_link(site, why.requirement, depth)})" if why.requirement else ""
        return f"<strong>Found</strong>: a difference with no Divergence note yet{at}"
    if why.kind == "skip":
        return "Skipped: the implementation does not offer this operation"
    return '<span class="fail">No note in the specification matches this reason</span>'


def _meta_rows(impl: Implementation) -> list[list[str]]:
    meta = impl.meta or {}
    run = meta.get("run") or {}
    kit = meta.get("kit") or {}
    env = meta.get("environment") or {}
    source = (meta.get("implementation") or {}).get("source") or "this checkout"
    summary = impl.report.get("summary") or {}
    started = run.get("started") or summary.get("started") or "not recorded"
    rows = [["Implementation", esc(impl.title)],
            ["Exact source", esc(source)],
            ["Run started", esc(started)],
            ["Kit", esc(f"{kit.get('name') or (impl.report.get('kit') or {}).get('name')} "
                        f"{kit.get('version') or (impl.report.get('kit') or {}).get('version')}")],
            ["Declared capabilities",
             esc(", ".join((impl.report.get("implementation") or {}).get("capabilities", [])))],
            ["Environment", esc(", ".join(f"{k} {v}" for k, v in env.items() if v)
                                or "not recorded")]]
    if kit.get("filedAtCommit"):
        rows.append(["Filed at dshkit commit", f"<code>{esc(kit['filedAtCommit'])}</code>"])
    if meta.get("note"):
        rows.append(["How it was run", esc(meta["note"])])
    return rows


def index_page(site: Site) -> str:
    caps = site.capabilities()
    head = ["Capability", *(f'<a href="impl/{esc(i.slug)}.html">{esc(i.title)}</a>'
                            for i in site.impls)]
    rows = [[f"<code>{esc(cap)}</code>",
             *(_cell(i.tally(i.in_capability(cap)), f"impl/{i.slug}.html#cap-{cap}")
               for i in site.impls)] for cap in caps]
    rows.append(["<strong>All cases</strong>",
                 *(_cell(i.tally(), f"impl/{i.slug}.html") for i in site.impls)])
    impl_rows = []
    for impl in site.impls:
        meta = impl.meta or {}
        started = (meta.get("run") or {}).get("started") or \
            (impl.report.get("summary") or {}).get("started") or ""
        value, _ = summary_of(impl.tally())
        impl_rows.append([f'<a href="impl/{esc(impl.slug)}.html">{esc(impl.title)}</a>',
                          esc((meta.get("implementation") or {}).get("source") or
                              "this checkout"), esc(started), esc(value),
                          f'<img src="badges/{esc(impl.slug)}.svg" alt="{esc(value)}">'])
    comparisons = "".join(
        f"<li><code>{esc(c.slug)}</code>: {c.changed_cases} cases and "
        f"{c.changed_properties} property tests changed<br><small>{esc(c.old)}<br>"
        f"{esc(c.new)}</small></li>" for c in site.comparisons)
    body = (
        "<p>Every implementation run by the same dshkit conformance kit; each cell counts the "
        "cases of a capability by outcome. An expected failure is listed in the "
        "implementation's baseline with its reason: a Divergence note of the specification, "
        "a gap note (G1-G26) or a difference found without a note. Follow a cell to the "
        "cases, a case to its input, expected and actual result, a requirement to its "
        "anchor in the specification.</p>" + _legend() +
        _table(head, rows, "matrix") +
        "<h2>Implementations</h2>" +
        _table(["Implementation", "Exact source", "Run started", "Result", "Badge"],
               impl_rows) +
        (f"<h2>Comparisons</h2><ul>{comparisons}</ul>" if comparisons else ""))
    return page("Compliance matrix", body, 0, site.footer)


def _group_key(case: CaseResult) -> tuple[int, str, str]:
    why = case.explanation
    assert why is not None
    order = {"unmapped": 0, "found": 1, "gap": 2, "class": 3, "skip": 4}[why.kind]
    label = why.label if why.kind in ("gap", "class") else \
        (why.text if why.kind == "skip" else "")
    return order, label, why.kind


def _gap_sort(label: str) -> tuple[int, str]:
    digits = label[1:] if label.startswith("G") else ""
    return (int(digits) if digits.isdigit() else 10**6, label)


def _group_heading(site: Site, kind: str, label: str, first: CaseResult) -> str:
    why = first.explanation
    assert why is not None
    if kind == "gap":
        notes = site.notes.of_gap(label)
        texts = "".join(f'<div class="note"><strong>{esc(label)}</strong> at '
                        f"{_req_link(site, n.requirement, 1)} "
                        f"({_spec_link(site, n.requirement, 1, 'spec')}): {esc(n.text)}</div>"
                        for n in notes)
        return f"<h3>Gap {esc(label)}</h3>{texts}"
    if kind == "class":
        href = site.links.chapter("divergences.md", label, 1)
        return f'<h3>Divergence class <a href="{esc(href)}"><code>{esc(label)}</code></a></h3>'
    if kind == "found":
        return ("<h3>Found: differences without a note</h3><p>Each of these wants a "
                "Divergence note (or a gap number) in the specification.</p>")
    if kind == "skip":
        return f"<h3>Skipped</h3><p>{esc(label)}</p>"
    return "<h3 class=\"fail\">Reasons that name no note of the specification</h3>"


def _own_reason(case: CaseResult) -> str:
    """The baseline's reason, where no shared note says it (a difference found, a reason
    that names no note)."""
    why = case.explanation
    if why is None or why.kind not in ("found", "unmapped"):
        return ""
    return f"<br><small>{esc(why.text)}</small>"


def implementation_page(site: Site, impl: Implementation) -> str:
    caps_rows = []
    for cap in site.capabilities():
        tally = impl.tally(impl.in_capability(cap))
        declared = (impl.capabilities.get(cap) or {}).get("declared")
        caps_rows.append([f'<code id="cap-{esc(cap)}">{esc(cap)}</code>',
                          "yes" if declared else "no",
                          *(f'<td class="num">{tally.counts[o]}</td>' for o in OUTCOMES),
                          f'<img src="../badges/{esc(impl.slug)}/{esc(cap)}.svg" '
                          f'alt="{esc(summary_of(tally)[0])}">'])
    expected = [c for c in impl.cases if c.outcome == "expected"]
    groups: dict[tuple[int, str, str], list[CaseResult]] = {}
    for case in sorted(expected, key=lambda c: (_group_key(c)[0], _gap_sort(_group_key(c)[1]))):
        groups.setdefault(_group_key(case), []).append(case)
    sections = []
    summary = []
    for number, ((_, label, kind), cases) in enumerate(groups.items(), start=1):
        name = {"gap": f"Gap {label}", "class": f"Divergence class {label}",
                "found": "Found: no note yet", "skip": f"Skipped: {label[:140]}",
                "unmapped": "No matching note"}[kind]
        statuses = ", ".join(f"{n} {status}" for status, n in
                             sorted(Counter(c.status for c in cases).items()))
        summary.append([f'<a href="#why-{number}">{esc(name)}</a>',
                        f'<td class="num">{len(cases)}</td>', esc(statuses)])
        rows = [[f'<a href="../{esc(case_file(c.id))}">{esc(c.id)}</a>', esc(c.status),
                 ", ".join(_req_link(site, r, 1) for r in c.requirements),
                 f"<code>{esc(c.detail[:300], keep=chr(10))}</code>" + _own_reason(c)]
                for c in cases]
        sections.append(f'<section id="why-{number}">' +
                        _group_heading(site, kind, label, cases[0]) +
                        f"<p>{len(cases)} cases.</p>" +
                        _table(["Case", "Status", "Requirements", "What differs"], rows) +
                        "</section>")
    failures = [c for c in impl.cases if c.outcome == "fail"]
    fail_html = ("<p>None: every failure is expected by the baseline.</p>" if not failures else
                 _table(["Case", "Status", "Detail"],
                        [[f'<a href="../{esc(case_file(c.id))}">{esc(c.id)}</a>',
                          esc(c.status), f"<code>{esc(c.detail[:300])}</code>"]
                         for c in failures]))
    props = (impl.report.get("summary") or {}).get("property_tests") or {}
    prop_rows = [[f"<code>{esc(name)}</code>", esc(p.get("status")),
                  esc(p.get("examples_run")), esc(p.get("detail") or "")]
                 for name, p in props.items() if isinstance(p, dict)]
    value, _ = summary_of(impl.tally())
    snippet = f"![{impl.title}](badges/{impl.slug}.svg)"
    body = (_table(["Item", "Value"], _meta_rows(impl), "meta") +
            f'<p><img src="../badges/{esc(impl.slug)}.svg" alt="{esc(value)}"> '
            f"In a README: <code>{esc(snippet)}</code> (relative to this site).</p>" +
            "<h2>Per capability</h2>" + _legend() +
            _table(["Capability", "Declared", *(esc(OUTCOME_LABEL[o]) for o in OUTCOMES),
                    "Badge"], caps_rows) +
            "<h2>Unexpected failures</h2>" + fail_html +
            f"<h2>Expected failures ({len(expected)})</h2>" +
            ("<p>Each is listed in the implementation's baseline; grouped by what explains "
             "it, the first difference a case meets.</p>" +
             _table(["Explained by", "Cases", "Statuses"], summary) if summary else
             "<p>None.</p>") + "".join(sections) +
            ("<h2>Property tests</h2>" +
             _table(["Property", "Status", "Examples", "Detail"], prop_rows) if prop_rows else ""))
    return page(impl.title, body, 1, site.footer)


def requirement_page(site: Site, requirement: str) -> str:
    entry: Mapping[str, Any] = site.links.requirements.get(requirement) or {}
    rows = []
    for cid in site.by_requirement.get(requirement, ()):
        cells = []
        for impl, result in zip(site.impls, site.by_case[cid], strict=True):
            anchor = f"../{case_file(cid)}#{_SAFE.sub('_', cid)}-{impl.slug}"
            cells.append(_mark(result.outcome, anchor) if result else "not run")
        rows.append([f'<a href="../{esc(case_file(cid))}">{esc(cid)}</a>', *cells])
    notes = "".join(
        f'<div class="note"><strong>Divergence{" (" + ", ".join(n.gaps) + ")" if n.gaps else ""}'
        f"</strong>: {esc(n.text)}</div>" for n in site.notes.at(requirement))
    href = site.links.requirement(requirement, 1)
    info = [["Title", esc(entry.get("title", ""))], ["Level", esc(entry.get("level", ""))],
            ["Section", esc(entry.get("section", ""))],
            ["In the specification",
             f'<a class="spec" href="{esc(href)}">{esc(entry.get("anchor", requirement))}</a>'
             if href else "not in requirements.json"]]
    head = ["Case", *(f'<a href="../impl/{esc(i.slug)}.html">{esc(i.title)}</a>'
                      for i in site.impls)]
    body = (_table(["Item", "Value"], info, "meta") + notes +
            (f"<h2>Cases ({len(rows)})</h2>" + _table(head, rows) if rows else
             "<p>No case of the kit checks this requirement (the kit itself, or a test of "
             "dshkit's, verifies it).</p>"))
    return page(requirement, body, 1, site.footer)


_NONE = CaseResult("", "", "", "n/a", (), (), "", None)


def requirements_page(site: Site, requirements: Sequence[str]) -> str:
    rows = []
    for req in requirements:
        entry = site.links.requirements.get(req) or {}
        cells = []
        for column, impl in enumerate(site.impls):
            cases = [r for cid in site.by_requirement.get(req, ())
                     if (r := site.by_case[cid][column]) is not None]
            tally = impl.tally(cases)
            cells.append(_cell(tally, f"{req}.html") if cases else '<td class="cell none">-</td>')
        rows.append([_req_link(site, req, 1), esc(entry.get("title", "")),
                     esc(entry.get("level", "")), *cells])
    head = ["Requirement", "Title", "Level", *(esc(i.title) for i in site.impls)]
    return page("Requirements", _legend() + _table(head, rows), 1, site.footer)


def case_page(site: Site, case_id: str) -> str:
    vector = site.vectors.get(case_id)
    results = site.by_case.get(case_id, ())
    first = next((r for r in results if r is not None), _NONE)
    requirements = vector.requirements if vector else first.requirements
    rows = []
    for impl, result in zip(site.impls, results, strict=True):
        if result is None:
            rows.append([esc(impl.title), "not run", "", ""])
            continue
        why = _explanation(site, result.explanation, 1)
        reason = (f"<br><small>{esc(result.explanation.text)}</small>"
                  if result.explanation else "")
        rows.append([f'<a id="{esc(_SAFE.sub("_", case_id))}-{esc(impl.slug)}" '
                     f'href="../impl/{esc(impl.slug)}.html">{esc(impl.title)}</a>',
                     _mark(result.outcome) + f"<br><small>{esc(result.status)}</small>",
                     f"<pre>{esc(result.detail, keep=chr(10))}</pre>" if result.detail else "",
                     why + reason])
    info = [["Suite", esc(vector.suite if vector else first.suite)],
            ["Vector file", f"<code>{esc(vector.file)}</code>" if vector else "not in this kit"],
            ["Operation", f"<code>{esc(vector.operation)}</code>" if vector else ""],
            ["Requirements", ", ".join(f"{_req_link(site, r, 1)} ({_spec_link(site, r, 1)})"
                                       for r in requirements)]]
    if vector is None:
        given = ("<p>This case is not among the vectors of the installed kit: its input and "
                 "expected result cannot be shown.</p>")
    else:
        given = ("<h2>Input</h2><pre>" + json_block(vector.input) + "</pre>" +
                 ("<h2>Parameters</h2><pre>" + json_block(vector.params) + "</pre>"
                  if vector.params else "") +
                 ("<h2>Approver</h2><pre>" + json_block(vector.approver) + "</pre>"
                  if vector.approver else "") +
                 "<h2>Expected</h2><pre>" + json_block(vector.expect) + "</pre>")
    body = ((f"<p>{esc(vector.description)}</p>" if vector else "") +
            _table(["Item", "Value"], info, "meta") +
            "<h2>Results</h2>" +
            _table(["Implementation", "Outcome", "Actual (what differs)", "Why"], rows) + given)
    return page(case_id, body, 1, site.footer)
