#!/usr/bin/env bash
# Installs the pinned schemathesis into a cached venv under .cache/ (reused while the pin is unchanged).
# Prints the venv's bin directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SCHEMATHESIS_VERSION=4.32.5
mkdir -p .cache/fuzz
# The real path, not one through the .cache link, so another clone sharing the cache can use the venv.
venv="$(readlink -f .cache/fuzz)/venv-schemathesis-$SCHEMATHESIS_VERSION"
# A venv is not relocatable: its scripts name the interpreter by absolute path, and .cache may be a per-machine
# cache first filled from another checkout or another Python. Reuse it only when it actually runs here.
if ! "$venv/bin/schemathesis" --version >/dev/null 2>&1; then
  [ -e "$venv" ] && echo "fuzz: the cached venv $venv does not run here; building it again" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
  "$venv/bin/schemathesis" --version >/dev/null || { echo "fuzz: schemathesis $SCHEMATHESIS_VERSION does not run after install" >&2; exit 1; }
fi
# CPython 3.11 before 3.11.8 can raise SystemError("AST constructor recursion depth mismatch") from ast.parse
# (python/cpython#106905); hypothesis calls it only to describe a lambda in a strategy's repr, and schemathesis
# then reports that operation as an error (seen once in CI on GET /api/data/export/public/{key}). Describe such
# a lambda as "lambda" instead, in this venv only; every check still runs.
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cat > "$site/udp_ast_workaround.py" <<'PY'
try:
    from hypothesis.internal import lambda_sources

    _describe = lambda_sources._lambda_description

    def _lambda_description(f, *args, **kwargs):
        try:
            return _describe(f, *args, **kwargs)
        except SystemError:
            return "lambda"

    lambda_sources._lambda_description = _lambda_description
except Exception:
    pass
PY
echo 'import udp_ast_workaround' > "$site/udp_ast_workaround.pth"
echo "$venv/bin"
