/*
 * test_stream.c: the feed's stream (libvmon/feed/stream.c) fed by hand:
 * an exit the feed found after a loss (VMON_EVENT_FOUND_GONE) ends only the
 * process the stream knows by its pid and start, never another process
 * that reused the pid (whose own exit must still come through), and is not
 * delivered for a pid the stream knows nothing of (its real exit came
 * already, or nothing of it was heard).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "feed/stream.h"

static vmon_event_t event(vmon_event_kind_t kind, int pid, unsigned long long start, unsigned has)
{
	vmon_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.kinds = 1u << kind;
	ev.pid = ev.tid = pid;
	ev.start = start;
	ev.has = VMON_EVENT_HAS_START | has;
	ev.time_ns = 1000 + start;
	return ev;
}

/* the next event out of the stream: 1 and *ev, or 0 */
static int next(stream_t *st, vmon_event_t *ev)
{
	return stream_next(st, ev, ~0ULL >> 1);
}

static void test_found_exit_of_the_known_process(void **state)
{
	stream_t *st = stream_new(VMON_FEED_EVENTS | VMON_FEED_EXITS, 0);
	vmon_event_t ev = event(VMON_EVENT_FORK, 100, 5, 0), out;

	(void)state;
	assert_non_null(st);
	stream_put(st, &ev);
	ev = event(VMON_EVENT_EXIT, 100, 5, VMON_EVENT_FOUND_GONE);
	stream_put(st, &ev);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_FORK);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_EXIT);
	assert_true(out.has & VMON_EVENT_FOUND_GONE);
	assert_int_equal(next(st, &out), 0);
	/* and a real exit of it coming late is a repeat */
	ev = event(VMON_EVENT_EXIT, 100, 5, VMON_EVENT_HAS_EXIT_STATUS);
	stream_put(st, &ev);
	assert_int_equal(next(st, &out), 0);
	stream_free(st);
}

static void test_found_exit_spares_a_reused_pid(void **state)
{
	stream_t *st = stream_new(VMON_FEED_EVENTS | VMON_FEED_EXITS, 0);
	vmon_event_t ev = event(VMON_EVENT_FORK, 100, 9, 0), out;

	(void)state;
	assert_non_null(st);
	/* the pid is another process's now (start 9); the exit found is of the old one (start 5) */
	stream_put(st, &ev);
	ev = event(VMON_EVENT_EXIT, 100, 5, VMON_EVENT_FOUND_GONE);
	stream_put(st, &ev);
	/* and one found with no start known at all */
	ev = event(VMON_EVENT_EXIT, 100, 0, VMON_EVENT_FOUND_GONE);
	ev.has &= ~VMON_EVENT_HAS_START;
	stream_put(st, &ev);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_FORK);
	assert_int_equal(next(st, &out), 0);
	/* the new process's own exit, with its status, comes through */
	ev = event(VMON_EVENT_EXIT, 100, 9, VMON_EVENT_HAS_EXIT_STATUS);
	ev.exit_status = 3 << 8;
	stream_put(st, &ev);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_EXIT);
	assert_false(out.has & VMON_EVENT_FOUND_GONE);
	assert_int_equal(out.exit_status, 3 << 8);
	assert_int_equal(out.start, 9);
	stream_free(st);
}

static void test_found_exit_of_nobody_known(void **state)
{
	stream_t *st = stream_new(VMON_FEED_EVENTS | VMON_FEED_EXITS, 0);
	vmon_event_t ev = event(VMON_EVENT_FORK, 200, 5, 0), out;
	vmon_feed_stats_t stats;

	(void)state;
	assert_non_null(st);
	/* its real exit already streamed: the one found later is not a second */
	stream_put(st, &ev);
	ev = event(VMON_EVENT_EXIT, 200, 5, VMON_EVENT_HAS_EXIT_STATUS);
	stream_put(st, &ev);
	ev = event(VMON_EVENT_EXIT, 200, 5, VMON_EVENT_FOUND_GONE);
	stream_put(st, &ev);
	/* a pid the stream never heard of */
	ev = event(VMON_EVENT_EXIT, 300, 5, VMON_EVENT_FOUND_GONE);
	stream_put(st, &ev);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_FORK);
	assert_int_equal(next(st, &out), 1);
	assert_int_equal(out.kind, VMON_EVENT_EXIT);
	assert_true(out.has & VMON_EVENT_HAS_EXIT_STATUS);
	assert_int_equal(next(st, &out), 0);
	/* the lookup has the real exit, status and all */
	assert_int_equal(stream_lookup(st, 200, 5, &out, 2000), 1);
	assert_true(out.has & VMON_EVENT_HAS_EXIT_STATUS);
	memset(&stats, 0, sizeof(stats));
	stream_stats(st, &stats);
	assert_int_equal(stats.stream_lost, 0);
	stream_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_exit_of_the_known_process),
		cmocka_unit_test(test_found_exit_spares_a_reused_pid),
		cmocka_unit_test(test_found_exit_of_nobody_known),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
