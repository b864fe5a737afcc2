/*
 * buf.h: the growable buffer (buf.c) that files, lines and lists are read
 * into.
 */
#ifndef VMON_UTIL_BUF_H
#define VMON_UTIL_BUF_H

#include <stddef.h>

/* a growable buffer for file contents */
typedef struct buf {
	char	*data;
	size_t	len;	/* bytes held; data[len] is always a NUL */
	size_t	cap;	/* bytes allocated */
} buf_t;

int buf_reserve(buf_t *buf, size_t cap);
void buf_free(buf_t *buf);

#endif
