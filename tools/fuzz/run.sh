#!/usr/bin/env bash
# Fuzzes the running embedded system with schemathesis against its own /openapi.json (issue 9).
#
#   bash tools/fuzz/run.sh            # builds the bundle, starts it on a free port with a temporary DATA_DIR
#
# Every check is on. The run fails on any 5xx, any answer that violates the document, any valid request that is
# refused, and any other check's finding. Budget: FUZZ_MAX_EXAMPLES test cases per operation and phase (default
# 50; >= 3,000 requests in all), FUZZ_WORKERS concurrent workers (default 2). The counts (requests, failures)
# are printed at the end. Reports (JUnit, ndjson) land in .cache/fuzz/report.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

max_examples="${FUZZ_MAX_EXAMPLES:-50}"
workers="${FUZZ_WORKERS:-2}"
seed="${FUZZ_SEED:-9}"
min_requests="${FUZZ_MIN_REQUESTS:-3000}"

bin="$(bash tools/fuzz/install.sh)"
node tools/build.mjs embedded gateway >/dev/null

data_dir="$(mktemp -d -t udp-fuzz-XXXXXX)"
log="$data_dir/embedded.log"
report=".cache/fuzz/report"
rm -rf "$report" && mkdir -p "$report"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$data_dir"
}
trap cleanup EXIT

# PORT=0: the OS picks a free port; the host prints the address it got.
# Rate limits out of reach: the fuzzer sends as fast as it can as two users (the limits have their own API tests).
RATE_LIMIT_PER_USER=1000000000 RATE_LIMIT_PER_ADDRESS=1000000000 \
  DATA_DIR="$data_dir" PORT=0 LOG_LEVEL=error node dist/embedded/main.js 2>"$log" &
pid=$!
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's#.*gateway on http://localhost:\([0-9]*\).*#\1#p' "$log" | head -1)"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "fuzz: the embedded system did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "fuzz: no gateway address after 30 s" >&2; exit 1; }
base="http://127.0.0.1:$port"
echo "fuzz: embedded system on $base (DATA_DIR $data_dir), schemathesis $("$bin/schemathesis" --version | awk '{print $NF}')"

# Two users, with tokens signed by the secret the system just created in its DATA_DIR, in a Web Fuzzing Commons
# auth file: schemathesis sends each operation as one of them and, for object_level_authorization, replays a
# user's reads of their own data as the other (which must not get it).
auth="$data_dir/fuzz-auth.json"
{
  printf '{"schemaVersion":"0.2.0","auth":['
  sep=""
  for user in fuzz-alice fuzz-bob; do
    token="$(DATA_DIR="$data_dir" node dist/apps/gateway/token.js "$user")"
    printf '%s{"name":"%s","fixedHeaders":[{"name":"Authorization","value":"Bearer %s"}]}' "$sep" "$user" "$token"
    sep=","
  done
  printf ']}'
} > "$auth"

status=0
"$bin/schemathesis" --config-file "$(dirname "${BASH_SOURCE[0]}")/schemathesis.toml" run "$base/openapi.json" \
  --checks all \
  --auth-wfc "$auth" \
  --max-examples "$max_examples" \
  --workers "$workers" \
  --seed "$seed" \
  --generation-database none \
  --request-timeout 20 \
  --suppress-health-check all \
  --no-color \
  --output-truncate true \
  --baseline "$(dirname "${BASH_SOURCE[0]}")/baseline.json" \
  --report junit,ndjson --report-dir "$report" >"$report/schemathesis.log" 2>&1 || status=$?

# schemathesis closes its output the way pytest does ("=== 1 warning in 58.76s ==="), a line CI log readers take
# for a test run's closing line. Its full output stays in the report directory; the log shows its summary without
# those banners, and everything when it failed.
if [ "$status" -ne 0 ]; then
  cat "$report/schemathesis.log"
else
  sed -n '/SUMMARY/,$p' "$report/schemathesis.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | grep -v '^==='
fi

kill -0 "$pid" 2>/dev/null || { echo "fuzz: the embedded system died during the run" >&2; cat "$log" >&2; status=1; }

# Counts from the event stream: every request schemathesis made, and every distinct failure it reported.
counts="$(python3 tools/fuzz/counts.py --baseline tools/fuzz/baseline.json "$report/"*.ndjson)"
echo "$counts"
requests="$(echo "$counts" | sed -n 's/.*requests=\([0-9]*\).*/\1/p')"
if [ "${requests:-0}" -lt "$min_requests" ]; then
  echo "fuzz: only ${requests:-0} requests, below the budget of $min_requests" >&2
  status=1
fi
exit "$status"
