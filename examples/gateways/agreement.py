#!/usr/bin/env python3
"""The agreement table of the independent failover suite and this catalogue.

Reads, for each gateway, our catalogue's verdicts
(OUT/ours-<gateway>/semantics.json, written by `semantics --json`) and the
suite's (OUT/theirs/<profile>/<gateway>.json, written by `failoverbench run`),
puts each of the suite's 16 scenarios beside the catalogue case it maps
onto, and prints one Markdown table per gateway: both verdicts, whether
they agree, and for a difference the stated policy that explains it. A
difference no stated policy explains is printed as such and makes the exit
status 1.

A stated policy is a documented difference between the two suites' rules
(a bound, a severity, what counts as the ideal outcome), never a verdict
pair written to make a table agree: each names both rules and which way it
moves a verdict, and applies only to the verdict pair it produces.

Usage: agreement.py --cases              (the 16 case ids, comma-separated)
       agreement.py --out DIR [--profile fast|full] [GATEWAY...]  (default: litellm portkey)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The suite's scenario -> our case. Same fault, same ideal outcome.
MAP = {
    "S01": "429-retry-after",
    "S02": "429-persistent",
    "S03": "500-once",
    "S04": "503-persistent",
    "S05": "reset-before-headers",
    "S06": "no-response",
    "S07": "slow-first-token",
    "S08": "stream-cut",
    "S09": "stream-stall",
    "S10": "malformed-chunk",
    "S11": "no-done",
    "S12": "context-length",
    "S13": "content-filter",
    "S14": "prefill-rejected",
    "S15": "flap",
    "S16": "accounting",
}

# Stated policies: (profile or None for both, scenario, our verdict, their
# verdict) -> the rules that differ. Only differences between the suites'
# rules belong here, each applying to the verdict pair it produces.
CONTENT_FILTER = (
    "content filter: ours requires the provider's 400 and its reason to reach the client "
    "(`reason_propagated`, required: a fallback's 200 hides why the request was refused and "
    "sends the same prompt to a second provider; a gateway's own 500 hides the reason too); "
    "theirs scores only that the same model is not retried: any error is the ideal outcome, "
    "an answer by the fallback an advisory miss"
)
NO_RESPONSE = (
    "the no-response budget: ours expects the call to end within 60 s and cuts it at 90 s "
    "(fast profile: 8 s and 10 s, the upstream holding 12 s), theirs within 100 s in both "
    "profiles (fast: a 15 s hold); a gateway that retries the silent route twice with a 30 s "
    "timeout (about 95 s) passes theirs with a note and fails ours"
)
RETRY_AFTER = (
    "Retry-After: ours requires that no second attempt goes to the primary before its "
    "Retry-After (`retry_after_honoured`, required: retrying inside the window is what gets a "
    "key throttled); theirs holds the same rule advisory (a partial when rescued, nothing when "
    "not)"
)
POLICIES: dict[tuple[str | None, str, str, str], str] = {
    (None, "S01", "fail", "safe"): RETRY_AFTER,
    (None, "S01", "fail", "partial"): RETRY_AFTER,
    (None, "S01", "fail", "pass"): RETRY_AFTER,
    (None, "S13", "fail", "partial"): CONTENT_FILTER,
    (None, "S13", "fail", "pass"): CONTENT_FILTER,
    (None, "S12", "safe", "pass"): (
        "context length: in ours the fallback has the primary's context window too, so a "
        "failover cannot help and only a configured larger-context model answers (none is "
        "configured here: a clean 400 is safe); in theirs the fallback answers any prompt, so "
        "any failover rescues"
    ),
    (None, "S06", "fail", "partial"): NO_RESPONSE,
    (None, "S06", "fail", "safe"): NO_RESPONSE,
    ("fast", "S07", "partial", "pass"): (
        "the time-to-first-token bound, fast profiles only: ours sends the first token after "
        "5 s and expects a failover within 4 s (advisory); theirs sends it after 3 s under a "
        "15 s bound, so waiting it out passes. Full profiles: 20 s first token, 15 s bound in "
        "both"
    ),
    (None, "S16", "safe", "fail"): (
        "no answer at all: ours holds a check whose subject did not happen as not applicable "
        "(no answer, so no model name to check) and scores the clean error `safe`; theirs fails "
        "`reports_fallback_model` whenever the client got no answer naming the fallback"
    ),
}

VERDICTS = {"pass", "partial", "safe", "fail", "inconclusive", "na", "not run"}


def policy(profile: str, sid: str, ours: str, theirs: str) -> str | None:
    return POLICIES.get((profile, sid, ours, theirs)) or POLICIES.get((None, sid, ours, theirs))


def load(path: Path) -> dict:
    """The JSON at `path`, or {} when it is missing or not whole JSON (a
    run cut short), which the table then reports as missing."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def ours_of(out: Path, gateway: str) -> dict[str, tuple[str, str]]:
    report = load(out / f"ours-{gateway}" / "semantics.json")
    for system in report.get("systems", []):
        if system.get("system") == gateway:
            return {c["case"]: (c["verdict"], c.get("reason", "")) for c in system["cases"]}
    return {}


def theirs_of(out: Path, gateway: str, profile: str) -> dict[str, tuple[str, str]]:
    report = load(out / "theirs" / profile / f"{gateway}.json")
    return {s["id"]: (s["verdict"].lower(), s.get("reason", "")) for s in report.get("scenarios", [])}


def cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, line breaks and backticks out."""
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ").replace("`", "'")


def verdict(v: object) -> str:
    """A verdict as read, or "unknown" for anything that is not one."""
    v = str(v).lower()
    return v if v in VERDICTS else "unknown"


def table(out: Path, gateway: str, profile: str) -> int:
    ours, theirs = ours_of(out, gateway), theirs_of(out, gateway, profile)
    if not ours or not theirs:
        print(f"## {gateway}\n\nmissing: {'ours' if not ours else ''} {'theirs' if not theirs else ''}\n")
        return 1
    agree = explained = unexplained = 0
    rows = []
    for sid, case in MAP.items():
        o, o_why = ours.get(case, ("not run", ""))
        t, t_why = theirs.get(sid, ("not run", ""))
        o, t = verdict(o), verdict(t)
        stated = policy(profile, sid, o, t)
        if o == t:
            agree += 1
            said, why = "yes", ""
        elif stated:
            explained += 1
            said, why = "no, by policy", stated
        else:
            unexplained += 1
            said = "no, UNEXPLAINED"
            why = f"ours: {o_why[:160]} / theirs: {t_why[:160]}"
        rows.append(f"| {sid} | `{case}` | {o} | {t} | {said} | {cell(why)} |")
    print(f"## {gateway}\n")
    print("| scenario | our case | ours | theirs | agree | why they differ |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(
        f"\n{gateway}: agree on {agree} of {len(MAP)}; {explained} difference(s) explained by a stated policy; {unexplained} unexplained\n"
    )
    return 1 if unexplained else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--cases"]:
        print(",".join(MAP.values()))
        return 0
    if argv[:1] != ["--out"] or len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    rest = argv[2:]
    profile = "fast"
    if rest[:1] == ["--profile"] and len(rest) >= 2:
        profile, rest = rest[1], rest[2:]
    gateways = rest or ["litellm", "portkey"]
    status = 0
    for g in gateways:
        status |= table(out, g, profile)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
