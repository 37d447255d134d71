"""The compliance site (``dshkit compliance build``, :mod:`dshkit.conformance.site`): built
from the committed reports of compliance/reports, every cell tied to its requirement and to
the note that explains an expected failure, nothing fetched from the network."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli import exits, main
from dshkit.conformance.kitdata import requirements
from dshkit.conformance.site import SiteError, render_site
from dshkit.conformance.site.escape import esc, json_block, visible
from dshkit.conformance.site.links import SpecLinks
from dshkit.conformance.site.notes import load_notes
from dshkit.conformance.site.pages import Site

REPO = Path(__file__).resolve().parent.parent
REPORTS = REPO / "compliance" / "reports"
SPEC = REPO / "spec"
FOUR = ("dshkit-reference 0.1.0", "dsh 0.1.0-rc.8", "dsh 0.1.1-rc.2", "dsh-memento 0.4.4")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def built() -> tuple[Site, dict[str, str]]:
    return render_site(REPORTS, SPEC, "..")


class _Loads(HTMLParser):
    """What a page loads (src, stylesheet href, object data) and whether it has a script."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.scripts = 0
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        self.scripts += tag == "script"
        if "src" in attr:
            self.loads.append(attr["src"])
        if tag == "link":
            self.loads.append(attr.get("href", ""))
        if tag == "a" and "href" in attr:
            self.links.append(attr["href"])


def _parse(text: str) -> _Loads:
    parser = _Loads()
    parser.feed(text)
    return parser


def test_one_command_builds_the_site_of_the_four_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["compliance", "build", "--out", str(out), "--reports", str(REPORTS),
                 "--spec", str(SPEC), "--json"]) == exits.OK
    [result] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert result["implementations"] == ["reference", "dsh-0.1.0-rc.8", "dsh-0.1.1-rc.2",
                                         "dsh-memento"]
    assert result["pages"] > 1430 + 500 and result["badges"] > 4
    index = (out / "index.html").read_text(encoding="utf-8")
    for title in FOUR:
        assert f">{title}</a>" in index
    for slug in result["implementations"]:
        assert (out / "impl" / f"{slug}.html").is_file()
        assert (out / "badges" / f"{slug}.svg").is_file()
    assert (out / "req" / "MEM-KEY-003.html").is_file()
    assert (out / "case" / "mem-ent-text-refused.html").is_file()


def test_the_matrix_counts_match_each_report(built: tuple[Site, dict[str, str]]) -> None:
    site, _ = built
    assert [i.title for i in site.impls] == list(FOUR)
    for impl in site.impls:
        summary = impl.report["summary"]
        whole = impl.tally().counts
        assert whole["pass"] == summary["passed"]
        assert whole["n/a"] == summary["not_applicable"]
        assert whole["expected"] == summary["expected_failures"]
        assert whole["fail"] == summary["unexpected"]
        for capability, row in impl.capabilities.items():
            counts = impl.tally(impl.in_capability(capability)).counts
            assert sum(counts.values()) == row["cases"], (impl.slug, capability)
            assert counts["pass"] == row["passed"], (impl.slug, capability)
            assert counts["n/a"] == row["not_applicable"], (impl.slug, capability)
            assert counts["expected"] + counts["fail"] == (
                row["failed"] + row["errored"] + row["skipped"]), (impl.slug, capability)


def test_dsh_memento_per_capability_and_every_failure_explained(
        built: tuple[Site, dict[str, str]]) -> None:
    site, files = built
    memento = next(i for i in site.impls if i.slug == "dsh-memento")
    protocol = memento.tally(memento.in_capability("memory.protocol")).counts
    # n/a: the memory cases that also need a capability dsh-memento's harness does not declare
    # (memory.store, .migrate-memento, .recall, .mcp); its proposals run (11 cases)
    undeclared = sum(1 for c in json.loads((REPO / "compliance" / "reports" / "dsh-memento.json")
                     .read_text(encoding="utf-8"))["cases"]
                     if c["suite"] == "memory" and c["status"] == "not_applicable")
    assert undeclared == 50
    assert protocol == {"pass": 2, "fail": 0, "expected": 138, "n/a": undeclared}
    report = json.loads((REPO / "compliance" / "reports" / "dsh-memento.json").read_text(
        encoding="utf-8"))
    session_cases = sum(1 for c in report["cases"] if c["suite"] == "session-log")
    assert session_cases > 500
    assert memento.tally(memento.in_capability("session-log")).counts["n/a"] == session_cases
    kinds: dict[str, int] = {}
    for case in memento.cases:
        if case.status in ("failed", "errored"):
            assert case.outcome == "expected", case.id
            assert case.explanation is not None
            assert case.explanation.kind in ("gap", "found"), (case.id, case.explanation)
            if case.explanation.kind == "gap":  # the gap note exists in the spec
                assert site.notes.of_gap(case.explanation.label), case.explanation.label
            kinds[case.explanation.kind] = kinds.get(case.explanation.kind, 0) + 1
    baseline = json.loads((REPO / "harnesses" / "dsh-memento" / "baseline.json").read_text(
        encoding="utf-8"))
    unsuccessful = {c["id"] for c in report["cases"] if c["status"] in ("failed", "errored")}
    found_ids = [e["id"] for e in baseline["expectedFailures"]
                 if e.get("id") in unsuccessful and "found (no note)" in e["reason"]]
    assert kinds == {"gap": len(unsuccessful) - len(found_ids), "found": len(found_ids)}
    assert kinds["gap"] > 100 and kinds["found"] >= 4
    page = files["impl/dsh-memento.html"]
    found = page[page.index("Found: differences without a note"):]
    for case_id in found_ids:
        assert f">{case_id}</a>" in found
    assert "audit_list does not check its limit" in found  # the baseline's reason
    summary = page[page.index("Explained by"):page.index("<section")]
    gaps = Counter(c.explanation.label for c in memento.cases
                   if c.status in ("failed", "errored") and c.explanation is not None
                   and c.explanation.kind == "gap")
    assert gaps["G1"] > 50 and gaps["G20"] > 20  # the two gaps most cases meet first
    for label, count in gaps.items():
        assert re.search(rf'>Gap {label}</a></td><td class="num">{count}</td>', summary), label
    found_rows = re.findall(r'>Found: no note yet</a></td><td class="num">(\d+)</td>', summary)
    assert sum(map(int, found_rows)) == len(found_ids)
    assert re.search(r'>Skipped: [^<]*</a></td><td class="num">\d+</td>', summary)
    assert "<h3>Gap G1</h3>" in page and "stores the writer&#x27;s workspace key" in page


def test_every_dsh_divergence_maps_to_a_class_of_the_divergence_page(
        built: tuple[Site, dict[str, str]]) -> None:
    site, _ = built
    for impl in site.impls:
        if impl.name != "dsh":
            continue
        for case in impl.cases:
            if case.outcome == "expected":
                assert case.explanation is not None
                assert case.explanation.kind == ("skip" if case.status == "skipped"
                                                 else "class"), case.id


def test_a_requirement_page_links_its_spec_anchor_and_its_note(
        built: tuple[Site, dict[str, str]]) -> None:
    _, files = built
    page = files["req/MEM-KEY-003.html"]
    assert 'href="../../memory/visibility/#MEM-KEY-003"' in page
    assert "Divergence (G1)" in page
    assert page.count("expected failure") >= 5 and ">mem-memento-a1</a>" in page
    absolute = SpecLinks.of(requirements()["requirements"], None)
    assert absolute.requirement("MEM-KEY-003", 1) == \
        "https://dshkit.dev/memory/visibility/#MEM-KEY-003"
    assert absolute.requirement("NOPE-NOPE-001", 1) is None


def test_a_case_page_shows_input_expected_and_actual(built: tuple[Site, dict[str, str]]) -> None:
    site, files = built
    page = files["case/mem-ent-text-refused.html"]
    vector = site.vectors["mem-ent-text-refused"]
    assert "<h2>Input</h2>" in page and "<h2>Expected</h2>" in page
    assert json_block(vector.expect) in page
    assert "expected error INVALID_INPUT, got success" in page  # dsh-memento's actual result
    assert "Gap note <strong>G9</strong>" in page
    for text in files.values():
        assert re.search("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", text) is None
    lone = files["case/ses-json-lone-surrogate-escape.html"]
    assert "\\ud8" in lone.lower() or "\\udc" in lone.lower()


def test_invisible_characters_are_written_as_escapes() -> None:
    assert visible("a\ud800b\x00\x7f\x85\u202e\u3000\u00a0 c") == \
        "a\\ud800b\\u0000\\u007f\\u0085\\u202e\\u3000\\u00a0 c"
    assert visible("line\nnext\t", keep="\n") == "line\nnext\\u0009"
    assert esc('<"\udfff">') == "&lt;&quot;\\udfff&quot;&gt;"
    assert json_block({"t": "\ud83d\x01"}) == '{\n  &quot;t&quot;: &quot;\\ud83d\\u0001&quot;\n}'


def test_nothing_is_loaded_from_the_network(built: tuple[Site, dict[str, str]]) -> None:
    _, files = built
    for name, text in files.items():
        if name.endswith(".html"):
            parsed = _parse(text)
            assert parsed.scripts == 0, name
            assert [u for u in parsed.loads if _EXTERNAL.match(u)] == [], name
    assert "url(" not in files["style.css"] and "@import" not in files["style.css"]
    assert "@media (max-width" in files["style.css"]


def test_every_local_link_resolves(built: tuple[Site, dict[str, str]]) -> None:
    _, files = built
    for name in ("index.html", "impl/dsh-memento.html", "req/index.html",
                 "req/MEM-KEY-003.html", "case/mem-ent-text-refused.html"):
        parsed = _parse(files[name])
        base = Path(name).parent
        for href in parsed.links + parsed.loads:
            target = href.split("#", 1)[0]
            if not target or _EXTERNAL.match(target) or target.startswith("../../"):
                continue
            resolved = (base / target).as_posix()
            parts: list[str] = []
            for piece in resolved.split("/"):
                if piece == "..":
                    parts.pop()
                elif piece != ".":
                    parts.append(piece)
            assert "/".join(parts) in files, (name, href)


def test_badges_are_svg(built: tuple[Site, dict[str, str]]) -> None:
    _, files = built
    badges = [n for n in files if n.endswith(".svg")]
    assert "badges/dsh-memento/memory.protocol.svg" in badges
    for name in badges:
        root = ET.fromstring(files[name])
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "2/140 pass, 138 expected" in files["badges/dsh-memento/memory.protocol.svg"]
    assert "not applicable" in files["badges/dsh-memento/session-log.svg"]


def test_a_rebuild_replaces_its_own_folders_only(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "compliance"
    (out / "case").mkdir(parents=True)
    (out / "case" / "retired-case.html").write_text("old", encoding="utf-8")
    (out / "dsh").mkdir()
    (out / "dsh" / "index.html").write_text("a spec page", encoding="utf-8")
    assert main(["compliance", "build", "--out", str(out), "--reports", str(REPORTS)]) == 0
    assert not (out / "case" / "retired-case.html").exists()
    assert (out / "dsh" / "index.html").read_text(encoding="utf-8") == "a spec page"
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    assert "4 implementations" in capsys.readouterr().out


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*argv, "--json"]) == exits.USAGE
    [envelope] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert envelope["ok"] is False and envelope["command"] == "compliance"
    error: dict[str, Any] = envelope["error"]
    return error


def test_unusable_reports_are_refused(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    missing = _refusal(["compliance", "build", "--out", str(tmp_path / "o"), "--reports",
                        str(tmp_path / "nowhere")], capsys)
    assert missing["code"] == "COMPLIANCE_SITE" and missing["flag"] == "--reports"
    folder = tmp_path / "reports"
    folder.mkdir()
    shutil.copy(REPORTS / "dsh-memento.json", folder / "dsh-memento.json")
    (folder / "notes.json").write_text('{"hello": 1}', encoding="utf-8")
    stray = _refusal(["compliance", "build", "--out", str(tmp_path / "o"), "--reports",
                      str(folder)], capsys)
    assert stray["path"].endswith("notes.json") and "neither a kit report" in stray["message"]
    (folder / "notes.json").write_text("{not json", encoding="utf-8")
    broken = _refusal(["compliance", "build", "--out", str(tmp_path / "o"), "--reports",
                       str(folder)], capsys)
    assert "cannot read notes.json" in broken["message"]
    (folder / "notes.json").unlink()
    empty = tmp_path / "empty"
    empty.mkdir()
    none = _refusal(["compliance", "build", "--out", str(tmp_path / "o"), "--reports",
                     str(empty)], capsys)
    assert "no kit report" in none["message"]
    with pytest.raises(SiteError):
        render_site(empty)


def test_a_report_without_a_sidecar_or_spec_still_builds(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    shutil.copy(REPORTS / "dsh-memento.json", folder / "dsh-memento.json")
    site, files = render_site(folder, None, None)
    assert [i.slug for i in site.impls] == ["dsh-memento"]
    assert "this checkout" in files["impl/dsh-memento.html"]
    assert load_notes(None).notes == ()
    # without the spec's notes, a gap the baseline names cannot be checked: it is flagged
    memento = site.impls[0]
    assert {c.explanation.kind for c in memento.cases if c.explanation} >= {"unmapped"}
