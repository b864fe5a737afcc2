/*
 * test_iter_held.c: the task iterator's held table (libvmon/sources/
 * iter_held.c) against a plain list of the tids it was given, in the order
 * they were placed: after every place, remove, compaction and new order,
 * each tid placed is found, its index entry within ITER_HELD_PROBES of its
 * home and with no free one before it (where the BPF program stops
 * looking), each removed one is not, the count is right, and the entries
 * in use are in the list's order with no copy of a tid after them (the
 * program takes any entry with the tid for the task's).  With the index up
 * to two thirds full, as the iterator keeps it, runs of consecutive tids
 * (a fork storm's) and scattered ones nearly all find room.
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
#define ENTRIES	(1u << BITS)		/* of the index */
#define CAP	(ENTRIES / 4 * 3)	/* entries, as the iterator sizes them */

static struct iter_held entries[CAP];
static struct iter_held_at index_at[ENTRIES];
static held_table_t table = { entries, index_at, ENTRIES - 1, CAP, 0, 0, 0 };

/* the reference: the tids placed, in the entries' order, and for each the hash its entry was given */
static unsigned placed[CAP];
static size_t placed_nr;

static unsigned long long lcg = 88172645463325252ull;

static unsigned next_random(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(lcg >> 33);
}

/* every index entry in use is its tid's, reachable as the program reaches it, and names the tid's entry */
static void check_table(void)
{
	unsigned used = 0, at_used = 0;
	size_t k = 0;

	for (unsigned i = 0; i <= table.mask; i++) {
		unsigned tid = index_at[i].tid, home, dist;

		if (!tid)
			continue;
		at_used++;
		home = iter_held_home(tid, table.mask);
		dist = (i - home) & table.mask;
		assert_true(dist < ITER_HELD_PROBES);
		for (unsigned d = 0; d < dist; d++)
			assert_int_not_equal(index_at[(home + d) & table.mask].tid, 0);
		assert_true(index_at[i].entry < table.end);
		assert_int_equal(entries[index_at[i].entry].tid, tid);
	}
	/* the entries: the reference's tids in its order, free ones between, none after end */
	for (unsigned i = 0; i < CAP; i++) {
		unsigned tid = entries[i].tid;

		if (!tid)
			continue;
		assert_true(i < table.end);
		used++;
		assert_true(k < placed_nr);
		assert_int_equal(tid, placed[k]);
		k++;
		assert_int_equal(entries[i].hash, (unsigned long long)tid * 3);
	}
	assert_int_equal(used, table.nr);
	assert_int_equal(at_used, table.nr);
	assert_int_equal(used, placed_nr);
	for (k = 0; k < placed_nr; k++) {
		struct iter_held *e = held_find(&table, placed[k]);

		assert_non_null(e);
		assert_int_equal(e->tid, placed[k]);
		assert_ptr_equal(held_find_hinted(&table, placed[k], (unsigned)(e - entries) + 1), e);
		assert_ptr_equal(held_find_hinted(&table, placed[k], (unsigned)((e - entries + 1) % CAP) + 1), e);
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
	memmove(&placed[k], &placed[k + 1], (placed_nr - k - 1) * sizeof(placed[0]));
	placed_nr--;
	assert_null(held_find(&table, tid));
}

/* the free entries taken back: the tids in use are the first, in their order */
static void compacted(void)
{
	held_compact(&table);
	assert_int_equal(table.end, table.nr);
	check_table();
}

static int reset(void **state)
{
	(void)state;
	held_clear(&table);
	placed_nr = 0;
	return 0;
}

/* tids come and go at random, the index at most two thirds full, compacted as the iterator does */
static void test_random(void **state)
{
	int missed = 0, tries = 0;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		if (placed_nr < ENTRIES * 2 / 3 && (placed_nr == 0 || next_random() % 3)) {
			tries++;
			if (table.end == CAP)
				compacted();
			missed += !place(1 + next_random() % 4000000);
		} else {
			removed(next_random() % placed_nr);
		}
		if (round % 97 == 0)
			check_table();
		if (round % 1009 == 0)
			compacted();
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
	compacted();
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
 * The entries in the order they were placed, one after another where the
 * program looks for the next task's; none placed once the last entry is
 * taken, until the free ones are taken back.
 */
static void test_placed_in_order(void **state)
{
	(void)state;
	for (unsigned tid = 500; tid < 500 + CAP; tid++) {
		assert_true(place(tid));
		assert_int_equal(held_find(&table, tid) - entries, tid - 500);
	}
	assert_int_equal(table.end, CAP);
	check_table();
	removed(7);
	removed(0);
	assert_false(place(100000));	/* no entry after the last */
	check_table();
	compacted();
	assert_true(place(100000));
	assert_int_equal(held_find(&table, 100000) - entries, CAP - 2);
	check_table();
	held_clear(&table);
	placed_nr = 0;
	check_table();
	assert_int_equal(table.end, 0);
}

/*
 * A new order, as a read met the tasks: those it named first, in its
 * order (a tid named twice, or without an entry, passed over); then the
 * others in theirs; the free entries gone.
 */
static void test_new_order(void **state)
{
	unsigned named[] = { 1009, 1003, 1003, 77, 1001, 1007 }, want[] = { 1009, 1003, 1001, 1007, 1000, 1002, 1005, 1006, 1008 };
	size_t at = 0;

	(void)state;
	for (unsigned tid = 1000; tid < 1010; tid++)
		assert_true(place(tid));
	assert_true(is_placed(1004, &at));
	removed(at);
	check_table();
	held_order_begin(&table);
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
		held_order_next(&table, named[k]);
	held_order_end(&table);
	memcpy(placed, want, sizeof(want));
	placed_nr = sizeof(want) / sizeof(want[0]);
	assert_int_equal(table.end, placed_nr);
	check_table();
	for (size_t k = 0; k < placed_nr; k++)
		assert_int_equal(held_find(&table, want[k]) - entries, k);

	/* at random, many times: each order is the one asked for */
	for (int round = 0; round < 200; round++) {
		unsigned order[CAP];
		size_t n, keep;

		while (placed_nr < ENTRIES / 2)
			(void)place(1 + next_random() % 4000000);
		while (placed_nr > ENTRIES / 8 && next_random() % 4)
			removed(next_random() % placed_nr);
		n = placed_nr;
		keep = next_random() % (n + 1);
		memcpy(order, placed, n * sizeof(order[0]));
		for (size_t k = n; k > 1; k--) {	/* a shuffle of the first keep to be named */
			size_t j = next_random() % k;
			unsigned t = order[k - 1];

			order[k - 1] = order[j];
			order[j] = t;
		}
		held_order_begin(&table);
		for (size_t k = 0; k < keep; k++)
			held_order_next(&table, order[k]);
		held_order_end(&table);
		/* the reference: the named ones, then the rest in the order they had */
		{
			unsigned next[CAP];
			size_t m = 0;

			memcpy(next, order, keep * sizeof(next[0]));
			m = keep;
			for (size_t k = 0; k < n; k++) {
				bool named_it = false;

				for (size_t j = 0; j < keep && !named_it; j++)
					named_it = order[j] == placed[k];
				if (!named_it)
					next[m++] = placed[k];
			}
			memcpy(placed, next, n * sizeof(next[0]));
		}
		check_table();
	}
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
		cmocka_unit_test_setup(test_placed_in_order, reset),
		cmocka_unit_test_setup(test_new_order, reset),
		cmocka_unit_test(test_not_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
