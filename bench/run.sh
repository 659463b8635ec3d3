#!/usr/bin/env bash
# Builds the benchmarks (bench/soups_bench.c, bench/queries_bench.c) against
# include/tureen.h and the built library, runs them one after the other
# (soups, then queries), and keeps their reports in $BUILD/bench/soups.txt
# and $BUILD/bench/queries.txt.
# Needs: LIB (path to libtureen.so), BUILD (scratch dir). Called by `make bench`.
# Optional: CC (gcc); BENCH_PROGRAMS ("soups queries": which to run); the
# BENCH_* variables the programs read (see README). Arguments go to soups_bench.
# Exit status: 1 when a program fails (the others still run), else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LIB:?LIB must name libtureen.so (make bench sets it)}"
: "${BUILD:?BUILD must name the build directory (make bench sets it)}"
[ -f "$LIB" ] || { echo "bench: $LIB does not exist: run 'make lib' first" >&2; exit 1; }
LIBDIR=$(cd "$(dirname "$LIB")" && pwd)
OUT="$BUILD/bench"
mkdir -p "$OUT"
PROGRAMS="${BENCH_PROGRAMS:-soups queries}"
for p in $PROGRAMS; do
    case "$p" in
        soups|queries) ;;
        *) echo "bench: unknown program '$p' in BENCH_PROGRAMS (soups, queries)" >&2; exit 1 ;;
    esac
done

# The floor links the system SQLCipher; libtureen dlopens the same library.
for p in $PROGRAMS; do
    ${CC:-gcc} -O2 -std=c99 -Wall -Wextra -DSQLITE_HAS_CODEC -I/usr/include/sqlcipher -Iinclude \
        "bench/${p}_bench.c" -o "$OUT/${p}_bench" \
        -L"$LIBDIR" -ltureen -Wl,-rpath,"$LIBDIR" -lsqlcipher
done

# Progress goes to stderr; each report (stdout) is also kept in <program>.txt.
status=0
first=1
for p in $PROGRAMS; do
    [ $first = 1 ] || echo
    first=0
    args=()
    [ "$p" = soups ] && args=("$@")
    if "$OUT/${p}_bench" ${args[@]+"${args[@]}"} | tee "$OUT/${p}.txt"; then
        echo "bench: report written to $OUT/${p}.txt" >&2
    else
        echo "bench: ${p}_bench failed; its partial report is in $OUT/${p}.txt" >&2
        status=1
    fi
done
exit $status
