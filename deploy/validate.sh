#!/usr/bin/env bash
# Validates the deployment files offline (no Docker engine, no cluster): docker-compose.yml against the
# compose specification (with Prometheus scraping the collector and Grafana's provisioning and dashboards), the
# Kubernetes manifests by building their kustomizations and strictly decoding every
# object into the k8s.io/api types, the collector configuration, and the cross-references between them and
# the apps. See docs/deployment.md, "Validation".
#
#   bash deploy/validate.sh              # validate; exit 1 on any problem
#   bash deploy/validate.sh -v           # print every check
#   bash deploy/validate.sh --self-test  # also prove that deliberately broken copies are refused
#
# The validator (deploy/validate, Go) is built once into .cache/deploy-validate and rebuilt only when its
# sources change; Go modules come from the module proxy on the first run (GOMODCACHE under .cache as well).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/deploy/validate"
CACHE="$ROOT/.cache/deploy-validate"
BIN="$CACHE/bin/validate"
started=$(date +%s%N)

verbose=() self_test=0
for arg in "$@"; do
  case "$arg" in
    -v|--verbose) verbose=(-v) ;;
    --self-test) self_test=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

if ! command -v go >/dev/null 2>&1; then
  echo "deploy/validate.sh needs Go (>= 1.24) to build the validator: https://go.dev/dl/" >&2
  exit 2
fi

export GOCACHE="$CACHE/go-build" GOMODCACHE="${GOMODCACHE:-$CACHE/gomod}" GOFLAGS="-mod=readonly -modcacherw" CGO_ENABLED=0
mkdir -p "$CACHE/bin"

# Rebuild when the sources or the Go version change.
stamp="$( (go version; cd "$SRC" && cat go.mod go.sum ./*.go) | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$BIN" || "$(cat "$CACHE/bin/stamp" 2>/dev/null)" != "$stamp" ]]; then
  echo "building the validator (deploy/validate) into ${CACHE#"$ROOT"/} ..."
  (cd "$SRC" && go build -trimpath -o "$BIN.tmp" .)
  mv "$BIN.tmp" "$BIN"
  echo "$stamp" > "$CACHE/bin/stamp"
fi

status=0
"$BIN" -root "$ROOT" "${verbose[@]}" compose k8s otel || status=$?

if [[ $self_test == 1 && $status == 0 ]]; then
  echo
  echo "== self-test: each deliberately broken copy must be refused"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # copy <name> <file> <sed expression>: a copy of the deployment files with one mistake.
  broken() {
    local name="$1" file="$2" expr="$3" dir="$work/$1"
    mkdir -p "$dir/apps"
    cp -R "$ROOT/Dockerfile" "$ROOT/docker-compose.yml" "$ROOT/docker-compose.postgres.yml" "$dir/"
    mkdir -p "$dir/deploy" && cp -R "$ROOT/deploy/k8s" "$ROOT/deploy/docker" "$ROOT/deploy/grafana" "$ROOT/deploy/prometheus" "$ROOT/deploy/otel-collector.yaml" "$dir/deploy/"
    (cd "$ROOT" && find apps -path '*/src/main.ts' -o -path 'apps/gateway/src/config.ts') | while read -r f; do
      mkdir -p "$dir/$(dirname "$f")" && cp "$ROOT/$f" "$dir/$f"
    done
    sed -i -e "$expr" "$dir/$file"
    if cmp -s "$ROOT/$file" "$dir/$file"; then echo "  self-test $name: the mutation changed nothing" >&2; return 1; fi
    if "$BIN" -root "$dir" >"$dir.log" 2>&1; then
      echo "  FAIL  $name: accepted, should have been refused"; return 1
    fi
    echo "  ok    $name: refused ($(grep -m1 -E '^  FAIL' "$dir.log" | sed 's/^  FAIL  //' | cut -c1-150))"
  }
  failed=0
  broken k8s-misspelled-field deploy/k8s/base/gateway.yaml 's/readinessProbe:/readinesProbe:/' || failed=1
  broken k8s-wrong-target-port deploy/k8s/base/history-svc.yaml 's/targetPort: http/targetPort: htp/' || failed=1
  broken k8s-unknown-secret deploy/k8s/base/profile-svc.yaml 's/name: udp-secrets/name: udp-secret/' || failed=1
  broken k8s-dev-misspelled deploy/k8s/dev/servers.yaml '0,/volumeClaimTemplates:/s//volumeClaimTemplate:/' || failed=1
  broken k8s-postgres-wrong-port deploy/k8s/postgres/postgres-patches.yaml 's#@postgres:5432/udp#@postgres:5433/udp#' || failed=1
  broken compose-misspelled-field docker-compose.yml '0,/    healthcheck:/s//    healtcheck:/' || failed=1
  broken compose-missing-env docker-compose.yml '/^  KAFKA_BROKERS:/d' || failed=1
  broken compose-unpinned-image docker-compose.yml 's#image: mongo:7.0.14#image: mongo:latest#' || failed=1
  broken compose-bad-depends-on docker-compose.yml 's/^    kafka:$/    kafka-broker:/' || failed=1
  broken compose-postgres-readmodels-unset docker-compose.postgres.yml '/^      READMODEL_URL:/d' || failed=1
  broken compose-postgres-not-awaited docker-compose.postgres.yml '0,/^      postgres:$/s//      postgres-db:/' || failed=1
  broken compose-postgres-mongo-started docker-compose.postgres.yml '/^  mongo:$/,/^    profiles: \[mongo\]$/d' || failed=1
  broken k8s-postgres-mongo-url-kept deploy/k8s/postgres/postgres-patches.yaml '/^  MONGO_URL: ""$/d' || failed=1
  broken compose-grafana-public docker-compose.yml 's/"127.0.0.1:3000:3000"/"3000:3000"/' || failed=1
  broken prometheus-wrong-target deploy/prometheus/prometheus.yml 's/otel-collector:8889/otel-collector:8888/' || failed=1
  broken dashboard-unknown-datasource deploy/grafana/dashboards/udp.json '0,/"uid": "prometheus"/s//"uid": "prom"/' || failed=1
  broken dockerfile-no-healthcheck Dockerfile '/^HEALTHCHECK/d' || failed=1
  broken k8s-liveness-on-dependencies deploy/k8s/base/history-svc.yaml '0,/path: \/livez/s//path: \/health\//' || failed=1
  broken otel-undeclared-exporter deploy/otel-collector.yaml 's/exporters: \[otlp\/jaeger, debug\]/exporters: [otlp\/tempo, debug]/' || failed=1
  [[ $failed == 0 ]] || status=1
fi

elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
if [[ $status == 0 ]]; then
  echo "deploy/validate.sh: all good (${elapsed} ms)"
else
  echo "deploy/validate.sh: FAILED (${elapsed} ms)" >&2
fi
exit "$status"
