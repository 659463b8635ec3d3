#!/usr/bin/env bash
# Builds bench/soups_bench.c against include/tureen.h and the built library,
# runs it, and keeps its table in $BUILD/bench/soups.txt.
# Needs: LIB (path to libtureen.so), BUILD (scratch dir). Called by `make bench`.
# Optional: CC (gcc), and the BENCH_* variables soups_bench reads (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LIB:?LIB must name libtureen.so (make bench sets it)}"
: "${BUILD:?BUILD must name the build directory (make bench sets it)}"
[ -f "$LIB" ] || { echo "bench: $LIB does not exist: run 'make lib' first" >&2; exit 1; }
LIBDIR=$(cd "$(dirname "$LIB")" && pwd)
OUT="$BUILD/bench"
mkdir -p "$OUT"

# The floor links the system SQLCipher; libtureen dlopens the same library.
${CC:-gcc} -O2 -std=c99 -Wall -Wextra -DSQLITE_HAS_CODEC -I/usr/include/sqlcipher -Iinclude \
    bench/soups_bench.c -o "$OUT/soups_bench" \
    -L"$LIBDIR" -ltureen -Wl,-rpath,"$LIBDIR" -lsqlcipher

# Progress goes to stderr; the report (stdout) is also kept in soups.txt.
"$OUT/soups_bench" "$@" | tee "$OUT/soups.txt"
echo "bench: report written to $OUT/soups.txt" >&2
