# SPDX-License-Identifier: GPL-2.0-or-later
#
# The libFuzzer targets, built by clang while the rest of the tree is built
# by $(CC) (usually gcc): libFuzzer's runtime and its coverage
# instrumentation exist only in clang, and instrumented objects must not
# mix with the tree's libtool objects.  So this GNU make file, run by
# tests/fuzz/local.mk as a sub-make with clang and the tree's flags, compiles
# the library folders the parsers live in (common db topology policies
# allocator monitor profiler: every .c there belongs to a library) once
# more into $(out)/obj, archives them, and links each tests/fuzz/fuzz_*.c
# against that archive into $(out)/bin.  Dependencies are tracked (-MMD),
# so a second run only rebuilds what changed.
#
# Variables from the caller: FUZZ_CC, top_srcdir, top_builddir, out,
# sysconfdir, localstatedir, FUZZ_WARN, FUZZ_EXT_CFLAGS, FUZZ_EXT_LIBS.

FUZZ_CPPFLAGS = -I$(top_srcdir) -I$(top_builddir) \
	-DSYSCONFDIR='"$(sysconfdir)"' -DLOCALSTATEDIR='"$(localstatedir)"' \
	-DFIXTURES='"$(top_srcdir)/tests/fixtures"'

SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer $(SAN)
LIB_DIRS = common db topology policies allocator monitor profiler

lib_src := $(foreach d,$(LIB_DIRS),$(wildcard $(top_srcdir)/$(d)/*.c))
lib_obj := $(patsubst $(top_srcdir)/%.c,$(out)/obj/%.o,$(lib_src))
target_src := $(wildcard $(top_srcdir)/tests/fuzz/fuzz_*.c)
targets := $(patsubst $(top_srcdir)/tests/fuzz/%.c,$(out)/bin/%,$(target_src))

# the profile import target never reaches a database (see its source)
$(out)/bin/fuzz_profile_import: EXTRA_LDFLAGS = -Wl,--wrap=db_prepare

all: $(targets)

$(out)/obj/%.o: $(top_srcdir)/%.c
	@mkdir -p $(@D)
	@echo "  FUZZCC   $*.o"
	@$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_WARN) $(FUZZ_EXT_CFLAGS) \
		$(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP \
		-c -o $@ $<

$(out)/obj/libfwdfuzz.a: $(lib_obj)
	@rm -f $@
	@ar rcs $@ $^

$(out)/bin/fuzz_%: $(out)/obj/tests/fuzz/fuzz_%.o $(out)/obj/libfwdfuzz.a
	@mkdir -p $(@D)
	@echo "  FUZZLD   fuzz_$*"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(EXTRA_LDFLAGS) \
		-o $@ $^ $(FUZZ_EXT_LIBS)

.PHONY: all
.SECONDARY:
-include $(lib_obj:.o=.d) $(patsubst $(out)/bin/%,$(out)/obj/tests/fuzz/%.d,$(targets))
