# vtop/local.mk: vtop, the viewer, and its tests (model tests in cmocka, the
# batch formats checked by real parsers, end-to-end tests under tmux).

if BUILD_VTOP

# vtop/data: sampling, snapshots, columns and the model; vtop/batch: -b and
# --events; both shared by vtop and its tests.  vtop/screen: curses.
VTOP_CPP = $(AM_CPPFLAGS) -I$(top_srcdir)/vtop
noinst_LTLIBRARIES += vtop/libvtop.la
vtop_libvtop_la_SOURCES = \
	vtop/vtop.h \
	vtop/data/snapshot.h \
	vtop/data/columns.h \
	vtop/data/model.h \
	vtop/data/sampler.h \
	vtop/data/room.h \
	vtop/batch/batch.h \
	vtop/batch/formats.h \
	vtop/data/arena.c \
	vtop/data/snapshot.c \
	vtop/data/columns.c \
	vtop/data/model.c \
	vtop/data/sampler.c \
	vtop/data/files.c \
	vtop/data/event_feed.c \
	vtop/data/event_ring.c \
	vtop/data/replay.c \
	vtop/batch/batch.c \
	vtop/batch/events.c \
	vtop/batch/output_queue.c \
	vtop/batch/output_queue.h \
	vtop/batch/plan.c \
	vtop/batch/text.c \
	vtop/batch/json_csv.c \
	vtop/batch/metrics.c \
	vtop/config.c
vtop_libvtop_la_CPPFLAGS = $(VTOP_CPP)
vtop_libvtop_la_LIBADD = libvmon/libvmon.la $(VMON_UTIL_LIBS) -lpthread

dist_man_MANS += man/vtop.1

bin_PROGRAMS += vtop/vtop
vtop_vtop_SOURCES = vtop/main.c \
	vtop/screen/panel.h \
	vtop/screen/tui.h \
	vtop/screen/tui.c \
	vtop/screen/context.c \
	vtop/screen/draw.c \
	vtop/screen/meters.c \
	vtop/screen/process_list.c \
	vtop/screen/page.c \
	vtop/screen/help.c \
	vtop/screen/details.c \
	vtop/screen/event_log.c \
	vtop/screen/dialog.h \
	vtop/screen/dialog.c \
	vtop/screen/dialog_kill.c \
	vtop/screen/dialog_renice.c \
	vtop/screen/dialog_sort.c \
	vtop/screen/dialog_user.c \
	vtop/screen/dialog_ioprio.c \
	vtop/screen/dialog_affinity.c \
	vtop/screen/setup.c \
	vtop/screen/files_view.c
vtop_vtop_CPPFLAGS = $(VTOP_CPP)
vtop_vtop_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS)
vtop_vtop_LDADD = vtop/libvtop.la $(NCURSES_LIBS)
vtop_vtop_LDFLAGS = $(VMON_LDFLAGS)

# --- tests ---

# the cmocka tests join the library's: make check builds and runs them, make check-valgrind too
VTOP_UNIT_TESTS = vtop/tests/test_model vtop/tests/test_config vtop/tests/test_files_view vtop/tests/test_arena
VMON_UNIT_TESTS += $(VTOP_UNIT_TESTS)

VTOP_TESTS_CPP = $(TESTS_CPP) -I$(top_srcdir)/tests -I$(top_srcdir)/vtop
VTOP_TESTS_LIBS = tests/libtestlib.la vtop/libvtop.la $(CMOCKA_LIBS)

vtop_tests_test_model_SOURCES = vtop/tests/test_model.c
vtop_tests_test_model_CPPFLAGS = $(VTOP_TESTS_CPP)
vtop_tests_test_model_LDADD = $(VTOP_TESTS_LIBS)
vtop_tests_test_model_LDFLAGS = $(TESTS_LINK)

vtop_tests_test_files_view_SOURCES = vtop/tests/test_files_view.c
vtop_tests_test_files_view_CPPFLAGS = $(VTOP_TESTS_CPP)
vtop_tests_test_files_view_LDADD = $(VTOP_TESTS_LIBS)
vtop_tests_test_files_view_LDFLAGS = $(TESTS_LINK)

vtop_tests_test_arena_SOURCES = vtop/tests/test_arena.c
vtop_tests_test_arena_CPPFLAGS = $(VTOP_TESTS_CPP)
vtop_tests_test_arena_LDADD = $(VTOP_TESTS_LIBS)
vtop_tests_test_arena_LDFLAGS = $(TESTS_LINK)

vtop_tests_test_config_SOURCES = vtop/tests/test_config.c
vtop_tests_test_config_CPPFLAGS = $(VTOP_TESTS_CPP)
vtop_tests_test_config_LDADD = $(VTOP_TESTS_LIBS)
vtop_tests_test_config_LDFLAGS = $(TESTS_LINK)

# the batch formats read back by real parsers, and vtop on a terminal under tmux
VTOP_SCRIPT_TESTS = vtop/tests/batch.py vtop/tests/e2e.py vtop/tests/e2e_files.py vtop/tests/e2e_feed.py \
	vtop/tests/e2e_sched.py vtop/tests/replay.py vtop/tests/e2e_act.py vtop/tests/e2e_text.py vtop/tests/e2e_churn.py \
	vtop/tests/events_json_csv.py vtop/tests/events_slow_reader.py
TESTS += $(VTOP_SCRIPT_TESTS)
EXTRA_DIST += $(VTOP_SCRIPT_TESTS) vtop/tests/openmetrics.py vtop/tests/vtoptest.py
AM_TESTS_ENVIRONMENT += VTOP='$(abs_top_builddir)/vtop/vtop'; export VTOP;

# vtop against top -b, and vtop interactive: part of make bench (not of make
# check: it holds thousands of processes and takes minutes).  Alone, with
# options: make vtop-bench VTOP_BENCH_ARGS='--procs 1000 --secs 10'
EXTRA_PROGRAMS += tests/bench/vtop_bench
CLEANFILES += tests/bench/vtop_bench
tests_bench_vtop_bench_SOURCES = tests/bench/vtop_bench.c tests/smaps.c tests/smaps.h
tests_bench_vtop_bench_LDADD = -lutil
tests_bench_vtop_bench_LDFLAGS = $(VMON_LDFLAGS)
# it runs vtop/vtop: built first
EXTRA_tests_bench_vtop_bench_DEPENDENCIES = vtop/vtop$(EXEEXT)
BENCH_RUN += tests/bench/vtop_bench

endif

VTOP_BENCH_ARGS =
vtop-bench: tests/bench/vtop_bench$(EXEEXT) vtop/vtop$(EXEEXT)
	$(AM_V_at)tests/bench/vtop_bench --vtop vtop/vtop $(VTOP_BENCH_ARGS)
.PHONY: vtop-bench
