/*
 * test_intern.c: the shared strings (libvmon/util/intern.h) by themselves,
 * then as the PROC_STAT store holds them for real children: one copy of a
 * name, path, command line (and its argv) for every process that has the
 * same, the values still each process's own as /proc says, and a change of
 * one process's value (a rename, an exec) its alone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/intern.h"
#include "testlib.h"
#include "puppet.h"

/* --- the table --- */

static void test_same_bytes_one_copy(void **state)
{
	const char *a = vintern_get("worker", 6), *b = vintern_get("worker", 6);
	const char *c = vintern_get("worker", 5);

	(void)state;
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_memory_equal(a, "worker", 7);	/* and a NUL after */
	/* the same bytes but fewer of them: another string ("worke") */
	assert_ptr_not_equal(a, c);
	assert_string_equal(c, "worke");
	assert_int_equal(vintern_count(), 2);
	vintern_put(a);
	vintern_put(b);
	vintern_put(c);
	assert_int_equal(vintern_count(), 0);
}

/* one holder more of a string held: the same string, which lives until its last holder puts it */
static void test_hold(void **state)
{
	const char *a = vintern_get("sleep", 5), *h;

	(void)state;
	h = vintern_hold(a);
	assert_ptr_equal(h, a);
	vintern_put(a);
	/* still held: found by its bytes, the same copy */
	assert_int_equal(vintern_count(), 1);
	a = vintern_get("sleep", 5);
	assert_ptr_equal(a, h);
	vintern_put(h);
	vintern_put(a);
	assert_int_equal(vintern_count(), 0);
}

/* a command line is NUL-separated: every byte counts, also after a NUL, and the length does */
static void test_embedded_nuls(void **state)
{
	const char *a = vintern_get("sh\0-c\0", 6), *b = vintern_get("sh\0-x\0", 6);
	const char *c = vintern_get("sh\0-c", 5), *d = vintern_get("sh\0-c\0", 6);
	const char *e = vintern_get("", 0), *f = vintern_get("\0", 1);

	(void)state;
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_ptr_equal(a, d);
	assert_memory_equal(b, "sh\0-x\0", 7);
	assert_ptr_not_equal(e, f);
	assert_int_equal(e[0], '\0');
	assert_memory_equal(f, "\0", 2);
	assert_int_equal(vintern_count(), 5);
	vintern_put(a);
	vintern_put(b);
	vintern_put(c);
	vintern_put(d);
	vintern_put(e);
	vintern_put(f);
	assert_int_equal(vintern_count(), 0);
	vintern_put(NULL);
}

/* the last holder frees it (valgrind and ASan see a leak or a use after free); until then it stays */
static void test_holders(void **state)
{
	const char *a = vintern_get("futex_wait_queue", 16);
	const char *b = vintern_get("futex_wait_queue", 16);
	char **v;

	(void)state;
	assert_null(vintern_attachment(a));
	v = malloc(sizeof(*v));
	assert_non_null(v);
	assert_ptr_equal(vintern_attach(a, v), v);
	/* a second attachment loses to the first, and is freed */
	assert_ptr_equal(vintern_attach(b, malloc(16)), v);
	vintern_put(a);
	assert_int_equal(vintern_count(), 1);
	assert_string_equal(b, "futex_wait_queue");
	assert_ptr_equal(vintern_attachment(b), v);
	/* a new holder of a string still held gets the same copy */
	a = vintern_get("futex_wait_queue", 16);
	assert_ptr_equal(a, b);
	vintern_put(a);
	vintern_put(b);
	assert_int_equal(vintern_count(), 0);
	/* and after the last, a new copy (its attachment went with the old) */
	a = vintern_get("futex_wait_queue", 16);
	assert_null(vintern_attachment(a));
	vintern_put(a);
}

/* after a storm of distinct strings the table shrinks with them, and goes with the last */
static void test_shrinks(void **state)
{
	enum { STORM = 20000, KEPT = 10 };
	static const char *held[STORM];
	char text[32];
	size_t slots;

	(void)state;
	for (int i = 0; i < STORM; i++) {
		int len = snprintf(text, sizeof(text), "/usr/bin/worker-%d", i);

		held[i] = vintern_get(text, (size_t)len);
		assert_non_null(held[i]);
	}
	assert_int_equal(vintern_count(), STORM);
	slots = vintern_table_slots();
	assert_true(slots >= STORM);
	for (int i = KEPT; i < STORM; i++)
		vintern_put(held[i]);
	assert_int_equal(vintern_count(), KEPT);
	assert_true(vintern_table_slots() <= 64);
	for (int i = 0; i < KEPT; i++) {
		int len = snprintf(text, sizeof(text), "/usr/bin/worker-%d", i);

		assert_memory_equal(held[i], text, (size_t)len + 1);
		vintern_put(held[i]);
	}
	assert_int_equal(vintern_count(), 0);
	assert_int_equal(vintern_table_slots(), 0);
}

/* two threads taking and giving back the same strings: every copy right, nothing left (ASan, helgrind) */
static void *churn(void *arg)
{
	char text[16];

	for (int i = 0; i < 20000; i++) {
		int len = snprintf(text, sizeof(text), "w%d", i % 37);
		const char *s = vintern_get(text, (size_t)len);

		if (!s || memcmp(s, text, (size_t)len + 1) != 0)
			return arg;
		vintern_put(s);
	}
	return NULL;
}

static void test_threads(void **state)
{
	static int failed;
	pthread_t t;
	void *bad;
	const char *kept = vintern_get("w3", 2);

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, churn, &failed), 0);
	assert_null(churn(&failed));
	assert_int_equal(pthread_join(t, &bad), 0);
	assert_null(bad);
	assert_int_equal(vintern_count(), 1);
	vintern_put(kept);
	assert_int_equal(vintern_count(), 0);
}

/* --- the PROC_STAT store's strings, for real children --- */

enum { PUPPETS = 4 };

static int teardown(void **state)
{
	(void)state;
	puppets_cleanup();
	return 0;
}

static ssize_t read_whole(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len = 0, r;

	if (fd < 0)
		return -1;
	while ((size_t)len < size && (r = read(fd, buf + len, size - (size_t)len)) > 0)
		len += r;
	close(fd);
	return len;
}

/* the store's comm, exe, cmdline and argv of pid are what /proc/PID says */
static void check_against_proc(const vmon_proc_stat_t *s, pid_t pid)
{
	char path[64], buf[8192];
	ssize_t len;
	size_t off = 0;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	len = read_whole(path, buf, sizeof(buf));
	assert_true(len > 0);
	/* comm.len counts a NUL in place of the newline */
	assert_int_equal(s->comm.len, (size_t)len);
	assert_memory_equal(s->comm.array, buf, (size_t)len - 1);
	assert_int_equal(s->comm.array[len - 1], '\0');

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	len = read_whole(path, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(s->cmdline.len, (size_t)len);
	assert_memory_equal(s->cmdline.array, buf, (size_t)len);
	for (int i = 0; i < s->argc; i++) {
		assert_non_null(s->argv[i]);
		assert_string_equal(s->argv[i], buf + off);
		off += strlen(buf + off) + 1;
	}
	assert_null(s->argv[s->argc]);
	assert_int_equal(off, (size_t)len);

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	len = readlink(path, buf, sizeof(buf) - 1);
	assert_true(len > 0);
	assert_int_equal(s->exe.len, (size_t)len);
	assert_memory_equal(s->exe.array, buf, (size_t)len + 0);
	assert_int_equal(s->exe.array[len], '\0');
}

/* one copy for the same bytes, two for different ones: the same pointer exactly when the same text */
static void check_shared(const vmon_char_array_t *a, const vmon_char_array_t *b)
{
	bool same = a->len == b->len && memcmp(a->array, b->array, a->len) == 0;

	if (same != (a->array == b->array))
		fail_msg("\"%.*s\" at %p, \"%.*s\" at %p", (int)a->len, a->array, (void *)a->array,
			 (int)b->len, b->array, (void *)b->array);
	assert_int_equal(a->alloc_len, 0);
}

static void check_all_shared(vmon_proc_stat_t *const *s, int nr)
{
	for (int i = 0; i < nr; i++) {
		for (int j = i + 1; j < nr; j++) {
			check_shared(&s[i]->comm, &s[j]->comm);
			check_shared(&s[i]->exe, &s[j]->exe);
			check_shared(&s[i]->wchan, &s[j]->wchan);
			check_shared(&s[i]->cmdline, &s[j]->cmdline);
			/* argv is its command line's: the same vector for the same text */
			assert_true((s[i]->cmdline.array == s[j]->cmdline.array) == (s[i]->argv == s[j]->argv));
		}
	}
}

static bool changed(const vmon_proc_stat_t *s, int sym)
{
	return BITTEST(s->changed, sym);
}

static void test_children_share(void **state)
{
	/* sleep adds up its arguments: a command line of its own */
	static const char *const argv[] = { "/bin/sleep", "300", "0.125", NULL };
	puppet_t p[PUPPETS];
	vmon_proc_stat_t *s[PUPPETS];
	vmon_proc_t *n[PUPPETS];
	vmon_t vmon;

	(void)state;
	for (int i = 0; i < PUPPETS; i++)
		puppet_spawn(&p[i]);
	assert_true(vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_STAT));
	for (int i = 0; i < PUPPETS; i++) {
		n[i] = vmon_proc_monitor(&vmon, p[i].pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
		assert_non_null(n[i]);
	}
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < PUPPETS; i++) {
		s[i] = pstat(n[i]);
		check_against_proc(s[i], p[i].pid);
	}
	/* forks of the test: one name, one path, one command line and argv */
	assert_ptr_equal(s[0]->comm.array, s[1]->comm.array);
	assert_ptr_equal(s[0]->exe.array, s[1]->exe.array);
	assert_ptr_equal(s[0]->cmdline.array, s[1]->cmdline.array);
	assert_ptr_equal(s[0]->argv, s[1]->argv);
	check_all_shared(s, PUPPETS);

	/* one renames itself: its name alone changes, and is its own */
	puppet_name(&p[1], "intern-renamed");
	assert_true(vmon_sample(&vmon));
	assert_string_equal(s[1]->comm.array, "intern-renamed");
	assert_true(changed(s[1], VMON_PROC_STAT_COMM));
	for (int i = 0; i < PUPPETS; i++) {
		check_against_proc(s[i], p[i].pid);
		if (i != 1)
			assert_false(changed(s[i], VMON_PROC_STAT_COMM));
		assert_false(changed(s[i], VMON_PROC_STAT_CMDLINE));
	}
	assert_ptr_not_equal(s[0]->comm.array, s[1]->comm.array);
	assert_ptr_equal(s[0]->exe.array, s[1]->exe.array);
	check_all_shared(s, PUPPETS);

	/* two exec the same program: theirs change and are one copy; the others keep theirs */
	puppet_exec(&p[2], argv, 0);
	puppet_exec(&p[3], argv, 0);
	assert_true(wait_sleeping(p[2].pid, 2000) && wait_sleeping(p[3].pid, 2000));
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < PUPPETS; i++)
		check_against_proc(s[i], p[i].pid);
	for (int i = 2; i < PUPPETS; i++) {
		assert_string_equal(s[i]->comm.array, "sleep");
		assert_int_equal(s[i]->argc, 3);
		assert_string_equal(s[i]->argv[2], "0.125");
		assert_true(changed(s[i], VMON_PROC_STAT_CMDLINE));
		assert_true(changed(s[i], VMON_PROC_STAT_ARGV));
		assert_true(changed(s[i], VMON_PROC_STAT_EXE));
	}
	for (int i = 0; i < 2; i++) {
		assert_false(changed(s[i], VMON_PROC_STAT_CMDLINE));
		assert_false(changed(s[i], VMON_PROC_STAT_EXE));
	}
	assert_ptr_equal(s[2]->cmdline.array, s[3]->cmdline.array);
	assert_ptr_equal(s[2]->argv, s[3]->argv);
	assert_ptr_not_equal(s[0]->cmdline.array, s[2]->cmdline.array);
	check_all_shared(s, PUPPETS);

	/* nothing new: nothing changed */
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < PUPPETS; i++) {
		assert_false(changed(s[i], VMON_PROC_STAT_COMM));
		assert_false(changed(s[i], VMON_PROC_STAT_CMDLINE));
		assert_false(changed(s[i], VMON_PROC_STAT_EXE));
	}
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes_one_copy),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_embedded_nuls),
		cmocka_unit_test(test_holders),
		cmocka_unit_test(test_shrinks),
		cmocka_unit_test(test_threads),
		cmocka_unit_test_teardown(test_children_share, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
