"""Which tests of dshkit's own suite check the tool-scoped requirements.

A requirement of scope ``tool`` (the ``dshkit`` command line and distribution, spec
``conformance/kit``, CNF-SCO-001) is proven by the test suite, not by a vector: a test names
it with the marker ``@pytest.mark.requirement("QRY-CLI-001", ...)`` (on a function, a class or
a module's ``pytestmark``). :func:`scan` reads the test files without importing them and
returns, per requirement id, the node ids of the tests that name it; the kit's manifest keeps
that map (``toolVerified``, written by ``python -m dshkit.conformance.lint --write --tests
tests``) so that an installed kit can report it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MARKER", "scan", "scan_file"]

MARKER = "requirement"


def _ids(node: ast.expr) -> Iterator[str]:
    """The requirement ids of one ``pytest.mark.requirement(...)`` call (or a list of marks)."""
    if isinstance(node, ast.List | ast.Tuple):
        for item in node.elts:
            yield from _ids(item)
        return
    if not isinstance(node, ast.Call):
        return
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == MARKER
            and isinstance(func.value, ast.Attribute) and func.value.attr == "mark"):
        return
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield arg.value


def _tests(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, list[str]]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name.startswith("test"):
            yield f"{prefix}::{node.name}", [i for d in node.decorator_list for i in _ids(d)]
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            marks = [i for d in node.decorator_list for i in _ids(d)]
            for name, own in _tests(node.body, f"{prefix}::{node.name}"):
                yield name, marks + own


def scan_file(path: Path, node_prefix: str) -> dict[str, list[str]]:
    """Requirement id -> node ids of the tests of one file that name it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            module += list(_ids(node.value))
    found: dict[str, list[str]] = {}
    for name, marks in _tests(tree.body, node_prefix):
        for requirement in dict.fromkeys(module + marks):
            found.setdefault(requirement, []).append(name)
    return found


def scan(tests_dir: Path, root: Path | None = None) -> dict[str, list[str]]:
    """Requirement id -> sorted node ids (``tests/test_x.py::test_y``, relative to ``root``,
    default the parent of ``tests_dir``) over every ``test_*.py`` under ``tests_dir``."""
    base = root if root is not None else tests_dir.parent
    found: dict[str, list[str]] = {}
    for path in sorted(tests_dir.rglob("test_*.py")):
        prefix = path.relative_to(base).as_posix()
        for requirement, names in scan_file(path, prefix).items():
            found.setdefault(requirement, []).extend(names)
    return {k: sorted(v) for k, v in sorted(found.items())}
