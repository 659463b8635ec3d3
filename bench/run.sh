#!/usr/bin/env bash
# Builds the benchmarks (bench/soups_bench.c, bench/queries_bench.c,
# bench/listeners_bench.c, bench/sync_bench.c, bench/loop_bench.c,
# bench/blobs_bench.c) against
# include/tureen.h and the built library, runs them one after the other
# (soups, queries, listeners, sync, loop, blobs, then the Python ones:
# blobs_kinto_bench.py, which starts Kinto with kinto-attachment, and
# sync_up_parallel_bench.py, kinto_feed_bench.py and converge_bench.py, which
# start their own Kinto on PostgreSQL behind gunicorn, bulk_sync_bench.py,
# which starts one on PostgreSQL, and python_calls_bench.py), and keeps their
# reports in $BUILD/bench/<program>.txt. Every row that states a bar is also
# written (a JSON line, see bench/bars.py) to $BUILD/bench/bars.jsonl; at the
# end bench/summary.py prints them as one table and writes
# $BUILD/bench/summary.json (time, commit, machine, every bar and verdict).
# sync_bench and loop_bench need a Kinto server:
# this script starts a fresh one for each (memory backend, on 127.0.0.1) with
# bindings/python/tests/servers.py just before it, and stops it after it, or
# when the script exits, however it exits.
# Needs: LIB (path to libtureen.so), BUILD (scratch dir). Called by `make bench`.
# Optional: CC (gcc); BENCH_PROGRAMS ("soups queries listeners sync loop blobs blobs_kinto sync_up_parallel kinto_feed converge bulk_sync python_calls": which to run);
# PYTHON (.venv/bin/python: has Kinto and kinto-http); BENCH_SYNC_URL (use that
# Kinto instead of starting one); the BENCH_* variables the programs read (see
# README). Arguments go to soups_bench.
# Exit status: 1 when a program fails (the others still run), else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LIB:?LIB must name libtureen.so (make bench sets it)}"
: "${BUILD:?BUILD must name the build directory (make bench sets it)}"
[ -f "$LIB" ] || { echo "bench: $LIB does not exist: run 'make lib' first" >&2; exit 1; }
LIBDIR=$(cd "$(dirname "$LIB")" && pwd)
OUT="$BUILD/bench"
mkdir -p "$OUT"
PROGRAMS="${BENCH_PROGRAMS:-soups queries listeners sync loop blobs blobs_kinto sync_up_parallel kinto_feed converge bulk_sync python_calls}"
GIVEN_URL="${BENCH_SYNC_URL:-}"
for p in $PROGRAMS; do
    case "$p" in
        soups|queries|listeners|sync|loop|blobs|blobs_kinto|sync_up_parallel|kinto_feed|converge|bulk_sync|python_calls) ;;
        *) echo "bench: unknown program '$p' in BENCH_PROGRAMS (soups, queries, listeners, sync, loop, blobs, blobs_kinto, sync_up_parallel, kinto_feed, converge, bulk_sync, python_calls)" >&2; exit 1 ;;
    esac
done

# The floor links the system SQLCipher; libtureen dlopens the same library.
# sync_bench's floor also speaks HTTP with the system libcurl, which libtureen
# links too; it is built with the Makefile's strict flags.
for p in $PROGRAMS; do
    [ -f "bench/${p}_bench.c" ] || continue
    strict=() net=()
    [ "$p" = sync ] && strict=(-pedantic -Werror)
    { [ "$p" = sync ] || [ "$p" = loop ]; } && net=(-lcurl)
    [ "$p" = blobs ] && net=(-lcrypto)  # its floor seals with libcrypto by hand
    ${CC:-gcc} -O2 -std=c99 -Wall -Wextra ${strict[@]+"${strict[@]}"} -DSQLITE_HAS_CODEC -I/usr/include/sqlcipher -Iinclude \
        "bench/${p}_bench.c" -o "$OUT/${p}_bench" \
        -L"$LIBDIR" -ltureen -Wl,-rpath,"$LIBDIR" -lsqlcipher -lpthread ${net[@]+"${net[@]}"}
done

# Kinto for sync_bench, started only when it is about to run (the other
# programs get a quiet machine) and stopped by the EXIT trap, also after
# Ctrl-C or a failure. A fresh server each run: the memory backend starts empty.
PY="${PYTHON:-$PWD/.venv/bin/python}"
KINTO_DIR="$OUT/kinto"
kinto_started=0
stop_kinto() {
    if [ $kinto_started = 1 ]; then
        kinto_started=0
        timeout 60 "$PY" bindings/python/tests/servers.py kinto stop --dir "$KINTO_DIR" --timeout 15 >/dev/null ||
            echo "bench: could not stop Kinto (pid in $KINTO_DIR/kinto.pid)" >&2
    fi
}
trap stop_kinto EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_kinto() {
    if ! "$PY" -c 'import kinto, kinto_http' 2>/dev/null; then
        echo "bench: $PY cannot import kinto and kinto_http: run 'make .venv/.ok' or set PYTHON" >&2
        return 1
    fi
    mkdir -p "$KINTO_DIR"
    rm -f "$KINTO_DIR/kinto.log" # sync_bench counts requests in it: only this run's
    kinto_started=1
    timeout 120 "$PY" bindings/python/tests/servers.py kinto start --dir "$KINTO_DIR" --backend memory --timeout 60 >/dev/null ||
        { echo "bench: Kinto did not start; see $KINTO_DIR/kinto.log" >&2; return 1; }
}

# Progress goes to stderr; each report (stdout) is also kept in <program>.txt.
# The bar rows of this run only.
export BENCH_BARS="$OUT/bars.jsonl"
: > "$BENCH_BARS"
status=0
first=1
for p in $PROGRAMS; do
    [ $first = 1 ] || echo
    first=0
    args=()
    [ "$p" = soups ] && args=("$@")
    if { [ "$p" = sync ] || [ "$p" = loop ]; } && [ -z "$GIVEN_URL" ]; then
        if ! start_kinto; then
            echo "bench: ${p}_bench not run" >&2
            status=1
            continue
        fi
        BENCH_SYNC_URL=$(cat "$KINTO_DIR/kinto.url")
        BENCH_SYNC_KINTO_LOG="$KINTO_DIR/kinto.log"
        export BENCH_SYNC_URL BENCH_SYNC_KINTO_LOG
    fi
    if [ "$p" = sync ]; then
        export BENCH_SYNC_PYTHON="${BENCH_SYNC_PYTHON:-$PY}"
        export BENCH_SYNC_PEER="${BENCH_SYNC_PEER-bench/sync_bench_peer.py}"
    fi
    run=("$OUT/${p}_bench")
    [ -f "bench/${p}_bench.py" ] && run=(env TUREEN_LIB="$LIB" "$PY" "bench/${p}_bench.py")
    if "${run[@]}" ${args[@]+"${args[@]}"} | tee "$OUT/${p}.txt"; then
        echo "bench: report written to $OUT/${p}.txt" >&2
    else
        echo "bench: ${p}_bench failed; its partial report is in $OUT/${p}.txt" >&2
        status=1
    fi
    if [ "$p" = sync ] || [ "$p" = loop ]; then stop_kinto; fi
done

echo
"$PY" bench/summary.py "$BENCH_BARS" "$OUT/summary.json" | tee "$OUT/summary.txt" || status=1
exit $status
