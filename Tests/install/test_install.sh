#!/usr/bin/env bash
# `make install` into a temporary prefix, as a C user would use it: the
# library has a SONAME and its links, tureen.pc and tureen.h are in place,
# `cc app.c $(pkg-config --cflags --libs tureen)` builds without an rpath and
# runs with the prefix's lib directory on the loader's path (an installed
# /usr/local needs not even that: ldconfig knows it); `make uninstall`
# removes every file it installed. Prints "N passed, N failed".
# Needs: MAKE, BUILD (scratch dir), CC.
set -u
cd "$(dirname "$0")/../.."
OUT="$BUILD/install-test"
rm -rf "$OUT"
mkdir -p "$OUT"
passed=0
failed=0
check() { # what, command...
    local what=$1; shift
    if "$@" > "$OUT/last.log" 2>&1; then passed=$((passed + 1)); echo "ok   $what"
    else failed=$((failed + 1)); echo "FAIL $what"; sed 's/^/     /' "$OUT/last.log" | tail -20; fi
}

PREFIX="$OUT/prefix"
STAGE="$OUT/stage"
check "make install" ${MAKE:-make} --no-print-directory -s install PREFIX="$PREFIX"
lib=$(ls "$PREFIX"/lib/libtureen.so.*.*.* 2>/dev/null | head -1)
check "the library is installed with its version" test -n "$lib"
check "SONAME is libtureen.so.<major>" bash -c "readelf -d '$lib' | grep -q 'SONAME.*\[libtureen\.so\.[0-9]*\]'"
check "libtureen.so and libtureen.so.<major> link to it" bash -c \
    "[ \"\$(readlink -f '$PREFIX/lib/libtureen.so')\" = \"\$(readlink -f '$lib')\" ] && ls '$PREFIX'/lib/libtureen.so.[0-9] >/dev/null"
check "tureen.h and tureen.pc are installed" test -f "$PREFIX/include/tureen.h" -a -f "$PREFIX/lib/pkgconfig/tureen.pc"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
check "pkg-config knows tureen and its version" bash -c \
    "pkg-config --exists tureen && [ \"\$(pkg-config --modversion tureen)\" = \"\$(basename '$lib' | sed 's/libtureen\.so\.//')\" ]"
check "a C program builds with pkg-config alone" bash -c \
    "${CC:-cc} -std=c99 -Wall -Werror examples/c/quickstart.c \$(pkg-config --cflags --libs tureen) -o '$OUT/app'"
check "it has no rpath" bash -c "! readelf -d '$OUT/app' | grep -qE 'R(UN)?PATH'"
check "it runs against the installed library" bash -c \
    "mkdir -p '$OUT/run' && LD_LIBRARY_PATH='$PREFIX/lib' '$OUT/app' '$OUT/run' && LD_LIBRARY_PATH='$PREFIX/lib' ldd '$OUT/app' | grep -q '$PREFIX/lib/libtureen.so'"
check "DESTDIR stages an install under another root" bash -c \
    "${MAKE:-make} --no-print-directory -s install PREFIX=/usr/local DESTDIR='$STAGE' && test -f '$STAGE/usr/local/lib/pkgconfig/tureen.pc' && grep -q '^prefix=/usr/local$' '$STAGE/usr/local/lib/pkgconfig/tureen.pc'"
check "make uninstall removes what install put there" bash -c \
    "${MAKE:-make} --no-print-directory -s uninstall PREFIX='$PREFIX' && [ -z \"\$(find '$PREFIX' -type f -o -type l)\" ]"

echo "install tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
