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

from .folding import FoldReport, fold_report
from .levels import Level
from .runlog import run_log
from .validation import ValidationReport, validation_report


@dataclass(frozen=True, slots=True)
class ValidatedFold:
    """The verdict of level ``load`` and the loader's fold of the same log."""

    validation: ValidationReport
    fold: FoldReport

    @property
    def valid(self) -> bool:
        return self.validation.valid


def validate_and_fold(path: str | Path, *, session_id: str | None = None,
                      stdin: BinaryIO | None = None, typed: bool = False,
                      form: str | None = None) -> ValidatedFold:
    """Validate a log file at level ``load`` (``typed`` adds the typed layer) and fold it as a
    loader does, reading it once (any reader form; ``-`` is stdin)."""
    run = run_log(path, checks=Level.LOAD, session_id=session_id, stdin=stdin,
                  every_problem=True, closers="append", typed=typed, form=form)
    return ValidatedFold(validation_report(run, Level.LOAD), fold_report(run))


__all__ = ["ValidatedFold", "validate_and_fold"]
