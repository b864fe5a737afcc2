/*
 * test_hash.c: the hash table of util/hash.h against a plain array that
 * holds the same entries: insertion, lookup, removal (with the tombstones
 * it leaves, while walking too), duplicate keys, growth and rebuilds.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/hash.h"

/* the reference: every entry, in no order; a removed one has val NULL */
struct ref {
	uint64_t	key[16384];
	void		*val[16384];
	size_t		nr;
};

static void *val_of(size_t i)
{
	return (void *)(uintptr_t)(i * 16 + 8);
}

/* every entry of ref is in h, once, and h holds nothing else */
static void check_same(const vhash_t *h, const struct ref *ref)
{
	size_t live = 0, walked = 0, pos;

	for (size_t i = 0; i < ref->nr; i++) {
		size_t seen = 0;

		if (!ref->val[i])
			continue;
		live++;
		for (pos = vhash_find(h, ref->key[i]); pos != VHASH_END; pos = vhash_find_next(h, ref->key[i], pos)) {
			assert_int_equal(vhash_key_at(h, pos), ref->key[i]);
			if (vhash_val_at(h, pos) == ref->val[i])
				seen++;
		}
		assert_int_equal(seen, 1);
	}
	assert_int_equal(h->nr, live);
	vhash_for_each(h, pos)
		walked++;
	assert_int_equal(walked, live);
}

static void test_insert_find(void **state)
{
	static struct ref ref;
	vhash_t h = { 0 };

	(void)state;
	assert_null(vhash_get(&h, 1));
	assert_int_equal(vhash_find(&h, 1), VHASH_END);
	assert_int_equal(vhash_next(&h, 0), VHASH_END);
	/* sequential pids, as a machine hands them out, and keys far apart */
	for (ref.nr = 0; ref.nr < 3000; ref.nr++) {
		ref.key[ref.nr] = ref.nr < 2000 ? ref.nr + 300 : (uint64_t)ref.nr << 40;
		ref.val[ref.nr] = val_of(ref.nr);
		assert_int_equal(vhash_add(&h, ref.key[ref.nr], ref.val[ref.nr]), 0);
	}
	check_same(&h, &ref);
	/* the table grew and stays at most 3/4 full, so that a miss ends early */
	assert_true(h.nr * 4 <= (h.mask + 1) * 3);
	assert_null(vhash_get(&h, 299));
	assert_null(vhash_get(&h, 2300));
	assert_ptr_equal(vhash_get(&h, 300), val_of(0));
	/* put replaces, add does not */
	assert_int_equal(vhash_put(&h, 300, val_of(5000)), 0);
	ref.val[0] = val_of(5000);
	check_same(&h, &ref);
	assert_int_equal(vhash_put(&h, 1ull << 63, val_of(5001)), 0);
	ref.key[ref.nr] = 1ull << 63;
	ref.val[ref.nr++] = val_of(5001);
	check_same(&h, &ref);
	vhash_fini(&h);
	assert_null(h.slots);
}

/* one key, several entries (a pid's two lives, two wide keys of one hash) */
static void test_duplicates(void **state)
{
	static struct ref ref;
	vhash_t h = { 0 };

	(void)state;
	for (ref.nr = 0; ref.nr < 200; ref.nr++) {
		ref.key[ref.nr] = ref.nr % 3 ? ref.nr : 42;
		ref.val[ref.nr] = val_of(ref.nr);
		assert_int_equal(vhash_add(&h, ref.key[ref.nr], ref.val[ref.nr]), 0);
	}
	check_same(&h, &ref);
	/* removal by value takes the one entry of the key that has it, and no other */
	assert_false(vhash_remove(&h, 42, val_of(1)));
	assert_true(vhash_remove(&h, 42, val_of(99)));
	ref.val[99] = NULL;
	assert_false(vhash_remove(&h, 42, val_of(99)));
	check_same(&h, &ref);
	vhash_fini(&h);
}

/*
 * Removal leaves tombstones: entries placed past a removed one stay
 * reachable, and a walk that removes as it goes meets every entry once.
 * Churn (add one, remove one, forever) must not grow the table: the
 * tombstones go at a rebuild of the same size.
 */
static void test_remove_tombstones(void **state)
{
	static struct ref ref;
	vhash_t h = { 0 };
	size_t pos, size, walked = 0;

	(void)state;
	for (ref.nr = 0; ref.nr < 1000; ref.nr++) {
		ref.key[ref.nr] = ref.nr * 7 + 1;
		ref.val[ref.nr] = val_of(ref.nr);
		assert_int_equal(vhash_add(&h, ref.key[ref.nr], ref.val[ref.nr]), 0);
	}
	for (size_t i = 0; i < ref.nr; i += 2) {
		assert_true(vhash_remove(&h, ref.key[i], ref.val[i]));
		ref.val[i] = NULL;
	}
	assert_int_equal(h.tombs, 500);
	check_same(&h, &ref);
	/* remove while walking: every third entry met */
	vhash_for_each(&h, pos) {
		uint64_t key = vhash_key_at(&h, pos);
		size_t i = (size_t)(key - 1) / 7;

		assert_ptr_equal(vhash_val_at(&h, pos), ref.val[i]);
		walked++;
		if (i % 3 == 1) {
			vhash_remove_at(&h, pos);
			ref.val[i] = NULL;
		}
	}
	assert_int_equal(walked, 500);
	check_same(&h, &ref);
	/* churn: the size stays, the tombstones do not pile up */
	size = h.mask + 1;
	for (size_t round = 0; round < 20000; round++) {
		assert_int_equal(vhash_add(&h, 100000 + round, val_of(round)), 0);
		assert_true(vhash_remove(&h, 100000 + round, val_of(round)));
		assert_true((h.nr + h.tombs) * 4 <= (h.mask + 1) * 3);
	}
	assert_int_equal(h.mask + 1, size);
	check_same(&h, &ref);
	/* clear keeps the memory and forgets the entries */
	vhash_clear(&h);
	assert_int_equal(h.nr, 0);
	assert_int_equal(h.mask + 1, size);
	assert_int_equal(vhash_next(&h, 0), VHASH_END);
	assert_null(vhash_get(&h, 8));
	vhash_fini(&h);
}

/* a reserve makes room up front: the adds after it never rebuild (the log's per-sample indexes count on it) */
static void test_reserve(void **state)
{
	vhash_t h = { 0 };
	vhash_slot_t *slots;

	(void)state;
	assert_int_equal(vhash_reserve(&h, 1000), 0);
	slots = h.slots;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(vhash_add(&h, (uint64_t)i * 4096, (void *)(uintptr_t)i), 0);
	assert_ptr_equal(h.slots, slots);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(vhash_get_index(&h, (uint64_t)i * 4096), i);
	assert_int_equal(vhash_get_index(&h, 1), -1);
	/* a smaller reserve keeps the room there is */
	assert_int_equal(vhash_reserve(&h, 10), 0);
	assert_ptr_equal(h.slots, slots);
	vhash_fini(&h);
}

/* after a storm: most entries gone, the table made small again with the rest still found; a full one is kept */
static void test_fit(void **state)
{
	vhash_t h = { 0 };
	size_t big;

	(void)state;
	for (int i = 1; i <= 10000; i++)
		assert_int_equal(vhash_add(&h, (uint64_t)i, (void *)(uintptr_t)i), 0);
	big = h.mask + 1;
	assert_int_equal(vhash_fit(&h), 0);
	assert_int_equal(h.mask + 1, big);	/* as full as it was made: kept */
	for (int i = 11; i <= 10000; i++)
		assert_true(vhash_remove(&h, (uint64_t)i, (void *)(uintptr_t)i));
	assert_int_equal(vhash_fit(&h), 0);
	assert_true(h.mask + 1 <= 64);
	assert_int_equal(h.tombs, 0);
	assert_int_equal(h.nr, 10);
	for (int i = 1; i <= 10; i++)
		assert_ptr_equal(vhash_get(&h, (uint64_t)i), (void *)(uintptr_t)i);
	assert_null(vhash_get(&h, 11));
	vhash_fini(&h);
}

/*
 * After a storm a table whose entries would fill more than 5/8 of half
 * its size is kept; otherwise it is made the size a rebuild keeps for its
 * entries, which churn at that size then keeps (10,000 pids: 16,384
 * slots, not the storm's 32,768); every entry is still found.
 */
static void test_fit_after_storm(void **state)
{
	static struct ref ref;
	vhash_t h = { 0 };
	size_t steady, storm;

	(void)state;
	for (ref.nr = 0; ref.nr < 10000; ref.nr++) {
		ref.key[ref.nr] = ref.nr + 1;
		ref.val[ref.nr] = val_of(ref.nr);
		assert_int_equal(vhash_add(&h, ref.key[ref.nr], ref.val[ref.nr]), 0);
	}
	steady = h.mask + 1;
	assert_int_equal(steady, 16384);
	/* the storm: 10,000 more lives at once, then their ends */
	for (size_t i = 0; i < 10000; i++)
		assert_int_equal(vhash_add(&h, 1000000 + i, val_of(i)), 0);
	storm = h.mask + 1;
	assert_int_equal(storm, 32768);
	for (size_t i = 0; i < 4000; i++)
		assert_true(vhash_remove(&h, 1000000 + i, val_of(i)));
	assert_int_equal(vhash_fit(&h), 0);
	assert_int_equal(h.mask + 1, storm);	/* 16,000 of 32,768: kept */
	for (size_t i = 4000; i < 10000; i++)
		assert_true(vhash_remove(&h, 1000000 + i, val_of(i)));
	assert_int_equal(vhash_fit(&h), 0);
	assert_int_equal(h.mask + 1, steady);
	assert_int_equal(h.tombs, 0);
	check_same(&h, &ref);
	/* churn at the steady size: rebuilt at that size, and fit leaves it */
	for (size_t round = 0; round < 30000; round++) {
		assert_int_equal(vhash_add(&h, 2000000 + round, val_of(round)), 0);
		assert_true(vhash_remove(&h, 2000000 + round, val_of(round)));
		assert_int_equal(vhash_fit(&h), 0);
		assert_true((h.nr + h.tombs) * 4 <= (h.mask + 1) * 3);
	}
	assert_int_equal(h.mask + 1, steady);
	check_same(&h, &ref);
	vhash_fini(&h);
}

/*
 * A count that hovers about 11/16 of a size (5,632 of 8,192): each cycle
 * goes 32 above it, churns there (a life begins, the oldest ends) until
 * the tombstones bring a rebuild, which doubles the table, then drops 32
 * under it and fits.  The fit must not halve the table again: the size
 * changes once (the first doubling), not twice a cycle.  Sizes every
 * entry still found.
 */
/* a life begins: the next key added; the oldest ends: removed */
static void life_begins(vhash_t *h, uint64_t *next)
{
	assert_int_equal(vhash_add(h, *next, (void *)(uintptr_t)*next), 0);
	(*next)++;
}

static void oldest_ends(vhash_t *h, uint64_t *oldest)
{
	assert_true(vhash_remove(h, *oldest, (void *)(uintptr_t)*oldest));
	(*oldest)++;
}

static void test_fit_hysteresis(void **state)
{
	enum { BOUNDARY = 5632, SWING = 32, CYCLES = 40 };
	vhash_t h = { 0 };
	uint64_t oldest = 1, next = 1;	/* the live keys: [oldest, next), as pids */
	size_t size, changes = 0;

	(void)state;
	while (next - oldest < BOUNDARY - SWING)
		life_begins(&h, &next);
	assert_int_equal(vhash_fit(&h), 0);
	size = h.mask + 1;
	assert_int_equal(size, 8192);
	for (int cycle = 0; cycle < CYCLES; cycle++) {
		vhash_slot_t *slots;
		size_t churn;

		while (next - oldest < BOUNDARY + SWING)
			life_begins(&h, &next);
		slots = h.slots;	/* a rebuild allocates the new slots before it frees the old */
		for (churn = 0; h.slots == slots; churn++) {
			assert_true(churn < 4 * (h.mask + 1));
			life_begins(&h, &next);
			oldest_ends(&h, &oldest);
		}
		changes += h.mask + 1 != size;
		size = h.mask + 1;
		while (next - oldest > BOUNDARY - SWING)
			oldest_ends(&h, &oldest);
		assert_int_equal(vhash_fit(&h), 0);
		changes += h.mask + 1 != size;
		size = h.mask + 1;
	}
	assert_int_equal(changes, 1);
	assert_int_equal(size, 16384);
	assert_int_equal(h.nr, BOUNDARY - SWING);
	for (uint64_t key = oldest; key < next; key++)
		assert_ptr_equal(vhash_get(&h, key), (void *)(uintptr_t)key);
	assert_null(vhash_get(&h, oldest - 1));
	vhash_fini(&h);
}

/* random operations against the reference, with keys from a small range so that they meet */
static void test_random(void **state)
{
	static struct ref ref;
	vhash_t h = { 0 };
	unsigned seed = 13;

	(void)state;
	ref.nr = 0;
	for (int op = 0; op < 60000; op++) {
		unsigned r = rand_r(&seed);
		uint64_t key = (uint64_t)(rand_r(&seed) % 512);
		size_t i;

		if (r % 3 || ref.nr == 0) {
			if (ref.nr == sizeof(ref.key) / sizeof(ref.key[0]))
				continue;
			ref.key[ref.nr] = key;
			ref.val[ref.nr] = val_of((size_t)op);
			assert_int_equal(vhash_add(&h, key, ref.val[ref.nr]), 0);
			ref.nr++;
		} else {
			i = (size_t)rand_r(&seed) % ref.nr;
			assert_int_equal(vhash_remove(&h, ref.key[i], ref.val[i]), ref.val[i] != NULL);
			ref.val[i] = NULL;
		}
		if (op % 5000 == 0)
			check_same(&h, &ref);
	}
	check_same(&h, &ref);
	vhash_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_find),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_remove_tombstones),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_fit_after_storm),
		cmocka_unit_test(test_fit_hysteresis),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
