/*
 * test_iter_held.c: the task iterator's held table (libvmon/sources/
 * iter_held.c) against a plain list of the tids it was given: after every
 * place and remove, each tid placed is found, within ITER_HELD_PROBES of
 * its home and with no free entry before it (where the BPF program stops
 * looking), each removed one is not, and the count is right.  With the
 * table up to two thirds full, as the iterator keeps it, runs of
 * consecutive tids (a fork storm's) and scattered ones nearly all find room.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sources/iter_held.h"

#define BITS	10
#define ENTRIES	(1u << BITS)

static struct iter_held entries[ENTRIES];
static held_table_t table = { entries, ENTRIES - 1, 0 };

/* the reference: the tids placed, and for each the hash its entry was given */
static unsigned placed[ENTRIES];
static size_t placed_nr;

static unsigned long long lcg = 88172645463325252ull;

static unsigned next_random(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(lcg >> 33);
}

/* every entry in use is its tid's, reachable as the program reaches it */
static void check_table(void)
{
	unsigned used = 0;

	for (unsigned i = 0; i <= table.mask; i++) {
		unsigned tid = entries[i].tid, home, dist;

		if (!tid)
			continue;
		used++;
		home = iter_held_home(tid, table.mask);
		dist = (i - home) & table.mask;
		assert_true(dist < ITER_HELD_PROBES);
		for (unsigned d = 0; d < dist; d++)
			assert_int_not_equal(entries[(home + d) & table.mask].tid, 0);
		assert_int_equal(entries[i].hash, (unsigned long long)tid * 3);
	}
	assert_int_equal(used, table.nr);
	assert_int_equal(used, placed_nr);
	for (size_t k = 0; k < placed_nr; k++) {
		struct iter_held *e = held_find(&table, placed[k]);

		assert_non_null(e);
		assert_int_equal(e->tid, placed[k]);
	}
}

static bool is_placed(unsigned tid, size_t *at)
{
	for (size_t k = 0; k < placed_nr; k++)
		if (placed[k] == tid) {
			*at = k;
			return true;
		}
	return false;
}

/* tid given an entry if it has room: false if it had none */
static bool place(unsigned tid)
{
	struct iter_held *e = held_place(&table, tid);
	size_t at;

	if (!e) {
		assert_false(is_placed(tid, &at));
		return false;
	}
	assert_int_equal(e->tid, tid);
	e->hash = (unsigned long long)tid * 3;
	if (!is_placed(tid, &at))
		placed[placed_nr++] = tid;
	return true;
}

static void removed(size_t k)
{
	struct iter_held *e = held_find(&table, placed[k]);
	unsigned tid = placed[k];

	assert_non_null(e);
	held_remove(&table, e);
	placed[k] = placed[--placed_nr];
	assert_null(held_find(&table, tid));
}

static int reset(void **state)
{
	(void)state;
	held_clear(&table);
	placed_nr = 0;
	return 0;
}

/* tids come and go at random, the table at most two thirds full */
static void test_random(void **state)
{
	int missed = 0, tries = 0;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		if (placed_nr < ENTRIES * 2 / 3 && (placed_nr == 0 || next_random() % 3)) {
			tries++;
			missed += !place(1 + next_random() % 4000000);
		} else {
			removed(next_random() % placed_nr);
		}
		if (round % 97 == 0)
			check_table();
	}
	check_table();
	print_message("%d of %d tids without room in a table at most two thirds full\n", missed, tries);
	assert_true(missed * 200 <= tries);
}

/* a fork storm's consecutive tids, two thirds of the table, then every other one gone and a second run */
static void test_runs(void **state)
{
	int missed = 0;

	(void)state;
	for (unsigned tid = 30000; tid < 30000 + ENTRIES * 2 / 3; tid++)
		missed += !place(tid);
	check_table();
	for (size_t k = 0; k < placed_nr;)
		if (placed[k] % 2)
			removed(k);
		else
			k++;
	check_table();
	for (unsigned tid = 70001; tid < 70001 + ENTRIES / 3; tid++)
		missed += !place(tid);
	check_table();
	print_message("%d of %u consecutive tids without room\n", missed, ENTRIES * 2 / 3 + ENTRIES / 3);
	assert_true(missed * 1000 <= (int)ENTRIES);
}

/* placing a tid twice gives its entry again; 0 is never a tid; a full probe window leaves the next without room */
static void test_edges(void **state)
{
	struct iter_held *e;
	unsigned home, crowd[ITER_HELD_PROBES + 1], n = 0;

	(void)state;
	assert_true(place(12345));
	e = held_find(&table, 12345);
	assert_ptr_equal(held_place(&table, 12345), e);
	assert_int_equal(table.nr, 1);
	assert_null(held_place(&table, 0));
	assert_true(place(12345));
	removed(0);
	check_table();

	/* ITER_HELD_PROBES + 1 tids of one home: the last has no room, and a removal makes some */
	home = iter_held_home(1, table.mask);
	for (unsigned tid = 1; n < ITER_HELD_PROBES + 1; tid++)
		if (iter_held_home(tid, table.mask) == home)
			crowd[n++] = tid;
	for (unsigned i = 0; i < ITER_HELD_PROBES; i++)
		assert_true(place(crowd[i]));
	assert_false(place(crowd[ITER_HELD_PROBES]));
	check_table();
	removed(0);
	check_table();
	assert_true(place(crowd[ITER_HELD_PROBES]));
	check_table();
}

/*
 * An entry's run figures, as held_set() keeps them (the count's low 32 bits),
 * against a record's: any change of the run time, or of the count below
 * bit 32, is a run; a count 2^32 on with the same run time is not seen.
 */
static void test_not_run(void **state)
{
	const unsigned long long ns = 5000000123ULL, count = (1ULL << 32) + 7;
	struct iter_held e = { .run_ns = ns, .run_count = (__u32)count };

	(void)state;
	assert_int_equal(sizeof(e), 32);
	assert_true(iter_held_not_run(&e, ns, count));
	assert_false(iter_held_not_run(&e, ns + 1, count));
	assert_false(iter_held_not_run(&e, ns + (1ULL << 32), count));
	assert_false(iter_held_not_run(&e, ns, count + 1));
	assert_false(iter_held_not_run(&e, ns, count - 7));
	assert_true(iter_held_not_run(&e, ns, count + (1ULL << 32)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_random, reset),
		cmocka_unit_test_setup(test_runs, reset),
		cmocka_unit_test_setup(test_edges, reset),
		cmocka_unit_test(test_not_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
