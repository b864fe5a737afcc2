/*
 * hash.h: the hash table of libvmon (and of vtop, which links the same
 * convenience library, libvmon/util/libvmonutil.la).  Keys are 64-bit
 * integers (a log's base id, a pointer, a pid in vtop, or a wider key's
 * own 64-bit hash), values are pointers or small integers cast to one.
 * The library's pid indexes are util/pidmap.h's: 32-bit keys, by the same
 * loads (below).
 *
 * Open addressing with linear probing over a power-of-two array, the slot
 * found by Fibonacci hashing (the key times 2^64/phi, its top bits), which
 * spreads runs of sequential pids and ids and aligned pointers alike.  A
 * key may be added more than once (a wider key hashed to 64 bits can
 * collide; a pid can have two lives): vhash_find() and vhash_find_next()
 * walk every entry of a key.  Removal leaves a tombstone, so an entry can
 * be removed while the table is walked; tombstones are dropped when the
 * table is rebuilt, which happens when used and removed slots pass 3/4 of
 * it: at twice the size if the live entries alone pass 11/16, at the same
 * size otherwise.  vhash_fit() makes a table the smallest size its entries
 * fill at most 5/8 of, when that is smaller: a sixteenth under the
 * doubling, so that a count about 11/16 of a size does not double the
 * table at one rebuild and halve it at the next fit.
 *
 * A zeroed vhash_t is an empty table; the first insertion allocates.
 * Positions (size_t) name slots until the next insertion.
 */
#ifndef VMON_UTIL_HASH_H
#define VMON_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VHASH_END	((size_t)-1)

typedef struct vhash_slot {
	uint64_t	key;
	void		*val;
} vhash_slot_t;

typedef struct vhash {
	vhash_slot_t	*slots;
	uint8_t		*state;		/* of each slot: empty, used or removed (hash.c) */
	size_t		mask;		/* slots - 1; 0 before the first insertion */
	size_t		nr;		/* entries */
	size_t		tombs;		/* removed slots not reused yet */
	unsigned	shift;		/* 64 - log2(slots) */
} vhash_t;

/*
 * The three loads, as fractions of the slots (hash.c, and util/pidmap.c,
 * the pid index).  Used and removed slots
 * together may fill 3/4 of the table; past that it is rebuilt, at twice
 * the size if the live entries alone fill more than 11/16 of it, at the
 * same size (the tombstones dropped) otherwise.  At 3/4, a miss under
 * linear probing looks at about eight slots' states (one cache line of
 * them) and a hit at two or three keys: a little more than at half full,
 * for half the memory (10,000 pids: 16,384 slots, not 32,768).
 */
static inline bool vhash_too_crowded(size_t used_and_removed, size_t size)
{
	return used_and_removed * 4 > size * 3;
}

static inline bool vhash_too_full(size_t nr, size_t size)
{
	return nr * 16 > size * 11;
}

/*
 * live entries above 5/8 of the slots: too many for a fit (or hash.c's
 * reserve) to make the table that size (pidmap_reserve() goes by 11/16).  A sixteenth under the 11/16 at which a
 * rebuild doubles it, so that a count that hovers about 11/16 of a size
 * (5,632 of 8,192) is not doubled by one rebuild and halved by the next
 * fit, each a rebuild, again and again.
 */
static inline bool vhash_too_full_to_fit(size_t nr, size_t size)
{
	return nr * 8 > size * 5;
}

void vhash_fini(vhash_t *h);
/* room for n entries without a rebuild; -1 ENOMEM */
int vhash_reserve(vhash_t *h, size_t n);
/* made smaller when its entries fill at most 5/8 of a smaller size; not while a position is held */
int vhash_fit(vhash_t *h);
/* every entry gone, the memory kept */
void vhash_clear(vhash_t *h);

/* the position of key's first entry, or of its next after pos; VHASH_END when none */
size_t vhash_find(const vhash_t *h, uint64_t key);
size_t vhash_find_next(const vhash_t *h, uint64_t key, size_t pos);
/* the value of key's first entry, NULL when none */
void *vhash_get(const vhash_t *h, uint64_t key);

/* a new entry, even if key has one; -1 ENOMEM */
int vhash_add(vhash_t *h, uint64_t key, void *val);
/* key's first entry set to val, or a new one; -1 ENOMEM */
int vhash_put(vhash_t *h, uint64_t key, void *val);
/* the entry at pos (from a find or a walk) removed; safe while walking */
void vhash_remove_at(vhash_t *h, size_t pos);
/* the entry of key with value val removed; false when there is none */
bool vhash_remove(vhash_t *h, uint64_t key, const void *val);

/* walking: the first entry at or after pos, VHASH_END past the last */
size_t vhash_next(const vhash_t *h, size_t pos);
#define vhash_for_each(h, pos) \
	for ((pos) = vhash_next((h), 0); (pos) != VHASH_END; (pos) = vhash_next((h), (pos) + 1))

static inline uint64_t vhash_key_at(const vhash_t *h, size_t pos)
{
	return h->slots[pos].key;
}

static inline void *vhash_val_at(const vhash_t *h, size_t pos)
{
	return h->slots[pos].val;
}

static inline void vhash_set_at(vhash_t *h, size_t pos, void *val)
{
	h->slots[pos].val = val;
}

/* for a table whose values are indexes (>= 0) cast to pointers: key's, or -1 */
static inline int vhash_get_index(const vhash_t *h, uint64_t key)
{
	size_t pos = vhash_find(h, key);

	return pos == VHASH_END ? -1 : (int)(uintptr_t)h->slots[pos].val;
}

/* 64 bits of several words, for a key wider than one (then compare the whole key on each entry found) */
static inline uint64_t vhash_mix(uint64_t seed, uint64_t word)
{
	seed ^= word + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
	return seed * 0xbf58476d1ce4e5b9ull ^ (seed >> 31);
}

#endif
