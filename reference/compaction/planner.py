"""The pure compaction planner (spec chapter ``compaction/planner``).

``plan(events, context_window, ...)`` decides, for one trigger, whether the log would be
compacted and which events the basic backend would append: prunes, then one or more summary
transactions, each with the summary text that the pluggable summarizer returns. Nothing is
written and no model is called; the input events are not modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .brackets import check_brackets
from .checkpoint import CHECKPOINT_PREAMBLE
from .config import BasicConfig, PressureSpec, resolve_config, scale, target_policy
from .errors import CompactionError
from .meter import check_meter_steps
from .pruner import PruneConfig, rewrite_tool_result
from .region import select_range, validate_region
from .summarizer import DigestSummarizer, Summarizer
from .tokens import estimate_message
from .transaction import DuringSummary, Failure, IdSource, run_transaction
from .view import LogView, Measurement

Event = dict[str, Any]
TRIGGERS = ("pressure", "context-overflow", "manual", "region")
DEFAULT_PRUNE = PruneConfig()


@dataclass
class Plan:
    trigger: str
    outcome: str = "none"  # none | pruned | compacted | failed
    reason: str | None = None
    owner: int | None = None
    target: tuple[str, str] | None = None
    pressure: PressureSpec | None = None
    before: Measurement | None = None
    after: Measurement | None = None
    prunes: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    failure: Failure | None = None
    warnings: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    surface: list[int] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    # every span the plan chose to summarize, in order, even when summarizing it failed or
    # (select-only) was not tried: {start, end, tokens}
    selected: list[dict[str, int]] = field(default_factory=list)

    @property
    def region(self) -> dict[str, int] | None:
        if not self.compactions:
            return None
        return dict(self.compactions[0]["shadowedRange"])

    def to_json(self, *, messages: bool = False) -> dict[str, Any]:
        def totals(m: Measurement | None) -> dict[str, Any] | None:
            if m is None:
                return None
            return {"totalTokens": m.total_tokens, "surfaceTokens": m.surface_tokens,
                    "headerTokens": m.header_tokens, "nodes": len(m.nodes)}

        out: dict[str, Any] = {
            "trigger": self.trigger, "outcome": self.outcome, "reason": self.reason,
            "owner": self.owner,
            "target": ({"provider": self.target[0], "model": self.target[1]}
                       if self.target else None),
            "pressure": self.pressure.to_json() if self.pressure else None,
            "before": totals(self.before), "after": totals(self.after),
            "region": self.region, "prunes": self.prunes, "compactions": self.compactions,
            "failure": self.failure.to_json() if self.failure else None,
            "warnings": self.warnings, "events": self.events, "surface": self.surface,
        }
        if messages:
            out["messages"] = self.messages
        return out


@dataclass
class _Run:
    view: LogView
    plan: Plan
    summarizer: Summarizer
    ids: IdSource
    time: int
    source_command_id: str | None
    during_summary: DuringSummary | None
    preamble: str
    select_only: bool = False

    def prune(self, config: PruneConfig | None) -> None:
        """CMP-PRN-004 / CMP-PRN-005: rewrite every over-budget current tool result, each right
        after its ``compaction/prune`` price event. Rewrites need an open turn (SES-ENC-010)."""
        if config is None:
            return
        if self.view.open_turn is None:
            targets = [s for s in self.view.nodes if self.view.event(s).get("type") ==
                       "tool/result"]
            if any(rewrite_tool_result(s, self.view.event(s), config) for s in targets):
                self.plan.warnings.append("tool-result pruning skipped: no turn is open, and a "
                                          "tool/result rewrite must be appended inside a turn")
            return
        for seq in [s for s in self.view.nodes if self.view.event(s).get("type") ==
                    "tool/result"]:
            original = self.view.event(seq)
            rewrite = rewrite_tool_result(seq, original, config)
            if rewrite is None:
                continue
            price = self._append("compaction/prune", {
                "shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq],
                "shadowedTokenCount": estimate_message(original["data"]["message"])})
            replacement = self._append("tool/result", rewrite.data,
                                       surfaceOp={"op": "replace", "start": seq, "end": seq},
                                       sourceEventSeqs=[seq])
            self.plan.prunes.append({
                "originalSeq": seq, "priceSeq": price["seq"],
                "replacementSeq": replacement["seq"], "callId": rewrite.call_id,
                "charsBefore": rewrite.chars_before, "charsAfter": rewrite.chars_after})

    def _append(self, kind: str, data: Any, **extra: Any) -> Event:
        event: Event = {"type": kind, "seq": self.view.next_seq, "time": self.time,
                        "data": data}
        event.update(extra)
        self.view.push(event)
        self.plan.events.append(event)
        return event

    def compact(self, start: int, end: int, stability: str) -> bool:
        i, j = validate_region(self.view.boundaries(), start, end)
        nodes = self.view.measure().nodes[i:j + 1]
        self.plan.selected.append({"start": start, "end": end,
                                   "tokens": sum(n.tokens for n in nodes)})
        if self.select_only:
            return False
        outcome = run_transaction(self.view, start, end, self.summarizer, owner=self.plan.owner,
                                  ids=self.ids, time=self.time,
                                  source_command_id=self.source_command_id,
                                  stability=stability, during_summary=self.during_summary,
                                  preamble=self.preamble)
        self.plan.events.extend(outcome.events)
        if outcome.failure is not None:
            self.plan.failure = outcome.failure
            if self.plan.compactions:  # an earlier attempt of this plan landed; it stays
                self.plan.warnings.append(f"a later compaction attempt failed "
                                          f"({outcome.failure.kind}): {outcome.failure.message}")
            else:
                self.plan.outcome, self.plan.reason = "failed", outcome.failure.kind
            return False
        assert outcome.result is not None
        self.plan.compactions.append(outcome.result)
        self.plan.outcome, self.plan.reason = "compacted", None
        return True

    def select(self, retain: int) -> tuple[int, int] | None:
        # CMP-SEL-001: the cuts are needed only once the tail walk stops short of the head
        return select_range(self.view.measure().nodes, self.view.boundaries, retain,
                            surface=self.view.nodes)

    def nothing(self, reason: str) -> Plan:
        if self.plan.prunes:
            self.plan.outcome = "pruned"
        self.plan.reason = reason
        return self.plan


def plan(events: Sequence[Event], context_window: int | None = None, *,
         trigger: str = "pressure", config: BasicConfig | dict[str, Any] | None = None,
         prune: PruneConfig | None = DEFAULT_PRUNE, summarizer: Summarizer | None = None,
         region: tuple[int, int] | None = None, source_command_id: str | None = None,
         compaction_ids: Sequence[str] = (), message_ids: Sequence[str] = (),
         time: int | None = None, standalone: bool = True,
         during_summary: DuringSummary | None = None, pressure_tokens: int | None = None,
         preamble: str = CHECKPOINT_PREAMBLE, select_only: bool = False) -> Plan:
    """Plan one compaction of ``events`` for ``trigger`` (CMP-PLN-001).

    ``pressure`` uses the context window (or the log's latest ``request/context`` window) and
    the configured threshold and retained tail; ``context-overflow`` compacts once with nothing
    retained but the newest unit; ``manual`` is the idle ``/compact`` verb (no open turn,
    nothing retained); ``region`` compacts the explicit ``region``. ``prune=None`` leaves the
    pruner out. ``standalone=False`` refuses automatic triggers outside an open turn, as DSH
    does; by default a log with no open turn gets a standalone bracket (``turn: null``).
    ``pressure_tokens`` anchors the estimate on a provider figure (CMP-PLN-008).
    ``select_only`` stops at the first span chosen for a summary (``Plan.selected``): nothing
    is summarized and no compaction event is planned, only the prunes before it. Raises
    :class:`CompactionError` when the plan is refused.
    """
    if trigger not in TRIGGERS:
        raise CompactionError("CMP_TRIGGER_UNKNOWN", "CMP-PLN-001",
                              f"unknown trigger {trigger!r}; expected one of {', '.join(TRIGGERS)}")
    resolved = config if isinstance(config, BasicConfig) else resolve_config(config)
    check_brackets(events)
    view = LogView.of(events)
    check_meter_steps(events)
    if pressure_tokens is not None:
        view.provide_pressure(pressure_tokens)
    result = Plan(trigger=trigger, target=view.target())
    result.before = view.measure()
    run = _Run(view=view, plan=result, summarizer=summarizer or DigestSummarizer(),
               ids=IdSource(events, compaction_ids, message_ids),
               time=view.last_time if time is None else time,
               source_command_id=source_command_id if trigger == "manual" else None,
               during_summary=during_summary, preamble=preamble, select_only=select_only)
    if view.busy:
        raise CompactionError("CMP_BUSY", "CMP-LCK-002",
                              "a compaction is already in progress (unmatched compaction/start "
                              f"at seq {view.unmatched_start['seq'] if view.unmatched_start else '?'})")
    _owner(result, view, trigger, standalone)
    try:
        _dispatch(run, trigger, resolved, context_window, prune, region)
    finally:
        result.after = view.measure()
        result.surface = list(view.nodes)
        result.messages = view.messages()
    return result


def _owner(result: Plan, view: LogView, trigger: str, standalone: bool) -> None:
    if trigger == "manual":
        if view.open_turn is not None:
            raise CompactionError("CMP_BUSY", "CMP-TRG-003",
                                  f"manual compaction needs an idle session, but turn "
                                  f"{view.open_turn} is open")
        result.owner = None
        return
    if view.open_turn is None and not standalone:
        raise CompactionError("CMP_NO_OPEN_TURN", "CMP-TRG-004",
                              "automatic compaction events must be enclosed in a turn, and no "
                              "turn is open")
    result.owner = view.open_turn


def _dispatch(run: _Run, trigger: str, config: BasicConfig, context_window: int | None,
              prune: PruneConfig | None, region: tuple[int, int] | None) -> Plan:
    view, result = run.view, run.plan
    if trigger == "region":
        if region is None:
            raise CompactionError("CMP_REGION_MISSING", "CMP-SEL-006",
                                  "the region trigger needs an explicit start and end")
        run.compact(region[0], region[1], "whole-surface")
        return result
    if trigger == "manual":
        selected = run.select(0)
        if selected is None:
            return run.nothing("nothing-to-compact")
        run.compact(selected[0], selected[1], "selected-span")
        return result
    target = view.target()
    if target is None:
        return run.nothing("no-target")
    policy = target_policy(config, *target)
    if trigger == "context-overflow":
        run.prune(prune)
        selected = run.select(0)
        if selected is None:
            return run.nothing("nothing-to-compact")
        run.compact(selected[0], selected[1], "whole-surface")
        return result
    window = context_window if context_window is not None else view.context_window
    if window is None:
        raise CompactionError("CMP_NO_CONTEXT_WINDOW", "CMP-TRG-001",
                              f"no context window for {target[0]}/{target[1]}: pass one, or log "
                              "a request/context that carries contextWindow")
    spec = scale(policy, target[0], target[1], window)
    result.pressure = spec
    if view.measure().total_tokens < spec.threshold_tokens:
        return run.nothing("below-threshold")
    run.prune(prune)
    if view.measure().total_tokens < spec.threshold_tokens:
        return run.nothing("below-threshold-after-prune")
    attempts = spec.policy.compaction_retries + 1
    for _ in range(attempts):
        selected = run.select(spec.retain_tokens)
        if selected is None:
            if not result.compactions:
                return run.nothing("nothing-to-compact")
            break
        if not run.compact(selected[0], selected[1], "whole-surface"):
            return result
        total = view.measure().total_tokens
        if total < spec.threshold_tokens:
            return result
    total = view.measure().total_tokens
    result.warnings.append(f"compaction still above threshold after {attempts} compaction "
                           f"attempts ({total} estimated tokens >= threshold "
                           f"{spec.threshold_tokens})")
    return result


__all__ = ["TRIGGERS", "Plan", "plan"]
