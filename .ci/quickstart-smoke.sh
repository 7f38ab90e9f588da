#!/usr/bin/env bash
# The README's quick start as a newcomer runs it, on whatever Node is first on PATH: `npm start`, a token from
# `npm run token`, one POST and one GET through the gateway, then stop. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

data=$(mktemp -d)
log="$data/start.log"
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
pid=""
finish() {
  # The whole process group: npm, tools/start.mjs and the embedded system it runs. npm may exit before the system
  # has finished its clean stop (it saves its read models into $data): wait until the whole group is gone (at most
  # 30 s) before removing the directory under it.
  if [ -n "$pid" ]; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap finish EXIT

echo "quick start on Node $(node --version): npm start (DATA_DIR=$data, PORT=$port)"
DATA_DIR="$data" PORT="$port" setsid npm start >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "gateway on http://localhost:$port" "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "npm start exited" >&2; exit 1; }
  sleep 0.2
done
grep -q "gateway on http://localhost:$port" "$log" || { cat "$log" >&2; echo "npm start not ready in 120 s" >&2; exit 1; }
grep -m1 "past its end of life" "$log" || true

token=$(DATA_DIR="$data" npm run --silent token -- alice)
base="http://127.0.0.1:$port"
posted=$(curl -sf -X POST "$base/api/history/v2" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"item_id":"urn:show:1","last_playback_position":61.5}')
listed=$(curl -sf "$base/api/history/v2" -H "Authorization: Bearer $token")
echo "POST: $posted"
echo "GET:  $listed"
case "$listed" in *'"item_id":"urn:show:1"'*'"last_playback_position":61.5'*) ;; *) echo "the GET does not show the POST" >&2; exit 1 ;; esac
health=$(curl -s "$base/health/")
[ "$health" = UP ] || { echo "health: $health" >&2; exit 1; }
echo "quick start ok"
