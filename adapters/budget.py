"""Budget awareness: will converted entries fit the protocol's limits? Said before anything is
written, with the numbers (ADP-GEN-008)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dshkit.reference.memory.inputs import BUCKETS, MAX_SEED
from dshkit.reference.text import units

from .entries import Entry
from .errors import BUDGET, OPTION, AdapterError

Bucket = tuple[str, str]


def usage_of(entries: Iterable[Entry | Mapping[str, Any]]) -> dict[Bucket, int]:
    """Units of text per bucket."""
    usage: dict[Bucket, int] = {}
    for entry in entries:
        if isinstance(entry, Entry):
            bucket, text = (entry.track, entry.scope), entry.text
        else:
            bucket, text = (str(entry["track"]), str(entry["scope"])), str(entry["text"])
        usage[bucket] = usage.get(bucket, 0) + units(text)
    return usage


def limits_of(budgets: Any) -> dict[Bucket, int]:
    """The four limits of a budgets configuration (``{"user": {"userGlobal": .., ...}}``)."""
    limits: dict[Bucket, int] = {}
    for track in ("user", "agent"):
        layer = budgets.get(track) if isinstance(budgets, dict) else None
        for key, scope in (("userGlobal", "user-global"), ("workspace", "workspace")):
            value = layer.get(key) if isinstance(layer, dict) else None
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise AdapterError(OPTION, "budgets need a positive integer limit for every "
                                   "bucket", key=f"budgets/{track}/{key}")
            limits[(track, scope)] = value
    return limits


def check_budgets(additions: Mapping[Bucket, int], limits: Mapping[Bucket, int],
                  used: Mapping[Bucket, int]) -> None:
    """Refuse, naming the first bucket (in the protocol's order) that would overflow."""
    for bucket in BUCKETS:
        addition = additions.get(bucket, 0)
        now = used.get(bucket, 0)
        if addition > 0 and now + addition > limits[bucket]:
            raise AdapterError(
                BUDGET, f"{bucket[0]}/{bucket[1]} would hold {now + addition} units, over its "
                f"limit of {limits[bucket]} ({now} already used); consolidate or leave out "
                "entries, or raise the limit", key="budgets", track=bucket[0], scope=bucket[1],
                used=now, limit=limits[bucket], needed=now + addition, unit="units")


def check_seed_size(count: int) -> None:
    if count > MAX_SEED:
        raise AdapterError(BUDGET, f"{count} entries are more than one seed takes ({MAX_SEED}); "
                           "split the file", key="entries", limit=MAX_SEED, needed=count,
                           unit="entries")
