/*
 * test_arguments.c: every public function the original header did not
 * have, given what a caller should not give it: NULL where a pointer is
 * wanted, an instance never set up or already destroyed, numbers out of
 * range.  Each answers as its man page says (the value, and errno where the
 * page says it is set), and none crashes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"
#include "vmon_log.h"

/* call, then check the result and errno */
#define expect_fail(call, result, err) do {					\
		errno = 0;							\
		assert_int_equal((long long)(call), (long long)(result));	\
		assert_int_equal(errno, (err));					\
	} while (0)

/* an instance of each kind a caller may hold by mistake: NULL, zeroed, destroyed */
static vmon_t *bad_instances(vmon_t *zeroed, vmon_t *destroyed, int i)
{
	switch (i) {
	case 0:
		return NULL;
	case 1:
		memset(zeroed, 0, sizeof(*zeroed));
		return zeroed;
	default:
		assert_true(vmon_init(destroyed, VMON_FLAG_NONE, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT));
		vmon_destroy(destroyed);
		return destroyed;
	}
}

static void test_instance_not_set_up(void **state)
{
	vmon_t zeroed, destroyed;
	vmon_proc_t proc;
	vmon_stats_t st;
	vmon_feed_stats_t fst;

	(void)state;
	memset(&proc, 0, sizeof(proc));
	for (int i = 0; i < 3; i++) {
		vmon_t *v = bad_instances(&zeroed, &destroyed, i);

		print_message("instance %s\n", i == 0 ? "NULL" : i == 1 ? "zeroed" : "destroyed");
		expect_fail(vmon_get_stats(v, &st), -1, EINVAL);
		expect_fail(vmon_page_size(v), -1, EINVAL);
		assert_null(vmon_proc_lookup(v, 1));
		expect_fail(vmon_proc_set_wants(v, &proc, VMON_WANT_PROC_STAT), -1, EINVAL);
		expect_fail(vmon_set_proc_wants(v, VMON_WANT_PROC_STAT), -1, EINVAL);
		expect_fail(vmon_set_sys_wants(v, VMON_WANT_SYS_STAT), -1, EINVAL);
		expect_fail(vmon_set_sampler(v, VMON_SAMPLER_PROC), -1, EINVAL);
		expect_fail(vmon_get_sampler(v), VMON_SAMPLER_AUTO, EINVAL);
		errno = 0;
		assert_null(vmon_sampler_reason(v));
		assert_int_equal(errno, EINVAL);

		expect_fail(vmon_feed_get_stats(v, &fst), -1, EINVAL);
		errno = 0;
		assert_string_equal(vmon_feed_reason(v), "");
		assert_int_equal(errno, EINVAL);
		expect_fail(vmon_feed_fd(v), -1, EINVAL);
		assert_int_equal(vmon_feed_timeout(v), -1);
		expect_fail(vmon_feed_process(v), -1, EINVAL);
		expect_fail(vmon_feed_set_callback(v, NULL, NULL), -1, EINVAL);
		expect_fail(vmon_feed_stream(v, VMON_FEED_EVENTS, 0), -1, EINVAL);
		expect_fail(vmon_feed_next(v, &(vmon_event_t){ .pid = 0 }), -1, EINVAL);
		expect_fail(vmon_feed_lookup(v, 1, 0, &(vmon_event_t){ .pid = 0 }), -1, EINVAL);

		errno = 0;
		assert_null(vmon_log_writer_open(1, v));
		assert_int_equal(errno, EINVAL);
		expect_fail(vmon_log_replay(v, &(vmon_log_sample_t){ .procs_nr = 0 }), -1, EINVAL);
		expect_fail(vmon_log_replay_record(v, &(vmon_log_record_t){ .type = VMON_LOG_DROP }), -1, EINVAL);
	}
	/* and vmon_init_attr() without an instance or without attributes */
	expect_fail(vmon_init_attr(NULL, &(vmon_attr_t){ .fd_budget = -1 }), 0, EINVAL);
	expect_fail(vmon_init(NULL, VMON_FLAG_NONE, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT), 0, EINVAL);
	memset(&zeroed, 0xa5, sizeof(zeroed));
	expect_fail(vmon_init_attr(&zeroed, NULL), 0, EINVAL);
	vmon_destroy(&zeroed);	/* a failed init leaves an instance vmon_destroy() takes */
	vmon_attr_default(NULL);
}

static void test_instance_arguments(void **state)
{
	vmon_stats_t st;
	vmon_t vmon, replay;
	vmon_log_header_t h;

	(void)state;
	assert_true(vmon_init(&vmon, VMON_FLAG_NONE, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT));
	expect_fail(vmon_get_stats(&vmon, NULL), -1, EINVAL);
	assert_null(vmon_proc_lookup(&vmon, 0));
	assert_null(vmon_proc_lookup(&vmon, -4));
	expect_fail(vmon_proc_set_wants(&vmon, NULL, VMON_WANT_PROC_STAT), -1, EINVAL);
	expect_fail(vmon_set_proc_wants(&vmon, 1L << VMON_STORE_PROC_NR), -1, EINVAL);
	expect_fail(vmon_set_sys_wants(&vmon, 1L << VMON_STORE_SYS_NR), -1, EINVAL);
	expect_fail(vmon_set_sampler(&vmon, VMON_SAMPLER_NR), -1, EINVAL);
	expect_fail(vmon_set_sampler(&vmon, (vmon_sampler_t)-1), -1, EINVAL);
	assert_null(vmon_sampler_name(VMON_SAMPLER_NR));
	assert_null(vmon_sampler_name((vmon_sampler_t)-1));
	expect_fail(vmon_feed_get_stats(&vmon, NULL), -1, EINVAL);
	/* the stream: flags it does not know, a negative window; no stream yet, no event pointer */
	expect_fail(vmon_feed_stream(&vmon, 0x100, 0), -1, EINVAL);
	expect_fail(vmon_feed_stream(&vmon, VMON_FEED_AGGREGATE, -1), -1, EINVAL);
	expect_fail(vmon_feed_next(&vmon, &(vmon_event_t){ .pid = 0 }), -1, EINVAL);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS | VMON_FEED_EXITS, 0), 0);
	expect_fail(vmon_feed_next(&vmon, NULL), -1, EINVAL);
	expect_fail(vmon_feed_lookup(&vmon, 0, 0, &(vmon_event_t){ .pid = 0 }), -1, EINVAL);
	expect_fail(vmon_feed_lookup(&vmon, 1, 0, NULL), -1, EINVAL);
	assert_int_equal(vmon_feed_stream(&vmon, 0, 0), 0);
	errno = 0;
	assert_null(vmon_feed_backend_name(VMON_FEED_BACKEND_NR));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(vmon_feed_backend_name((vmon_feed_backend_t)-1));
	assert_int_equal(errno, EINVAL);
	/* a pidfd of no process */
	expect_fail(vmon_pidfd_open(0, 0, 0), -1, EINVAL);
	expect_fail(vmon_pidfd_open(-4, 0, 0), -1, EINVAL);
	expect_fail(vmon_pidfd_open(0x7fffffff, 1, 0), -1, ESRCH);
	/* not a replay */
	expect_fail(vmon_log_replay(&vmon, &(vmon_log_sample_t){ .procs_nr = 0 }), -1, EINVAL);
	/* it is still whole */
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	vmon_destroy(&vmon);

	/* a replay: its own arguments */
	memset(&h, 0, sizeof(h));
	h.ticks_per_sec = 100;
	h.page_size = 4096;
	h.proc_wants = VMON_WANT_PROC_STAT;
	expect_fail(vmon_log_replay_init(NULL, &h, 0), -1, EINVAL);
	expect_fail(vmon_log_replay_init(&replay, NULL, 0), -1, EINVAL);
	expect_fail(vmon_log_replay_init(&replay, &h, 1u << 30), -1, EINVAL);
	assert_int_equal(vmon_log_replay_init(&replay, &h, 0), 0);
	expect_fail(vmon_log_replay(&replay, NULL), -1, EINVAL);
	expect_fail(vmon_log_replay(&replay, &(vmon_log_sample_t){ .procs_nr = -1 }), -1, EINVAL);
	expect_fail(vmon_log_replay(&replay, &(vmon_log_sample_t){ .procs_nr = 3, .procs = NULL }), -1, EINVAL);
	expect_fail(vmon_log_replay_record(&replay, NULL), -1, EINVAL);
	{
		vmon_log_record_t rec = { .type = VMON_LOG_EVENT };

		rec.u.event.kind = VMON_EVENT_KIND_NR;
		expect_fail(vmon_log_replay_record(&replay, &rec), -1, EINVAL);
	}
	expect_fail(vmon_sample(&replay), 0, EINVAL);
	errno = 0;
	assert_null(vmon_proc_monitor(&replay, getpid(), VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	vmon_destroy(&replay);
}

static void test_fields(void **state)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
	const vmon_field_t *pid = &desc->fields[VMON_PROC_STAT_PID];
	vmon_proc_stat_t s;
	vmon_field_t bad;
	char buf[16];

	(void)state;
	memset(&s, 0, sizeof(s));
	/* vmon_escape(): NULL dst measures, NULL src is empty */
	assert_int_equal(vmon_escape(NULL, 0, "a\x01", 2, 0), 5);
	assert_int_equal(vmon_escape(NULL, 100, "a\x01", 2, 0), 5);
	strcpy(buf, "xyz");
	assert_int_equal(vmon_escape(buf, sizeof(buf), NULL, 7, 0), 0);
	assert_string_equal(buf, "");
	assert_int_equal(vmon_escape(NULL, 8, NULL, 3, VMON_ESCAPE_ASCII), 0);

	/* vmon_field_format(): EINVAL, and an empty buf where there is one */
	strcpy(buf, "xyz");
	expect_fail(vmon_field_format(NULL, &s, buf, sizeof(buf), 0), -1, EINVAL);
	assert_string_equal(buf, "");
	expect_fail(vmon_field_format(pid, NULL, buf, sizeof(buf), 0), -1, EINVAL);
	expect_fail(vmon_field_format(pid, &s, NULL, 4, 0), -1, EINVAL);
	assert_int_equal(vmon_field_format(pid, &s, NULL, 0, 0), 1);
	bad = *pid;
	bad.type = (vmon_type_t)1000;
	strcpy(buf, "xyz");
	expect_fail(vmon_field_format(&bad, &s, buf, sizeof(buf), 0), -1, EINVAL);
	assert_string_equal(buf, "");

	/* vmon_field_compare() and vmon_field_present(): never fail, never set errno */
	errno = 0;
	assert_int_equal(vmon_field_compare(NULL, &s, &s), 0);
	assert_true(vmon_field_compare(pid, NULL, &s) < 0);
	assert_true(vmon_field_compare(pid, &s, NULL) > 0);
	assert_int_equal(vmon_field_compare(pid, NULL, NULL), 0);
	assert_int_equal(vmon_field_present(NULL, pid, &s), 0);
	assert_int_equal(vmon_field_present(desc, NULL, &s), 0);
	assert_int_equal(vmon_field_present(desc, pid, NULL), 0);
	assert_int_equal(errno, 0);
}

static void test_log(void **state)
{
	vmon_log_writer_stats_t wst;
	vmon_log_record_t rec;
	vmon_log_writer_t *w;
	vmon_event_t ev;
	vmon_log_t *log;
	vmon_t vmon;
	int fd;

	(void)state;
	/* the reader */
	errno = 0;
	assert_null(vmon_log_open(-2));
	assert_int_equal(errno, EINVAL);
	rec.state = VMON_LOG_EOF;
	expect_fail(vmon_log_read(NULL, &rec), -1, EINVAL);
	assert_int_equal(rec.state, VMON_LOG_EOF);	/* left as it was */
	expect_fail(vmon_log_feed(NULL, "x", 1), -1, EINVAL);
	expect_fail(vmon_log_seek(NULL, &rec), -1, EINVAL);
	assert_null(vmon_log_header(NULL));
	assert_null(vmon_log_error(NULL));
	vmon_log_close(NULL);
	log = vmon_log_open(VMON_LOG_FD_NONE);
	assert_non_null(log);
	expect_fail(vmon_log_read(log, NULL), -1, EINVAL);
	expect_fail(vmon_log_feed(log, NULL, 0), -1, EINVAL);
	expect_fail(vmon_log_feed(log, NULL, 5), -1, EINVAL);
	expect_fail(vmon_log_seek(log, NULL), -1, EINVAL);
	expect_fail(vmon_log_seek(log, &rec), -1, EINVAL);	/* a memory parser */
	assert_null(vmon_log_header(log));
	assert_int_equal(vmon_log_feed(log, "", 0), 0);		/* nothing, but something to take it from */
	vmon_log_close(log);

	/* the writer */
	assert_true(vmon_init(&vmon, VMON_FLAG_NONE, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT));
	errno = 0;
	assert_null(vmon_log_writer_open(-1, &vmon));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(vmon_log_writer_open(1, NULL));
	assert_int_equal(errno, EINVAL);
	expect_fail(vmon_log_writer_set_keyframe_interval(NULL, 1), -1, EINVAL);
	expect_fail(vmon_log_write_sample(NULL, &vmon, NULL), -1, EINVAL);
	memset(&ev, 0, sizeof(ev));
	expect_fail(vmon_log_write_event(NULL, &ev), -1, EINVAL);
	expect_fail(vmon_log_writer_follow_feed(NULL, &vmon), -1, EINVAL);
	expect_fail(vmon_log_write_drop(NULL, 1), -1, EINVAL);
	expect_fail(vmon_log_write_user(NULL, "x", 1), -1, EINVAL);
	expect_fail(vmon_log_writer_get_stats(NULL, &wst), -1, EINVAL);
	assert_int_equal(vmon_log_writer_close(NULL), 0);

	fd = memfd_create("vmon-log", MFD_CLOEXEC);
	assert_true(fd >= 0);
	w = vmon_log_writer_open(fd, &vmon);
	assert_non_null(w);
	expect_fail(vmon_log_writer_set_keyframe_interval(w, 0), -1, EINVAL);
	expect_fail(vmon_log_write_sample(w, NULL, NULL), -1, EINVAL);
	expect_fail(vmon_log_write_event(w, NULL), -1, EINVAL);
	ev.kind = VMON_EVENT_KIND_NR;
	expect_fail(vmon_log_write_event(w, &ev), -1, EINVAL);
	ev.kind = (vmon_event_kind_t)-1;
	expect_fail(vmon_log_write_event(w, &ev), -1, EINVAL);
	expect_fail(vmon_log_write_user(w, NULL, 1), -1, EINVAL);
	expect_fail(vmon_log_write_user(w, "x", (size_t)1 << 40), -1, EINVAL);
	expect_fail(vmon_log_writer_get_stats(w, NULL), -1, EINVAL);
	{
		vmon_t zeroed;

		memset(&zeroed, 0, sizeof(zeroed));
		expect_fail(vmon_log_write_sample(w, &zeroed, NULL), -1, EINVAL);
		expect_fail(vmon_log_writer_follow_feed(w, &zeroed), -1, EINVAL);
	}
	/* the writer is still whole: a sample, then a close with nothing lost */
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), 0);
	assert_int_equal(vmon_log_writer_get_stats(w, &wst), 0);
	assert_int_equal(wst.samples, 1);
	assert_int_equal(vmon_log_writer_close(w), 0);
	close(fd);
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instance_not_set_up),
		cmocka_unit_test(test_instance_arguments),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
