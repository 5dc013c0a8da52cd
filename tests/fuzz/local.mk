# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/: one libFuzzer target per parser, built with clang by
# tests/fuzz/fuzz.mk (a sub-make: the tree itself is built by $(CC)) and
# run by tests/fuzz/run.sh for a bounded time over its seed corpus
# (tests/fuzz/README.md).  Built only when the fuzz test runs.
FUZZ_TEST = tests/fuzz/run.sh
TESTS += $(FUZZ_TEST)
EXTRA_DIST += $(FUZZ_TEST) tests/fuzz/fuzz.mk tests/fuzz/README.md \
	tests/fuzz/fuzz.h tests/fuzz/fuzz_decide_common.h \
	tests/fuzz/corpus tests/fuzz/regressions tests/fuzz/PENDING
EXTRA_DIST += tests/fuzz/fuzz_policy.c tests/fuzz/fuzz_topology.c \
	tests/fuzz/fuzz_trace.c tests/fuzz/fuzz_trace_compressed.c \
	tests/fuzz/fuzz_trace_file.c tests/fuzz/fuzz_beacon.c \
	tests/fuzz/fuzz_influx.c tests/fuzz/fuzz_jobstats.c \
	tests/fuzz/fuzz_decide_job.c tests/fuzz/fuzz_decide_state.c \
	tests/fuzz/fuzz_decide_health.c tests/fuzz/fuzz_profile_import.c
AM_TESTS_ENVIRONMENT += FUZZ_CC='$(FUZZ_CC)'; export FUZZ_CC;

tests/fuzz/run.log: fuzz-build
fuzz-build:
	+@if test -n "$(FUZZ_CC)"; then \
		$(MAKE) -f $(abs_top_srcdir)/tests/fuzz/fuzz.mk \
			FUZZ_CC='$(FUZZ_CC)' top_srcdir='$(abs_top_srcdir)' \
			out='$(abs_top_builddir)/tests/fuzz' \
			top_builddir='$(abs_top_builddir)' \
			sysconfdir='$(sysconfdir)' \
			localstatedir='$(localstatedir)' \
			FUZZ_WARN='$(WARN_CFLAGS)' \
			FUZZ_EXT_CFLAGS='$(YAML_CFLAGS) $(MARIADB_CFLAGS) $(JANSSON_CFLAGS) $(ZSTD_CFLAGS)' \
			FUZZ_EXT_LIBS='$(YAML_LIBS) $(JANSSON_LIBS) $(MARIADB_LIBS) $(SLURM_LIBS) $(ZSTD_LIBS) $(LIBM) -lpthread'; \
	fi
.PHONY: fuzz-build

clean-local: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/obj tests/fuzz/bin tests/fuzz/crashes
.PHONY: clean-fuzz
