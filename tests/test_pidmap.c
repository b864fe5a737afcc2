/*
 * test_pidmap.c: the pid index of util/pidmap.h against a plain array by
 * pid: insertion, replacement, lookup, removal only of the value asked for
 * (with the tombstones it leaves, while walking too), growth, rebuilds, a
 * reserve, the fit after a storm, and the pids it refuses.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/pidmap.h"

#define PIDS	40000	/* pids 1 to PIDS - 1 */

/* the reference: each pid's value, NULL for none */
static void *ref[PIDS];

static void *val_of(int pid, unsigned life)
{
	return (void *)(uintptr_t)(((uintptr_t)pid << 8 | (life & 0xff)) * 16 + 8);
}

/* the index holds exactly ref's entries, each once, and finds each */
static void check_same(const pidmap_t *map)
{
	size_t pos, nr = 0, walked = 0;
	static unsigned char seen[PIDS];

	memset(seen, 0, sizeof(seen));
	for (int pid = 1; pid < PIDS; pid++) {
		assert_ptr_equal(pidmap_get(map, pid), ref[pid]);
		nr += ref[pid] != NULL;
	}
	assert_int_equal(map->nr, nr);
	pidmap_for_each(map, pos) {
		int pid = pidmap_key_at(map, pos);

		assert_true(pid > 0 && pid < PIDS);
		assert_false(seen[pid]);
		seen[pid] = 1;
		assert_ptr_equal(pidmap_node_at(map, pos), ref[pid]);
		walked++;
	}
	assert_int_equal(walked, nr);
	/* a quarter of the slots free at least: every miss ends */
	assert_true((map->nr + map->tombs) * 4 <= (map->mask + 1) * 3);
}

static int reset(void **state)
{
	(void)state;
	memset(ref, 0, sizeof(ref));
	return 0;
}

static void test_put_get_del(void **state)
{
	pidmap_t map;

	(void)state;
	assert_int_equal(pidmap_init(&map), 0);
	assert_null(pidmap_get(&map, 1));
	for (int pid = 1; pid < 3000; pid += 3) {
		assert_int_equal(pidmap_put(&map, pid, val_of(pid, 0)), 0);
		ref[pid] = val_of(pid, 0);
	}
	check_same(&map);
	/* a reused pid: its entry replaced, not added */
	assert_int_equal(pidmap_put(&map, 301, val_of(301, 1)), 0);
	ref[301] = val_of(301, 1);
	check_same(&map);
	/* the old life's removal does not take the new one's entry */
	pidmap_del(&map, 301, val_of(301, 0));
	check_same(&map);
	pidmap_del(&map, 301, val_of(301, 1));
	ref[301] = NULL;
	check_same(&map);
	/* a pid not there, and pids no process has */
	pidmap_del(&map, 2, val_of(2, 0));
	assert_null(pidmap_get(&map, 0));
	assert_null(pidmap_get(&map, -5));
	errno = 0;
	assert_int_equal(pidmap_put(&map, 0, val_of(1, 0)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pidmap_put(&map, -1, val_of(1, 0)), -1);
	check_same(&map);
	pidmap_fini(&map);
	assert_null(pidmap_get(&map, 1));
	assert_int_equal(pidmap_next(&map, 0), PIDMAP_END);
}

/* every entry removed while the index is walked: the walk sees each once */
static void test_remove_while_walking(void **state)
{
	pidmap_t map;
	size_t pos, walked = 0;

	(void)state;
	assert_int_equal(pidmap_init(&map), 0);
	for (int pid = 100; pid < 2100; pid++) {
		assert_int_equal(pidmap_put(&map, pid, val_of(pid, 0)), 0);
		ref[pid] = val_of(pid, 0);
	}
	pidmap_for_each(&map, pos) {
		int pid = pidmap_key_at(&map, pos);

		assert_ptr_equal(ref[pid], pidmap_node_at(&map, pos));
		pidmap_del(&map, pid, ref[pid]);
		ref[pid] = NULL;
		walked++;
	}
	assert_int_equal(walked, 2000);
	check_same(&map);
	assert_int_equal(map.tombs, 2000);
	/* the tombstones are reused or dropped: the index does not grow for them */
	for (int round = 0; round < 20; round++) {
		for (int pid = 5000 + round * 100; pid < 5100 + round * 100; pid++) {
			assert_int_equal(pidmap_put(&map, pid, val_of(pid, 0)), 0);
			ref[pid] = val_of(pid, 0);
		}
		check_same(&map);
	}
	assert_true(map.mask + 1 <= 4096);
	pidmap_fini(&map);
}

/* a storm grows it; a fit brings it back to its steady size, and not below what it holds */
static void test_fit_after_storm(void **state)
{
	pidmap_t map;
	size_t steady;

	(void)state;
	assert_int_equal(pidmap_init(&map), 0);
	for (int pid = 1; pid <= 500; pid++) {
		assert_int_equal(pidmap_put(&map, pid, val_of(pid, 0)), 0);
		ref[pid] = val_of(pid, 0);
	}
	assert_int_equal(pidmap_fit(&map), 0);
	steady = map.mask + 1;
	for (int pid = 501; pid < 30000; pid++) {
		assert_int_equal(pidmap_put(&map, pid, val_of(pid, 0)), 0);
		ref[pid] = val_of(pid, 0);
	}
	check_same(&map);
	assert_true(map.mask + 1 >= 32768);
	for (int pid = 501; pid < 30000; pid++) {
		pidmap_del(&map, pid, ref[pid]);
		ref[pid] = NULL;
	}
	assert_int_equal(pidmap_fit(&map), 0);
	check_same(&map);
	assert_int_equal(map.mask + 1, steady);
	/* 5/8 at most after a fit */
	assert_true(map.nr * 8 <= (map.mask + 1) * 5);
	pidmap_fini(&map);
}

/* room reserved for n: n insertions rebuild nothing; a smaller reserve changes nothing */
static void test_reserve(void **state)
{
	pidmap_t map;
	void **vals;

	(void)state;
	assert_int_equal(pidmap_init(&map), 0);
	assert_int_equal(pidmap_reserve(&map, 5150), 0);
	/* the size insertions would have grown it to: 5,150 fill 11/16 of 8,192 */
	assert_int_equal(map.mask + 1, 8192);
	vals = map.vals;
	for (int pid = 1; pid <= 5150; pid++) {
		assert_int_equal(pidmap_put(&map, pid * 7, val_of(pid * 7, 0)), 0);
		ref[pid * 7] = val_of(pid * 7, 0);
	}
	assert_ptr_equal(map.vals, vals);
	assert_int_equal(pidmap_reserve(&map, 100), 0);
	assert_ptr_equal(map.vals, vals);
	check_same(&map);
	pidmap_fini(&map);
}

/* random lives and deaths against the reference */
static void test_random(void **state)
{
	pidmap_t map;
	unsigned seed = 12345, lives = 0;

	(void)state;
	assert_int_equal(pidmap_init(&map), 0);
	for (int i = 0; i < 200000; i++) {
		int pid = 1 + (int)(rand_r(&seed) % (PIDS - 1));

		if (ref[pid] && rand_r(&seed) % 2) {
			pidmap_del(&map, pid, ref[pid]);
			ref[pid] = NULL;
		} else {
			void *v = val_of(pid, ++lives);

			assert_int_equal(pidmap_put(&map, pid, v), 0);
			ref[pid] = v;
		}
		if (i % 20000 == 0) {
			check_same(&map);
			if (i % 40000 == 0)
				assert_int_equal(pidmap_fit(&map), 0);
		}
	}
	check_same(&map);
	pidmap_fini(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_put_get_del, reset),
		cmocka_unit_test_setup(test_remove_while_walking, reset),
		cmocka_unit_test_setup(test_fit_after_storm, reset),
		cmocka_unit_test_setup(test_reserve, reset),
		cmocka_unit_test_setup(test_random, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
