#!/usr/bin/env bash
# The sync half of `make demo`: starts a Kinto server (memory backend, on
# 127.0.0.1, a free port) with bindings/python/tests/servers.py, runs the C
# and Python sync examples against it, and stops it when the script exits,
# however it exits. Needs: PY (the venv's python, with Kinto), BUILD (where
# `make demo` built the C examples, in examples/, and keeps the stores),
# C_KINTO_EXAMPLES (the C examples that take a Kinto URL; the Makefile's).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PY:?PY must name the venv python (make demo sets it)}"
: "${BUILD:?BUILD must name the build directory (make demo sets it)}"
KINTO_DIR="$BUILD/demo/kinto"
mkdir -p "$KINTO_DIR"
stop() { "$PY" bindings/python/tests/servers.py kinto stop --dir "$KINTO_DIR" --timeout 15 >/dev/null 2>&1 || true; }
trap stop EXIT
if ! URL=$("$PY" bindings/python/tests/servers.py kinto start --dir "$KINTO_DIR" --backend memory --timeout 60); then
    echo "demo: Kinto did not start; its log:" >&2
    tail -20 "$KINTO_DIR/kinto.log" >&2 || true
    exit 1
fi
echo "== Kinto at $URL"
for x in ${C_KINTO_EXAMPLES:?the Makefile sets C_KINTO_EXAMPLES}; do
    echo "== C: examples/c/$x.c"
    "$BUILD/examples/$x" "$URL" "$BUILD/demo"
done
echo "== Python: examples/python/sync_quickstart.py"
"$PY" examples/python/sync_quickstart.py "$URL" "$BUILD/demo"
echo "== Python: examples/python/sync_loop.py (the sync loop and its events)"
"$PY" examples/python/sync_loop.py "$URL" "$BUILD/demo"
echo "== Python: examples/python/progress.py (a progress bar, stopped and resumed)"
"$PY" examples/python/progress.py "$URL" "$BUILD/demo"
