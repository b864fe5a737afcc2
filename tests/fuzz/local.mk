# tests/fuzz/local.mk: `make fuzz`, libFuzzer on the log reader and replay
# (tests/fuzz/fuzz_log.c), for FUZZ_SECONDS (60 by default; CI runs it).
#
# The fuzzer and the whole library are compiled together by clang with
# -fsanitize=fuzzer,address,undefined (Debian: clang and libclang-rt-dev,
# both in ./bootstrap --deps).  It starts from the seed logs in
# tests/fuzz/corpus/ (kept in git; what the run finds goes to a temporary
# copy) and writes what makes it crash to tests/fuzz/crash-*: copy such a
# file to tests/fuzz/crashes/, where make check (test_log's corpus test)
# reads it, under ASan and valgrind too, and fix the reader.
#	make fuzz FUZZ_SECONDS=600
#	tests/fuzz/fuzz_log tests/fuzz/crash-...	(replay one input)

FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_CFLAGS = -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION

VMON_FUZZ_SRCS = $(libvmon_libvmon_la_SOURCES) $(libvmon_util_libvmonutil_la_SOURCES)
tests/fuzz/fuzz_log$(EXEEXT): $(VMON_FUZZ_SRCS) $(VMON_DEFS) tests/fuzz/fuzz_log.c config.h
	$(AM_V_GEN)srcs=; for f in $(VMON_FUZZ_SRCS) tests/fuzz/fuzz_log.c; do \
		case $$f in *.c) srcs="$$srcs $(srcdir)/$$f" ;; esac; \
	done; \
	$(MKDIR_P) tests/fuzz && \
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) -o $@ $$srcs -lpthread || { \
		echo "make fuzz: $(FUZZ_CC) could not build the fuzzer (on Debian: apt-get install clang libclang-rt-dev)" >&2; \
		exit 1; }
CLEANFILES += tests/fuzz/fuzz_log$(EXEEXT)

fuzz: tests/fuzz/fuzz_log$(EXEEXT)
	$(AM_V_at)corpus=$$(mktemp -d "$${TMPDIR:-/tmp}/vmon-fuzz-XXXXXX") && \
	trap 'rm -rf "$$corpus"' EXIT && \
	cp $(srcdir)/tests/fuzz/corpus/* "$$corpus"/ && \
	if test -d $(srcdir)/tests/fuzz/crashes; then cp $(srcdir)/tests/fuzz/crashes/* "$$corpus"/ 2>/dev/null || :; fi && \
	tests/fuzz/fuzz_log -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix=tests/fuzz/ "$$corpus"
.PHONY: fuzz

EXTRA_DIST += tests/fuzz/fuzz_log.c tests/fuzz/tiny_log.py tests/fuzz/corpus tests/fuzz/crashes
