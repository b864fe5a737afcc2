# tests/local.mk: cmocka unit and live tests (make check), and make check-valgrind.
#
# Every test is a cmocka program that exits non-zero on failure; a test that
# needs root or BPF skips itself and prints why (they all run in CI, as root).

noinst_LTLIBRARIES += tests/libtestlib.la
tests_libtestlib_la_SOURCES = tests/testlib.c tests/testlib.h tests/puppet.c tests/puppet.h tests/consistency.c \
	tests/smaps.c tests/smaps.h
tests_libtestlib_la_CPPFLAGS = $(TESTS_CPP)
# (the tree check walks the pid index, util/hash.h, which libvmon.so does not export)
tests_libtestlib_la_LIBADD = libvmon/util/libvmonutil.la

TESTS_CPP = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) -DFIXTURES_DIR='"$(abs_top_srcdir)/tests/fixtures"'
TESTS_LIBS = tests/libtestlib.la libvmon/libvmon.la $(CMOCKA_LIBS)
# real executables, not libtool wrapper scripts, so that valgrind runs the test itself
TESTS_LINK = -no-install $(VMON_LDFLAGS)
# ... and every vmon_sample() of the test checks the tree's consistency after it
# (tests/consistency.c); a program whose own libraries call vmon_sample() must
# list tests/libtestlib.la after them
TESTS_LINK_CHECKED = $(TESTS_LINK) -Wl,--wrap=vmon_sample

VMON_UNIT_TESTS = \
	tests/test_parse \
	tests/test_fixtures \
	tests/test_tree \
	tests/test_live \
	tests/test_fdlimit \
	tests/test_wants \
	tests/test_sched \
	tests/test_files \
	tests/test_files_fixtures

check_PROGRAMS += $(VMON_UNIT_TESTS)
TESTS += $(VMON_UNIT_TESTS)

tests_test_fixtures_SOURCES = tests/test_fixtures.c
tests_test_fixtures_CPPFLAGS = $(TESTS_CPP)
tests_test_fixtures_LDADD = $(TESTS_LIBS)
tests_test_fixtures_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_parse_SOURCES = tests/test_parse.c
tests_test_parse_CPPFLAGS = $(TESTS_CPP)
tests_test_parse_LDADD = $(TESTS_LIBS)
tests_test_parse_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_tree_SOURCES = tests/test_tree.c
tests_test_tree_CPPFLAGS = $(TESTS_CPP)
tests_test_tree_LDADD = $(TESTS_LIBS)
tests_test_tree_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_live_SOURCES = tests/test_live.c
tests_test_live_CPPFLAGS = $(TESTS_CPP)
tests_test_live_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_live_LDADD = $(TESTS_LIBS)
tests_test_live_LDFLAGS = $(TESTS_LINK_CHECKED) -pthread

tests_test_fdlimit_SOURCES = tests/test_fdlimit.c
tests_test_fdlimit_CPPFLAGS = $(TESTS_CPP)
tests_test_fdlimit_LDADD = $(TESTS_LIBS)
tests_test_fdlimit_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_wants_SOURCES = tests/test_wants.c
tests_test_wants_CPPFLAGS = $(TESTS_CPP)
tests_test_wants_LDADD = $(TESTS_LIBS)
tests_test_wants_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_sched_SOURCES = tests/test_sched.c
tests_test_sched_CPPFLAGS = $(TESTS_CPP)
tests_test_sched_LDADD = $(TESTS_LIBS)
tests_test_sched_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_files_SOURCES = tests/test_files.c tests/files_testlib.c tests/files_testlib.h
tests_test_files_CPPFLAGS = $(TESTS_CPP)
tests_test_files_LDADD = $(TESTS_LIBS) -lpthread
tests_test_files_LDFLAGS = $(TESTS_LINK)

tests_test_files_fixtures_SOURCES = tests/test_files_fixtures.c tests/files_testlib.c tests/files_testlib.h
tests_test_files_fixtures_CPPFLAGS = $(TESTS_CPP)
tests_test_files_fixtures_LDADD = $(TESTS_LIBS)
tests_test_files_fixtures_LDFLAGS = $(TESTS_LINK)

EXTRA_DIST += tests/fixtures tests/valgrind.supp

# The unit tests again, each under valgrind: any error or definite leak fails.
VALGRIND_FLAGS = --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--show-leak-kinds=definite,indirect --track-origins=yes --quiet \
	--suppressions=$(abs_top_srcdir)/tests/valgrind.supp
check-valgrind:
	@if test "$(VALGRIND)" = no; then echo "check-valgrind: valgrind not found (apt-get install valgrind)"; exit 1; fi
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(VMON_UNIT_TESTS)' \
		LOG_COMPILER='$(VALGRIND)' AM_LOG_FLAGS='$(VALGRIND_FLAGS)' VMON_UNDER_VALGRIND=1 \
		VMON_HEAVY_AFTER=
.PHONY: check-valgrind

# heavy live tests scale themselves down under valgrind
VMON_UNDER_VALGRIND = 0
AM_TESTS_ENVIRONMENT = VMON_UNDER_VALGRIND='$(VMON_UNDER_VALGRIND)'; export VMON_UNDER_VALGRIND;

# a client written as vwm's charts use the original header, run against children it spawns
# (VMON_UNIT_TESTS are check programs and tests, also under valgrind)
VMON_UNIT_TESTS += tests/test_compat
tests_test_compat_SOURCES = tests/test_compat.c
tests_test_compat_CPPFLAGS = $(TESTS_CPP)
tests_test_compat_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_compat_LDADD = $(TESTS_LIBS)
tests_test_compat_LDFLAGS = $(TESTS_LINK_CHECKED) -pthread

# a client written as vwm's chart code is (a row per node, rows dropped on is_stale before rows
# added on is_new), on short-lived children, children dying in their first read and its own
# process's exit, with each feed backend and none
VMON_UNIT_TESTS += tests/test_chart
tests_test_chart_SOURCES = tests/test_chart.c
tests_test_chart_CPPFLAGS = $(TESTS_CPP)
tests_test_chart_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_chart_LDADD = $(TESTS_LIBS)
tests_test_chart_LDFLAGS = $(TESTS_LINK_CHECKED) -pthread

# the hash table of libvmon/util/hash.h against a plain array of the same entries
VMON_UNIT_TESTS += tests/test_hash
tests_test_hash_SOURCES = tests/test_hash.c
tests_test_hash_CPPFLAGS = $(TESTS_CPP)
tests_test_hash_LDADD = libvmon/util/libvmonutil.la $(CMOCKA_LIBS)
tests_test_hash_LDFLAGS = $(TESTS_LINK)

# the pid index of libvmon/util/pidmap.h against a plain array by pid
VMON_UNIT_TESTS += tests/test_pidmap
tests_test_pidmap_SOURCES = tests/test_pidmap.c
tests_test_pidmap_CPPFLAGS = $(TESTS_CPP)
tests_test_pidmap_LDADD = libvmon/util/libvmonutil.la $(CMOCKA_LIBS)
tests_test_pidmap_LDFLAGS = $(TESTS_LINK)

# parse_copy_numbers() (the task iterator's store writer) against parse_set_ull(), no root needed
VMON_UNIT_TESTS += tests/test_copy_numbers
tests_test_copy_numbers_SOURCES = tests/test_copy_numbers.c libvmon/stores/parse.c libvmon/stores/parse.h
tests_test_copy_numbers_CPPFLAGS = $(TESTS_CPP)
tests_test_copy_numbers_LDADD = libvmon/util/libvmonutil.la $(CMOCKA_LIBS)
tests_test_copy_numbers_LDFLAGS = $(TESTS_LINK)

# the feed's stream (libvmon/feed/stream.c) fed by hand: the exits found after a loss
VMON_UNIT_TESTS += tests/test_stream
tests_test_stream_SOURCES = tests/test_stream.c libvmon/feed/stream.c libvmon/feed/stream.h
tests_test_stream_CPPFLAGS = $(TESTS_CPP)
tests_test_stream_LDADD = libvmon/util/libvmonutil.la $(CMOCKA_LIBS)
tests_test_stream_LDFLAGS = $(TESTS_LINK)

# the BPF ring buffer reader (libvmon/util/bpf_ring.c) against a ring in a memfd, laid out as the kernel's
VMON_UNIT_TESTS += tests/test_bpf_ring
tests_test_bpf_ring_SOURCES = tests/test_bpf_ring.c libvmon/util/bpf_ring.c libvmon/util/bpf_ring.h
tests_test_bpf_ring_CPPFLAGS = $(TESTS_CPP)
tests_test_bpf_ring_LDADD = $(CMOCKA_LIBS)
tests_test_bpf_ring_LDFLAGS = $(TESTS_LINK)

# util/light_skel.c's tries at a BPF load and the verifier's reason it keeps, against a fake kernel
if HAVE_BPF
VMON_UNIT_TESTS += tests/test_light_skel
tests_test_light_skel_SOURCES = tests/test_light_skel.c libvmon/util/light_skel.c libvmon/util/light_skel.h
tests_test_light_skel_CPPFLAGS = $(TESTS_CPP) $(LIBBPF_CFLAGS)
tests_test_light_skel_LDADD = $(CMOCKA_LIBS)
tests_test_light_skel_LDFLAGS = $(TESTS_LINK)
endif

# the task iterator's held table (libvmon/sources/iter_held.c) against a plain list of its tids
VMON_UNIT_TESTS += tests/test_iter_held
tests_test_iter_held_SOURCES = tests/test_iter_held.c libvmon/sources/iter_held.c
tests_test_iter_held_CPPFLAGS = $(TESTS_CPP)
tests_test_iter_held_LDADD = $(CMOCKA_LIBS)
tests_test_iter_held_LDFLAGS = $(TESTS_LINK)

# the read-avoidance rules and the fd budget's priorities, on fixtures and on live children
VMON_UNIT_TESTS += tests/test_skip
tests_test_skip_SOURCES = tests/test_skip.c
tests_test_skip_CPPFLAGS = $(TESTS_CPP)
tests_test_skip_LDADD = $(TESTS_LIBS)
tests_test_skip_LDFLAGS = $(TESTS_LINK_CHECKED)

# the log stream: record and replay of live children, every cut and flipped byte of a small log
VMON_UNIT_TESTS += tests/test_log
tests_test_log_SOURCES = tests/test_log.c
tests_test_log_CPPFLAGS = $(TESTS_CPP) -DFUZZ_DIR='"$(abs_top_srcdir)/tests/fuzz"'
tests_test_log_LDADD = $(TESTS_LIBS)
tests_test_log_LDFLAGS = $(TESTS_LINK_CHECKED)

# every function new since the original header, given NULL, an instance not set up, numbers out of range
VMON_UNIT_TESTS += tests/test_arguments
tests_test_arguments_SOURCES = tests/test_arguments.c
tests_test_arguments_CPPFLAGS = $(TESTS_CPP)
tests_test_arguments_LDADD = $(TESTS_LIBS)
tests_test_arguments_LDFLAGS = $(TESTS_LINK_CHECKED)

# the task iterator against /proc, and /proc taking over where it cannot be used
VMON_UNIT_TESTS += tests/test_iter
tests_test_iter_SOURCES = tests/test_iter.c libvmon/sources/iter_held.c
tests_test_iter_CPPFLAGS = $(TESTS_CPP)
tests_test_iter_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_iter_LDADD = $(TESTS_LIBS)
tests_test_iter_LDFLAGS = $(TESTS_LINK_CHECKED) -pthread

# a pidfd for the process of a (pid, start time) and for no other, on children it spawns and reuses the pids of
VMON_UNIT_TESTS += tests/test_pidfd
tests_test_pidfd_SOURCES = tests/test_pidfd.c
tests_test_pidfd_CPPFLAGS = $(TESTS_CPP)
tests_test_pidfd_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_pidfd_LDADD = $(TESTS_LIBS)
tests_test_pidfd_LDFLAGS = $(TESTS_LINK) -pthread

# every allocation of a fixture scenario failed in turn (a counting malloc of its own: not under
# valgrind, and it skips itself under AddressSanitizer)
check_PROGRAMS += tests/test_oom
TESTS += tests/test_oom
tests_test_oom_SOURCES = tests/test_oom.c
tests_test_oom_CPPFLAGS = $(TESTS_CPP)
tests_test_oom_LDADD = $(TESTS_LIBS)
tests_test_oom_LDFLAGS = $(TESTS_LINK_CHECKED)

# the public headers as strict C99 and as C++11, and beside a client's own copies
# of the original list.h and bitmap.h (tests/compat/)
TESTS += tests/header_check.sh
EXTRA_DIST += tests/header_check.sh tests/compat
AM_TESTS_ENVIRONMENT += VMON_HC_CC='$(CC)'; VMON_HC_CXX='$(HEADER_CHECK_CXX)'; export VMON_HC_CC VMON_HC_CXX;

# the core tests again with each sampling source forced (VMON_SAMPLER)
TESTS += tests/sampler_forced.sh
EXTRA_DIST += tests/sampler_forced.sh
CLEANFILES += tests/*.iter.out tests/*.proc.out

# --- the event feed (tests/test_feed*.c) ---------------------------------------
# test_feed: the API whatever the backend; test_feed_<backend>: one backend's
# behaviour (test_feed_backend.c built once per backend).  feed_child is the
# program they exec, built without sanitizers: they exec it thousands of times.
check_PROGRAMS += tests/feed_child
tests_feed_child_SOURCES = tests/feed_child.c
tests_feed_child_CFLAGS = -std=gnu11 -O2 -Wall -pthread
tests_feed_child_LDFLAGS = -pthread

FEED_TESTS = tests/test_feed tests/test_feed_ebpf tests/test_feed_perf tests/test_feed_netlink \
	tests/test_feed_records
VMON_UNIT_TESTS += $(FEED_TESTS)
FEED_TEST_CPP = $(TESTS_CPP) -DFEED_CHILD='"$(abs_top_builddir)/tests/feed_child"'
FEED_TEST_SOURCES = tests/feedtest.c tests/feedtest.h

tests_test_feed_SOURCES = tests/test_feed.c $(FEED_TEST_SOURCES)
tests_test_feed_CPPFLAGS = $(FEED_TEST_CPP)
tests_test_feed_LDADD = $(TESTS_LIBS)
tests_test_feed_LDFLAGS = $(TESTS_LINK_CHECKED)

# crafted kernel records, written where the backend reads them
tests_test_feed_records_SOURCES = tests/test_feed_records.c $(FEED_TEST_SOURCES)
tests_test_feed_records_CPPFLAGS = $(FEED_TEST_CPP)
tests_test_feed_records_LDADD = $(TESTS_LIBS)
tests_test_feed_records_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_feed_ebpf_SOURCES = tests/test_feed_backend.c $(FEED_TEST_SOURCES)
tests_test_feed_ebpf_CPPFLAGS = $(FEED_TEST_CPP) -DFEED_BACKEND='"ebpf"'
tests_test_feed_ebpf_LDADD = $(TESTS_LIBS)
tests_test_feed_ebpf_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_feed_perf_SOURCES = tests/test_feed_backend.c $(FEED_TEST_SOURCES)
tests_test_feed_perf_CPPFLAGS = $(FEED_TEST_CPP) -DFEED_BACKEND='"perf"'
tests_test_feed_perf_LDADD = $(TESTS_LIBS)
tests_test_feed_perf_LDFLAGS = $(TESTS_LINK_CHECKED)

tests_test_feed_netlink_SOURCES = tests/test_feed_backend.c $(FEED_TEST_SOURCES)
tests_test_feed_netlink_CPPFLAGS = $(FEED_TEST_CPP) -DFEED_BACKEND='"netlink"'
tests_test_feed_netlink_LDADD = $(TESTS_LIBS)
tests_test_feed_netlink_LDFLAGS = $(TESTS_LINK_CHECKED)

# The heavy tests (test_fdlimit's 5,000 children, the storms of
# test_feed_<backend>: thousands of short-lived processes) and vtop's screen
# tests, which look for their own processes among everything on the machine
# and select rows by line as htop does, must not run at the same time under
# make -j: the heavy tests start once the screen tests are done.  So too
# vtop --events' test (events_json_csv.py), which follows its children by pid
# among every process's events (a storm beside it reuses their pids within
# seconds) and reads them through perf too (which loses what an offline CPU
# did), and e2e_sched.py, which sets its child's affinity to CPU 1.
# check-valgrind empties the list: it runs no screen test.
if BUILD_VTOP
VMON_HEAVY_AFTER = vtop/tests/e2e.py.log vtop/tests/e2e_files.py.log vtop/tests/e2e_feed.py.log \
	vtop/tests/batch.py.log vtop/tests/replay.py.log vtop/tests/e2e_act.py.log vtop/tests/e2e_text.py.log \
	vtop/tests/e2e_churn.py.log vtop/tests/events_json_csv.py.log vtop/tests/e2e_sched.py.log \
	vtop/tests/events_slow_reader.py.log
endif
tests/test_fdlimit.log tests/test_feed_ebpf.log tests/test_feed_perf.log tests/test_feed_netlink.log \
tests/test_chart.log: \
	$(VMON_HEAVY_AFTER)
# The feed tests take CPU 1 offline and back (test_cpu_hotplug) and run
# fork storms: one at a time, so that no test's CPU goes away under it and
# no storm's loss or timing is another's.
# (through variables: automake takes a rule for the test's own .log as a
# replacement of its recipe)
# test_fdlimit's 5,000 children go first: forked beside a feed test, they
# load the machine whose timing the feed tests take (test_aggregate's long
# life had two events before its exit once so, its exec likely past the
# 3 s window, make -j2 check).
# events_json_csv.py's child without a feed is seen only by samples, which a
# fork storm beside it (e2e_churn.py's) can make slower than the child's life:
# it follows that test.  events_slow_reader.py's storm of 7,000 lives follows
# it in turn: its pids would be theirs within seconds.
if BUILD_VTOP
VMON_EVENTS_TEST_LOG = vtop/tests/events_json_csv.py.log
$(VMON_EVENTS_TEST_LOG): vtop/tests/e2e_churn.py.log
VMON_SLOW_READER_LOG = vtop/tests/events_slow_reader.py.log
$(VMON_SLOW_READER_LOG): $(VMON_EVENTS_TEST_LOG)
endif
VMON_FEED_EBPF_LOG = tests/test_feed_ebpf.log
VMON_FEED_PERF_LOG = tests/test_feed_perf.log
VMON_FEED_NETLINK_LOG = tests/test_feed_netlink.log
$(VMON_FEED_EBPF_LOG): tests/test_fdlimit.log
$(VMON_FEED_PERF_LOG): tests/test_feed_ebpf.log
$(VMON_FEED_NETLINK_LOG): tests/test_feed_perf.log

# the shared strings (libvmon/util/intern.h) alone, then as real children's names, paths and command lines
VMON_UNIT_TESTS += tests/test_intern
tests_test_intern_SOURCES = tests/test_intern.c
tests_test_intern_CPPFLAGS = $(TESTS_CPP)
tests_test_intern_CFLAGS = $(AM_CFLAGS) -pthread
tests_test_intern_LDADD = $(TESTS_LIBS) libvmon/util/libvmonutil.la
tests_test_intern_LDFLAGS = $(TESTS_LINK_CHECKED) -pthread
