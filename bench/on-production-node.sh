#!/usr/bin/env bash
# bash bench/on-production-node.sh <command...>: runs the command with the production Node line first on PATH (as
# production runs the services; tools/node-env.sh fetches it once into .cache/node), with better-sqlite3 built for
# it, and gives the machine's Node its own better-sqlite3 back at the end. `npm run bench` runs through it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=../tools/node-env.sh
source tools/node-env.sh
mkdir -p .cache
machine_path="$PATH"
restore_machine_node() {
  export PATH="$machine_path"
  sqlite_for_this_node
}
if production_node; then
  export PATH="$PRODUCTION_NODE_DIR/bin:$PATH"
  trap restore_machine_node EXIT
  sqlite_for_this_node
else
  echo "no production Node package for $(uname -m): the benchmark runs on this machine's Node $(node --version)" >&2
fi
"$@"
