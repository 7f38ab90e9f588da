#!/usr/bin/env bash
# Start a real single-node Kafka (KRaft) and a real FerretDB (MongoDB wire
# protocol) on loopback, backed by a PostgreSQL of its own (Debian's package;
# MONGO_BACKEND=sqlite: SQLite files instead), run a command with
#   KAFKA_BROKERS=127.0.0.1:<port>  MONGO_URL=mongodb://127.0.0.1:<port>/?maxPoolSize=16  MONGO_SERVER=ferretdb
# exported, then stop both servers and exit with the command's exit code.
# Also exported: KAFKA_RESTART_SCRIPT, a script that restarts the broker
# (TERM, then start again on the same config and data; returns once it answers),
# and FERRETDB_RESTART_SCRIPT, the same for FerretDB; both take restart|stop|start.
# Where PostgreSQL is installed (PG_EVENTSTORE=0: not), also an event store's
# PostgreSQL with a streaming replica (hot standby, synchronous), a cluster of
# their own: POSTGRES_URL, POSTGRES_REPLICA_URL, POSTGRES_RESTART_SCRIPT
# ([restart|stop|start|kill] [primary|replica]) and POSTGRES_PROMOTE_SCRIPT.
#
#   tools/servers/with-servers.sh <command> [args...]
#
# Env overrides: KAFKA_PORT (19092), KAFKA_CONTROLLER_PORT (19093),
# FERRETDB_PORT (27018), POSTGRES_PORT (25432), MONGO_BACKEND (postgresql),
# PG_EVENTSTORE (1 where PostgreSQL is installed), PG_EVENTSTORE_PORT (25433),
# PG_REPLICA_PORT (25434), PG_REPLICA_SYNC (1), PG_EVENTSTORE_FSYNC (off),
# SERVERS_TIMEOUT (120 s), SERVERS_CACHE
# (<repo>/.cache/servers), SERVERS_KEEP_STATE=1 (keep the run dir).
# See tools/servers/README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${SERVERS_CACHE:-$ROOT/.cache/servers}"
TIMEOUT="${SERVERS_TIMEOUT:-120}"
PROBE="$HERE/probe.py"
KAFKA_CLUSTER_ID="D3_NndiGT0aUr8BnclO6Ww" # fixed; storage is fresh every run

T0=$(date +%s%N)
log() { printf '[servers] %s (+%ss)\n' "$*" "$(elapsed)" >&2; }
elapsed() { local now; now=$(date +%s%N); printf '%d.%d' $(((now - T0) / 1000000000)) $(((now - T0) / 100000000 % 10)); }
die() { printf '[servers] ERROR: %s\n' "$*" >&2; exit 1; }

if [ $# -eq 0 ]; then
  sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi

for tool in java mvn go python3; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found on PATH (need Java 17+, Maven, Go, Python 3)"
done
# FerretDB's store: PostgreSQL (measured 3-10x the SQLite backend's writes, bench/store.mjs) or SQLite files.
MONGO_BACKEND="${MONGO_BACKEND:-postgresql}"
case "$MONGO_BACKEND" in postgresql | sqlite) ;; *) die "MONGO_BACKEND=$MONGO_BACKEND: postgresql or sqlite" ;; esac
# Debian's postgresql package: /usr/lib/postgresql/<major>/bin (the newest installed), or PG_BIN.
PG_BIN="${PG_BIN:-$(ls -1d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [ "$MONGO_BACKEND" = postgresql ]; then
  [ -x "$PG_BIN/postgres" ] && [ -x "$PG_BIN/initdb" ] \
    || die "PostgreSQL not found (apt-get install postgresql, or PG_BIN=<dir of postgres and initdb>, or MONGO_BACKEND=sqlite)"
fi
# The event store's PostgreSQL and its replica (POSTGRES_URL...): where PostgreSQL is installed, unless PG_EVENTSTORE=0.
pg_tools_found() { local t; for t in postgres initdb pg_ctl pg_basebackup pg_isready psql; do [ -x "$PG_BIN/$t" ] || return 1; done; }
PG_EVENTSTORE="${PG_EVENTSTORE:-auto}"
case "$PG_EVENTSTORE" in
  1) pg_tools_found || die "PG_EVENTSTORE=1: PostgreSQL's tools not found in ${PG_BIN:-/usr/lib/postgresql/*/bin} (apt-get install postgresql, or PG_BIN)" ;;
  0) ;;
  auto) if pg_tools_found; then PG_EVENTSTORE=1; else PG_EVENTSTORE=0; fi ;;
  *) die "PG_EVENTSTORE=$PG_EVENTSTORE: 1 or 0" ;;
esac
PG_REPLICA_SYNC="${PG_REPLICA_SYNC:-1}"
case "$PG_REPLICA_SYNC" in 0 | 1) ;; *) die "PG_REPLICA_SYNC=$PG_REPLICA_SYNC: 1 or 0" ;; esac
PG_EVENTSTORE_FSYNC="${PG_EVENTSTORE_FSYNC:-off}"
case "$PG_EVENTSTORE_FSYNC" in on | off) ;; *) die "PG_EVENTSTORE_FSYNC=$PG_EVENTSTORE_FSYNC: on or off" ;; esac

hash_of() { cat "$@" | sha256sum | cut -c1-16; }
# Running and not a zombie: a broker started by the restart script is not our child, so nobody here
# reaps it, and kill -0 alone would call an exited but unreaped one alive.
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' '); [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
any_alive() { local p; for p; do alive "$p" && return 0; done; return 1; }

# For the restart scripts (copied into them with declare -f, like alive): start a server in the background and
# record its pid (a TERM in between waits until the pid is recorded, as a caught signal, unlike an ignored one, goes
# back to the default in the server: it is never orphaned), then wait until the probe answers. Sets pid.
# Uses PROBE, PORT, TIMEOUT and die. Args: name, probe kind, pid file, output file, log shown on failure, command...
start_and_wait() {
  local name=$1 kind=$2 pidfile=$3 out=$4 shown=$5 interrupted="" deadline
  shift 5
  trap 'interrupted=1' TERM INT
  "$@" </dev/null >>"$out" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$pidfile"
  trap - TERM INT
  [ -z "$interrupted" ] || exit 143
  deadline=$(($(date +%s) + TIMEOUT))
  until python3 "$PROBE" "$kind" 127.0.0.1 "$PORT" >/dev/null 2>&1; do
    alive "$pid" || { tail -n 50 "$shown" >&2; die "$name exited during start"; }
    [ "$(date +%s)" -lt "$deadline" ] || die "$name not ready ${TIMEOUT}s after start"
    sleep 0.2
  done
}

mkdir -p "$CACHE"

# ------------------------------------------------------------ artifacts --
# Kafka jars from Maven Central, keyed on the pom.
KAFKA_LIBS="$CACHE/kafka-libs"
kafka_key=$(hash_of "$HERE/kafka/pom.xml")
if [ "$(cat "$KAFKA_LIBS/.key" 2>/dev/null || true)" != "$kafka_key" ]; then
  log "fetching Kafka jars from Maven Central into $KAFKA_LIBS"
  rm -rf "$KAFKA_LIBS.tmp"
  mvn -q -B -f "$HERE/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$KAFKA_LIBS.tmp" >"$CACHE/mvn.log" 2>&1 \
    || { tail -n 50 "$CACHE/mvn.log" >&2; die "maven download failed (log: $CACHE/mvn.log)"; }
  echo "$kafka_key" >"$KAFKA_LIBS.tmp/.key"
  rm -rf "$KAFKA_LIBS"
  mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
  log "kafka jars ready ($(ls "$KAFKA_LIBS"/*.jar | wc -l) jars)"
fi

# FerretDB binary built from our tiny Go module, keyed on its sources + Go version.
FERRETDB_BIN="$CACHE/ferretdb-server"
ferret_key=$( (cat "$HERE/ferretdb/go.mod" "$HERE/ferretdb/go.sum" "$HERE/ferretdb/main.go"; go env GOVERSION) | sha256sum | cut -c1-16)
if [ ! -x "$FERRETDB_BIN" ] || [ "$(cat "$FERRETDB_BIN.key" 2>/dev/null || true)" != "$ferret_key" ]; then
  log "building FerretDB (go build, first time takes a few minutes)"
  (cd "$HERE/ferretdb" && GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false \
    -o "$FERRETDB_BIN.tmp" .) >"$CACHE/go-build.log" 2>&1 \
    || { tail -n 50 "$CACHE/go-build.log" >&2; die "go build failed (log: $CACHE/go-build.log)"; }
  mv "$FERRETDB_BIN.tmp" "$FERRETDB_BIN"
  echo "$ferret_key" >"$FERRETDB_BIN.key"
  log "ferretdb built"
fi

# ---------------------------------------------------------------- ports --
# An explicitly set port must be free; a busy default falls back to a free one.
pick_port() { # name default
  local name=$1 def=$2 val="${!1:-}"
  if [ -n "$val" ]; then
    python3 "$PROBE" port-free "$val" || die "$name=$val is already in use"
    echo "$val"
  elif python3 "$PROBE" port-free "$def"; then
    echo "$def"
  else
    python3 "$PROBE" free-port
  fi
}
KAFKA_PORT=$(pick_port KAFKA_PORT 19092)
KAFKA_CONTROLLER_PORT=$(pick_port KAFKA_CONTROLLER_PORT 19093)
[ "$KAFKA_CONTROLLER_PORT" != "$KAFKA_PORT" ] || KAFKA_CONTROLLER_PORT=$(python3 "$PROBE" free-port)
FERRETDB_PORT=$(pick_port FERRETDB_PORT 27018)
if [ "$MONGO_BACKEND" = postgresql ]; then POSTGRES_PORT=$(pick_port POSTGRES_PORT 25432); fi
if [ "$PG_EVENTSTORE" = 1 ]; then
  PG_EVENTSTORE_PORT=$(pick_port PG_EVENTSTORE_PORT 25433)
  PG_REPLICA_PORT=$(pick_port PG_REPLICA_PORT 25434)
  [ "$PG_REPLICA_PORT" != "$PG_EVENTSTORE_PORT" ] || PG_REPLICA_PORT=$(python3 "$PROBE" free-port)
fi

# ------------------------------------------------------------- run dir --
mkdir -p "$CACHE/runs"
# Failed runs keep their dir for debugging; keep only the newest 5, and never
# touch the dir of a run that is still going (its owner.pid is alive).
{ ls -1dt "$CACHE"/runs/*/ 2>/dev/null || true; } | tail -n +6 | while read -r d; do
  owner=$(cat "$d/owner.pid" 2>/dev/null || true)
  if [ -z "$owner" ] || ! kill -0 "$owner" 2>/dev/null; then rm -rf "$d"; fi
done
RUN_DIR=$(mktemp -d "$CACHE/runs/$(date +%Y%m%d-%H%M%S)-XXXX")
echo $$ >"$RUN_DIR/owner.pid"
KAFKA_PID="" FERRET_PID="" PG_PID="" PG_DIR="" WATCHDOG_PID="" CMD_PID="" ES_PG_STARTED=""

# The broker's current pid: KAFKA_RESTART_SCRIPT replaces the process and records the new one here.
kafka_pid() { cat "$RUN_DIR/kafka/kafka.pid" 2>/dev/null || echo "$KAFKA_PID"; }
# The same for FerretDB: FERRETDB_RESTART_SCRIPT replaces the process and records the new pid here.
ferret_pid() { cat "$RUN_DIR/ferretdb.pid" 2>/dev/null || echo "$FERRET_PID"; }

stop_pids() { # signal pids..., up to 15 s for a clean shutdown, then KILL; reap
  local signal=$1 pids="" p i
  shift
  for p; do alive "$p" && pids="$pids $p"; done
  [ -n "$pids" ] || return 0
  kill "-$signal" $pids 2>/dev/null
  for i in $(seq 1 150); do
    any_alive $pids || break
    sleep 0.1
  done
  for p in $pids; do
    if alive "$p"; then
      printf '[servers] pid %s did not stop in 15 s, killing\n' "$p" >&2
      kill -KILL "$p" 2>/dev/null
    fi
    wait "$p" 2>/dev/null
  done
  return 0
}
# The postmasters of the event store's clusters (started by pg_ctl, so not our children): from their pid files.
es_pg_pids() { local d; for d in "$PG_DIR"/eventstore "$PG_DIR"/replica; do head -n 1 "$d/postmaster.pid" 2>/dev/null || true; done; }
# PostgreSQL after FerretDB, its only client; INT is its fast shutdown (TERM would wait for clients to leave).
stop_servers() {
  stop_pids TERM $(kafka_pid) $(ferret_pid)
  [ -z "$PG_PID" ] || stop_pids INT "$PG_PID"
  [ -z "$ES_PG_STARTED" ] || stop_pids INT $(es_pg_pids)
}

# TERM a process and all its descendants (the command may be `bash -c ...`).
tree_pids() { local c; echo "$1"; for c in $(pgrep -P "$1" 2>/dev/null); do tree_pids "$c"; done; }
kill_tree() { [ -n "$1" ] && kill -TERM $(tree_pids "$1") 2>/dev/null; return 0; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ -n "$CMD_PID" ]; then
    kill_tree "$CMD_PID"
    wait "$CMD_PID" 2>/dev/null
  fi
  if [ -n "$WATCHDOG_PID" ]; then
    pkill -TERM -P "$WATCHDOG_PID" 2>/dev/null # its sleep
    kill "$WATCHDOG_PID" 2>/dev/null && wait "$WATCHDOG_PID" 2>/dev/null
  fi
  if [ -n "$KAFKA_PID$FERRET_PID$PG_PID$ES_PG_STARTED" ]; then
    stop_servers
    log "servers stopped"
  fi
  if [ "$rc" -eq 0 ] && [ "${SERVERS_KEEP_STATE:-0}" != 1 ]; then
    [ -z "$PG_DIR" ] || rm -rf "$PG_DIR"
    rm -rf "$RUN_DIR"
  else
    printf '[servers] state and logs kept in %s\n' "$RUN_DIR" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
  local f
  for f in "$RUN_DIR"/kafka/server.log "$RUN_DIR"/kafka/stdout.log "$RUN_DIR"/ferretdb.log "$RUN_DIR"/postgresql.log \
    "$PG_DIR"/eventstore.log "$PG_DIR"/replica.log; do
    [ -s "$f" ] || continue
    printf '[servers] ---- last 50 lines of %s ----\n' "$f" >&2
    tail -n 50 "$f" >&2
  done
}

# --------------------------------------------------------------- kafka --
KDIR="$RUN_DIR/kafka"
mkdir -p "$KDIR/data"
cat >"$KDIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KDIR/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
num.network.threads=2
num.io.threads=2
log.retention.hours=1
EOF
cat >"$KDIR/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$KDIR/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
EOF
JAVA_LOG_OPTS=(-Dlog4j.configuration="file:$KDIR/log4j.properties" -Dkafka.logs.dir="$KDIR")
KAFKA_CMD=(java -Xmx512m -Xms256m -XX:+UseG1GC -Djava.awt.headless=true "${JAVA_LOG_OPTS[@]}"
  -cp "$KAFKA_LIBS/*" kafka.Kafka "$KDIR/server.properties")
java "${JAVA_LOG_OPTS[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
  -t "$KAFKA_CLUSTER_ID" -c "$KDIR/server.properties" >"$KDIR/format.log" 2>&1 \
  || { cat "$KDIR/format.log" >&2; die "kafka storage format failed"; }
"${KAFKA_CMD[@]}" </dev/null >"$KDIR/stdout.log" 2>&1 &
KAFKA_PID=$!
echo "$KAFKA_PID" >"$KDIR/kafka.pid"

# KAFKA_RESTART_SCRIPT: stop the broker (TERM, KILL after 30 s), start it again with the same command
# (same config, same log dirs), and return once the readiness probe answers. The new pid goes to
# kafka.pid, which the cleanup and the watchdog read, so a restarted broker is stopped like the first.
{
  echo '#!/usr/bin/env bash'
  echo '# Written by with-servers.sh for this run only: restart the Kafka broker, wait until it answers.'
  echo 'set -euo pipefail'
  printf 'KDIR=%q PROBE=%q PORT=%q TIMEOUT=%q\n' "$KDIR" "$PROBE" "$KAFKA_PORT" "$TIMEOUT"
  printf 'KAFKA_CMD=('; printf ' %q' "${KAFKA_CMD[@]}"; printf ' )\n'
  declare -f alive start_and_wait
  cat <<'EOF'
T0=$(date +%s%N)
log() { local now; now=$(date +%s%N); printf '[servers] restart: %s (+%d ms)\n' "$*" $(((now - T0) / 1000000)) >&2; }
die() { printf '[servers] restart ERROR: %s\n' "$*" >&2; exit 1; }
# One restart at a time (fd 9 is closed for the broker, or it would hold the lock).
exec 9>"$KDIR/restart.lock"
flock -w "$TIMEOUT" 9 || die "another restart holds $KDIR/restart.lock"
# restart (default) | stop | start: a test that needs the broker gone for a while stops it, then starts it.
action=${1:-restart}
case "$action" in restart|stop|start) ;; *) die "usage: restart.sh [restart|stop|start]" ;; esac
pid=$(cat "$KDIR/kafka.pid")
if [ "$action" != start ] && alive "$pid"; then
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then
    log "pid $pid did not stop in 30 s, killing"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
  fi
fi
if [ "$action" = start ] && alive "$pid"; then log "already running (pid $pid)"; exit 0; fi
! alive "$pid" || die "broker pid $pid is still running"
[ "$action" = start ] || log "stopped pid $pid"
[ "$action" != stop ] || exit 0
start_and_wait kafka kafka "$KDIR/kafka.pid" "$KDIR/stdout.log" "$KDIR/server.log" "${KAFKA_CMD[@]}"
log "kafka ready again on 127.0.0.1:$PORT (pid $pid)"
EOF
} >"$KDIR/restart.sh"
chmod +x "$KDIR/restart.sh"

# ---------------------------------------------------------- postgresql --
# FerretDB's backend, a cluster made afresh (initdb, under a second). Durability settings off: a test store, whose
# data dies with the run; FerretDB's restarts (the fault suites) keep it, as PostgreSQL stays up. PostgreSQL refuses
# to run as root: as root it runs as the postgres user, in a dir that user can reach (not under /root).
FERRET_STORE=(-state "$RUN_DIR/ferretdb")
# The clusters' dir (FerretDB's backend, the event store's): made once, for whichever needs it first.
as_pg=()
make_pg_dir() {
  [ -z "$PG_DIR" ] || return 0
  if [ "$(id -u)" -eq 0 ]; then
    PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/udp-postgresql-XXXX")
    chown postgres: "$PG_DIR"
    as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    ln -s "$PG_DIR" "$RUN_DIR/postgresql"
  else
    PG_DIR="$RUN_DIR/postgresql"
    mkdir -p "$PG_DIR"
  fi
  chmod 700 "$PG_DIR"
}
if [ "$MONGO_BACKEND" = postgresql ]; then
  make_pg_dir
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    >"$RUN_DIR/initdb.log" 2>&1 || { cat "$RUN_DIR/initdb.log" >&2; die "initdb failed"; }
  "${as_pg[@]}" "$PG_BIN/postgres" -D "$PG_DIR/data" -k "$PG_DIR" -h 127.0.0.1 -p "$POSTGRES_PORT" \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
    -c plan_cache_mode=force_custom_plan \
    </dev/null >"$RUN_DIR/postgresql.log" 2>&1 &
  PG_PID=$!
  echo "$PG_PID" >"$RUN_DIR/postgresql.pid"
  deadline=$(($(date +%s) + TIMEOUT))
  until "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$POSTGRES_PORT"; do
    alive "$PG_PID" || { show_logs; die "postgresql exited during startup"; }
    [ "$(date +%s)" -lt "$deadline" ] || { show_logs; die "postgresql not ready after ${TIMEOUT}s"; }
    sleep 0.1
  done
  log "postgresql ready on 127.0.0.1:$POSTGRES_PORT"
  # FerretDB's lookups by `_id` or an indexed field served by an index, not a scan of the table (see the file).
  "$PG_BIN/psql" -h 127.0.0.1 -p "$POSTGRES_PORT" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -f "$HERE/ferretdb/lookups.sql" >>"$RUN_DIR/initdb.log" 2>&1 || { cat "$RUN_DIR/initdb.log" >&2; die "lookups.sql failed"; }
  # FerretDB 1.x runs an update on two PostgreSQL connections: it holds the one reading the document while it takes
  # the one writing it. When every connection of its pool (50 by default) is held by a read, each waits for a second
  # one that never comes, and FerretDB stops answering for good (CI lost 11 minutes to it). A pool far larger than
  # what the clients can ask at once (MONGO_URL's maxPoolSize below) keeps that from happening.
  FERRET_STORE=(-postgresql-url "postgres://postgres@127.0.0.1:$POSTGRES_PORT/postgres?pool_max_conns=180")
fi

# ------------------------------------------------------------ ferretdb --
"$FERRETDB_BIN" -listen "127.0.0.1:$FERRETDB_PORT" "${FERRET_STORE[@]}" -log-level warn \
  </dev/null >"$RUN_DIR/ferretdb.log" 2>&1 &
FERRET_PID=$!
echo "$FERRET_PID" >"$RUN_DIR/ferretdb.pid"

# FERRETDB_RESTART_SCRIPT [restart|stop|start]: like the Kafka one, for the MongoDB-wire server. Its store (PostgreSQL,
# which stays up, or the SQLite state dir) is kept, so what was written before a stop is there after the start.
{
  echo '#!/usr/bin/env bash'
  echo '# Written by with-servers.sh for this run only: stop and/or start FerretDB, wait until it answers.'
  echo 'set -euo pipefail'
  printf 'RUN_DIR=%q PROBE=%q PORT=%q TIMEOUT=%q\n' "$RUN_DIR" "$PROBE" "$FERRETDB_PORT" "$TIMEOUT"
  printf 'FERRET_CMD=('; printf ' %q' "$FERRETDB_BIN" -listen "127.0.0.1:$FERRETDB_PORT" "${FERRET_STORE[@]}" -log-level warn; printf ' )\n'
  declare -f alive start_and_wait
  cat <<'EOF'
T0=$(date +%s%N)
log() { local now; now=$(date +%s%N); printf '[servers] ferretdb: %s (+%d ms)\n' "$*" $(((now - T0) / 1000000)) >&2; }
die() { printf '[servers] ferretdb ERROR: %s\n' "$*" >&2; exit 1; }
action=${1:-restart}
case "$action" in restart|stop|start) ;; *) die "usage: ferretdb-restart.sh [restart|stop|start]" ;; esac
exec 9>"$RUN_DIR/ferretdb.lock"
flock -w "$TIMEOUT" 9 || die "another restart holds $RUN_DIR/ferretdb.lock"
pid=$(cat "$RUN_DIR/ferretdb.pid")
if [ "$action" != start ] && alive "$pid"; then
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; fi
  ! alive "$pid" || die "ferretdb pid $pid is still running"
  log "stopped pid $pid"
fi
[ "$action" != stop ] || exit 0
if alive "$pid"; then log "already running (pid $pid)"; exit 0; fi
start_and_wait ferretdb mongo "$RUN_DIR/ferretdb.pid" "$RUN_DIR/ferretdb.log" "$RUN_DIR/ferretdb.log" "${FERRET_CMD[@]}"
log "ready again on 127.0.0.1:$PORT (pid $pid)"
EOF
} >"$RUN_DIR/ferretdb-restart.sh"
chmod +x "$RUN_DIR/ferretdb-restart.sh"

# ------------------------------------------------- event store postgresql --
# The event store's PostgreSQL (libs/eventstore/src/postgres.ts) and a streaming replica of it, hot standby, each a
# cluster of its own, not FerretDB's: the fault suites restart, kill and promote them without taking the read models
# down, and FerretDB's transactions do not hold the event feed's frontier back (the oldest open transaction of the
# whole server). Durable as a server is against a crash of its processes: synchronous_commit=on (a commit is written
# before it is acknowledged, so a kill -9 of PostgreSQL loses nothing acknowledged); fsync=off by default (a test store:
# only a crash of the machine would lose it; PG_EVENTSTORE_FSYNC=on for figures with real flushes). The replica is
# synchronous (PG_REPLICA_SYNC=1): a commit is acknowledged once the replica has it, so promoting it loses nothing
# acknowledged; while the replica is down, commits wait for it. pg_ctl starts them (their pids in postmaster.pid).
if [ "$PG_EVENTSTORE" = 1 ]; then
  make_pg_dir
  ES_PRIMARY="$PG_DIR/eventstore"
  ES_REPLICA="$PG_DIR/replica"
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$ES_PRIMARY" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    >"$RUN_DIR/initdb-eventstore.log" 2>&1 || { cat "$RUN_DIR/initdb-eventstore.log" >&2; die "initdb (event store) failed"; }
  cat >>"$ES_PRIMARY/postgresql.conf" <<CONF
# with-servers.sh: the event store's primary
listen_addresses = '127.0.0.1'
port = $PG_EVENTSTORE_PORT
unix_socket_directories = '$PG_DIR'
max_connections = 200
fsync = $PG_EVENTSTORE_FSYNC
synchronous_commit = on
wal_level = replica
max_wal_senders = 4
max_replication_slots = 4
# Erasure (libs/eventstore/src/postgres.ts): segments older than a checkpoint are removed, not renamed for reuse with
# their old bytes in them. The replica inherits it with the file.
wal_recycle = off
CONF
  ES_PG_STARTED=1
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$ES_PRIMARY" -l "$PG_DIR/eventstore.log" -w -t "$TIMEOUT" start >/dev/null \
    || { show_logs; die "the event store's postgresql did not start"; }
  es_psql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -q -t -A -v ON_ERROR_STOP=1 -c "$2"; }
  es_psql "$PG_EVENTSTORE_PORT" 'CREATE DATABASE eventstore' || die "CREATE DATABASE eventstore failed"
  # The replica: a base backup with its own slot (the primary keeps the WAL it has not received) and -R (standby.signal,
  # primary_conninfo), named udp_replica for synchronous_standby_names; its own port; once promoted, a primary that
  # waits for no standby.
  "${as_pg[@]}" "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$PG_EVENTSTORE_PORT" -U postgres -D "$ES_REPLICA" -R -C -S udp_replica \
    -X stream -c fast >"$RUN_DIR/basebackup.log" 2>&1 || { cat "$RUN_DIR/basebackup.log" >&2; die "pg_basebackup failed"; }
  printf '%s\n' "# with-servers.sh: the event store's replica (hot standby; promoted, a primary without a standby)" \
    "port = $PG_REPLICA_PORT" "hot_standby = on" "synchronous_standby_names = ''" \
    "# back streaming within half a second of a primary's restart (5 s by default: every commit waits for it)" \
    "wal_retrieve_retry_interval = '500ms'" \
    | "${as_pg[@]}" tee -a "$ES_REPLICA/postgresql.conf" >/dev/null
  echo "primary_conninfo = 'host=127.0.0.1 port=$PG_EVENTSTORE_PORT user=postgres application_name=udp_replica'" \
    | "${as_pg[@]}" tee -a "$ES_REPLICA/postgresql.auto.conf" >/dev/null
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$ES_REPLICA" -l "$PG_DIR/replica.log" -w -t "$TIMEOUT" start >/dev/null \
    || { show_logs; die "the event store's replica did not start"; }
  deadline=$(($(date +%s) + TIMEOUT))
  until [ "$(es_psql "$PG_EVENTSTORE_PORT" "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'udp_replica' AND state = 'streaming'")" = 1 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { show_logs; die "the event store's replica is not streaming after ${TIMEOUT}s"; }
    sleep 0.1
  done
  if [ "$PG_REPLICA_SYNC" = 1 ]; then
    es_psql "$PG_EVENTSTORE_PORT" "ALTER SYSTEM SET synchronous_standby_names = 'udp_replica'" >/dev/null
    es_psql "$PG_EVENTSTORE_PORT" 'SELECT pg_reload_conf()' >/dev/null
  fi
  log "event store postgresql ready on 127.0.0.1:$PG_EVENTSTORE_PORT, its replica streaming on 127.0.0.1:$PG_REPLICA_PORT ($([ "$PG_REPLICA_SYNC" = 1 ] && echo synchronous || echo asynchronous))"

  # POSTGRES_RESTART_SCRIPT [restart|stop|start|kill] [primary|replica]: stop (fast shutdown), start (returns once it
  # answers), restart, or kill (SIGKILL to the postmaster and its processes, a crash; start it again with start).
  {
    echo '#!/usr/bin/env bash'
    echo "# Written by with-servers.sh for this run only: the event store's PostgreSQL, primary or replica."
    echo 'set -euo pipefail'
    printf 'PG_BIN=%q PG_DIR=%q RUN_DIR=%q TIMEOUT=%q PRIMARY_PORT=%q REPLICA_PORT=%q\n' \
      "$PG_BIN" "$PG_DIR" "$RUN_DIR" "$TIMEOUT" "$PG_EVENTSTORE_PORT" "$PG_REPLICA_PORT"
    declare -p as_pg
    declare -f alive
    cat <<'SCRIPT'
T0=$(date +%s%N)
action=${1:-restart}
node=${2:-primary}
log() { local now; now=$(date +%s%N); printf '[servers] postgresql %s: %s (+%d ms)\n' "$node" "$*" $(((now - T0) / 1000000)) >&2; }
die() { printf '[servers] postgresql %s ERROR: %s\n' "$node" "$*" >&2; exit 1; }
usage="usage: postgres-ctl.sh [restart|stop|start|kill] [primary|replica]"
case "$action" in restart|stop|start|kill) ;; *) die "$usage" ;; esac
case "$node" in
  primary) dir=$PG_DIR/eventstore logfile=$PG_DIR/eventstore.log port=$PRIMARY_PORT ;;
  replica) dir=$PG_DIR/replica logfile=$PG_DIR/replica.log port=$REPLICA_PORT ;;
  *) die "$usage" ;;
esac
exec 9>"$RUN_DIR/postgres-$node.lock"
flock -w "$TIMEOUT" 9 || die "another run of this script holds $RUN_DIR/postgres-$node.lock"
pid=$(head -n 1 "$dir/postmaster.pid" 2>/dev/null || true)
running() { [ -n "$pid" ] && alive "$pid"; }
if [ "$action" = kill ]; then
  running || die "not running"
  children=$(pgrep -P "$pid" || true)
  kill -KILL "$pid" $children 2>/dev/null || true
  for _ in $(seq 1 100); do running || break; sleep 0.1; done
  log "killed pid $pid"
  exit 0
fi
if [ "$action" != start ] && running; then
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir" -m fast -w -t "$TIMEOUT" stop >/dev/null 9>&-
  log "stopped pid $pid"
fi
[ "$action" != stop ] || exit 0
if [ "$action" = start ] && running; then log "already running (pid $pid)"; exit 0; fi
# A killed postmaster's pid file is left behind; if nobody reaped it (no init in a container), the pid still exists, as a
# zombie, and PostgreSQL would take it for a server still running: the file goes (alive() calls a zombie dead).
if [ -n "$pid" ] && ! running; then rm -f "$dir/postmaster.pid"; fi
# fd 9 closed for the server, or it would hold the lock.
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir" -l "$logfile" -w -t "$TIMEOUT" start >/dev/null 9>&- || { tail -n 50 "$logfile" >&2; die "did not start"; }
log "ready again on 127.0.0.1:$port (pid $(head -n 1 "$dir/postmaster.pid"))"
SCRIPT
  } >"$RUN_DIR/postgres-ctl.sh"
  chmod +x "$RUN_DIR/postgres-ctl.sh"

  # POSTGRES_PROMOTE_SCRIPT: promotes the replica (pg_ctl promote), returns once it takes writes. The primary is left as
  # it is: a failover test stops or kills it first (POSTGRES_RESTART_SCRIPT), then points its clients at the replica.
  {
    echo '#!/usr/bin/env bash'
    echo "# Written by with-servers.sh for this run only: promote the event store's replica to primary."
    echo 'set -euo pipefail'
    printf 'PG_BIN=%q PG_DIR=%q PORT=%q TIMEOUT=%q\n' "$PG_BIN" "$PG_DIR" "$PG_REPLICA_PORT" "$TIMEOUT"
    declare -p as_pg
    cat <<'SCRIPT'
T0=$(date +%s%N)
ms() { echo $((($(date +%s%N) - T0) / 1000000)); }
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/replica" -w -t "$TIMEOUT" promote >/dev/null
until [ "$("$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -t -A -c 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ]; do
  [ "$(ms)" -lt $((TIMEOUT * 1000)) ] || { echo "[servers] promote ERROR: the replica is still in recovery" >&2; exit 1; }
  sleep 0.1
done
printf '[servers] postgresql replica promoted: takes writes on 127.0.0.1:%s (+%d ms)\n' "$PORT" "$(ms)" >&2
SCRIPT
  } >"$RUN_DIR/postgres-promote.sh"
  chmod +x "$RUN_DIR/postgres-promote.sh"
fi

# If this script is SIGKILLed, the traps cannot run: a watchdog then stops the
# command (pid in $RUN_DIR/cmd.pid) and the servers, so nothing is orphaned.
(
  trap - EXIT INT TERM
  while kill -0 $$ 2>/dev/null; do sleep 1; done
  kill_tree "$(cat "$RUN_DIR/cmd.pid" 2>/dev/null)"
  kpid=$(kafka_pid)
  fpid=$(ferret_pid)
  kill -TERM "$kpid" "$fpid" 2>/dev/null
  [ -z "$PG_PID" ] || kill -INT "$PG_PID" 2>/dev/null
  espids=$(es_pg_pids)
  [ -z "$espids" ] || kill -INT $espids 2>/dev/null
  for _ in $(seq 1 15); do
    any_alive "$kpid" "$fpid" $PG_PID $espids || exit 0
    sleep 1
  done
  kill -KILL "$kpid" "$fpid" $PG_PID $espids 2>/dev/null
) </dev/null >/dev/null 2>&1 &
WATCHDOG_PID=$!

log "starting kafka on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT) and ferretdb ($MONGO_BACKEND) on 127.0.0.1:$FERRETDB_PORT; run dir $RUN_DIR"

# ---------------------------------------------------------------- wait --
deadline=$(($(date +%s) + TIMEOUT))
kafka_ok="" ferret_ok=""
while [ -z "$kafka_ok" ] || [ -z "$ferret_ok" ]; do
  if [ -z "$kafka_ok" ]; then
    kill -0 "$KAFKA_PID" 2>/dev/null || { show_logs; die "kafka exited during startup"; }
    if python3 "$PROBE" kafka 127.0.0.1 "$KAFKA_PORT" >/dev/null 2>&1; then
      kafka_ok=1
      log "kafka ready on 127.0.0.1:$KAFKA_PORT"
    fi
  fi
  if [ -z "$ferret_ok" ]; then
    kill -0 "$FERRET_PID" 2>/dev/null || { show_logs; die "ferretdb exited during startup"; }
    if python3 "$PROBE" mongo 127.0.0.1 "$FERRETDB_PORT" >/dev/null 2>&1; then
      ferret_ok=1
      log "ferretdb ready on 127.0.0.1:$FERRETDB_PORT"
    fi
  fi
  [ -n "$kafka_ok" ] && [ -n "$ferret_ok" ] && break
  if [ "$(date +%s)" -ge "$deadline" ]; then
    show_logs
    die "servers not ready after ${TIMEOUT}s (kafka=${kafka_ok:-no} ferretdb=${ferret_ok:-no})"
  fi
  sleep 0.5
done

# ----------------------------------------------------------------- run --
export KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
# At most 16 operations at once per client (the driver's default is 100): several test processes together stay
# below FerretDB's pool of 180 PostgreSQL connections, two per update (see postgresql above).
export MONGO_URL="mongodb://127.0.0.1:$FERRETDB_PORT/?maxPoolSize=16"
# What MONGO_URL is: FerretDB's conditional writes are not atomic, so a test of racing writers knows (README.md).
export MONGO_SERVER=ferretdb
if [ "$MONGO_BACKEND" = postgresql ]; then export POSTGRES_PORT; else unset POSTGRES_PORT; fi
export KAFKA_RESTART_SCRIPT="$KDIR/restart.sh"
export FERRETDB_RESTART_SCRIPT="$RUN_DIR/ferretdb-restart.sh"
if [ "$PG_EVENTSTORE" = 1 ]; then
  export POSTGRES_URL="postgres://postgres@127.0.0.1:$PG_EVENTSTORE_PORT/eventstore"
  export POSTGRES_REPLICA_URL="postgres://postgres@127.0.0.1:$PG_REPLICA_PORT/eventstore"
  export POSTGRES_RESTART_SCRIPT="$RUN_DIR/postgres-ctl.sh"
  export POSTGRES_PROMOTE_SCRIPT="$RUN_DIR/postgres-promote.sh"
  # The data dirs of the primary and the replica, for the erasure tests' byte scans.
  export POSTGRES_DATA_DIRS="$ES_PRIMARY:$ES_REPLICA"
else
  unset POSTGRES_URL POSTGRES_REPLICA_URL POSTGRES_RESTART_SCRIPT POSTGRES_PROMOTE_SCRIPT POSTGRES_DATA_DIRS
fi
log "running: $*"
# Run in the background (stdin passed through) so a TERM/INT to this script
# is handled at once instead of after the command ends.
"$@" <&0 &
CMD_PID=$!
echo "$CMD_PID" >"$RUN_DIR/cmd.pid"
rc=0
wait "$CMD_PID" || rc=$?
CMD_PID=""
log "command exited with $rc"
exit "$rc"
