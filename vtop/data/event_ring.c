/*
 * event_ring.c: a ring of the last N events with their text kept at its
 * length.  A vt_event_t holds its three texts in 280 fixed bytes, most of
 * them empty (an idle fork's is a dozen): the screen's log of 10,000 was
 * 3 MB once full.  Here each event is a small slot, and its texts, without
 * their NULs, are in a byte ring beside the slots.  Events leave in the
 * order they came, so the oldest event's text is always the byte ring's
 * oldest bytes: a push frees the text of the event it replaces, then
 * writes its own after the newest, growing the byte ring (never the count
 * it keeps) when the texts no longer fit, and making it smaller again once
 * they fill under a quarter of it (a storm's exec lines replaced by short
 * texts): it follows the texts it holds, never fewer events.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "data/room.h"
#include "data/snapshot.h"

struct vt_event_slot {
	double		when;
	int		pid;
	int		ppid;
	int		exit_code;
	unsigned	text;		/* where its texts start in the byte ring */
	unsigned char	comm_len, file_len, args_len;
	char		kind;
	bool		from_feed;
};

_Static_assert(sizeof(((vt_event_t *)0)->comm) <= 256 && sizeof(((vt_event_t *)0)->file) <= 256 &&
	       sizeof(((vt_event_t *)0)->args) <= 256, "a text's length fits a byte");

int vt_event_ring_init(vt_event_ring_t *r, int max)
{
	memset(r, 0, sizeof(*r));
	r->slots = calloc((size_t)max, sizeof(*r->slots));
	if (!r->slots)
		return -1;
	r->max = max;
	return 0;
}

void vt_event_ring_free(vt_event_ring_t *r)
{
	free(r->slots);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

/* empty, the slots kept and the text's bytes given back */
void vt_event_ring_clear(vt_event_ring_t *r)
{
	r->nr = 0;
	r->head = 0;
	free(r->text);
	r->text = NULL;
	r->text_cap = r->text_used = r->text_tail = 0;
}

static size_t slot_len(const struct vt_event_slot *s)
{
	return (size_t)s->comm_len + s->file_len + s->args_len;
}

static struct vt_event_slot *slot_at(const vt_event_ring_t *r, int k)
{
	return &r->slots[(r->head - 1 - k + 2 * r->max) % r->max];
}

#define TEXT_FIRST	4096	/* the byte ring's first room, and the least it is cut back to */

/* the byte ring's text moved to the start of a new one of cap bytes (at least text_used) */
static int text_resize(vt_event_ring_t *r, size_t cap)
{
	size_t first;
	char *text;

	text = malloc(cap);
	if (!text)
		return -1;
	first = r->text_cap - r->text_tail < r->text_used ? r->text_cap - r->text_tail : r->text_used;
	if (r->text_used) {
		memcpy(text, r->text + r->text_tail, first);
		memcpy(text + first, r->text, r->text_used - first);
	}
	for (int k = 0; r->text_cap && k < r->nr; k++) {
		struct vt_event_slot *s = slot_at(r, k);

		s->text = (unsigned)((s->text + r->text_cap - r->text_tail) % r->text_cap);
	}
	free(r->text);
	r->text = text;
	r->text_cap = cap;
	r->text_tail = 0;
	return 0;
}

/* the byte ring with room for need more bytes */
static int text_room(vt_event_ring_t *r, size_t need)
{
	size_t cap = r->text_cap ? r->text_cap : TEXT_FIRST;

	if (r->text_used + need <= r->text_cap)
		return 0;
	while (cap < r->text_used + need)
		cap *= 2;
	return text_resize(r, cap);
}

/* texts under a quarter of the byte ring: twice their bytes (vt_room_fit(); without the memory, it stays) */
static void text_fit(vt_event_ring_t *r)
{
	size_t cap = vt_room_fit(r->text_cap, r->text_used, TEXT_FIRST);

	if (cap < r->text_cap)
		text_resize(r, cap);
}

/* len bytes of buf into the byte ring at offset at, across its end */
static void text_put(vt_event_ring_t *r, size_t at, const char *buf, size_t len)
{
	size_t first = r->text_cap - at < len ? r->text_cap - at : len;

	memcpy(r->text + at, buf, first);
	memcpy(r->text, buf + first, len - first);
}

/* len bytes of the byte ring from offset at into buf */
static void text_take(const vt_event_ring_t *r, size_t at, char *buf, size_t len)
{
	size_t first = r->text_cap - at < len ? r->text_cap - at : len;

	memcpy(buf, r->text + at, first);
	memcpy(buf + first, r->text, len - first);
}

/* e as the newest, in place of the oldest when the ring is full; -1 without the memory for its text (e not kept) */
int vt_event_ring_push(vt_event_ring_t *r, const vt_event_t *e)
{
	size_t comm = strnlen(e->comm, sizeof(e->comm) - 1), file = strnlen(e->file, sizeof(e->file) - 1);
	size_t args = strnlen(e->args, sizeof(e->args) - 1), len = comm + file + args, at;
	struct vt_event_slot *s = &r->slots[r->head];
	char buf[sizeof(e->comm) + sizeof(e->file) + sizeof(e->args)];

	if (r->nr == r->max) {
		/* the oldest: its text the oldest bytes */
		r->text_used -= slot_len(s);
		r->text_tail = r->text_used ? (r->text_tail + slot_len(s)) % r->text_cap : 0;
		r->nr--;
	}
	if (text_room(r, len) < 0)
		return -1;
	at = r->text_cap ? (r->text_tail + r->text_used) % r->text_cap : 0;
	memcpy(buf, e->comm, comm);
	memcpy(buf + comm, e->file, file);
	memcpy(buf + comm + file, e->args, args);
	if (len)
		text_put(r, at, buf, len);
	r->text_used += len;
	s->when = e->when;
	s->pid = e->pid;
	s->ppid = e->ppid;
	s->exit_code = e->exit_code;
	s->text = (unsigned)at;
	s->comm_len = (unsigned char)comm;
	s->file_len = (unsigned char)file;
	s->args_len = (unsigned char)args;
	s->kind = e->kind;
	s->from_feed = e->from_feed;
	r->head = (r->head + 1) % r->max;
	r->nr++;
	text_fit(r);
	return 0;
}

/* the k-th newest event (0 the newest) into out */
void vt_event_ring_get(const vt_event_ring_t *r, int k, vt_event_t *out)
{
	const struct vt_event_slot *s = slot_at(r, k);
	char buf[sizeof(out->comm) + sizeof(out->file) + sizeof(out->args)];

	if (slot_len(s))
		text_take(r, s->text, buf, slot_len(s));
	memset(out, 0, sizeof(*out));
	out->when = s->when;
	out->kind = s->kind;
	out->from_feed = s->from_feed;
	out->pid = s->pid;
	out->ppid = s->ppid;
	out->exit_code = s->exit_code;
	memcpy(out->comm, buf, s->comm_len);
	memcpy(out->file, buf + s->comm_len, s->file_len);
	memcpy(out->args, buf + s->comm_len + s->file_len, s->args_len);
}

/* the k-th newest event's pid, kind and time, without its text */
void vt_event_ring_peek(const vt_event_ring_t *r, int k, int *pid, char *kind, double *when)
{
	const struct vt_event_slot *s = slot_at(r, k);

	*pid = s->pid;
	*kind = s->kind;
	*when = s->when;
}
