/*
 * arena.c: a chunked bump allocator.  A snapshot copies a few thousand
 * stores and strings per refresh; one arena per snapshot makes that a
 * memcpy each, and letting the snapshot go is one reset.  Chunks are never
 * moved, so pointers into them stay valid until the reset.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/snapshot.h"

#define ARENA_CHUNK	(256 * 1024)
#define ARENA_ALIGN	16

struct vt_arena_chunk {
	vt_arena_chunk_t	*next;
	size_t			used;
	size_t			cap;
	max_align_t		data[];
};

void *vt_arena_alloc(vt_arena_t *arena, size_t size)
{
	vt_arena_chunk_t *c = arena->cur;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

	/* the chunks after cur are empty ones kept from before the last reset */
	while (c && c->cap - c->used < need)
		c = c->next;
	if (!c) {
		size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		vt_arena_chunk_t **tail = &arena->first;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = NULL;
		c->used = 0;
		c->cap = cap;
		while (*tail)
			tail = &(*tail)->next;
		*tail = c;
	}
	arena->cur = c;
	arena->bytes += need;
	c->used += need;
	return (char *)c->data + c->used - need;
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

void vt_arena_reset(vt_arena_t *arena)
{
	for (vt_arena_chunk_t *c = arena->first; c; c = c->next)
		c->used = 0;
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
