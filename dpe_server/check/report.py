"""What a check found: passed, failed and not-checked items, printed as text, with an exit code.

Every outcome names a stable rule id (`L2.element_count`, `err.4204.format`...). Passes are
counted per rule; each failure is kept with the URI, what was expected and what came back;
not-checked items say why they could not be observed. Exit codes: 0 when nothing failed, 1
when something did, 2 when the target could not be reached at all.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, ParamSpec

P = ParamSpec("P")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNREACHABLE = 2


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a payload breaks a rule."""

    expected: str
    got: str


class Rule(Generic[P]):
    """A check of one SPEC rule: a function returning the problems it finds (none = pass)."""

    def __init__(self, rule_id: str, text: str, fn: Callable[P, list[Problem]]) -> None:
        self.id = rule_id
        self.text = text
        self.fn = fn
        RULES[rule_id] = text

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> list[Problem]:
        return self.fn(*args, **kwargs)


RULES: dict[str, str] = {}
"""Every rule id the checker knows, with what it checks (for the docs and `--list-rules`)."""


def rule(rule_id: str, text: str) -> Callable[[Callable[P, list[Problem]]], Rule[P]]:
    """Register a rule function under a stable id."""

    def wrap(fn: Callable[P, list[Problem]]) -> Rule[P]:
        return Rule(rule_id, text, fn)

    return wrap


def problem_if(bad: bool, expected: str, got: object) -> list[Problem]:
    """`[Problem]` when `bad`, else `[]`: the one-liner most rules are made of."""
    return [Problem(expected, _short(got))] if bad else []


def _short(value: object, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Failure:
    era: str
    rule: str
    uri: str
    expected: str
    got: str


@dataclass(frozen=True, slots=True)
class NotChecked:
    era: str
    rule: str
    why: str


@dataclass
class Report:
    """Outcomes of one run, over one or both protocol eras."""

    target: str = ""
    era: str = ""
    """The era label outcomes are recorded under (set by the runner)."""
    passed: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unreachable: bool = False

    def check(self, check: Rule[P], uri: str, *args: P.args, **kwargs: P.kwargs) -> bool:
        """Run `check` on a payload read from `uri`; record a pass or its problems."""
        return self.record(check.id, uri, check(*args, **kwargs))

    def record(self, rule_id: str, uri: str, problems: Iterable[Problem]) -> bool:
        found = list(problems)
        if not found:
            self.passed[(self.era, rule_id)] += 1
            return True
        for p in found:
            self.failures.append(Failure(self.era, rule_id, uri, p.expected, p.got))
        return False

    def fail(self, rule_id: str, uri: str, expected: str, got: object) -> None:
        self.failures.append(Failure(self.era, rule_id, uri, expected, _short(got)))

    def skip(self, rule_id: str, why: str) -> None:
        self.not_checked.append(NotChecked(self.era, rule_id, why))

    def note(self, text: str) -> None:
        self.notes.append(f"[{self.era}] {text}" if self.era else text)

    @property
    def exit_code(self) -> int:
        if self.unreachable:
            return EXIT_UNREACHABLE
        return EXIT_FAILED if self.failures else EXIT_OK

    def failed_rules(self) -> set[str]:
        return {f.rule for f in self.failures}

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "notes": self.notes,
            "passed": [
                {"era": era, "rule": r, "count": n} for (era, r), n in sorted(self.passed.items())
            ],
            "failed": [_failure_json(f) for f in self.failures],
            "not_checked": [{"era": n.era, "rule": n.rule, "why": n.why} for n in self.not_checked],
            "exit_code": self.exit_code,
        }


def _failure_json(f: Failure) -> dict[str, str]:
    return {"era": f.era, "rule": f.rule, "uri": f.uri, "expected": f.expected, "got": f.got}


def render_text(report: Report, *, max_failures_per_rule: int = 10, verbose: bool = False) -> str:
    """The report as a person reads it: notes, failures, not-checked, passed, one total line."""
    lines = [f"dpe-server check: {report.target}"]
    lines += [f"  {n}" for n in report.notes]
    if report.failures:
        lines += ["", f"FAILED ({len(report.failures)})"]
        shown: Counter[tuple[str, str]] = Counter()
        for f in report.failures:
            key = (f.era, f.rule)
            shown[key] += 1
            if shown[key] == max_failures_per_rule + 1:
                lines.append(f"  [{f.era}] {f.rule}: more failures of this rule not shown")
            if shown[key] > max_failures_per_rule:
                continue
            lines.append(f"  [{f.era}] {f.rule}  {f.uri}")
            lines.append(f"      expected: {f.expected}")
            lines.append(f"      got:      {f.got}")
    if report.not_checked:
        lines += ["", f"NOT CHECKED ({len(report.not_checked)})"]
        lines += [f"  [{n.era}] {n.rule}: {n.why}" for n in report.not_checked]
    rules = {r for (_, r) in report.passed}
    total = sum(report.passed.values())
    lines += ["", f"PASSED ({total} checks of {len(rules)} rules)"]
    eras = sorted(({e for (e, _) in report.passed} | {f.era for f in report.failures}) - {""})
    for era in eras:
        ok = sum(n for (e, _), n in report.passed.items() if e == era)
        bad = sum(1 for f in report.failures if f.era == era)
        lines.append(f"  [{era}] {ok} passed, {bad} failed")
    if verbose:
        lines += [f"  [{era}] {r}: {n}" for (era, r), n in sorted(report.passed.items())]
    failed_rules = len({(f.era, f.rule) for f in report.failures})
    verdict = "FAIL" if report.exit_code else "OK"
    if report.unreachable:
        verdict = "UNREACHABLE"
    lines += [
        "",
        f"{verdict}: {total} passed, {len(report.failures)} failed ({failed_rules} rules), "
        f"{len(report.not_checked)} not checked",
    ]
    return "\n".join(lines) + "\n"
