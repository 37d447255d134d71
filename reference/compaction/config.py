"""Configuration of the basic backend and of the tool-result pruner (spec chapter
``compaction/selection`` and ``compaction/pruner``): defaults, validation, the exact-target
policy merge and the scaling of ratios to a context window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..json.codec import MAX_SAFE_INTEGER, js_number
from .errors import CompactionError

DEFAULT_THRESHOLD_RATIO = 0.8
DEFAULT_RETAIN_RATIO = 0.16
DEFAULT_MAX_TOKENS = 8192
DEFAULT_COMPACTION_RETRIES = 1
DEFAULT_MAX_OVERFLOW_RETRIES = 1

_POLICY_KEYS = ("thresholdRatio", "retainRatio", "retainTokens", "summarizationProvider",
                "summarizationModel", "maxTokens", "compactionRetries", "maxOverflowRetries")
_CONFIG_KEYS = frozenset((*_POLICY_KEYS, "modelPolicies", "auto"))
_MODEL_POLICY_KEYS = frozenset(("provider", "model", *_POLICY_KEYS))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_integral(value: Any) -> bool:
    return _number(value) and float(value).is_integer()


def show_value(value: Any) -> str:
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _bad(requirement: str, message: str, code: str = "CMP_CONFIG_INVALID",
         **detail: Any) -> CompactionError:
    return CompactionError(code, requirement, message, **detail)


@dataclass(frozen=True, slots=True)
class Policy:
    """One resolved policy: the defaults, or the defaults merged with an exact-target override."""

    threshold_ratio: float
    retain_ratio: float | None
    retain_tokens: int | None
    summarization_provider: str
    summarization_model: str
    max_tokens: int
    compaction_retries: int
    max_overflow_retries: int


@dataclass(frozen=True, slots=True)
class ModelPolicy:
    provider: str
    model: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BasicConfig:
    defaults: Policy
    model_policies: tuple[ModelPolicy, ...]
    auto: bool

    def to_json(self) -> dict[str, Any]:
        d = self.defaults
        out: dict[str, Any] = {"thresholdRatio": d.threshold_ratio}
        if d.retain_tokens is not None:
            out["retainTokens"] = d.retain_tokens
        else:
            out["retainRatio"] = d.retain_ratio
        out.update({
            "summarizationProvider": d.summarization_provider,
            "summarizationModel": d.summarization_model,
            "maxTokens": d.max_tokens,
            "compactionRetries": d.compaction_retries,
            "maxOverflowRetries": d.max_overflow_retries,
            "modelPolicies": [{"provider": p.provider, "model": p.model, **p.fields}
                              for p in self.model_policies],
            "auto": self.auto,
        })
        return out


@dataclass(frozen=True, slots=True)
class PressureSpec:
    """CMP-CFG-005: a policy scaled to one context window."""

    provider: str
    model: str
    context_window: int
    threshold_tokens: int
    retain_tokens: int
    policy: Policy

    def to_json(self) -> dict[str, Any]:
        return {"target": {"provider": self.provider, "model": self.model},
                "contextWindow": self.context_window, "thresholdTokens": self.threshold_tokens,
                "retainTokens": self.retain_tokens}


def _check_keys(raw: dict[str, Any], allowed: frozenset[str], name: str) -> None:
    for key in raw:
        if key not in allowed:
            raise _bad("CMP-CFG-001", f'{name}: unknown key "{key}"', "CMP_CONFIG_UNKNOWN_KEY",
                       key=key)


def _check_policy(raw: dict[str, Any], name: str) -> None:
    """CMP-CFG-002 / CMP-CFG-003: the value rules shared by defaults and overrides."""
    for key in ("thresholdRatio", "retainRatio"):
        if key in raw:
            value = raw[key]
            if not _number(value) or not 0 < value <= 1:
                raise _bad("CMP-CFG-002", f"{name}.{key} ({show_value(value)}) is not a number in "
                           "(0, 1]", key=key)
    if "retainTokens" in raw:
        value = raw["retainTokens"]
        if not is_integral(value) or value < 0:
            raise _bad("CMP-CFG-002", f"{name}.retainTokens ({show_value(value)}) is not a "
                       "non-negative integer", key="retainTokens")
    if "retainRatio" in raw and "retainTokens" in raw:
        raise _bad("CMP-CFG-003", f"{name}: retainRatio and retainTokens exclude each other",
                   "CMP_CONFIG_RETENTION")
    if "maxTokens" in raw:
        value = raw["maxTokens"]
        if not is_integral(value) or value <= 0:
            raise _bad("CMP-CFG-002", f"{name}.maxTokens ({show_value(value)}) is not a positive "
                       "integer", key="maxTokens")
    for key in ("compactionRetries", "maxOverflowRetries"):
        if key in raw:
            value = raw[key]
            if not is_integral(value) or value < 0:
                raise _bad("CMP-CFG-002", f"{name}.{key} ({show_value(value)}) is not a "
                           "non-negative integer", key=key)
    provider, model = raw.get("summarizationProvider"), raw.get("summarizationModel")
    for key, value in (("summarizationProvider", provider), ("summarizationModel", model)):
        if key in raw and not isinstance(value, str):
            raise _bad("CMP-CFG-002", f"{name}.{key} is not a string", key=key)
    paired = "summarizationProvider" in raw or "summarizationModel" in raw
    if paired and (not isinstance(provider, str) or not isinstance(model, str)
                   or (provider == "") != (model == "")):
        raise _bad("CMP-CFG-004", f"{name}: summarizationProvider and summarizationModel "
                       "go together: both empty or both non-empty", "CMP_CONFIG_PAIR")


def _retention(raw: dict[str, Any], inherited: tuple[float | None, int | None]
               ) -> tuple[float | None, int | None]:
    if "retainTokens" in raw:
        return None, int(raw["retainTokens"])
    if "retainRatio" in raw:
        return float(raw["retainRatio"]), None
    return inherited


def _ratio_rule(threshold: float, retention: tuple[float | None, int | None], name: str) -> None:
    ratio = retention[0]
    if ratio is not None and ratio >= threshold:
        raise _bad("CMP-CFG-003", f"{name}: retainRatio ({show_value(ratio)}) is not below the "
                   f"thresholdRatio ({show_value(threshold)})", "CMP_CONFIG_RETENTION")


def resolve_config(raw: Any = None) -> BasicConfig:
    """CMP-CFG-001..004: validate a ``BasicCompactionConfig`` and fill in the defaults."""
    name = "BasicCompactionConfig"
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _bad("CMP-CFG-001", f"{name} must be an object")
    _check_keys(raw, _CONFIG_KEYS, name)
    _check_policy(raw, name)
    if "auto" in raw and not isinstance(raw["auto"], bool):
        raise _bad("CMP-CFG-002", f"{name}.auto is not a boolean", key="auto")
    threshold = float(raw.get("thresholdRatio", DEFAULT_THRESHOLD_RATIO))
    retention = _retention(raw, (DEFAULT_RETAIN_RATIO, None))
    _ratio_rule(threshold, retention, name)
    policies = _model_policies(raw.get("modelPolicies"), name)
    for index, policy in enumerate(policies):
        _ratio_rule(float(policy.fields.get("thresholdRatio", threshold)),
                    _retention(policy.fields, retention), f"{name}.modelPolicies[{index}]")
    defaults = Policy(
        threshold_ratio=threshold,
        retain_ratio=retention[0],
        retain_tokens=retention[1],
        summarization_provider=str(raw.get("summarizationProvider", "")),
        summarization_model=str(raw.get("summarizationModel", "")),
        max_tokens=int(raw.get("maxTokens", DEFAULT_MAX_TOKENS)),
        compaction_retries=int(raw.get("compactionRetries", DEFAULT_COMPACTION_RETRIES)),
        max_overflow_retries=int(raw.get("maxOverflowRetries", DEFAULT_MAX_OVERFLOW_RETRIES)),
    )
    return BasicConfig(defaults=defaults, model_policies=tuple(policies),
                       auto=bool(raw.get("auto", True)))


def _model_policies(raw: Any, name: str) -> list[ModelPolicy]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _bad("CMP-CFG-002", f"{name}.modelPolicies is not an array", key="modelPolicies")
    out: list[ModelPolicy] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(raw):
        where = f"{name}.modelPolicies[{index}]"
        if not isinstance(entry, dict):
            raise _bad("CMP-CFG-002", f"{where} is not an object", key="modelPolicies")
        _check_keys(entry, _MODEL_POLICY_KEYS, where)
        for key in ("provider", "model"):
            if not isinstance(entry.get(key), str) or entry[key] == "":
                raise _bad("CMP-CFG-002", f"{where}.{key} is not a non-empty string", key=key)
        _check_policy(entry, where)
        pair = (entry["provider"], entry["model"])
        if pair in seen:
            raise _bad("CMP-CFG-002", f"{name}: more than one model policy for "
                       f"{pair[0]}/{pair[1]}", "CMP_CONFIG_DUPLICATE_POLICY")
        seen.add(pair)
        fields = {k: v for k, v in entry.items() if k not in ("provider", "model")}
        out.append(ModelPolicy(provider=pair[0], model=pair[1], fields=fields))
    return out


def target_policy(config: BasicConfig, provider: str, model: str) -> Policy:
    """CMP-CFG-005: the defaults merged with the override whose provider and model both match
    exactly; a retention form in the override replaces the inherited one as a whole, and so
    does a summarization pair."""
    d = config.defaults
    override: dict[str, Any] = {}
    for policy in config.model_policies:
        if policy.provider == provider and policy.model == model:
            override = policy.fields
            break
    ratio, tokens = _retention(override, (d.retain_ratio, d.retain_tokens))
    return Policy(
        threshold_ratio=float(override.get("thresholdRatio", d.threshold_ratio)),
        retain_ratio=ratio,
        retain_tokens=tokens,
        summarization_provider=str(override.get("summarizationProvider",
                                                d.summarization_provider)),
        summarization_model=str(override.get("summarizationModel", d.summarization_model)),
        max_tokens=int(override.get("maxTokens", d.max_tokens)),
        compaction_retries=int(override.get("compactionRetries", d.compaction_retries)),
        max_overflow_retries=int(override.get("maxOverflowRetries", d.max_overflow_retries)),
    )


def scale(policy: Policy, provider: str, model: str, context_window: Any) -> PressureSpec:
    """CMP-CFG-006: thresholdTokens = floor(window x thresholdRatio); retainTokens =
    floor(window x retainRatio) or the absolute value; retainTokens must stay below the
    threshold."""
    target = f"{provider}/{model}"
    if not is_integral(context_window) or context_window <= 0 or context_window > MAX_SAFE_INTEGER:
        raise _bad("CMP-CFG-006", f"{target}: contextWindow ({show_value(context_window)}) is not "
                   "a positive integer", "CMP_PRESSURE_CONFIG", target=target)
    window = int(context_window)
    threshold = math.floor(window * policy.threshold_ratio)
    if policy.retain_tokens is not None:
        retain = policy.retain_tokens
    else:
        retain = math.floor(window * (policy.retain_ratio or 0.0))
    if retain >= threshold:
        raise _bad("CMP-CFG-006", f"{target}: retainTokens ({retain}) is not below the "
                   f"threshold tokens ({threshold})", "CMP_PRESSURE_CONFIG", target=target)
    return PressureSpec(provider=provider, model=model, context_window=window,
                        threshold_tokens=threshold, retain_tokens=retain, policy=policy)


__all__ = ["BasicConfig", "ModelPolicy", "Policy", "PressureSpec", "resolve_config", "scale",
           "target_policy"]
