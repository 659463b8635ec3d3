# Tureen: `make demo` runs the examples end to end, `make test` runs every
# test suite. Both install what is missing first (Debian packages, and Python
# tools into .venv), so a fresh machine needs nothing else.

SHELL       := /bin/bash
ROOT        := $(CURDIR)
BUILD       := $(ROOT)/build
LIBDIR      := $(ROOT)/.build/release
LIB         := $(LIBDIR)/libtureen.so
MAP         := $(BUILD)/tureen.map
VENV        := $(ROOT)/.venv
PY          := $(VENV)/bin/python
APT_PKGS    := libsqlcipher-dev libsqlcipher0 sqlcipher libcurl4-openssl-dev libsqlite3-dev valgrind python3-venv postgresql \
               libcjson-dev openssl
CC          ?= cc
CLANG       ?= $(shell command -v clang 2>/dev/null || echo /opt/swift/usr/bin/clang)
CFLAGS_STRICT := -std=c99 -Wall -Wextra -pedantic -Werror -I$(ROOT)/include
LDTUREEN    := -L$(LIBDIR) -ltureen -Wl,-rpath,$(LIBDIR)
# The C examples, one or more per area of the header; those whose usage line
# takes KINTO_URL run against the Kinto that the demo and the tests start.
C_EXAMPLES       := $(basename $(notdir $(wildcard examples/c/*.c)))
C_KINTO_EXAMPLES := $(basename $(notdir $(shell grep -l '^ \* Usage: [a-z_]* KINTO_URL' examples/c/*.c)))
C_EXAMPLE_FLAGS  := $(CFLAGS_STRICT) -I/usr/include/cjson
C_EXAMPLE_LIBS   := $(LDTUREEN) -lcjson -lpthread
export C_EXAMPLES C_KINTO_EXAMPLES
SWIFT_SRCS  := $(shell find Sources -name '*.swift' -o -name '*.c' -o -name '*.h' -o -name '*.modulemap') Package.swift

export TUREEN_LIB := $(LIB)
export PYTHONPATH := $(ROOT)/bindings/python

.PHONY: all deps lib test swift-test c-test py-test fuzz-test fuzz sanitize-test tsan-test demo bench install uninstall wheel clean

all: lib

# Debian packages: installed only when one is missing.
deps: $(BUILD)/.deps
$(BUILD)/.deps: Makefile
	@mkdir -p $(BUILD)
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@touch $@

# Python tools for the tests, in a venv under the repository. The Debian
# packages come first: python3-venv makes the venv, and Kinto (the sync tests'
# server) needs the PostgreSQL server for its PostgreSQL backend.
$(VENV)/.ok: bindings/python/pyproject.toml Makefile
	@$(MAKE) --no-print-directory $(BUILD)/.deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q pytest "kinto[postgresql]>=26.5,<27" "kinto-attachment>=8,<9" "kinto-http>=11,<12" "gunicorn>=23,<24" "setuptools>=70.1,<82" wheel "mypy>=1.10"
	@touch $@

# The linker version script is generated from the header, so the library
# exports exactly what the header declares.
$(MAP): include/tureen.h
	@mkdir -p $(BUILD)
	@{ echo "/* generated from include/tureen.h by the Makefile */"; echo "{ global:"; \
	  grep -oE '\btureen_[a-z0-9_]+[[:space:]]*\(' include/tureen.h | tr -d '( \t' | sort -u | sed 's/$$/;/'; \
	  echo "local: *; };"; } > $@

# Zero compiler warnings: a new one fails the build (and so `make test`).
SWIFT_STRICT := -Xswiftc -warnings-as-errors

# The version, from the header: TUREEN_VERSION_NUMBER = major*10000 + minor*100 + patch.
VERSION_NUMBER := $(shell sed -n 's/^\#define TUREEN_VERSION_NUMBER \([0-9]*\).*/\1/p' include/tureen.h)
MAJOR       := $(shell echo $$(( $(VERSION_NUMBER) / 10000 )))
VERSION     := $(MAJOR).$(shell echo $$(( $(VERSION_NUMBER) / 100 % 100 ))).$(shell echo $$(( $(VERSION_NUMBER) % 100 )))
SONAME      := libtureen.so.$(MAJOR)

lib: $(LIB)
$(LIB): $(BUILD)/.deps $(MAP) $(SWIFT_SRCS)
	swift build -c release --product tureen -Xswiftc -static-stdlib $(SWIFT_STRICT) -Xlinker --version-script=$(MAP) \
	  -Xlinker -soname=$(SONAME)
	@# Programs linked against it load it by its SONAME.
	@ln -sf libtureen.so $(LIBDIR)/$(SONAME)
	@touch $@

# The test build with fault points (docs/faults.md): the TUREEN_FAULTS
# condition compiles them in; nothing else differs from `make lib` but the
# debug configuration, which builds in about half the time of a release one
# (its tests are small; FAULT_CONFIG=release for long runs). The release
# library carries none of it (test_faults.py reads both files to be sure).
FAULT_CONFIG ?= debug
FAULT_DIR   := $(ROOT)/.build/faults
FAULT_LIB   := $(FAULT_DIR)/$(FAULT_CONFIG)/libtureen.so
export TUREEN_FAULT_LIB := $(FAULT_LIB)
.PHONY: lib-faults fault-test
lib-faults: $(FAULT_LIB)
$(FAULT_LIB): $(BUILD)/.deps $(MAP) $(SWIFT_SRCS)
	swift build -c $(FAULT_CONFIG) --build-path $(FAULT_DIR) --product tureen -Xswiftc -DTUREEN_FAULTS -Xswiftc -static-stdlib \
	  $(SWIFT_STRICT) -Xlinker --version-script=$(MAP) -Xlinker -soname=$(SONAME)
	@touch $@

# The fault tests alone (py-test runs them too).
fault-test: $(LIB) $(FAULT_LIB) $(VENV)/.ok
	$(PY) -m pytest bindings/python/tests/test_faults.py -q

# make install PREFIX=/usr/local [DESTDIR=...]: the library with its SONAME
# and links, the header and tureen.pc; make uninstall removes them.
PREFIX      ?= /usr/local
INSTALL_LIB := $(DESTDIR)$(PREFIX)/lib
INSTALL_INC := $(DESTDIR)$(PREFIX)/include
install: $(LIB)
	install -d $(INSTALL_LIB)/pkgconfig $(INSTALL_INC)
	install -m 0755 $(LIB) $(INSTALL_LIB)/libtureen.so.$(VERSION)
	ln -sf libtureen.so.$(VERSION) $(INSTALL_LIB)/$(SONAME)
	ln -sf $(SONAME) $(INSTALL_LIB)/libtureen.so
	install -m 0644 include/tureen.h $(INSTALL_INC)/tureen.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' packaging/tureen.pc.in > $(INSTALL_LIB)/pkgconfig/tureen.pc
	@# A system prefix: tell the loader (not for a staged DESTDIR or a private prefix).
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && ldconfig -p >/dev/null 2>&1 && grep -qs "$(PREFIX)/lib" /etc/ld.so.conf /etc/ld.so.conf.d/*; then ldconfig; fi

# make wheel: build/wheel/tureen-<version>-py3-none-linux_x86_64.whl with the
# library inside. Built from a copy of the package, so nothing is written
# into the source tree. No manylinux tag: the library needs the system's
# libsqlcipher0 and libcurl, which a manylinux wheel may not assume.
WHEEL_DIR   := $(BUILD)/wheel
wheel: $(LIB) $(VENV)/.ok
	@rm -rf $(BUILD)/wheel-src $(WHEEL_DIR) && mkdir -p $(BUILD)/wheel-src $(WHEEL_DIR)
	@cp -r bindings/python/tureen bindings/python/pyproject.toml bindings/python/README.md $(BUILD)/wheel-src/
	@rm -rf $(BUILD)/wheel-src/tureen/__pycache__
	@cp $(LIB) $(BUILD)/wheel-src/tureen/libtureen.so
	@cp packaging/wheel_setup.py $(BUILD)/wheel-src/setup.py
	cd $(BUILD)/wheel-src && $(PY) -m pip wheel -q --no-deps --no-build-isolation -w $(WHEEL_DIR) .
	@ls $(WHEEL_DIR)/*.whl

uninstall:
	rm -f $(INSTALL_LIB)/libtureen.so.$(VERSION) $(INSTALL_LIB)/$(SONAME) $(INSTALL_LIB)/libtureen.so \
	  $(INSTALL_LIB)/pkgconfig/tureen.pc $(INSTALL_INC)/tureen.h

# pytest runs last: its closing line ("N passed") is the run's last word
# from a test runner, which CI reads (cargo's doc-tests close on "0 passed").
test: swift-test c-test rust-test node-test fuzz-test py-test
	@echo "all test suites passed"

# The Node.js binding (bindings/node): an N-API addon built by the system
# compiler against the machine's Node headers, with no npm package. Node and
# its headers come from Debian (nodejs; libnode-dev where nodejs lacks
# them). Its tests and the example run against a Kinto started here.
.PHONY: node-addon node-test
NODE_ADDON  := $(BUILD)/node/tureen.node
NODE_SRCS   := $(wildcard bindings/node/src/*.c)
node-addon: $(NODE_ADDON)
$(NODE_ADDON): $(LIB) $(NODE_SRCS) $(wildcard bindings/node/src/*.h) include/tureen.h
	@missing=""; command -v node >/dev/null || missing=nodejs; \
	[ -f /usr/include/node/node_api.h ] || missing="$$missing libnode-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -pedantic -Werror -fPIC -shared \
	  -I/usr/include/node -I$(ROOT)/include $(NODE_SRCS) $(LDTUREEN) -o $@

node-test: $(NODE_ADDON) $(VENV)/.ok
	@KDIR=$(BUILD)/node/kinto; \
	trap '$(PY) bindings/python/tests/servers.py kinto stop --dir "$(BUILD)/node/kinto" >/dev/null 2>&1' EXIT; \
	TUREEN_KINTO_URL=$$($(PY) bindings/python/tests/servers.py kinto start --dir $$KDIR) || { tail -20 $$KDIR/kinto.log; exit 1; }; \
	export TUREEN_KINTO_URL TUREEN_NODE_ADDON=$(NODE_ADDON); \
	rm -rf $(BUILD)/node/example && mkdir -p $(BUILD)/node/example && \
	node --test bindings/node/test/*.test.js && node examples/node/quickstart.js $(BUILD)/node/example "$$TUREEN_KINTO_URL"

# Coverage-guided fuzzing of the parsers (libFuzzer with AddressSanitizer
# through swiftc; see fuzz/run.sh): `make fuzz FUZZ_SECONDS=N` runs each
# target N seconds; `make test` runs each for a short smoke, over its seeds
# and the crashers kept as regression inputs. The instrumented build is
# cached in build/fuzz and redone only when a source changes.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 3
fuzz: $(BUILD)/.deps
	@BUILD=$(BUILD) bash fuzz/run.sh $(FUZZ_SECONDS)

fuzz-test: $(BUILD)/.deps
	@FUZZ_FRESH=1 BUILD=$(BUILD) bash fuzz/run.sh $(FUZZ_SMOKE_SECONDS)

swift-test: $(BUILD)/.deps
	swift test $(SWIFT_STRICT)

c-test: $(LIB) $(VENV)/.ok
	@LIB=$(LIB) CC=$(CC) CLANG=$(CLANG) BUILD=$(BUILD) bash Tests/c/run.sh
	@MAKE="$(MAKE)" CC=$(CC) BUILD=$(BUILD) bash Tests/install/test_install.sh

py-test: $(LIB) $(FAULT_LIB) $(VENV)/.ok
	@# The package and the examples type-check strictly, as a user's code would.
	$(PY) -m mypy --strict --no-error-summary bindings/python/tureen examples/python
	$(PY) -m pytest bindings/python/tests -q

# The Rust crates (bindings/rust; no crates.io dependencies, so offline):
# their tests against this build's library and a Kinto on loopback, then the
# first example. Warnings fail it, as they fail the library's build.
CARGO       ?= cargo
RUST_ENV    := TUREEN_LIB_DIR=$(LIBDIR) CARGO_TARGET_DIR=$(BUILD)/rust-target RUSTFLAGS="-D warnings"
.PHONY: rust-test
rust-test: $(LIB) $(VENV)/.ok
	@mkdir -p $(BUILD)/rust-kinto
	@trap '$(PY) $(ROOT)/bindings/python/tests/servers.py kinto stop --dir $(BUILD)/rust-kinto >/dev/null 2>&1' EXIT; \
	url=$$($(PY) bindings/python/tests/servers.py kinto start --dir $(BUILD)/rust-kinto) || exit 1; \
	cd bindings/rust && TUREEN_KINTO_URL=$$url $(RUST_ENV) $(CARGO) test --offline -q && \
	$(RUST_ENV) $(CARGO) run --offline -q --example first $(BUILD)

demo: $(LIB) $(VENV)/.ok
	@mkdir -p $(BUILD)/demo $(BUILD)/examples
	@for x in $(C_EXAMPLES); do \
	  echo "$(CC) examples/c/$$x.c"; \
	  $(CC) $(C_EXAMPLE_FLAGS) examples/c/$$x.c $(C_EXAMPLE_LIBS) -o $(BUILD)/examples/$$x || exit 1; \
	done
	@for x in $(filter-out $(C_KINTO_EXAMPLES),$(C_EXAMPLES)); do \
	  echo "== C: examples/c/$$x.c"; $(BUILD)/examples/$$x $(BUILD)/demo || exit 1; \
	done
	$(PY) examples/python/quickstart.py $(BUILD)/demo/quickstart-py.tureen
	@PY=$(PY) BUILD=$(BUILD) bash examples/sync_demo.sh

# The C and Python suites against a build of the library with
# AddressSanitizer (Swift offers no UndefinedBehaviorSanitizer on Linux; its
# own arithmetic and bounds checks trap instead, and stay on in release
# builds); the C test programs are built with ASan and UBSan. Not part of
# `make test`: it rebuilds the library (see README for the time it takes).
# Left out here (they run in `make test`): the sanitizer runtime cannot run
# code loaded with RTLD_DEEPBIND, which is how Tureen binds SQLCipher when
# the host already loaded the system SQLite; and ASan's shadow memory cannot
# live under the address-space limit the flood tests set.
SAN_DIR     := $(ROOT)/.build/sanitize
SAN_LIB     := $(SAN_DIR)/release/libtureen.so
sanitize-test: $(BUILD)/.deps $(MAP) $(VENV)/.ok
	swift build -c release --build-path $(SAN_DIR) --product tureen -Xswiftc -sanitize=address \
	  -Xswiftc -static-stdlib -Xlinker --version-script=$(MAP)
	@SANITIZE=1 LIB=$(SAN_LIB) CC=$(CLANG) CLANG=$(CLANG) BUILD=$(BUILD)/sanitize bash Tests/c/run.sh
	LD_PRELOAD=$$($(CLANG) -print-file-name=libclang_rt.asan-x86_64.so) \
	  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 TUREEN_LIB=$(SAN_LIB) \
	  $(PY) -m pytest bindings/python/tests -q -p no:cacheprovider \
	  -k "not test_system_sqlite_in_global_scope and not test_a_flood_fails_the_call_not_the_process"

# The same with ThreadSanitizer: the library built with -sanitize=thread, the
# C tests (the stress test and every test that syncs or listens on threads)
# and the Python tests that use threads, which load the runtime first through
# LD_PRELOAD (with the toolchain's libdispatch, which the runtime intercepts).
# Left out as in sanitize-test, and the test that sets an address-space limit
# to prove the 200 MiB test's limit bites: TSan's shadow cannot live under it. Not part of `make test` either: the build and the runs take
# several minutes, and a report stops the run (halt_on_error).
TSAN_DIR    := $(ROOT)/.build/tsan
TSAN_LIB    := $(TSAN_DIR)/release/libtureen.so
TSAN_PY     := test_library.py test_store.py test_soups.py test_listeners.py test_sync_callback.py \
               test_sync_loop.py test_cache.py test_blobs.py test_rekey.py
tsan-test: $(BUILD)/.deps $(MAP) $(VENV)/.ok
	swift build -c release --build-path $(TSAN_DIR) --product tureen -Xswiftc -sanitize=thread \
	  -Xswiftc -static-stdlib -Xlinker --version-script=$(MAP)
	@SANITIZE=thread LIB=$(TSAN_LIB) CC=$(CLANG) CLANG=$(CLANG) BUILD=$(BUILD)/tsan bash Tests/c/run.sh
	@rm -f $(BUILD)/tsan/report.*
	cd bindings/python/tests && SL=$$(dirname $(CLANG))/../lib/swift/linux && \
	  LD_PRELOAD="$$($(CLANG) -print-file-name=libclang_rt.tsan-x86_64.so) $$SL/libdispatch.so $$SL/libBlocksRuntime.so" \
	  TSAN_OPTIONS=halt_on_error=1:suppressions=$(ROOT)/Tests/tsan.supp:log_path=$(BUILD)/tsan/report TUREEN_LIB=$(TSAN_LIB) \
	  $(PY) -m pytest $(TSAN_PY) -q -p no:cacheprovider \
	  -k "not test_system_sqlite_in_global_scope and not test_a_flood_fails_the_call_not_the_process \
	      and not test_the_memory_limit_of_the_big_test_would_catch_holding_the_file" \
	  || { cat $(BUILD)/tsan/report.* 2>/dev/null; exit 1; }

# Side-by-side benchmarks (Tureen against raw SQLCipher), then Kinto's feed and
# many devices converging on Kinto behind gunicorn; see bench/README.md.
bench: $(LIB) $(VENV)/.ok
	@LIB=$(LIB) BUILD=$(BUILD) bash bench/run.sh

# The Jepsen-style run of docs/proof.md: 24 devices behind a fault-injecting
# proxy, kills and partitions, SEEDS seeds from SEED (a failing seed prints
# the make proof line that replays it).
SEED        ?= 20261129
SEEDS       ?= 20
# --strict: a write re-sent without a precondition over a later one (T, U, T)
# fails the run; since issue 47's fix nothing but a retry inside one run
# (or a rest target without "concurrency") may send one.
PROOF_ARGS  ?= --strict
.PHONY: proof
proof: $(LIB) $(VENV)/.ok
	TUREEN_LIB=$(LIB) $(PY) bench/proof.py --seed $(SEED) --seeds $(SEEDS) $(PROOF_ARGS)

clean:
	rm -rf .build $(BUILD)
