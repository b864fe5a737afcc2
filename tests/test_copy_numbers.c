/*
 * test_copy_numbers.c: parse_copy_numbers() (libvmon/stores/parse.c), the
 * task iterator's way of storing a record's numbers, against
 * parse_set_ull(), the way every other reader stores one: for each integer
 * type a store member can have, values at the edges of each size (sign
 * bits, all ones, bits past the member's width), with first and without,
 * the same member bytes, the same changed and present bits and the same
 * count of changes.  And parse_given(), the event writers' rule: a value
 * given to an absent field changes it, even the value it read as absent.
 * No root, no BPF: the equivalence with /proc itself is test_iter's.
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

#include "stores/parse.h"

/* a store with a member of every integer type, and its bitmaps */
struct store {
	char			c;
	int			i;
	unsigned int		u;
	long			l;
	unsigned long		ul;
	long long		ll;
	unsigned long long	ull;
	char			changed[1];
	char			present[1];
};

#define MEMBER(_m, _type, _sym)	{ .type = (_type), .offset = offsetof(struct store, _m), \
				  .size = sizeof(((struct store *)0)->_m), .sym = (_sym) }
static const vmon_field_t fields[] = {
	MEMBER(c, VMON_TYPE_char, 0), MEMBER(i, VMON_TYPE_int, 1), MEMBER(u, VMON_TYPE_uint, 2),
	MEMBER(l, VMON_TYPE_long, 3), MEMBER(ul, VMON_TYPE_ulong, 4), MEMBER(ll, VMON_TYPE_longlong, 5),
	MEMBER(ull, VMON_TYPE_ulonglong, 6),
};
#define NR	(sizeof(fields) / sizeof(fields[0]))

static void table_of(parse_copy_t *table)
{
	for (size_t k = 0; k < NR; k++) {
		table[k].sym = fields[k].sym;
		table[k].from = (unsigned short)(k * sizeof(uint64_t));
		table[k].to = (unsigned short)fields[k].offset;
		table[k].size = (unsigned char)fields[k].size;
	}
}

static void test_same_as_set_ull(void **state)
{
	static const uint64_t values[] = {
		0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000001ULL,
		0xffffffff80000080ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL, ~0ULL,
	};
	parse_copy_t table[NR];

	(void)state;
	table_of(table);
	for (size_t a = 0; a < sizeof(values) / sizeof(values[0]); a++) {
		for (size_t b = 0; b < sizeof(values) / sizeof(values[0]); b++) {
			for (int first = 0; first < 2; first++) {
				struct store copied, set;
				uint64_t record[NR];
				int changes = 0, r;

				/* both stores hold values[a] in every member, then take values[b] */
				memset(&copied, 0, sizeof(copied));
				for (size_t k = 0; k < NR; k++) {
					assert_true(parse_set_ull(&fields[k], &copied, values[a], NULL, false) >= 0);
					record[k] = values[b];
				}
				memcpy(&set, &copied, sizeof(set));
				for (size_t k = 0; k < NR; k++) {
					r = parse_set_ull(&fields[k], &set, values[b], set.changed, first);
					assert_true(r >= 0);
					set.present[0] |= (char)(1 << fields[k].sym);
					changes += r;
				}
				r = parse_copy_numbers(table, NR, record, &copied, copied.changed, copied.present, first);
				assert_int_equal(r, changes);
				assert_memory_equal(&copied, &set, sizeof(set));
			}
		}
	}
}

/* a size no integer has is refused, not stored */
static void test_bad_size(void **state)
{
	parse_copy_t row = { .sym = 0, .from = 0, .to = offsetof(struct store, ll), .size = 3 };
	uint64_t record[1] = { 42 };
	struct store s;

	(void)state;
	memset(&s, 0, sizeof(s));
	errno = 0;
	assert_int_equal(parse_copy_numbers(&row, 1, record, &s, s.changed, s.present, true), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(s.ll, 0);
	assert_int_equal(s.present[0], 0);
}

/* absent to present is a change whatever the value; present to the same value is none */
static void test_given(void **state)
{
	static const vmon_field_t not_a_number = { .type = VMON_TYPE_char_array, .sym = 7 };
	struct store s;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (size_t k = 0; k < NR; k++) {
		const vmon_field_t *f = &fields[k];
		char bit = (char)(1 << f->sym);

		/* absent (reads 0), given 0 */
		s.changed[0] = 0;
		assert_int_equal(parse_given(f, parse_set_ull(f, &s, 0, s.changed, false), s.changed, s.present), 1);
		assert_int_equal(s.present[0] & bit, bit);
		assert_int_equal(s.changed[0], bit);
		/* present, given the same again: nothing changed */
		s.changed[0] = 0;
		assert_int_equal(parse_given(f, parse_set_ull(f, &s, 0, s.changed, false), s.changed, s.present), 0);
		assert_int_equal(s.changed[0], 0);
		/* present, given another value */
		assert_int_equal(parse_given(f, parse_set_ull(f, &s, 5, s.changed, false), s.changed, s.present), 1);
		assert_int_equal(s.changed[0], bit);
	}
	/* a writer's error passes through, and the field stays absent */
	s.changed[0] = 0;
	errno = 0;
	assert_int_equal(parse_given(&not_a_number, parse_set_ull(&not_a_number, &s, 1, s.changed, false), s.changed,
				     s.present), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(s.present[0] & (char)(1 << 7), 0);
	assert_int_equal(s.changed[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_set_ull),
		cmocka_unit_test(test_bad_size),
		cmocka_unit_test(test_given),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
