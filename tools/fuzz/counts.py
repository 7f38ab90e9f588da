"""Counts of a schemathesis run from its ndjson event stream: requests made, answers by status class, failed
checks (every one, and distinct operation/check pairs). Printed as one line for CI logs."""
import collections
import json
import sys

requests = 0
statuses = collections.Counter()
failed_checks = 0
distinct = set()
for path in sys.argv[1:]:
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
                    if check.get("status") == "failure":
                        failed_checks += 1
                        distinct.add((label, check.get("name")))

by_status = " ".join(f"{name}={count}" for name, count in sorted(statuses.items()))
print(f"fuzz: requests={requests} failures={len(distinct)} failed_checks={failed_checks} ({by_status})")
for label, name in sorted(distinct):
    print(f"fuzz: failure {name} on {label}")
