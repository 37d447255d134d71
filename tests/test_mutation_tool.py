"""The mutation tool behind ``nox -s mutation`` (tests/mutation): its operators, ids, sample,
import hook and score."""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import pytest
from mutation import child, run
from mutation.operators import OPERATORS, Mutant, mutants

SOURCE = '''"""Doc."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    size: int = 3


def pick(items: list[int], limit: int = 2) -> int | None:
    """Docstring: not mutated."""
    total = 0
    for item in items:
        if item > limit and not item == 7:
            continue
        if item < 0:
            break
        total += item - 1
    label = f"total {total + 1}"
    print(label)
    return total
'''


def _by_operator(found: list[Mutant]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in found:
        out.setdefault(m.operator, []).append(m.replacement)
    return out


def test_each_operator_makes_a_one_node_edit_that_parses() -> None:
    found = mutants(SOURCE, file="x.py", module="x")
    ops = _by_operator(found)
    assert set(ops) == set(OPERATORS)
    assert "(item >= limit)" in ops["compare"] and "(item != 7)" in ops["compare"]
    assert "(item <= 0)" in ops["compare"]
    assert ops["boolop"] == ["(item > limit or not item == 7)"]
    assert "(not (item > limit and not item == 7))" in ops["negate"]
    assert ops["unnot"] == ["(item == 7)"]
    assert ops["binop"] == ["(item + 1)"]  # not the f-string's total + 1
    assert ops["return"] == ["return None"] and sorted(ops["loopctl"]) == ["break", "continue"]
    assert ops["delete"] == ["pass"] * 4  # total = 0, total += ..., label = ..., print(...)
    for m in found:
        ast.parse(m.mutated_source)
        assert m.mutated_source != SOURCE and m.original in SOURCE
        assert m.diff().count("\n-") >= 1 and m.diff().count("\n+") >= 1


def test_annotations_decorators_docstrings_and_module_statements_stay() -> None:
    found = mutants(SOURCE, file="x.py", module="x")
    lines = {m.line for m in found}
    assert 7 not in lines  # @dataclass(frozen=True)
    assert 12 not in {m.line for m in found if m.operator != "constant"}  # the signature
    assert not any(m.original == "int | None" for m in found)
    assert 13 not in lines  # the docstring
    assert 9 in lines  # size: int = 3 is a value, mutated (constant)
    assert not any(m.operator == "delete" and m.line == 4 for m in found)


def test_ids_are_unique_stable_and_name_file_line_and_operator() -> None:
    first = mutants(SOURCE, file="x.py", module="x")
    again = mutants(SOURCE, file="x.py", module="x")
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first)
    m = first[0]
    path, line, operator, digest = m.id.split(":")
    assert (path, int(line), operator) == ("x.py", m.line, m.operator) and len(digest) == 10
    moved = mutants("\n\n" + SOURCE, file="x.py", module="x")  # lines shift: ids follow
    assert {i.rsplit(":", 1)[1] for i in (x.id for x in moved)} == \
        {i.rsplit(":", 1)[1] for i in (x.id for x in first)}


def test_every_target_file_has_mutants_and_the_sample_is_seeded() -> None:
    found = run.all_mutants()
    assert {m.file for m in found} == set(run.FILES)
    assert len({m.id for m in found}) == len(found)
    one, two = run.sample(found, 40, seed=3), run.sample(found, 40, seed=3)
    assert [m.id for m in one] == [m.id for m in two] and len(one) == 40
    assert [m.id for m in run.sample(found, 40, seed=4)] != [m.id for m in one]


def test_the_child_imports_the_mutated_source_instead_of_the_file(tmp_path: Path) -> None:
    package = tmp_path / "mutation_probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    finder = child._MutantFinder("mutation_probe_pkg.mod", str(package / "mod.py"),
                                 "VALUE = 2\n")
    sys.path.insert(0, str(tmp_path))
    sys.meta_path.insert(0, finder)
    try:
        module = importlib.import_module("mutation_probe_pkg.mod")
        assert module.VALUE == 2 and module.__file__ == str(package / "mod.py")
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in ("mutation_probe_pkg.mod", "mutation_probe_pkg"):
            sys.modules.pop(name, None)
    assert (package / "mod.py").read_text(encoding="utf-8") == "VALUE = 1\n"


def test_equivalent_mutants_leave_the_score(tmp_path: Path) -> None:
    found = mutants(SOURCE, file="x.py", module="x")[:4]
    outcomes = [run.Outcome(found[0], "killed", 1.0, "1 failed"),
                run.Outcome(found[1], "timeout", 30.0, "no answer"),
                run.Outcome(found[2], "survived", 1.0, "600 passed"),
                run.Outcome(found[3], "equivalent", 0.0, "same result either way")]
    data = run.report(outcomes, seed=1, population={"x.py": 9}, imported=["dshkit.x"],
                      baseline_s=1.0, total_s=2.0, stale=["gone:1:delete:0"])
    assert data["overall"] == {"mutants": 4, "killed": 2, "timeouts": 1, "survived": 1,
                               "equivalent": 1, "score": 66.7}
    text = run.markdown(data)
    assert "**66.7 %**" in text and found[2].id in text and "same result either way" in text
    assert "`gone:1:delete:0`" in text
    equivalent = tmp_path / "equivalent.json"
    equivalent.write_text(json.dumps({"equivalent": [{"id": "a", "reason": "r"}]}),
                          encoding="utf-8")
    assert run.load_equivalent(equivalent) == {"a": "r"}


def test_the_committed_equivalent_list_has_a_reason_for_each_entry() -> None:
    entries = json.loads(run.EQUIVALENT.read_text(encoding="utf-8"))["equivalent"]
    assert all(e["reason"].strip() and "\n" not in e["reason"] for e in entries)
    assert len({e["id"] for e in entries}) == len(entries)


def test_rescore_applies_the_equivalent_list_to_an_earlier_run() -> None:
    found = run.all_mutants()[:3]
    earlier = run.report([run.Outcome(found[0], "killed", 1.0, "1 failed"),
                          run.Outcome(found[1], "survived", 1.0, "601 passed"),
                          run.Outcome(found[2], "survived", 1.0, "601 passed")],
                         seed=1, population={}, imported=[], baseline_s=1.0, total_s=3.0,
                         stale=[])
    by_id = {m.id: m for m in found}
    again = run.rescore(earlier, by_id, {found[2].id: "same answer"})
    assert [o.status for o in again] == ["killed", "survived", "equivalent"]
    assert again[2].detail == "same answer"
    rescored = run.report(again, seed=1, population={}, imported=[], baseline_s=1.0,
                          total_s=3.0, stale=[])
    with pytest.raises(SystemExit, match="was not run"):
        run.rescore(rescored, by_id, {})  # no longer equivalent: it must run
    with pytest.raises(SystemExit, match="no mutant of the current sources"):
        run.rescore(earlier, {}, {})
