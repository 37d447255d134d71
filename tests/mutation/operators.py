"""The mutants of one Python source file, found on its AST and applied as text edits.

Operators (each mutant changes one node):

- ``compare``: one comparison operator swapped (``==``/``!=``, ``<``/``<=``, ``>``/``>=``,
  ``is``/``is not``, ``in``/``not in``);
- ``boolop``: ``and`` and ``or`` swapped;
- ``negate``: the test of an ``if``, ``while``, conditional expression or comprehension
  filter negated;
- ``unnot``: a ``not`` removed;
- ``constant``: an integer constant plus or minus one, ``True`` and ``False`` swapped;
- ``binop``: ``+`` and ``-`` swapped;
- ``delete``: a simple statement of a function body replaced by ``pass``;
- ``return``: ``return X`` replaced by ``return None`` (the function returns early with
  nothing);
- ``loopctl``: ``continue`` and ``break`` swapped.

The edit replaces the node's source segment (expressions parenthesised, so the context cannot
change their meaning), so a mutant's diff is one line or a few, and comments stay. Type
annotations are not mutated (with postponed evaluation they never run), nor decorators
(``dataclass(frozen=True)``), docstrings, f-strings and ``if TYPE_CHECKING`` blocks. Nothing random here:
the mutants of a file come in source order.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["OPERATORS", "Mutant", "mutants"]

OPERATORS = ("compare", "boolop", "negate", "unnot", "constant", "binop", "delete", "return",
             "loopctl")

_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
    ast.GtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
    ast.NotIn: ast.In}
_DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Delete)


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutation of ``file``: bytes ``start:end`` of the source become ``replacement``."""

    file: str  # path relative to the repository root
    module: str  # the import name of the mutated module
    line: int
    operator: str
    start: int
    end: int
    original: str
    replacement: str
    source: str  # the unmutated source of the whole file

    @property
    def mutated_source(self) -> str:
        raw = self.source.encode("utf-8")
        return (raw[: self.start] + self.replacement.encode("utf-8") + raw[self.end:]).decode(
            "utf-8")

    @property
    def mutated_lines(self) -> str:
        """The lines the edit touches, after it."""
        lines = self.mutated_source.splitlines()
        last = self.line - 1 + self.replacement.count("\n")
        return "\n".join(lines[self.line - 1: last + 1])

    @property
    def id(self) -> str:
        text = f"{self.original}\0{self.mutated_lines.strip()}"
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        return f"{self.file}:{self.line}:{self.operator}:{digest}"

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.source.splitlines(keepends=True), self.mutated_source.splitlines(keepends=True),
            fromfile=f"a/{self.file}", tofile=f"b/{self.file}", n=1))


class _Finder:
    """Walks a module's AST and yields ``(node, operator, replacement)`` edits."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.skip: set[int] = set()  # ids of nodes never mutated (annotations, patterns, ...)
        for node in ast.walk(self.tree):
            for part in self._unmutated_parts(node):
                self.skip.update(id(n) for n in ast.walk(part))
        self.in_function: set[int] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if inner is not node:
                        self.in_function.add(id(inner))

    @staticmethod
    def _unmutated_parts(node: ast.AST) -> list[ast.AST]:
        parts: list[ast.AST | None] = []
        if isinstance(node, ast.arg):
            parts.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            parts.extend(node.decorator_list)
            if not isinstance(node, ast.ClassDef):
                parts.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        elif isinstance(node, ast.JoinedStr | ast.pattern) or (
                isinstance(node, ast.If) and _is_type_checking(node.test)):
            parts.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str):
            parts.append(node)  # a docstring
        return [p for p in parts if p is not None]

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def edits(self) -> Iterator[tuple[ast.AST, str, str]]:
        for node in ast.walk(self.tree):
            if id(node) in self.skip:
                continue
            yield from self._expression_edits(node)
            yield from self._statement_edits(node)

    def _expression_edits(self, node: ast.AST) -> Iterator[tuple[ast.AST, str, str]]:
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                swapped = ast.Compare(left=node.left, comparators=node.comparators,
                                      ops=[*node.ops[:index], _SWAPS[type(op)](),
                                           *node.ops[index + 1:]])
                yield node, "compare", f"({ast.unparse(swapped)})"
        elif isinstance(node, ast.BoolOp):
            either: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield node, "boolop", f"({ast.unparse(ast.BoolOp(op=either, values=node.values))})"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "unnot", f"({self.segment(node.operand)})"
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, "constant", f"({not node.value})"
        elif isinstance(node, ast.Constant) and isinstance(node.value, int):
            yield node, "constant", f"({node.value + 1})"
            yield node, "constant", f"({node.value - 1})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            other = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            flipped = ast.BinOp(left=node.left, op=other, right=node.right)
            yield node, "binop", f"({ast.unparse(flipped)})"
        tests: list[ast.expr] = []
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        for test in tests:
            yield test, "negate", f"(not ({self.segment(test)}))"

    def _statement_edits(self, node: ast.AST) -> Iterator[tuple[ast.AST, str, str]]:
        if id(node) not in self.in_function:
            return
        if isinstance(node, _DELETABLE):
            yield node, "delete", "pass"
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            yield node, "return", "return None"
        elif isinstance(node, ast.Continue):
            yield node, "loopctl", "break"
        elif isinstance(node, ast.Break):
            yield node, "loopctl", "continue"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _offsets(source: str) -> list[int]:
    """The byte offset of each line's start (AST columns count UTF-8 bytes)."""
    starts = [0]
    for line in source.encode("utf-8").splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _changes(mutant: Mutant) -> bool:
    """Whether the edit changes the code (a statement edit always does)."""
    if mutant.operator in ("delete", "return", "loopctl"):
        return True
    before, after = (ast.parse(f"({text})", mode="eval") for text in
                     (mutant.original, mutant.replacement))
    return ast.dump(before) != ast.dump(after)


def _parses(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return False
    return True


def mutants(source: str, *, file: str, module: str) -> list[Mutant]:
    """Every mutant of ``source``, in source order; each parses and changes the code (an
    edit that would not is dropped)."""
    finder = _Finder(source)
    starts = _offsets(source)
    found: dict[tuple[int, int, str, str], Mutant] = {}
    for node, operator, replacement in finder.edits():
        line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        if end_line is None or end_col is None:
            continue
        start, end = starts[line - 1] + col, starts[end_line - 1] + end_col
        mutant = Mutant(file=file, module=module, line=line, operator=operator, start=start,
                        end=end, original=source.encode("utf-8")[start:end].decode("utf-8"),
                        replacement=replacement, source=source)
        if _changes(mutant) and _parses(mutant.mutated_source):
            found.setdefault((start, end, operator, replacement), mutant)
    return [found[key] for key in sorted(found)]
