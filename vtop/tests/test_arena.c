/*
 * test_arena.c: the snapshots' bump allocator: what it hands out is
 * aligned, apart and kept until the reset; a reset reuses the chunks; and an
 * arena of a few small things (an exited row's) is small itself.
 */
#include "config.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "data/snapshot.h"

#define PIECES	5000

static size_t piece_size(unsigned i)
{
	/* sizes from 1 byte to over a chunk's worth, a few of them large */
	return i % 997 == 0 ? 300 * 1024 + i : 1 + (i * 7919u) % 3000;
}

/* PIECES allocations, each filled with its own byte; checked while the later ones come */
static void fill(vt_arena_t *arena, unsigned char **pieces)
{
	for (unsigned i = 0; i < PIECES; i++) {
		size_t size = piece_size(i);

		pieces[i] = vt_arena_alloc(arena, size);
		assert_non_null(pieces[i]);
		assert_int_equal((uintptr_t)pieces[i] % 16, 0);
		memset(pieces[i], (int)(i & 0xff), size);
	}
	for (unsigned i = 0; i < PIECES; i++) {
		size_t size = piece_size(i);

		for (size_t k = 0; k < size; k += 97)
			assert_int_equal(pieces[i][k], i & 0xff);
		assert_int_equal(pieces[i][size - 1], i & 0xff);
	}
}

static void test_apart_and_kept(void **state)
{
	unsigned char **first = calloc(PIECES, sizeof(*first)), **again = calloc(PIECES, sizeof(*again));
	vt_arena_t arena = { 0 };

	(void)state;
	assert_non_null(first);
	assert_non_null(again);
	fill(&arena, first);
	vt_arena_reset(&arena);
	assert_int_equal(arena.bytes, 0);
	/* the same requests after a reset land where they did: the chunks are reused, none added */
	fill(&arena, again);
	for (unsigned i = 0; i < PIECES; i++)
		assert_ptr_equal(first[i], again[i]);
	vt_arena_free(&arena);
	assert_null(arena.first);
	free(first);
	free(again);
}

/* what the process has malloc'd, in the heap and in mappings of their own */
static size_t in_use(void)
{
#ifdef HAVE_MALLINFO2
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#else
	return 0;	/* not counted: the pointers are still checked */
#endif
}

/*
 * A use that took many chunks (a storm's exited rows), then a small one:
 * the chunks the small one left untouched are given back at the reset
 * after it, and the first stays.
 */
static void test_storm_given_back(void **state)
{
	unsigned char **pieces = calloc(PIECES, sizeof(*pieces));
	vt_arena_t arena = { 0 };
	size_t before, storm;
	void *p;

	(void)state;
	assert_non_null(pieces);
	before = in_use();
	fill(&arena, pieces);
	storm = in_use() - before;
	/* the reset after the big use keeps its chunks (the next use may be as big) */
	vt_arena_reset(&arena);
	assert_true(in_use() - before == storm);
	p = vt_arena_alloc(&arena, 100);
	assert_ptr_equal(p, pieces[0]);
	vt_arena_reset(&arena);
	print_message("a storm's arena: %zu bytes, after a small use and a reset %zu\n", storm, in_use() - before);
	/* the first chunk, which the first piece (of 300 KiB) made its size */
	assert_true(in_use() - before <= malloc_usable_size(arena.first) + 64);
	assert_ptr_equal(vt_arena_alloc(&arena, 100), pieces[0]);
	vt_arena_free(&arena);
	free(pieces);
}

static void test_small_stays_small(void **state)
{
	vt_arena_t arena = { 0 };
	char *s;

	(void)state;
	s = vt_arena_strndup(&arena, "an exited row's command", 23);
	assert_string_equal(s, "an exited row's command");
	assert_non_null(vt_arena_alloc(&arena, 1500));
	/* one chunk within a page or two: a first chunk of 256 KiB made each exited row a mapping of its own */
	assert_ptr_equal(arena.first, arena.cur);
	print_message("an arena of %zu bytes: its chunk takes %zu\n", arena.bytes, malloc_usable_size(arena.first));
	assert_true(malloc_usable_size(arena.first) <= 8192);
	vt_arena_free(&arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apart_and_kept),
		cmocka_unit_test(test_storm_given_back),
		cmocka_unit_test(test_small_stays_small),
	};

	return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
