"""``dshkit compact``: plan a compaction of a stored log, or append one (spec chapter
``compaction/planner``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from ..reference.compaction import (
    TRIGGERS,
    CompactionError,
    DigestSummarizer,
    FixedSummarizer,
    Plan,
    PruneConfig,
    Summarizer,
    plan,
    resolve_config,
    resolve_prune_config,
)
from ..reference.compaction.apply import apply_to_path, read_log
from ..reference.compaction.explain import explain
from ..reference.json.inputs import JsonInputError, parse_json
from ..reference.session.levels import Level
from . import exits
from .options import add_json, integer, output_path
from .progress import names as _names
from .progress import working
from .report import Reporter, from_error, usage

_IO_CODES = frozenset({"CMP_LOG_UNREADABLE", "CMP_WRITE_FAILED", "CMP_APPLY_USAGE",
                       "CMP_NOT_WRITABLE", "CMP_OUTPUT_EXISTS"})


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="session log (JSONL, zstd or JSON array)")
    parser.add_argument("--context-window", type=integer(1), metavar="N",
                        help="model context window in tokens (default: the log's latest "
                        "request/context contextWindow)")
    parser.add_argument("--trigger", choices=TRIGGERS, default=None,
                        help="pressure (default), context-overflow, manual, or region "
                        "(implied by --region)")
    parser.add_argument("--region", metavar="START:END",
                        help="compact this explicit span of surface seqs")
    parser.add_argument("--config", metavar="FILE", help="BasicCompactionConfig JSON file")
    parser.add_argument("--prune-config", metavar="FILE", help="ToolResultPruneConfig JSON file")
    parser.add_argument("--no-prune", action="store_true", help="leave the pruner out")
    parser.add_argument("--strict", action="store_true",
                        help="refuse automatic triggers when no turn is open (as DSH does)")
    parser.add_argument("--pressure-tokens", type=integer(0), metavar="N",
                        help="use this provider-measured pressure instead of the estimate")
    parser.add_argument("--source-command-id", metavar="ID",
                        help="sourceCommandId of a manual compaction")
    parser.add_argument("--compaction-id", action="append", default=[], metavar="ID",
                        help="compaction id to use (repeatable; default: derived)")
    parser.add_argument("--time", type=integer(0), metavar="MS",
                        help="time (epoch ms) of the new events (default: now)")
    parser.add_argument("--provider", default="dshkit",
                        help="provider recorded for a --summary-file summary")
    parser.add_argument("--model", default="caller-supplied",
                        help="model recorded for a --summary-file summary")
    add_json(parser)


def configure(compact: argparse.ArgumentParser) -> None:
    ops = compact.add_subparsers(dest="op", required=True, metavar="OPERATION")
    plan_p = ops.add_parser("plan", help="print what a compaction would append")
    _common(plan_p)
    plan_p.add_argument("--summary-file", metavar="F",
                        help="summary text (default: the deterministic digest summarizer)")
    plan_p.add_argument("--messages", action="store_true",
                        help="with --json, include the derived messages after the plan")
    plan_p.add_argument("--explain", action="store_true",
                        help="also show the priced surface nodes, the balanced cuts and the "
                        "structural units the selection works on")
    plan_p.add_argument("--select-only", action="store_true",
                        help="stop at the region the plan would summarize: no summarizer, "
                        "no compaction events (prunes before it are still counted)")
    apply_p = ops.add_parser("apply", help="append a compaction with the given summary")
    _common(apply_p)
    apply_p.add_argument("--summary-file", metavar="F", required=True,
                         help="summary text, or - for standard input")
    target = apply_p.add_mutually_exclusive_group()
    target.add_argument("--write", action="store_true", help="append to PATH in place")
    target.add_argument("-o", "--output", metavar="NEW", type=output_path, help="write a new log file NEW")


def _usage(message: str, flag: str) -> NoReturn:
    raise usage(message, flag=flag)


def _read_json(path: str, flag: str) -> Any:
    """A configuration file (CMP-CLI-002): anything but a usable JSON text is a usage error."""
    try:
        return parse_json(Path(path).read_bytes())
    except OSError as exc:
        _usage(f"cannot read {path}: {exc.strerror or exc}", flag)
    except JsonInputError as exc:
        _usage(f"{path}: {exc.describe()}", flag)


def _summary_text(path: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        _usage(f"cannot read {path}: {exc.strerror or exc}", "--summary-file")
    except UnicodeDecodeError:
        _usage(f"{path} is not UTF-8 text", "--summary-file")


def _region(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(start), int(end)
    except ValueError:
        got = json.dumps(text, ensure_ascii=False)
        _usage(f"--region must be START:END (two seqs), got {got}", "--region")


def _planner(args: argparse.Namespace) -> tuple[Any, str]:
    region = _region(args.region)
    trigger = args.trigger or ("region" if region is not None else "pressure")
    if region is not None and trigger != "region":
        _usage("--region goes with --trigger region", "--trigger")
    config = resolve_config(_read_json(args.config, "--config") if args.config else None)
    prune: PruneConfig | None = None
    if not args.no_prune:
        prune = resolve_prune_config(_read_json(args.prune_config, "--prune-config")
                                     if args.prune_config else None)
    summarizer: Summarizer
    select_only = bool(getattr(args, "select_only", False))
    if select_only and args.summary_file:
        _usage("--select-only summarizes nothing; leave out --summary-file", "--summary-file")
    if args.summary_file:
        summarizer = FixedSummarizer(_summary_text(args.summary_file), provider=args.provider,
                                     model=args.model)
    else:
        summarizer = DigestSummarizer()
    now = args.time if args.time is not None else int(time.time() * 1000)

    def run(events: list[dict[str, Any]]) -> Plan:
        return plan(events, args.context_window, trigger=trigger, config=config, prune=prune,
                    summarizer=summarizer, region=region,
                    source_command_id=args.source_command_id,
                    compaction_ids=args.compaction_id, time=now, standalone=not args.strict,
                    pressure_tokens=args.pressure_tokens, select_only=select_only)

    return run, trigger


def _span(item: dict[str, int]) -> str:
    return f"{item['start']}..{item['end']}"


def _span_nodes(result: Plan, item: dict[str, int]) -> int:
    """How many surface nodes a selected span covers (a later span may start at a checkpoint
    the plan appended, so it is looked up among the plan's compactions too)."""
    for compaction in result.compactions:
        if compaction["shadowedRange"] == {"start": item["start"], "end": item["end"]}:
            return len(compaction["shadowedSeqs"])
    nodes = [n.seq for n in result.before.nodes] if result.before else []
    if item["start"] in nodes and item["end"] in nodes:
        return nodes.index(item["end"]) - nodes.index(item["start"]) + 1
    return len(result.surface[result.surface.index(item["start"]):]) if (
        item["start"] in result.surface) else 0


def _print_plan(out: Reporter, path: str, result: Plan, *, select_only: bool = False) -> None:
    outcome = "selection only" if select_only else result.outcome
    reason = None if select_only and result.selected else result.reason
    out.say(f"{path}: trigger {result.trigger}: {outcome}" + (f" ({reason})" if reason else ""))
    if result.pressure is not None:
        spec = result.pressure
        out.say(f"  context window {spec.context_window}: threshold {spec.threshold_tokens}, "
                f"retain {spec.retain_tokens} tokens")
    if result.before is not None and result.after is not None:
        out.say(f"  estimate: {result.before.total_tokens} -> {result.after.total_tokens} tokens "
                f"({len(result.before.nodes)} -> {len(result.after.nodes)} surface nodes)")
    for item in result.prunes:
        out.say(f"  prune tool result {item['originalSeq']}: {item['charsBefore']} -> "
                f"{item['charsAfter']} code points")
    for selected in result.selected:
        out.say(f"  selected region {_span(selected)} ({_span_nodes(result, selected)} nodes, "
                f"~{selected['tokens']} tokens)")
    for item in result.compactions:
        span = item["shadowedRange"]
        out.say(f"  compact {len(item['shadowedSeqs'])} nodes {span['start']}..{span['end']} "
                f"(~{item['shadowedTokenCount']} tokens) into checkpoint {item['checkpointSeq']} "
                f"(~{item['framedTokens']} tokens)")
    if result.failure is not None:
        failed = (result.selected[len(result.compactions)]
                  if len(result.selected) > len(result.compactions) else None)
        where = f"summarizing region {_span(failed)}" if failed else "summarizing"
        out.say(f"  {where} failed ({result.failure.kind}): {result.failure.message}")
    for warning in result.warnings:
        out.say(f"  warning: {warning}")
    if result.events:
        out.say(f"  events to append: {result.events[0]['seq']}..{result.events[-1]['seq']}")


def _print_explain(out: Reporter, shown: dict[str, Any]) -> None:
    unit_of: dict[int, int] = {}
    for number, unit in enumerate(shown["units"] or (), start=1):
        for seq in unit:
            unit_of[seq] = number
    out.say("  surface nodes (seq, type, tokens, unit):")
    for node in shown["nodes"]:
        unit = unit_of.get(node["seq"])
        out.say(f"    {node['seq']:>6}  {node['type']:<18} {node['tokens']:>7}"
                + (f"  unit {unit}" if unit is not None else ""))
    if shown["error"] is not None:
        out.say(f"  cuts: none ({shown['error']['code']}: {shown['error']['message']})")
        return
    for node, balanced in zip(shown["nodes"], shown["cuts"], strict=False):
        if not balanced:
            out.say(f"  cut before {node['seq']}: unbalanced")
    if shown["openUnit"]:
        out.say(f"  open unit (never compacted): {shown['openUnit']}")


def _plan_document(args: argparse.Namespace, result: Plan,
                   shown: dict[str, Any] | None) -> dict[str, Any]:
    document: dict[str, Any] = {"path": args.path, "valid": True}
    if args.select_only:
        document["selection"] = {
            "trigger": result.trigger, "reason": None if result.selected else result.reason,
            "pressure": result.pressure.to_json() if result.pressure else None,
            "beforeTokens": result.before.total_tokens if result.before else None,
            "selected": result.selected, "prunes": len(result.prunes),
            "events": sum(1 for e in result.events
                          if str(e.get("type", "")).startswith("compaction/s"))}
    else:
        document["plan"] = result.to_json(messages=args.messages)
        document["selected"] = result.selected
    if shown is not None:
        document["explain"] = shown
    return document


def run(args: argparse.Namespace, out: Reporter) -> int:
    try:
        planner, _ = _planner(args)
        if args.op == "plan":
            # CMP-PLN-002: plan checks what the planner needs, as the API does; not invariants
            with working(out, f"planning a compaction of {_names([args.path])}"):
                events, _reader = read_log(args.path, Level.SEED)
                result = planner(events)
                shown = explain(events) if args.explain else None
            if out.json:
                out.emit(_plan_document(args, result, shown))
            else:
                _print_plan(out, args.path, result, select_only=args.select_only)
                if shown is not None:
                    _print_explain(out, shown)
            return exits.OK
        with working(out, f"planning and appending a compaction of {_names([args.path])}"):
            report = apply_to_path(args.path, planner, write=args.write, output=args.output)
    except CompactionError as exc:
        io = exc.code in _IO_CODES
        raise from_error(exc.to_json(), exits.USAGE if io else exits.INVALID,
                         path=args.path) from None
    if out.json:
        out.emit(report.to_json())
        return exits.OK
    assert report.plan is not None
    _print_plan(out, args.path, report.plan)
    if report.written:
        out.note(f"{report.written}: appended {len(report.plan.events)} events")
    else:
        for event in report.plan.events:
            out.say(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    return exits.OK
