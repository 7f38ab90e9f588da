"""Counts of a schemathesis run from its ndjson event stream: requests made, answers by status class, failed
checks (every one, and distinct operation/check pairs). Printed as one line for CI logs.

    python3 counts.py [--baseline baseline.json] report.ndjson...

A failure the baseline accepts (same operation, check and failure class; schemathesis does not fail the run for it)
is listed as known, apart from the failures that count."""
import collections
import json
import sys

args = sys.argv[1:]
known_kinds = set()
if args[:1] == ["--baseline"]:
    with open(args[1], encoding="utf-8") as baseline:
        known_kinds = {(e["operation"], e["check"], e["failure"]) for e in json.load(baseline)["entries"]}
    args = args[2:]

requests = 0
statuses = collections.Counter()
failed_checks = 0
distinct = set()
known = set()
for path in args:
    with open(path, encoding="utf-8") as events:
        for line in events:
            event = json.loads(line)
            scenario = event.get("ScenarioFinished")
            if not scenario:
                continue
            recorder = scenario.get("recorder") or {}
            label = recorder.get("label", "?")
            for interaction in (recorder.get("interactions") or {}).values():
                requests += 1
                response = interaction.get("response") or {}
                code = response.get("status_code")
                statuses[f"{code // 100}xx" if isinstance(code, int) else "no answer"] += 1
            for checks in (recorder.get("checks") or {}).values():
                for check in checks:
                    if check.get("status") != "failure":
                        continue
                    failure = (check.get("failure_info") or {}).get("failure") or {}
                    kind = (failure.get("operation"), check.get("name"), failure.get("type"))
                    if kind in known_kinds:
                        known.add((label, check.get("name"), failure.get("operation")))
                        continue
                    failed_checks += 1
                    distinct.add((label, check.get("name")))

by_status = " ".join(f"{name}={count}" for name, count in sorted(statuses.items()))
print(f"fuzz: requests={requests} failures={len(distinct)} failed_checks={failed_checks} known={len(known)} ({by_status})")
for label, name in sorted(distinct):
    print(f"fuzz: failure {name} on {label}")
for label, name, operation in sorted(known):
    print(f"fuzz: known (tools/fuzz/baseline.json) {name} on {label}, after {operation}")
