/*
 * intern.h: one copy of each string that many holders have (a process's
 * name, its wait channel, its program's path and arguments, the same for
 * every worker of a server and every thread of a process), counted, and
 * freed with its last holder.
 *
 * A string is len bytes of any value (embedded NULs included: a command
 * line), followed by a NUL that is not counted.  Two strings are the same
 * only when their lengths and every byte are: "a" and "a\0" are two.  What
 * vintern_get() returns is immutable: never written, realloc()ed or
 * free()d, only given back with vintern_put().  A string may carry one
 * attachment, built once from its bytes for all its holders (the vector of
 * a command line's arguments), freed with it.
 *
 * The table is the process's, under a mutex: any thread, any libvmon
 * instance.  It shrinks as its strings go (vhash_fit()), so that memory
 * returns after a storm of short lives.
 */
#ifndef VMON_UTIL_INTERN_H
#define VMON_UTIL_INTERN_H

#include <stddef.h>

/* the shared copy of [text, text + len), one holder more; NULL with ENOMEM */
const char *vintern_get(const char *text, size_t len);
/* s (a vintern_get() string), one holder more: the same as vintern_get() of its bytes, without their hash */
const char *vintern_hold(const char *s);
/* one holder fewer; the last frees it and its attachment (NULL: nothing) */
void vintern_put(const char *s);

/* the attachment of s, NULL before one is set */
void *vintern_attachment(const char *s);
/*
 * Set s's attachment to att (allocated with malloc()), unless another
 * holder set one first: returns the one s carries (att, or the first one,
 * in which case att is freed).
 */
void *vintern_attach(const char *s, void *att);

/* for tests: the strings held, and the slots of the table that finds them */
size_t vintern_count(void);
size_t vintern_table_slots(void);

#endif
