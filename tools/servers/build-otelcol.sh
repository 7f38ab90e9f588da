#!/usr/bin/env bash
# Build (once) the OpenTelemetry Collector described by tools/servers/otelcol/builder-config.yaml with the
# pinned collector builder, into $SERVERS_CACHE/otelcol (default <repo>/.cache/servers), and print the
# binary's path. Rebuilt only when the manifest or the Go version changes, like the FerretDB binary.
#
#   tools/servers/build-otelcol.sh            # prints .../otelcol/otelcol-udp
#
# The first build downloads the modules from the Go module proxy and compiles a few hundred packages:
# 10-30 minutes on 2 busy cores. The log is $CACHE/otelcol/build.log.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${SERVERS_CACHE:-$ROOT/.cache/servers}/otelcol"
BUILDER_VERSION=v0.155.0 # keep equal to the component versions in the manifest
MANIFEST="$HERE/otelcol/builder-config.yaml"
BIN="$CACHE/otelcol-udp"

log() { printf '[otelcol] %s\n' "$*" >&2; }
command -v go >/dev/null 2>&1 || { log "ERROR: 'go' not found on PATH (need Go 1.26+)"; exit 1; }

key=$( (cat "$MANIFEST"; echo "$BUILDER_VERSION"; go env GOVERSION) | sha256sum | cut -c1-16)
if [ -x "$BIN" ] && [ "$(cat "$BIN.key" 2>/dev/null || true)" = "$key" ]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$CACHE"
# One build at a time (two test runs starting together would otherwise both build).
exec 8>"$CACHE/build.lock"
flock -w 3600 8 || { log "ERROR: another build holds $CACHE/build.lock"; exit 1; }
if [ -x "$BIN" ] && [ "$(cat "$BIN.key" 2>/dev/null || true)" = "$key" ]; then echo "$BIN"; exit 0; fi

log "building the collector (first time: 10-30 min); log: $CACHE/build.log"
started=$(date +%s)
{
  GOBIN="$CACHE/bin" go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
  rm -rf "$CACHE/src"
  # The builder writes the generated main package and go.mod to src/. Its own `go mod tidy` fails: tidy also
  # resolves the components' test-only imports, and the module proxy refuses one of them
  # (contrib extension/encoding/otlpencodingextension v0.155.0: 403). `tidy -e` records everything the build
  # needs and skips what only tests would, then a plain `go build`.
  # The builder writes go.mod before its tidy step fails, so its exit status is ignored here; the build below
  # fails plainly if the generated sources are incomplete.
  "$CACHE/bin/builder" --config "$MANIFEST" --output-path "$CACHE/src" --skip-compilation || true
  test -f "$CACHE/src/go.mod"
  (cd "$CACHE/src" && go mod tidy -e && go build -trimpath -ldflags=-s -o "$BIN.tmp" .)
} >"$CACHE/build.log" 2>&1 || { tail -n 40 "$CACHE/build.log" >&2; log "ERROR: build failed (log: $CACHE/build.log)"; exit 1; }
mv "$BIN.tmp" "$BIN"
echo "$key" >"$BIN.key"
log "built in $(( $(date +%s) - started )) s: $BIN"
echo "$BIN"
