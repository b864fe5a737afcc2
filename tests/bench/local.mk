# tests/bench/local.mk: `make bench`, the benchmarks (not part of make check).
#
# `make bench` builds one program, tests/bench/bench, and runs it: every piece
# in name order, each printing its own table.  BENCH_ARGS picks one piece and
# passes it options, e.g.
#	make bench BENCH_ARGS='core --procs 1000,5000 --no-peers'
#	tests/bench/bench --list	(the pieces)
#	tests/bench/bench core --help
#
# Adding a piece is one line here:
#	tests_bench_bench_SOURCES += tests/bench/bench_feed.c
# where bench_feed.c registers a struct bench_piece from a constructor (the
# example is in tests/bench/bench.h, the real one in bench_core.c).  The
# helpers in bench.h (CPU time, idle processes that are always reaped, top and
# htop as peers, syscalls counted by strace) are there to be shared; a piece
# that needs another library adds it with one more line:
#	tests_bench_bench_LDADD += $(SOMETHING_LIBS)
#
# A benchmark that is a program of its own (its own main(), no arguments
# needed) joins with one line too, run after the pieces when BENCH_ARGS is
# empty:
#	BENCH_RUN += tests/bench/files_bench
#
# The program is not built by `make` or `make check` (EXTRA_PROGRAMS), and it
# is a real executable, not a libtool wrapper, so that profilers see it:
#	valgrind --tool=callgrind --toggle-collect=core_steady_pass tests/bench/bench core --sample-only 3

EXTRA_PROGRAMS += tests/bench/bench
CLEANFILES += tests/bench/bench

tests_bench_bench_SOURCES = \
	tests/bench/bench.h \
	tests/bench/bench.c \
	tests/bench/idle.c \
	tests/bench/peers.c
tests_bench_bench_SOURCES += tests/bench/bench_core.c
tests_bench_bench_SOURCES += tests/bench/bench_log.c
tests_bench_bench_SOURCES += tests/bench/bench_iter.c
tests_bench_bench_SOURCES += tests/bench/bench_latency.c
tests_bench_bench_LDADD = libvmon/libvmon.la
tests_bench_bench_LDFLAGS = -no-install $(VMON_LDFLAGS) -pthread
tests_bench_bench_CFLAGS = $(AM_CFLAGS) -pthread

BENCH_ARGS =
BENCH_RUN =
bench: tests/bench/bench $(BENCH_RUN)
	$(AM_V_at)tests/bench/bench $(BENCH_ARGS)
	$(AM_V_at)set -- $(BENCH_ARGS); if test $$# -eq 0; then \
		for p in $(BENCH_RUN); do printf '\n######## %s\n\n' "$$p"; ./$$p || exit 1; done; \
	fi
.PHONY: bench

# PROC_FILES: sampling a process with as many fds as its fd limit allows
# (50,000 asked; files_bench.c says what it measures)
EXTRA_PROGRAMS += tests/bench/files_bench
CLEANFILES += tests/bench/files_bench
tests_bench_files_bench_SOURCES = tests/bench/files_bench.c
tests_bench_files_bench_LDADD = libvmon/libvmon.la
tests_bench_files_bench_LDFLAGS = -no-install $(VMON_LDFLAGS)
BENCH_RUN += tests/bench/files_bench

# The library's own memory: the RSS of a plain PROC_ALL client with N idle
# processes added (tests/bench/lib_rss.c)
EXTRA_PROGRAMS += tests/bench/lib_rss
CLEANFILES += tests/bench/lib_rss
tests_bench_lib_rss_SOURCES = tests/bench/lib_rss.c
tests_bench_lib_rss_LDADD = libvmon/libvmon.la
tests_bench_lib_rss_LDFLAGS = -no-install $(VMON_LDFLAGS)
BENCH_RUN += tests/bench/lib_rss

# The event feed's benchmark, a program of its own (tests/bench/feed_bench.c):
# what each backend sees of a storm of short-lived processes, and what it
# costs, against polling.  `make bench-feed FEED_BENCH_ARGS='--seconds 5
# --rates 1000,max --backends ebpf,none'` runs it alone, with options.
EXTRA_PROGRAMS += tests/bench/feed_bench
CLEANFILES += tests/bench/feed_bench
tests_bench_feed_bench_SOURCES = tests/bench/feed_bench.c
tests_bench_feed_bench_CPPFLAGS = $(AM_CPPFLAGS) -DFEED_CHILD='"$(abs_top_builddir)/tests/feed_child"'
tests_bench_feed_bench_LDADD = libvmon/libvmon.la
tests_bench_feed_bench_LDFLAGS = -no-install $(VMON_LDFLAGS)
# it execs tests/feed_child: built first
EXTRA_tests_bench_feed_bench_DEPENDENCIES = tests/feed_child$(EXEEXT)
BENCH_RUN += tests/bench/feed_bench

FEED_BENCH_ARGS =
bench-feed: tests/bench/feed_bench$(EXEEXT) tests/feed_child$(EXEEXT)
	$(AM_V_at)tests/bench/feed_bench $(FEED_BENCH_ARGS)
.PHONY: bench-feed

# Where a running process's BPF programs spend their time, by source line:
# perf samples mapped through the JIT's line table, which the kernel keeps
# for each loaded program (tests/bench/bpf_lines.py --help; root).
EXTRA_DIST += tests/bench/bpf_lines.py
