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
# Optional: CC (gcc); BENCH_PROGRAMS ("soups queries open listeners sync sync_pinned loop blobs blobs_kinto sync_up_parallel
# kinto_feed converge bulk_sync python_calls soups_1m queries_1m": which to run; BENCH_1M=0 leaves out the last two,
# soups_bench and queries_bench again at 1,000,000 entries, about 25 minutes of the run);
# PYTHON (.venv/bin/python: has Kinto and kinto-http); BENCH_SYNC_URL (use that
# Kinto instead of starting one); the BENCH_* variables the programs read (see
# README). Arguments go to soups_bench.
# sync_pinned is sync_bench's workload 1 again with its own Kinto pinned to CPU 0 (taskset -c 0) and the program, so
# the floor, the peer and Tureen, pinned to CPU 1 (taskset -c 1); bench/pinning.py does the same inside the Python
# programs that compare Tureen with a client of a server on this machine.
# Exit status: 1 when a program fails (the others still run), else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LIB:?LIB must name libtureen.so (make bench sets it)}"
: "${BUILD:?BUILD must name the build directory (make bench sets it)}"
[ -f "$LIB" ] || { echo "bench: $LIB does not exist: run 'make lib' first" >&2; exit 1; }
LIBDIR=$(cd "$(dirname "$LIB")" && pwd)
OUT="$BUILD/bench"
mkdir -p "$OUT"
DEFAULT_PROGRAMS="soups queries open listeners sync sync_pinned loop blobs blobs_kinto sync_up_parallel kinto_feed converge bulk_sync python_calls"
[ "${BENCH_1M:-1}" = 0 ] || DEFAULT_PROGRAMS="$DEFAULT_PROGRAMS soups_1m queries_1m"
PROGRAMS="${BENCH_PROGRAMS:-$DEFAULT_PROGRAMS}"
GIVEN_URL="${BENCH_SYNC_URL:-}"
KNOWN="soups queries open listeners sync sync_pinned loop blobs blobs_kinto sync_up_parallel kinto_feed converge bulk_sync python_calls soups_1m queries_1m"
for p in $PROGRAMS; do
    case " $KNOWN " in
        *" $p "*) ;;
        *) echo "bench: unknown program '$p' in BENCH_PROGRAMS ($KNOWN)" >&2; exit 1 ;;
    esac
done
# The second passes run a program built for the first: sync_pinned is
# sync_bench, soups_1m soups_bench, queries_1m queries_bench.
binary_of() {
    case "$1" in
        sync_pinned) echo sync ;;
        soups_1m) echo soups ;;
        queries_1m) echo queries ;;
        *) echo "$1" ;;
    esac
}
BUILT=""
for p in $PROGRAMS; do
    b=$(binary_of "$p")
    case " $BUILT " in *" $b "*) ;; *) BUILT="$BUILT $b" ;; esac
done
PINNED_OK=0
# The pinned pass needs CPUs 0 and 1 and taskset.
if command -v taskset >/dev/null && taskset -c 0,1 true 2>/dev/null; then PINNED_OK=1; fi

# The floor links the system SQLCipher; libtureen dlopens the same library.
# sync_bench's floor also speaks HTTP with the system libcurl, which libtureen
# links too; it is built with the Makefile's strict flags.
for p in $BUILT; do
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
start_kinto() { # [taskset -c N]: the CPUs Kinto may use (it and every process it starts)
    if ! "$PY" -c 'import kinto, kinto_http' 2>/dev/null; then
        echo "bench: $PY cannot import kinto and kinto_http: run 'make .venv/.ok' or set PYTHON" >&2
        return 1
    fi
    mkdir -p "$KINTO_DIR"
    rm -f "$KINTO_DIR/kinto.log" # sync_bench counts requests in it: only this run's
    kinto_started=1
    timeout 120 "$@" "$PY" bindings/python/tests/servers.py kinto start --dir "$KINTO_DIR" --backend memory --timeout 60 >/dev/null ||
        { echo "bench: Kinto did not start; see $KINTO_DIR/kinto.log" >&2; return 1; }
}

# Progress goes to stderr; each report (stdout) is also kept in <program>.txt.
# The bar rows of this run only.
export BENCH_BARS="$OUT/bars.jsonl"
: > "$BENCH_BARS"
status=0
first=1
run_start=$SECONDS
for p in $PROGRAMS; do
    [ $first = 1 ] || echo
    first=0
    b=$(binary_of "$p")
    p_start=$SECONDS
    args=() pin=() pass_env=()
    [ "$p" = soups ] && args=("$@")
    case "$p" in
        sync_pinned)
            if [ $PINNED_OK = 0 ] || [ -n "$GIVEN_URL" ]; then
                echo "bench: sync_pinned not run (it needs CPUs 0 and 1, taskset, and a Kinto of its own: BENCH_SYNC_URL unset)" >&2
                continue
            fi
            pin=(taskset -c 1)
            pass_env=(BENCH_SYNC_ONLY=1 "BENCH_BAR_PROGRAM=sync pinned (Kinto CPU 0, bench CPU 1)") ;;
        soups_1m)
            pass_env=("BENCH_N=${BENCH_1M_N:-1000000}" "BENCH_ONLY=${BENCH_1M_SOUPS_ONLY:-ac}" "BENCH_BAR_PROGRAM=soups 1M") ;;
        queries_1m)
            pass_env=("BENCH_Q_N=${BENCH_1M_N:-1000000}" "BENCH_Q_ONLY=${BENCH_1M_QUERIES_ONLY:-13}" "BENCH_BAR_PROGRAM=queries 1M") ;;
    esac
    if { [ "$b" = sync ] || [ "$b" = loop ]; } && [ -z "$GIVEN_URL" ]; then
        kinto_pin=()
        [ "$p" = sync_pinned ] && kinto_pin=(taskset -c 0)
        if ! start_kinto ${kinto_pin[@]+"${kinto_pin[@]}"}; then
            echo "bench: ${p} not run" >&2
            status=1
            continue
        fi
        BENCH_SYNC_URL=$(cat "$KINTO_DIR/kinto.url")
        BENCH_SYNC_KINTO_LOG="$KINTO_DIR/kinto.log"
        export BENCH_SYNC_URL BENCH_SYNC_KINTO_LOG
    fi
    if [ "$b" = sync ]; then
        export BENCH_SYNC_PYTHON="${BENCH_SYNC_PYTHON:-$PY}"
        export BENCH_SYNC_PEER="${BENCH_SYNC_PEER-bench/sync_bench_peer.py}"
    fi
    run=("$OUT/${b}_bench")
    [ -f "bench/${b}_bench.py" ] && run=(env TUREEN_LIB="$LIB" "$PY" "bench/${b}_bench.py")
    if {
        [ "$p" = sync_pinned ] && echo "sync_pinned: sync_bench's workload 1 with Kinto on CPU 0 (started under taskset -c 0) and this program, its floor, peer and Tureen children on CPU 1 (taskset -c 1)"
        env ${pass_env[@]+"${pass_env[@]}"} ${pin[@]+"${pin[@]}"} "${run[@]}" ${args[@]+"${args[@]}"}
    } | tee "$OUT/${p}.txt"; then
        echo "bench: report written to $OUT/${p}.txt" >&2
    else
        echo "bench: ${p} failed; its partial report is in $OUT/${p}.txt" >&2
        status=1
    fi
    if [ "$b" = sync ] || [ "$b" = loop ]; then stop_kinto; fi
    echo "bench: ${p} took $((SECONDS - p_start)) s" >&2
done
echo "bench: every program took $((SECONDS - run_start)) s" >&2

echo
"$PY" bench/summary.py "$BENCH_BARS" "$OUT/summary.json" | tee "$OUT/summary.txt" || status=1
exit $status
