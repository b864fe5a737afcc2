/* intern.c: the shared strings (intern.h), in the hash table of hash.h keyed by their bytes' hash. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/hash.h"
#include "util/intern.h"

typedef struct intern_entry {
	uint64_t	hash;		/* its key in the table */
	size_t		holders;
	size_t		len;
	void		*att;		/* vintern_attach()'s, freed with the entry */
	char		bytes[];	/* len bytes and a NUL: what the holders see */
} intern_entry_t;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static vhash_t intern_table;

static intern_entry_t *entry_of(const char *s)
{
	return (intern_entry_t *)(uintptr_t)(s - offsetof(intern_entry_t, bytes));
}

/*
 * The strings are anyone's to choose (a process's name, its arguments):
 * with a hash known in advance, a user could make every look-up a walk of
 * one long run of the table, under its one lock.  So the hash starts from
 * a value of this process's, drawn once.
 */
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;
static uint64_t seed;

static void seed_draw(void)
{
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return;
	/* no entropy yet (early boot): not secret, but not the same for every process */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = vhash_mix(vhash_mix((uint64_t)ts.tv_nsec, (uint64_t)ts.tv_sec), (uint64_t)getpid());
}

/* 64 bits of the bytes and their number, a word at a time */
static uint64_t hash_bytes(const char *text, size_t len)
{
	uint64_t h, w;

	pthread_once(&seed_once, seed_draw);
	h = vhash_mix(seed, len);
	size_t i;

	for (i = 0; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, text + i, sizeof(w));
		h = vhash_mix(h, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, text + i, len - i);
		h = vhash_mix(h, w);
	}
	return h;
}

const char *vintern_get(const char *text, size_t len)
{
	uint64_t hash = hash_bytes(text, len);
	intern_entry_t *e = NULL;

	pthread_mutex_lock(&intern_lock);
	for (size_t pos = vhash_find(&intern_table, hash); pos != VHASH_END;
	     pos = vhash_find_next(&intern_table, hash, pos)) {
		intern_entry_t *c = vhash_val_at(&intern_table, pos);

		if (c->len == len && memcmp(c->bytes, text, len) == 0) {
			e = c;
			e->holders++;
			break;
		}
	}
	if (!e) {
		e = malloc(sizeof(*e) + len + 1);
		if (e) {
			*e = (intern_entry_t){ .hash = hash, .holders = 1, .len = len };
			memcpy(e->bytes, text, len);
			e->bytes[len] = '\0';
			if (vhash_add(&intern_table, hash, e) < 0) {
				free(e);
				e = NULL;
			}
		}
	}
	pthread_mutex_unlock(&intern_lock);
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	return e->bytes;
}

const char *vintern_hold(const char *s)
{
	pthread_mutex_lock(&intern_lock);
	entry_of(s)->holders++;
	pthread_mutex_unlock(&intern_lock);
	return s;
}

void vintern_put(const char *s)
{
	intern_entry_t *e;
	bool last;

	if (!s)
		return;
	e = entry_of(s);
	pthread_mutex_lock(&intern_lock);
	last = --e->holders == 0;
	if (last) {
		vhash_remove(&intern_table, e->hash, e);
		/* the table shrinks with its strings (after a storm), and goes with the last */
		if (intern_table.nr == 0)
			vhash_fini(&intern_table);
		else
			vhash_fit(&intern_table);
	}
	pthread_mutex_unlock(&intern_lock);
	if (last) {
		free(e->att);
		free(e);
	}
}

void *vintern_attachment(const char *s)
{
	void *att;

	pthread_mutex_lock(&intern_lock);
	att = entry_of(s)->att;
	pthread_mutex_unlock(&intern_lock);
	return att;
}

void *vintern_attach(const char *s, void *att)
{
	intern_entry_t *e = entry_of(s);
	void *first;

	pthread_mutex_lock(&intern_lock);
	if (!e->att)
		e->att = att;
	first = e->att;
	pthread_mutex_unlock(&intern_lock);
	if (first != att)
		free(att);
	return first;
}

size_t vintern_count(void)
{
	size_t n;

	pthread_mutex_lock(&intern_lock);
	n = intern_table.nr;
	pthread_mutex_unlock(&intern_lock);
	return n;
}

size_t vintern_table_slots(void)
{
	size_t n;

	pthread_mutex_lock(&intern_lock);
	n = intern_table.slots ? intern_table.mask + 1 : 0;
	pthread_mutex_unlock(&intern_lock);
	return n;
}
