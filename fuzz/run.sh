#!/bin/bash
# Builds the fuzz targets (libFuzzer with AddressSanitizer, through swiftc)
# and runs each for SECONDS, one at a time, then prints per target the runs,
# the coverage (cov and ft from libFuzzer's final stats) and what it found.
#
#   fuzz/run.sh [SECONDS] [TARGET...]      (default: 10 s, every target)
#
# Environment: BUILD (default ./build), FUZZ_OPT (-O; -Onone builds faster),
# FUZZ_RSS_MB (2048), FUZZ_TIMEOUT (10 s per input), FUZZ_NICE (10),
# FUZZ_FRESH (set: start from the seeds, not the working corpus).
# The modules and targets are rebuilt only when a source is newer than the
# binary. Each target grows a working corpus in $BUILD/fuzz/corpus/<target>
# (kept between runs) beside the seeds in fuzz/corpus/<target>; findings go
# to $BUILD/fuzz/findings/<target>/. Exit status 1 when anything was found.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=$BUILD/fuzz
SECONDS_EACH=${1:-10}
shift || true
SWIFTC=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
CLANG=${CLANG:-$(dirname "$SWIFTC")/clang}
OPT=${FUZZ_OPT:--O}
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT=${FUZZ_TIMEOUT:-10}
NICE=${FUZZ_NICE:-10}
ALL=$(cd "$ROOT/fuzz/targets" && ls *.swift | sed 's/\.swift$//')
TARGETS=${*:-$ALL}
# The C targets (the query memory budget, the JSON string scan),
# instrumented too.
C_TARGETS=(CQueryMemory CJSONScan)
SAN=(-sanitize=fuzzer,address "$OPT" -parse-as-library -I "$ROOT/Sources/CSQLCipher" -I "$ROOT/Sources/CCurl"
     -I "$OUT/modules")
for c in "${C_TARGETS[@]}"; do SAN+=(-I "$ROOT/Sources/$c/include"); done
mkdir -p "$OUT/modules" "$OUT/bin"

# stale OUTPUT INPUT...: true when OUTPUT is missing or older than an input.
stale() {
  local out=$1; shift
  [ ! -e "$out" ] || [ -n "$(find "$@" -newer "$out" -print -quit)" ]
}

# The library's modules, instrumented, with -enable-testing so the targets
# reach the parsers that are internal to them.
module() {
  local name=$1; shift
  if stale "$OUT/modules/$name.o" "$ROOT/Sources/$name" "$@" "$0"; then
    echo "fuzz: building $name ($OPT)"
    nice -n "$NICE" "$SWIFTC" "${SAN[@]}" -swift-version 6 -module-name "$name" -package-name tureen -enable-testing -wmo \
      -emit-module -emit-module-path "$OUT/modules/$name.swiftmodule" \
      -c -o "$OUT/modules/$name.o" $(find "$ROOT/Sources/$name" -name '*.swift' | sort)
    # swiftc leaves an unchanged output's time alone: mark it as built now.
    touch "$OUT/modules/$name.o"
  fi
}
for c in "${C_TARGETS[@]}"; do
  if stale "$OUT/modules/$c.o" "$ROOT/Sources/$c" "$0"; then
    echo "fuzz: building $c"
    nice -n "$NICE" "$CLANG" -fsanitize=fuzzer-no-link,address -O2 -I "$ROOT/Sources/$c/include" \
      -c -o "$OUT/modules/$c.o" "$ROOT/Sources/$c"/*.c
  fi
done
C_OBJECTS=("${C_TARGETS[@]/#/$OUT/modules/}")
C_OBJECTS=("${C_OBJECTS[@]/%/.o}")
module TureenCore "${C_TARGETS[@]/#/$ROOT/Sources/}"
module TureenStore "$OUT/modules/TureenCore.o" "$ROOT/Sources/CSQLCipher"
module TureenSync "$OUT/modules/TureenStore.o" "$ROOT/Sources/CCurl"

for t in $TARGETS; do
  src=$ROOT/fuzz/targets/$t.swift
  [ -f "$src" ] || { echo "fuzz: no target '$t' (known: $(echo $ALL))" >&2; exit 2; }
  if stale "$OUT/bin/$t" "$src" "$ROOT/fuzz/Support.swift" "$OUT/modules"/*.o; then
    echo "fuzz: linking $t"
    nice -n "$NICE" "$SWIFTC" "${SAN[@]}" -warnings-as-errors -use-ld=lld -module-name "fuzz_$t" "$src" "$ROOT/fuzz/Support.swift" \
      "${C_OBJECTS[@]}" "$OUT/modules/TureenCore.o" "$OUT/modules/TureenStore.o" "$OUT/modules/TureenSync.o" -lcurl -o "$OUT/bin/$t"
  fi
done

[ "$SECONDS_EACH" = 0 ] && exit 0

# Swift's own crash backtracer hangs under AddressSanitizer; libFuzzer
# prints the stack of a crash itself.
export SWIFT_BACKTRACE=enable=no
status=0
printf '%-16s %8s %10s %8s %8s  %s\n' target seconds runs cov ft findings
for t in $TARGETS; do
  corpus=$OUT/corpus/$t
  if [ -n "${FUZZ_FRESH:-}" ]; then
    # A smoke run starts from the seeds alone, so it takes as long as it did
    # yesterday whatever the long runs have grown.
    corpus=$OUT/fresh/$t
    rm -rf "$corpus"
  fi
  findings=$OUT/findings/$t
  mkdir -p "$corpus" "$findings"
  dict=()
  [ -f "$ROOT/fuzz/dict/$t.dict" ] && dict=(-dict="$ROOT/fuzz/dict/$t.dict")
  before=$(ls "$findings" | wc -l)
  log=$OUT/$t.log
  started=$(date +%s)
  set +e
  nice -n "$NICE" "$OUT/bin/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" \
    -timeout="$TIMEOUT" -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "$corpus" "$ROOT/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # libFuzzer says how long it ran only when it was not stopped by a finding.
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  secs=${secs:-$(( $(date +%s) - started ))}
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  new=$(( $(ls "$findings" | wc -l) - before ))
  found=none
  if [ "$rc" != 0 ] || [ "$new" != 0 ]; then
    status=1
    found="$new new in $findings (exit $rc; log $log)"
  fi
  printf '%-16s %8s %10s %8s %8s  %s\n' "$t" "${secs:-?}" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$found"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "${secs:-0}" "${runs:-0}" "${cov:-}" "${ft:-}" "$new" >>"$OUT/history.tsv"
done
exit $status
