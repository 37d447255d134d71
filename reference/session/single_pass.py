"""Validate at level ``load`` and fold, in one pass over the log.

:func:`validate_and_fold` reads a log once and gives exactly what
``validate_path(path, Level.LOAD)`` and ``fold_path(path)`` (the loader's fold, with repair)
give when called one after the other, for half the reading and parsing.

Why one pass is enough: the ``load`` level applies every check the fold applies, in the same
order, plus the enclosure invariants, which come last and change no state the fold reads. So
the fold stops where the first problem that is not an enclosure problem alone is found, and
its state is the validator's state. The repair closers are pushed with the fold's checks,
after the validator's verdict is taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .folding import FoldReport, fold_checks, fold_report
from .levels import Checks, Level
from .pipeline import SessionChecker, run_all_outcome
from .reader import LogReader
from .validation import ValidationReport, session_batches, typed_observer


@dataclass(frozen=True, slots=True)
class ValidatedFold:
    """The verdict of level ``load`` and the loader's fold of the same log."""

    validation: ValidationReport
    fold: FoldReport

    @property
    def valid(self) -> bool:
        return self.validation.valid


def validate_and_fold(path: str | Path, *, session_id: str | None = None,
                      stdin: BinaryIO | None = None, typed: bool = False) -> ValidatedFold:
    """Validate a log file at level ``load`` (``typed`` adds the typed layer) and fold it as a
    loader does, reading it once (any reader form; ``-`` is stdin)."""
    reader = LogReader(path, tolerate_torn_tail=True, stdin=stdin)
    checker = SessionChecker(Checks.for_level(Level.LOAD))
    typed_found = typed_observer(checker) if typed else None
    outcome = run_all_outcome(checker, session_batches(reader, checker, session_id,
                                                       handback=True))
    result = reader.result
    validation = ValidationReport(
        path=str(path), level=Level.LOAD, events=checker.count, errors=tuple(outcome.problems),
        torn=result.torn, form=result.form, failed_level=outcome.failed,
        typed=None if typed_found is None else tuple(typed_found))
    if outcome.stop is not None:
        fold = FoldReport(path=str(path), events=outcome.stop_count, errors=(outcome.stop,),
                          torn=result.torn)
        return ValidatedFold(validation, fold)
    checker.checks = fold_checks(True)  # the closers pass the fold's checks, as in fold_path
    checker.observer = None
    fold = fold_report(str(path), checker, None, True, result.torn, result.header)
    return ValidatedFold(validation, fold)


__all__ = ["ValidatedFold", "validate_and_fold"]
