"""The session core's public API (spec chapters ``session/*``).

:func:`run_log` reads, checks and folds a log in one call; the report functions
(:func:`validate_path`, :func:`fold_path`, :func:`load_path`, :func:`validate_and_fold`,
:func:`repair_path` and their in-memory forms) stand on it. Names are loaded on first use, so
importing this package costs nothing until one is needed (``dshkit validate`` starts fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .folding import FoldReport, LoadReport, fold_events, fold_path, load_events, load_path
    from .levels import Checks, Level
    from .reader import FORM_BARE_JSONL, FORM_DSH_JSONL, FORM_JSON_ARRAY, LogReader, TornTail
    from .recovery import RepairReport, repair_path
    from .runlog import Closers, LogRun, Surface, run_log
    from .single_pass import ValidatedFold, validate_and_fold
    from .validation import ValidationReport, validate_events, validate_path

_HOMES: dict[str, str] = {
    "Checks": "levels", "Level": "levels",
    "Closers": "runlog", "LogRun": "runlog", "Surface": "runlog", "run_log": "runlog",
    "FORM_BARE_JSONL": "reader", "FORM_DSH_JSONL": "reader", "FORM_JSON_ARRAY": "reader",
    "LogReader": "reader", "TornTail": "reader",
    "ValidationReport": "validation", "validate_events": "validation",
    "validate_path": "validation",
    "FoldReport": "folding", "LoadReport": "folding", "fold_events": "folding",
    "fold_path": "folding", "load_events": "folding", "load_path": "folding",
    "ValidatedFold": "single_pass", "validate_and_fold": "single_pass",
    "RepairReport": "recovery", "repair_path": "recovery",
}


__getattr__, __dir__ = exports(__name__, _HOMES, globals())



__all__ = [
    "FORM_BARE_JSONL",
    "FORM_DSH_JSONL",
    "FORM_JSON_ARRAY",
    "Checks",
    "Closers",
    "FoldReport",
    "Level",
    "LoadReport",
    "LogReader",
    "LogRun",
    "RepairReport",
    "Surface",
    "TornTail",
    "ValidatedFold",
    "ValidationReport",
    "fold_events",
    "fold_path",
    "load_events",
    "load_path",
    "repair_path",
    "run_log",
    "validate_and_fold",
    "validate_events",
    "validate_path",
]
