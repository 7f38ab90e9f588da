#!/usr/bin/env bash
# Start a real OpenTelemetry Collector on loopback with deploy/otel-collector.yaml (overlay
# tools/servers/otelcol/ci.yaml: traces to a file, free ports), run a command with
#   OTELCOL_OTLP_ENDPOINT=http://127.0.0.1:<port>      (OTLP/http, what apps take as OTEL_EXPORTER_OTLP_ENDPOINT)
#   OTELCOL_TRACES_FILE=<run dir>/traces.jsonl           (the file exporter's output, OTLP JSON lines)
#   OTELCOL_METRICS_URL=http://127.0.0.1:<port>/metrics  (span metrics in Prometheus format)
# exported, then stop the collector and exit with the command's exit code.
#
#   tools/servers/with-otelcol.sh <command> [args...]
#
# The collector is built once by tools/servers/build-otelcol.sh into $SERVERS_CACHE/otelcol (default
# <repo>/.cache/servers). OTELCOL_SKIP=1 runs the command without a collector (its tests then say they skipped).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PROBE="$HERE/probe.py"
log() { printf '[otelcol] %s\n' "$*" >&2; }

if [ $# -eq 0 ]; then sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; fi
if [ "${OTELCOL_SKIP:-0}" = 1 ]; then log "OTELCOL_SKIP=1: no collector"; exec "$@"; fi

BIN=$(bash "$HERE/build-otelcol.sh")
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/otelcol-run-XXXX")
export OTELCOL_OTLP_PORT=$(python3 "$PROBE" free-port)
export OTELCOL_GRPC_PORT=$(python3 "$PROBE" free-port)
export OTELCOL_METRICS_PORT=$(python3 "$PROBE" free-port)
export OTELCOL_HEALTH_PORT=$(python3 "$PROBE" free-port)
export OTELCOL_TRACES_FILE="$RUN_DIR/traces.jsonl"

"$BIN" --config "$ROOT/deploy/otel-collector.yaml" --config "$HERE/otelcol/ci.yaml" </dev/null >"$RUN_DIR/collector.log" 2>&1 &
COLLECTOR_PID=$!
CMD_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$CMD_PID" ] && kill -TERM "$CMD_PID" 2>/dev/null && wait "$CMD_PID" 2>/dev/null
  if kill -TERM "$COLLECTOR_PID" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$COLLECTOR_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$COLLECTOR_PID" 2>/dev/null || true
    wait "$COLLECTOR_PID" 2>/dev/null || true
  fi
  if [ "$rc" -eq 0 ]; then rm -rf "$RUN_DIR"; else log "logs kept in $RUN_DIR"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

deadline=$(($(date +%s) + 60))
until python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$OTELCOL_HEALTH_PORT/', timeout=1)" 2>/dev/null; do
  kill -0 "$COLLECTOR_PID" 2>/dev/null || { tail -n 40 "$RUN_DIR/collector.log" >&2; log "ERROR: the collector exited during start-up"; exit 1; }
  [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$RUN_DIR/collector.log" >&2; log "ERROR: the collector is not ready after 60 s"; exit 1; }
  sleep 0.2
done
export OTELCOL_OTLP_ENDPOINT="http://127.0.0.1:$OTELCOL_OTLP_PORT"
export OTELCOL_METRICS_URL="http://127.0.0.1:$OTELCOL_METRICS_PORT/metrics"
log "collector ready: OTLP/http $OTELCOL_OTLP_ENDPOINT, metrics $OTELCOL_METRICS_URL, traces $OTELCOL_TRACES_FILE"
"$@" <&0 &
CMD_PID=$!
rc=0
wait "$CMD_PID" || rc=$?
CMD_PID=""
exit "$rc"
