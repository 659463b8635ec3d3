#!/usr/bin/env bash
# Builds and runs the C tests against include/tureen.h and the built library,
# plus the checks on the shared object itself. Prints "N passed, N failed".
# Needs: LIB (path to libtureen.so), BUILD (scratch dir), CC, CLANG.
# SANITIZE=1 (make sanitize-test): LIB is built with AddressSanitizer; the
# test programs are built with ASan and UBSan by CLANG, and the checks that
# cannot run under a sanitizer runtime are left out (RTLD_DEEPBIND, the
# separate LeakSanitizer builds, hiding the toolchain that holds the runtime,
# and test_memory, whose bound on resident memory ASan's shadow breaks).
# SANITIZE=thread (make tsan-test): the same, with ThreadSanitizer.
set -u
SANITIZE=${SANITIZE:-0}
cd "$(dirname "$0")/../.."
LIBDIR=$(dirname "$LIB")
OUT="$BUILD/ctests"
mkdir -p "$OUT"
STRICT="-std=c99 -Wall -Wextra -pedantic -Werror -Iinclude"
LINK="-L$LIBDIR -ltureen -Wl,-rpath,$LIBDIR -lpthread"
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
run() { # name, command...: each within 600 s, so a hang fails the test instead of the CI run
    local name=$1; shift
    if timeout -k 10 600 "$@" > "$OUT/$name.log" 2>&1; then pass "$name"; else fail "$name"; sed 's/^/     /' "$OUT/$name.log" | tail -40; fi
}

# --- the shared object -------------------------------------------------------
declared=$(grep -oE '\btureen_[a-z0-9_]+[[:space:]]*\(' include/tureen.h | tr -d '( \t' | sort -u)
exported=$(nm -D --defined-only "$LIB" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sort -u)
run exports-match-header test "$declared" = "$exported"
run no-swift-runtime-needed bash -c "! readelf -d '$LIB' | grep -E 'NEEDED.*(libswift|libFoundation|libdispatch|libBlocksRuntime)'"
run no-toolchain-runpath bash -c "! readelf -d '$LIB' | grep -E 'R(UN)?PATH.*swift'"
# Every sqlite3_* call goes through the private SQLCipher handle; an undefined
# sqlite3_ symbol would be bound to whatever SQLite the host loaded first.
run no-sqlite-symbols-bound-globally bash -c "! nm -D --undefined-only '$LIB' | grep -q sqlite3_"
# Every declared function says which statuses it returns.
run header-documents-errors python3 Tests/c/check_header_docs.py

# --- C and C++ programs against the header -----------------------------------
# The sync tests talk to a real Kinto on loopback, started here and stopped
# on exit whatever happens.
KINTO_DIR="$OUT/kinto"
PYTHON=${PYTHON:-.venv/bin/python}
trap '"$PYTHON" bindings/python/tests/servers.py kinto stop --dir "$KINTO_DIR" >/dev/null 2>&1' EXIT
if TUREEN_KINTO_URL=$("$PYTHON" bindings/python/tests/servers.py kinto start --dir "$KINTO_DIR"); then
    export TUREEN_KINTO_URL
else
    fail "kinto (start)"; tail -20 "$KINTO_DIR/kinto.log"
fi

if [ "$SANITIZE" = 1 ]; then
    CC="$CLANG -fsanitize=address,undefined -fno-sanitize-recover=undefined -g"
    export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
elif [ "$SANITIZE" = thread ]; then
    # The toolchain's TSan runtime intercepts libdispatch too, so it needs
    # the toolchain's libdispatch and BlocksRuntime at link and load time.
    SWIFT_LIBS=$(dirname "$CLANG")/../lib/swift/linux
    CC="$CLANG -fsanitize=thread -g"
    LINK="$LINK -L$SWIFT_LIBS -ldispatch -lBlocksRuntime -Wl,-rpath,$SWIFT_LIBS"
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/Tests/tsan.supp
fi
for t in test_misuse test_store test_soups test_stress test_register_close test_alter_kill test_queries test_memory test_sync test_sync_kill test_listeners test_sync_loop \
         test_local_records test_sync_again test_cache_policies test_changes test_loop_order test_transformers test_reencrypt; do
    [ "$SANITIZE" != 0 ] && [ "$t" = test_memory ] && continue
    if ${CC:-cc} $STRICT "Tests/c/$t.c" $LINK -o "$OUT/$t" 2> "$OUT/$t.build.log"; then
        run "$t" "$OUT/$t"
    else fail "$t (build)"; cat "$OUT/$t.build.log"; fi
done
# TUREEN_LOG from the environment, with C8o's level names.
if ${CC:-cc} $STRICT Tests/c/test_log_env.c $LINK -o "$OUT/test_log_env" 2> "$OUT/test_log_env.build.log"; then
    run test_log_env-trace env TUREEN_LOG=trace "$OUT/test_log_env" shown
    run test_log_env-fatal env TUREEN_LOG=fatal "$OUT/test_log_env" hidden
else fail "test_log_env (build)"; cat "$OUT/test_log_env.build.log"; fi
if [ "$SANITIZE" != 0 ]; then
    echo "c tests (sanitized: $SANITIZE): $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi
# The host links the system SQLite first and really uses it.
if ${CC:-cc} $STRICT Tests/c/test_host_sqlite.c -Wl,--no-as-needed -lsqlite3 $LINK -o "$OUT/test_host_sqlite" 2> "$OUT/host.build.log"; then
    run link-order-sqlite3-first bash -c "ldd '$OUT/test_host_sqlite' | grep -n 'libsqlite3\|libtureen' | head -1 | grep -q libsqlite3"
    run test_host_sqlite "$OUT/test_host_sqlite"
else fail "test_host_sqlite (build)"; cat "$OUT/host.build.log"; fi
if g++ -std=c++11 -Wall -Wextra -pedantic -Werror -Iinclude Tests/c/test_header.cpp $LINK -o "$OUT/test_header_cpp" 2> "$OUT/cpp.build.log"; then
    run test_header_cpp "$OUT/test_header_cpp"
else fail "test_header_cpp (build)"; cat "$OUT/cpp.build.log"; fi

# --- the examples, strict and leak-checked -----------------------------------
# Every example in examples/c (C_EXAMPLES, from the Makefile) must build with
# the strict flags, then runs built with LeakSanitizer from the toolchain's
# clang; the canary proves LSan reports leaks. Each example checks its own
# results and exits non-zero when one is wrong; those that take KINTO_URL
# (C_KINTO_EXAMPLES) run against the Kinto started above.
CJSON="-I/usr/include/cjson"
LSAN="$CLANG -fsanitize=leak -g -std=c99 -Iinclude $CJSON"
if $LSAN Tests/c/leak_canary.c -o "$OUT/leak_canary" 2> "$OUT/canary.build.log"; then
    run leak-check-detects-a-leak bash -c "! '$OUT/leak_canary'"
else fail "leak canary (build)"; cat "$OUT/canary.build.log"; fi
mkdir -p "$OUT/qs" "$OUT/examples"
for x in ${C_EXAMPLES:?the Makefile sets C_EXAMPLES}; do
    src="examples/c/$x.c" bin="$OUT/examples/$x"
    if ${CC:-cc} $STRICT $CJSON -c "$src" -o "$bin.o" 2> "$bin.build.log" &&
       $LSAN "$src" $LINK -lcjson -o "$bin" 2>> "$bin.build.log"; then
        case " ${C_KINTO_EXAMPLES:-} " in
            *" $x "*) run "example-$x" "$bin" "${TUREEN_KINTO_URL:-http://127.0.0.1:9/v1}" "$OUT/qs" ;;
            *) run "example-$x" "$bin" "$OUT/qs" ;;
        esac
    else fail "example-$x (build)"; cat "$bin.build.log"; fi
done

# --- loads where there is no Swift toolchain ----------------------------------
# Hide /opt/swift behind an empty mount in a private namespace and run the
# quickstart there. Where namespaces are not allowed, fall back to ldd.
${CC:-cc} $STRICT examples/c/quickstart.c $LINK -o "$OUT/quickstart"
if unshare -m true 2>/dev/null; then
    run loads-without-swift-toolchain unshare -m bash -c "mount -t tmpfs none /opt/swift && ! ls /opt/swift/usr >/dev/null 2>&1 && '$OUT/quickstart' '$OUT/qs'"
else
    run loads-without-swift-toolchain bash -c "! ldd '$LIB' | grep -E 'not found|/opt/swift'"
fi

echo "c tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
