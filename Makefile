# uraid — top-level build. GNU make; everything lands in build/.
#   make            release library + CLI (build/rel)
#   make check      deps, asan/ubsan unit tests, integration tests, fuzz smoke
#   make demo       deps + the main job on file-backed members in a temp dir
#   make bench      performance benchmarks: parity, engine (not part of check)
#   make bench-export  NBD export throughput vs nbdkit memory and btrfs raid5
#   make bench-scale   attached device vs NBD export vs nbdkit memory, RAID5 writes by CPUs
#   make lint       clang-format --dry-run + cppcheck
#   make install DESTDIR=...  (also the udev rule and systemd units of contrib/)

PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
# udev reads /usr/lib/udev and /etc/udev, never /usr/local
UDEVRULESDIR   ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev/rules.d,/etc/udev/rules.d)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
VERSION   := 0.1.0

CC        ?= gcc
WARN      := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
BASEFLAGS := -std=gnu11 -fPIC -pthread -D_GNU_SOURCE -Iinclude -Isrc $(WARN)
RELFLAGS  := -O2 -g
ASANFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined

# Optional system libraries, detected once. Code tests the HAVE_* macros.
HAVE_ISAL    := $(shell test -f /usr/include/isa-l.h && echo 1)
HAVE_URING   := $(shell test -f /usr/include/liburing.h && echo 1)
HAVE_NBDKIT  := $(shell test -f /usr/include/nbdkit-plugin.h && echo 1)
DEFS :=
LIBS := -lpthread -lm
ifeq ($(HAVE_ISAL),1)
DEFS += -DHAVE_ISAL=1
LIBS += -lisal
endif
ifeq ($(HAVE_URING),1)
DEFS += -DHAVE_URING=1
LIBS += -luring
endif
# NBD members (src/member/member_nbd.c): libnbd's link flags from pkg-config.
HAVE_LIBNBD  := $(shell pkg-config --exists libnbd 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBNBD),1)
DEFS += -DHAVE_LIBNBD=1 $(shell pkg-config --cflags libnbd)
LIBS += $(shell pkg-config --libs libnbd)
endif

# The libraries a program linked with build/rel/liburaid.a needs (tests that
# build small programs on the public API: tests/lib.sh's uraid_libs).
.PHONY: print-libs
print-libs:
	@echo $(LIBS)

LIB_DIRS  := src/util src/parity src/layout src/meta src/member src/probe \
             $(sort $(shell find src/engine -type d)) src/geom src/control
LIB_SRCS  := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
CLI_SRCS  := src/main.c $(sort $(wildcard src/cli/*.c src/bench/*.c src/export/*/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz_*.c))

REL  := build/rel
ASAN := build/asan

rel_obj  = $(patsubst %.c,$(REL)/%.o,$(1))
asan_obj = $(patsubst %.c,$(ASAN)/%.o,$(1))

# SIMD files are compiled for their instruction set; the dispatcher only calls
# them after checking the CPU at run time.
simd_flags = $(if $(findstring _avx512,$(1)),-mavx512f -mavx512bw -mavx512vl -mavx512dq -mgfni,$(if $(findstring _avx2,$(1)),-mavx2 -mfma,))

.PHONY: all lib cli check unit integration fuzz-smoke fuzz demo bench lint install clean deps tests-build torture
all: $(REL)/liburaid.a $(REL)/liburaid.so $(REL)/uraid $(REL)/uraid.pc

$(REL)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(RELFLAGS) $(DEFS) $(call simd_flags,$<) -MMD -MP -c $< -o $@

$(ASAN)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(ASANFLAGS) $(DEFS) $(call simd_flags,$<) -MMD -MP -c $< -o $@

$(REL)/liburaid.a: $(call rel_obj,$(LIB_SRCS))
	@rm -f $@; ar rcs $@ $^

# Simulated members (disk models, fault injection, crash): for the bench and
# the tests, not part of liburaid.
SIM_SRCS  := $(sort $(wildcard src/sim/*.c))
$(REL)/liburaid_sim.a: $(call rel_obj,$(SIM_SRCS))
	@rm -f $@; ar rcs $@ $^
$(ASAN)/liburaid_sim.a: $(call asan_obj,$(SIM_SRCS))
	@rm -f $@; ar rcs $@ $^

$(REL)/liburaid.so: $(call rel_obj,$(LIB_SRCS))
	$(CC) -shared -Wl,-soname,liburaid.so.0 -o $@ $^ $(LIBS)

$(REL)/uraid: $(call rel_obj,$(CLI_SRCS)) $(REL)/liburaid_sim.a $(REL)/liburaid.a
	$(CC) -o $@ $^ $(LIBS)

# The nbdkit plugin (plugins/): liburaid linked in statically with its
# symbols kept private; nbdkit_* resolve against the nbdkit executable.
PLUGIN := $(REL)/nbdkit-uraid-plugin.so
NBDKIT_PLUGINDIR = $(shell pkg-config --variable=plugindir nbdkit 2>/dev/null)
.PHONY: plugin bench-export bench-scale
plugin: $(PLUGIN)
ifeq ($(HAVE_NBDKIT),1)
all: $(PLUGIN)
endif
$(PLUGIN): plugins/uraid.c plugins/uraid_geom.h include/uraid.h $(REL)/liburaid.a
	$(CC) $(BASEFLAGS) $(RELFLAGS) $(DEFS) -shared -Wl,--exclude-libs,ALL -o $@ $< \
	    $(REL)/liburaid.a $(LIBS)

bench-export: deps
	$(MAKE) all
	scripts/bench-export

bench-scale: deps
	$(MAKE) all
	scripts/bench-scale

$(REL)/uraid.pc: uraid.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|$(LIBS)|' $< > $@

# Sanitizer build: library, CLI and every unit test.
$(ASAN)/liburaid.a: $(call asan_obj,$(LIB_SRCS))
	@rm -f $@; ar rcs $@ $^

$(ASAN)/uraid: $(call asan_obj,$(CLI_SRCS)) $(ASAN)/liburaid_sim.a $(ASAN)/liburaid.a
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LIBS)

$(ASAN)/tests/%: $(ASAN)/tests/unit/%.o $(ASAN)/liburaid_sim.a $(ASAN)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LIBS)

TEST_BINS := $(patsubst tests/unit/%.c,$(ASAN)/tests/%,$(TEST_SRCS))
tests-build: $(TEST_BINS) $(ASAN)/uraid $(REL)/uraid

deps:
	@scripts/deps

# The full suite: unit tests under ASan/UBSan, integration scripts against the
# release CLI, fuzz smoke runs. tests/run prints "N passed, N failed".
# The build runs one job per CPU (serial, it was a fifth of a CI run).
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: deps
	$(MAKE) -j$(BUILD_JOBS) all tests-build
	@tests/run

demo: deps
	$(MAKE) -j$(BUILD_JOBS) all
	@scripts/demo

bench: deps
	$(MAKE) all
	$(REL)/uraid bench parity
	$(REL)/uraid bench engine
	scripts/bench-sim

# Crash torture (tests/torture/run): the crash tests built optimised, run
# with thousands of crash points. TORTURE_TRIALS / TORTURE_SEED tune it.
$(REL)/tests/%: $(REL)/tests/unit/%.o $(REL)/liburaid_sim.a $(REL)/liburaid.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBS)
torture: all $(REL)/tests/test_engine_crash $(REL)/tests/test_sim_crash $(REL)/tests/test_journal_crash \
         $(REL)/tests/test_engine_reshape $(REL)/tests/test_engine_reshape_fail \
         $(REL)/tests/test_engine_bitmap_resize
	@tests/torture/run

FUZZ_BINS := $(patsubst fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ := build/fuzz
FUZZFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined
$(FUZZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(filter-out -Werror,$(BASEFLAGS)) $(FUZZFLAGS) $(DEFS) $(call simd_flags,$<) -c $< -o $@
$(FUZZ)/%: $(FUZZ)/obj/fuzz/%.o $(patsubst %.c,$(FUZZ)/obj/%.o,$(LIB_SRCS) $(SIM_SRCS))
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LIBS)
# The bench's NBD server lives with the CLI, not in the library.
$(FUZZ)/fuzz_nbd: $(FUZZ)/obj/src/bench/bench_nbd.o
# Kept after linking (make deletes a pattern rule's intermediates): a rebuild
# of one target would otherwise recompile the whole library with clang.
.SECONDARY: $(patsubst %.c,$(FUZZ)/obj/%.o,$(LIB_SRCS) $(SIM_SRCS) $(FUZZ_SRCS))
fuzz-build: $(FUZZ_BINS)
fuzz: deps fuzz-build
	@for f in $(FUZZ_BINS); do echo "== $$f"; mkdir -p build/corpus/$$(basename $$f); \
	  $$f -max_total_time=$${FUZZ_SECONDS:-300} build/corpus/$$(basename $$f) fuzz/corpus/$$(basename $$f) || exit 1; done

# Every C file and header we write (tests/unit/*.h and plugins/*.h included).
LINT_SRCS := $(LIB_SRCS) $(SIM_SRCS) $(CLI_SRCS) $(TEST_SRCS) $(FUZZ_SRCS) \
    $(wildcard include/*.h src/*/*.h src/*/*/*.h tests/*.h tests/unit/*.h tests/integration/*.c plugins/*.[ch] fuzz/*.h)
# Both checkers run even when the first complains, so one run lists everything.
# clang-tidy (bugprone-*, clang-analyzer-*) is not part of it: on this tree it
# takes ~4 minutes on 2 cores against cppcheck's ~40 s, and its findings were
# false positives or style (suspicious-string-compare on !strcmp).
lint:
	@rc=0; \
	clang-format --dry-run --Werror $(LINT_SRCS) || rc=1; \
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr --suppress=missingIncludeSystem -j2 -Iinclude -Isrc \
	    $(filter %.c,$(LINT_SRCS)) || rc=1; \
	exit $$rc

install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(REL)/liburaid.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(REL)/liburaid.so $(DESTDIR)$(LIBDIR)/liburaid.so.0
	ln -sf liburaid.so.0 $(DESTDIR)$(LIBDIR)/liburaid.so
	install -m 644 include/uraid.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(REL)/uraid.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 755 $(REL)/uraid $(DESTDIR)$(BINDIR)/
	install -m 644 man/uraid.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 644 man/uraid.conf.5 $(DESTDIR)$(MANDIR)/man5/
	for f in contrib/udev/*.rules; do \
	  sed 's|@BINDIR@|$(BINDIR)|g' $$f >$(DESTDIR)$(UDEVRULESDIR)/$$(basename $$f) || exit 1; done
	for f in contrib/systemd/*.service; do \
	  sed 's|@BINDIR@|$(BINDIR)|g' $$f >$(DESTDIR)$(SYSTEMDUNITDIR)/$$(basename $$f) || exit 1; done
ifeq ($(HAVE_NBDKIT),1)
	install -d $(DESTDIR)$(NBDKIT_PLUGINDIR)
	install -m 755 $(PLUGIN) $(DESTDIR)$(NBDKIT_PLUGINDIR)/
endif

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
