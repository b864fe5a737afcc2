/*
 * buf.c: the growable buffer (buf_t, buf.h) that file contents, lines
 * and lists are read into: it grows, never shrinks, and always has room for
 * the NUL after what it holds.
 */
#include "config.h"

#include <stdlib.h>

#include "core/internal.h"

int buf_reserve(buf_t *buf, size_t cap)
{
	char *data;

	if (buf->cap >= cap + 1 && buf->data)
		return 0;
	if (cap < 4096)
		cap = 4096;
	data = realloc(buf->data, cap + 1);
	if (!data)
		return -1;
	buf->data = data;
	buf->cap = cap + 1;
	return 0;
}

void buf_free(buf_t *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}
