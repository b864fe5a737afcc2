/*
 * arena.c: a chunked bump allocator.  A snapshot copies a few thousand
 * stores and strings per refresh; one arena per snapshot makes that a
 * memcpy each, and letting the snapshot go is one reset.  Chunks are never
 * moved, so pointers into them stay valid until the reset.
 *
 * The chunks grow from ARENA_FIRST to ARENA_CHUNK, each twice the last: an
 * exited row kept for a few refreshes has an arena of its own for a
 * kilobyte or two, and a first chunk of 256 KiB made each of them a mapping
 * of its own (glibc mmaps that size): in a churn storm, thousands of them,
 * a page or two touched in each, vtop's RSS up by tens of MB.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/snapshot.h"

#define ARENA_FIRST	(4 * 1024 - 64)	/* with the header and malloc's, within a page */
#define ARENA_CHUNK	(256 * 1024)

struct vt_arena_chunk {
	vt_arena_chunk_t	*next;
	size_t			used;
	size_t			cap;
	max_align_t		data[];
};

void *vt_arena_alloc(vt_arena_t *arena, size_t size)
{
	vt_arena_chunk_t *c = arena->cur;
	size_t need = (size + VT_ARENA_ALIGN - 1) & ~(size_t)(VT_ARENA_ALIGN - 1);

	/* the chunks after cur are empty ones kept from before the last reset */
	while (c && c->cap - c->used < need)
		c = c->next;
	if (!c) {
		size_t cap = arena->first || !arena->expect ? ARENA_FIRST : arena->expect;
		vt_arena_chunk_t **tail = &arena->first;

		while (*tail) {
			if ((*tail)->cap >= cap)
				cap = (*tail)->cap < ARENA_CHUNK / 2 ? (*tail)->cap * 2 : ARENA_CHUNK;
			tail = &(*tail)->next;
		}
		if (cap < need)
			cap = need;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = NULL;
		c->used = 0;
		c->cap = cap;
		*tail = c;
	}
	arena->cur = c;
	arena->bytes += need;
	c->used += need;
	return (char *)c->data + c->used - need;
}

/*
 * The size of the arena's first chunk, before anything is allocated: a
 * copy whose size is known (near enough: more goes into another chunk)
 * takes that much and no more.
 */
void vt_arena_expect(vt_arena_t *arena, size_t size)
{
	if (!arena->first)
		arena->expect = (size + VT_ARENA_ALIGN - 1) & ~(size_t)(VT_ARENA_ALIGN - 1);
}

char *vt_arena_strndup(vt_arena_t *arena, const char *s, size_t len)
{
	char *d = vt_arena_alloc(arena, len + 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

/*
 * The chunks the arena's last use did not touch are given back: a
 * snapshot's arena grows with a storm's exited rows, and kept every chunk
 * it ever had (three snapshots, tens of MB after one); a steady use keeps
 * the chunks it takes each time.  The first stays.
 */
void vt_arena_reset(vt_arena_t *arena)
{
	vt_arena_chunk_t **link = &arena->first, *c, *next;

	for (c = arena->first; c; c = next) {
		next = c->next;
		if (c->used == 0 && c != arena->first) {
			*link = next;
			free(c);
			continue;
		}
		c->used = 0;
		link = &c->next;
	}
	arena->cur = arena->first;
	arena->bytes = 0;
}

void vt_arena_free(vt_arena_t *arena)
{
	vt_arena_chunk_t *c = arena->first, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	arena->first = arena->cur = NULL;
	arena->bytes = 0;
}
