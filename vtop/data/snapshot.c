/*
 * snapshot.c: the library's tree copied out after each vmon_sample().
 *
 * The sampling thread owns the vmon_t, and the next vmon_sample() frees and
 * reallocates what the tree points to.  After each sample the builder puts
 * what vtop shows into a vt_snapshot_t: every wanted store of every node,
 * plus what vtop derives: CPU%, I/O rates, the user name, the command line
 * escaped once.  The stores are borrowed (the library's own, good until the
 * next vmon_sample(): vtop -b, and the live screen, which reads only while
 * the sampling thread leaves the library alone, sampler.c) or copied (a
 * memcpy each, then the strings they point to; made once and shared by the
 * snapshots while the node's stores do not change: a replay, the tests).
 * Either way an exited row's stores are a copy of its own, kept for the
 * refreshes after (its ghost).  A snapshot of copies is read-only and can be
 * handed to another thread.
 *
 * Exited rows: a process found gone is in the tree for the sample that
 * found it, its state X (dead), stale then or, when it is new in that
 * sample (it lived and died between two samples: the event feed reports
 * such lives), in the next one.  The builder shows it exited from the
 * sample that found it gone, keeps a copy of it (a "ghost") and adds that
 * to the next exited_keep - 1 snapshots, under its parent, so that
 * something that lived between two refreshes is seen for a while; the
 * stale node of a process shown so already is left to its ghost.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/intern.h"

#include "data/columns.h"
#include "data/room.h"
#include "data/snapshot.h"

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h: "I am a kernel thread" */

/*
 * Per node, on proc->foo: what the previous sample saw.  One block a
 * process, 56 bytes (a 64-byte malloc chunk, not 112): no copy of the
 * arguments and no second command text (see set_command()).
 */
struct vt_priv {
	unsigned long long	ticks;		/* utime + stime */
	unsigned long long	read_bytes;
	unsigned long long	write_bytes;
	/*
	 * The row's command text as set_command() made it last (made_how
	 * says how: command_how()): escaping every command line again each
	 * refresh was a fifth of what vtop itself spent per refresh at 5,000
	 * processes, for text that changes only at exec.  Made from the
	 * arguments, it is also the process's last command line: a zombie's
	 * cmdline reads empty (its memory is gone, and the library reports
	 * what /proc shows, unless the event feed gave it the arguments), but
	 * a process that just exited should still be known by its arguments,
	 * on its row and in the event log; so a row without arguments does
	 * not replace a text made from them (command_ending()).
	 */
	const char		*made;		/* interned (util/intern.h) */
	/*
	 * Its stores as last copied; or, by a builder that borrows the node's
	 * stores (vtop -b), which never copies them so, vtop -b's text of its
	 * columns (vt_row_memo(), with_memo)
	 */
	union {
		struct vt_share		*share;
		struct vt_row_memo	*memo;
	};
	unsigned		made_arg0_base;	/* an offset in one command line (under ARG_MAX) */
	int			made_gen;	/* the sample (vmon->generation) made was last found right for */
	int			row;		/* its row in the last snapshot built, -1 for none (pid_rows_next()) */
	unsigned short		made_how;
	bool			have_ticks:1;
	bool			have_io:1;
	bool			shown_exited:1;	/* a snapshot showed it exited (and kept its ghost) */
	bool			with_memo:1;	/* the union above is memo */
};

/*
 * A row's stores and their errnos, one block, which its stores pointer
 * finds (vt_row_errors()): in an arena (exited rows, ghosts, rows without
 * history) or a shared copy (struct vt_share)
 */
struct vt_row_stores {
	void	*stores[VMON_STORE_PROC_NR];
	unsigned char	errors[VMON_STORE_PROC_NR];	/* as vmon_proc_t's */
};
_Static_assert(sizeof(((struct vt_row_stores *)0)->errors) == sizeof(((vmon_proc_t *)0)->errors),
	       "a row's errors are a copy of its node's");

/*
 * A node's stores copied once and shared by every snapshot whose row shows
 * them unchanged (when not borrowing).  The screen held three snapshots,
 * each with a copy of every process's stores: 31 MB of copies at 10,000
 * processes, most of them of idle processes whose stores had not changed.  Now a
 * process's stores are copied again only when they differ from the last
 * copy, and the snapshots and the node hold references to it.  The
 * references are taken and dropped only in the thread that builds (and
 * clears) snapshots; the screen's thread only reads the copies.
 */
struct vt_share {
	int			refs;
	struct vt_row_stores	st;
	vt_arena_t		arena;
	/* the rows' command text, made from these stores, or NULL; interned (util/intern.h) */
	const char		*command;
	unsigned		command_how;	/* command_how() */
	unsigned		arg0_base;
};

/*
 * Ask the CPU for each cache line of size bytes at p (a hint: it changes
 * nothing, and an address that is not memory is no fault).  Always
 * inlined, as what calls it: gcc 12 found a function of prefetches alone
 * pure (a prefetch is no effect to it) and deleted its calls as dead when
 * it had not inlined it first, and the first build of walk_prefetch() had
 * no prefetch left in it.
 */
static inline __attribute__((always_inline)) void prefetch_lines(const void *p, size_t size)
{
	uintptr_t line = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + size;

	for (; line < end; line += 64)
		__builtin_prefetch((const void *)line);
}

#define VT_ROW_MEMO_MAX	4096	/* the key and text kept, at most */
#define VT_ROW_MEMO_AHEAD	128	/* what vt_row_memo() reads first of a memo: its header and a key */

/* what vt_row_memo_keep() kept: the key, then the text */
struct vt_row_memo {
	unsigned		key_size, len, cap;	/* cap: the bytes after the header */
	int			sampled;	/* the sample (the node's generation) the text is right for */
	vmon_proc_wants_t	wants;		/* the node's then */
	unsigned long		present;	/* stores_present() then */
	unsigned char		bytes[];
};

struct vt_ghost {
	vt_row_t	row;	/* its stores and command the exited row's shared copy's (add_node()), one reference */
};

struct vt_user {
	uid_t	uid;
	char	*name;
};

static void share_put(struct vt_share *sh)
{
	if (!sh || --sh->refs > 0)
		return;
	vintern_put(sh->command);
	vt_arena_free(&sh->arena);
	free(sh);
}

/* the shared copy a row's stores are in, or NULL */
static struct vt_share *row_share(const vt_row_t *row)
{
	if (!(row->flags & VT_ROW_SHARED))
		return NULL;
	return (struct vt_share *)((char *)row->stores - offsetof(struct vt_share, st.stores));
}

/*
 * The node whose own stores a row shows (a builder that borrows them:
 * vtop -b), or NULL for a row on copies (an arena's or a shared one)
 */
static const vmon_proc_t *row_node(const vt_row_t *row)
{
	if (!(row->flags & VT_ROW_NODE_STORES))
		return NULL;
	return (const vmon_proc_t *)((const char *)row->stores - offsetof(vmon_proc_t, stores));
}

/* the same, only for a live row: an exited row's key changes each refresh (exited_age) */
static const vmon_proc_t *live_row_node(const vt_row_t *row)
{
	return row->flags & VT_ROW_EXITED ? NULL : row_node(row);
}

/*
 * Where a row's memo is kept, or NULL: a live row on its node's own stores
 * (a builder that borrows them: vtop -b), with the node's history.  Not an
 * exited row: its key changes each refresh (exited_age), and a row on
 * copies has no node to say whether they changed.
 */
static struct vt_row_memo **memo_home(const vt_row_t *row, const vmon_proc_t **node)
{
	const vmon_proc_t *proc = live_row_node(row);
	struct vt_priv *priv;

	if (!proc)
		return NULL;
	priv = proc->foo;
	/* (a builder borrows or copies, so a node's history has a copy or a memo, never both) */
	if (!priv || (!priv->with_memo && priv->share))
		return NULL;
	priv->with_memo = true;
	*node = proc;
	return &priv->memo;
}

/* the node's stores that are there, a bit each */
static unsigned long stores_present(const vmon_proc_t *proc)
{
	unsigned long present = 0;

	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		present |= (unsigned long)(proc->stores[i] != NULL) << i;
	return present;
}

/* no store of the node failed its last read: a read that failed may have changed fields all the same */
static bool stores_read(const vmon_proc_t *proc)
{
	static const unsigned char none[sizeof(proc->errors)];

	return !memcmp(proc->errors, none, sizeof(none));
}

/*
 * Whether the node's stores are still as they were when m was made: at
 * most one sample since, which changed none of them (its activity: the
 * sampler's changes and the event feed's), read them all, and neither
 * dropped nor added one (a replay's node follows its log's).
 */
static bool node_unchanged(const vmon_proc_t *proc, const struct vt_row_memo *m)
{
	unsigned since = (unsigned)proc->generation - (unsigned)m->sampled;

	if (since > 1 || (since && (proc->activity & proc->wants)))
		return false;
	return stores_read(proc) && proc->wants == m->wants && stores_present(proc) == m->present;
}

/*
 * vt_row_memo()'s reads of a row some lines ahead, asked for in three
 * steps (batch/text.c: six, four and two lines ahead): the node's lines
 * (its activity, stores, errors and history's address), then its history,
 * then the memo.  A writer's lines of an idle tree at 10,000 processes
 * each waited on all three in turn: vt_row_memo() was 5 % of a refresh of
 * vtop -b.
 */
void vt_row_memo_prefetch(const vt_row_t *row, int step)
{
	const vmon_proc_t *proc = live_row_node(row);
	const struct vt_priv *priv;

	if (!proc)
		return;
	if (step == 0) {
		prefetch_lines(&proc->generation, offsetof(vmon_proc_t, errors) + sizeof(proc->errors) -
						  offsetof(vmon_proc_t, generation));
		return;
	}
	if (!(priv = proc->foo))
		return;
	if (step == 1)
		__builtin_prefetch(priv);
	else if (priv->with_memo && priv->memo)
		prefetch_lines(priv->memo, VT_ROW_MEMO_AHEAD);
}

const char *vt_row_memo(const vt_row_t *row, const void *key, size_t key_size, size_t *len)
{
	const vmon_proc_t *proc;
	struct vt_row_memo **home = memo_home(row, &proc);
	struct vt_row_memo *m = home ? *home : NULL;

	if (!m || m->key_size != key_size || memcmp(m->bytes, key, key_size) != 0 || !node_unchanged(proc, m))
		return NULL;
	m->sampled = proc->generation;
	*len = m->len;
	return (const char *)m->bytes + key_size;
}

void vt_row_memo_keep(const vt_row_t *row, const void *key, size_t key_size, const char *text, size_t len)
{
	const vmon_proc_t *proc;
	struct vt_row_memo **home = memo_home(row, &proc);
	struct vt_row_memo *m = home ? *home : NULL;

	/* (a line of a few hundred bytes; one longer is made each time) */
	if (!home || key_size + len > VT_ROW_MEMO_MAX || !stores_read(proc))
		return;
	if (!m || m->cap < key_size + len) {
		free(m);
		*home = m = malloc(sizeof(*m) + key_size + len);
		if (!m)
			return;
		m->cap = (unsigned)(key_size + len);
	}
	m->key_size = (unsigned)key_size;
	m->len = (unsigned)len;
	m->sampled = proc->generation;
	m->wants = proc->wants;
	m->present = stores_present(proc);
	memcpy(m->bytes, key, key_size);
	memcpy(m->bytes + key_size, text, len);
}

/* a row's stores and errors when it has none */
static const struct vt_row_stores no_stores;

const unsigned char *vt_row_errors(const vt_row_t *row)
{
	const vmon_proc_t *proc = row_node(row);

	if (proc)
		return proc->errors;
	return ((const struct vt_row_stores *)((const char *)row->stores -
					       offsetof(struct vt_row_stores, stores)))->errors;
}

/* the rows' references to shared copies */
static void put_rows(vt_snapshot_t *snap)
{
	for (int i = 0; i < snap->rows_nr; i++)
		share_put(row_share(&snap->rows[i]));
}

void vt_snapshot_init(vt_snapshot_t *snap)
{
	memset(snap, 0, sizeof(*snap));
}

/*
 * The first rows' room, and the least an array sized for a storm's rows
 * (its exited ones stay a few refreshes) is cut back to once a build used
 * under a quarter of it (vt_room_fit()): the memory returns to its steady
 * size after the storm.  An array still a quarter full is cut back too, to
 * its rows and an eighth more, once the rows it held since it was last
 * sized passed those of the build by an eighth of it: a storm's rows had
 * touched its pages, which stayed resident though no build used them again
 * (at 10,000 processes, 0.36 MB a snapshot after 20,000 lives).  Steady
 * use, whose rows move by less, is never sized again.
 */
#define ROWS_FIRST	1024

void vt_snapshot_clear(vt_snapshot_t *snap)
{
	vt_row_t *rows = snap->rows;
	int cap = snap->rows_cap, nr = snap->rows_nr;
	int touched = snap->rows_touched > nr ? snap->rows_touched : nr;
	int fit = (int)vt_room_fit((size_t)cap, (size_t)nr, ROWS_FIRST);
	vt_arena_t arena = snap->arena;

	put_rows(snap);
	if (fit == cap && touched - nr > cap / 8)
		fit = nr + nr / 8 > ROWS_FIRST ? nr + nr / 8 : ROWS_FIRST;
	if (fit < cap) {
		vt_row_t *v = realloc(rows, sizeof(*v) * (size_t)fit);

		if (v) {
			rows = v;
			cap = fit;
			if (touched > fit)
				touched = fit;
		}
	}
	vt_arena_reset(&arena);
	memset(snap, 0, sizeof(*snap));
	snap->rows = rows;
	snap->rows_cap = cap;
	snap->rows_touched = touched;
	snap->arena = arena;
}

void vt_snapshot_free(vt_snapshot_t *snap)
{
	put_rows(snap);
	free(snap->rows);
	vt_arena_free(&snap->arena);
	memset(snap, 0, sizeof(*snap));
}

/* the row of (pid, start), or of pid with start 0: the live one first, should an exited row have the pid too */
int vt_snapshot_find(const vt_snapshot_t *snap, int pid, unsigned long long start)
{
	int exited = -1;

	for (int i = 0; i < snap->rows_nr; i++) {
		if (snap->rows[i].pid != pid || (start && snap->rows[i].start != start))
			continue;
		if (!(snap->rows[i].flags & VT_ROW_EXITED))
			return i;
		if (exited < 0)
			exited = i;
	}
	return exited;
}

/* --- copying stores out of the tree --- */

static bool points_into(const vmon_char_array_t *a, const char *p)
{
	return a->array && p >= a->array && p <= a->array + a->len;
}

/*
 * Copy a store and everything it points to into the arena.  String vectors
 * (argv, envv) point into a char_array of the same store (cmdline, environ):
 * their pointers are moved to the copy of that text; anything else is
 * copied.  Written over the field table, so a new row in defs/ needs nothing
 * here.
 */
static void *copy_store(vt_arena_t *arena, const vmon_store_desc_t *desc, const void *src)
{
	char *dst;

	if (!src)
		return NULL;
	dst = vt_arena_alloc(arena, desc->size);
	if (!dst)
		return NULL;
	memcpy(dst, src, desc->size);
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		vmon_char_array_t *a = (vmon_char_array_t *)(dst + f->offset);

		if (f->type != VMON_TYPE_char_array || f->offset + f->size > desc->size || !a->array)
			continue;
		a->array = vt_arena_strndup(arena, a->array, a->len);
		if (!a->array) {
			a->len = 0;
			return dst;
		}
		a->alloc_len = a->len + 1;
	}
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		char ***vp = (char ***)(dst + f->offset), **v;
		size_t n = 0;

		if (f->type != VMON_TYPE_str_array || f->offset + f->size > desc->size || !*vp)
			continue;
		while ((*vp)[n])
			n++;
		v = vt_arena_alloc(arena, sizeof(*v) * (n + 1));
		if (!v) {
			*vp = NULL;
			continue;
		}
		for (size_t k = 0, last = 0; k < n; k++) {
			const char *p = (*vp)[k];

			v[k] = NULL;
			/* the text the last one was in first: all of argv is in cmdline */
			for (int j = 0; j < desc->fields_nr; j++) {
				size_t at = (last + (size_t)j) % (size_t)desc->fields_nr;
				const vmon_field_t *t = &desc->fields[at];
				const vmon_char_array_t *from = (const vmon_char_array_t *)((const char *)src + t->offset);

				if (t->type == VMON_TYPE_char_array && t->offset + t->size <= desc->size &&
				    points_into(from, p)) {
					v[k] = ((vmon_char_array_t *)(dst + t->offset))->array + (p - from->array);
					last = at;
					break;
				}
			}
			if (!v[k])
				v[k] = vt_arena_strndup(arena, p, strlen(p));
		}
		v[n] = NULL;
		*vp = v;
	}
	return dst;
}

static size_t aligned(size_t n)
{
	return (n + VT_ARENA_ALIGN - 1) & ~(size_t)(VT_ARENA_ALIGN - 1);
}

/* what copy_store() takes of the arena for src, near enough (a string of argv outside cmdline is not counted) */
static size_t store_bytes(const vmon_store_desc_t *desc, const char *src)
{
	size_t n = aligned(desc->size);

	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		const vmon_char_array_t *a = (const vmon_char_array_t *)(src + f->offset);
		char *const *v;
		size_t k = 0;

		if (f->offset + f->size > desc->size)
			continue;
		if (f->type == VMON_TYPE_char_array && a->array)
			n += aligned(a->len + 1);
		if (f->type != VMON_TYPE_str_array || !(v = *(char *const *const *)(src + f->offset)))
			continue;
		while (v[k])
			k++;
		n += aligned(sizeof(*v) * (k + 1));
	}
	return n;
}

/* two strings of a char_array or str_array field, both absent or both the same bytes */
static bool text_equal(const char *x, size_t x_len, const char *y, size_t y_len)
{
	return !x == !y && x_len == y_len && (!x || !memcmp(x, y, x_len));
}

/*
 * Does the copy show what the library's store holds now?  Compared field by
 * field over the store's table (the text of strings and vectors, not their
 * pointers), and its present[] bitmap: all that vtop reads of a store.  The
 * members no field describes (changed[], the library's fds) are as they were
 * when the copy was made: every field's changed bit is set in a node's first
 * sample and clear in the next, which would make every copy new twice.
 */
static bool store_equal(const vmon_store_desc_t *desc, const char *copy, const char *live)
{
	if (desc->present_offset &&
	    memcmp(copy + desc->present_offset, live + desc->present_offset, BITNSLOTS(desc->fields_nr)))
		return false;
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		const char *x = copy + f->offset, *y = live + f->offset;

		if (f->offset + f->size > desc->size)
			continue;
		if (f->type == VMON_TYPE_char_array) {
			const vmon_char_array_t *ax = (const vmon_char_array_t *)x, *ay = (const vmon_char_array_t *)y;

			if (!text_equal(ax->array, ax->len, ay->array, ay->len))
				return false;
		} else if (f->type == VMON_TYPE_str_array) {
			char *const *vx = *(char *const *const *)x, *const *vy = *(char *const *const *)y;

			if (!vx != !vy)
				return false;
			for (size_t k = 0; vx && (vx[k] || vy[k]); k++) {
				if (!vx[k] || !vy[k] || strcmp(vx[k], vy[k]) != 0)
					return false;
			}
		} else if (memcmp(x, y, f->size) != 0) {
			return false;
		}
	}
	return true;
}

/* a new shared copy of the stores of mask (bits of VMON_STORE_PROC_*) of proc, one reference */
static struct vt_share *share_copy(const vmon_proc_t *proc, unsigned long mask)
{
	struct vt_share *sh = calloc(1, sizeof(*sh));
	size_t size = 0;
	int i;

	if (!sh)
		return NULL;
	sh->refs = 1;
	memcpy(sh->st.errors, proc->errors, sizeof(sh->st.errors));
	for (i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (mask & (1UL << i))
			size += store_bytes(&vmon_proc_store_descs[i], proc->stores[i]);
	}
	vt_arena_expect(&sh->arena, size);
	for (i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (!(mask & (1UL << i)))
			continue;
		sh->st.stores[i] = copy_store(&sh->arena, &vmon_proc_store_descs[i], proc->stores[i]);
		if (!sh->st.stores[i]) {
			share_put(sh);
			return NULL;
		}
	}
	return sh;
}

/* the stores of mask of proc: its last copy if they did not change, else a new one */
static struct vt_share *share_stores(struct vt_priv *priv, const vmon_proc_t *proc, unsigned long mask)
{
	struct vt_share *sh;
	int i;

	if (priv->with_memo) {
		free(priv->memo);
		priv->with_memo = false;
		priv->share = NULL;
	}
	sh = priv->share;
	if (sh && memcmp(sh->st.errors, proc->errors, sizeof(sh->st.errors)) != 0)
		sh = NULL;
	for (i = 0; sh && i < VMON_STORE_PROC_NR; i++) {
		if (!(mask & (1UL << i)) != !sh->st.stores[i] ||
		    (sh->st.stores[i] && !store_equal(&vmon_proc_store_descs[i], sh->st.stores[i], proc->stores[i])))
			break;
	}
	if (sh && i == VMON_STORE_PROC_NR)
		return sh;
	sh = share_copy(proc, mask);
	if (!sh)
		return NULL;
	share_put(priv->share);
	priv->share = sh;
	return sh;
}

/* the row's own arrays of stores (all NULL) and errors (those of errors), in arena */
static struct vt_row_stores *row_stores(vt_arena_t *arena, vt_row_t *row, const unsigned char *errors)
{
	struct vt_row_stores *own = vt_arena_alloc(arena, sizeof(*own));

	if (!own)
		return NULL;
	memset(own->stores, 0, sizeof(own->stores));
	memcpy(own->errors, errors, sizeof(own->errors));
	row->stores = own->stores;
	row->flags &= (unsigned char)~(VT_ROW_SHARED | VT_ROW_NODE_STORES);
	return own;
}

/* --- the builder --- */

static void priv_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	struct vt_priv *priv = calloc(1, sizeof(*priv));

	(void)vmon;
	/* no history is no error: the row shows 0% until there is one */
	if (priv)
		priv->row = -1;
	proc->foo = priv;
}

static void priv_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	struct vt_priv *priv = proc->foo;

	(void)vmon;
	if (priv) {
		vintern_put(priv->made);
		if (priv->with_memo)
			free(priv->memo);
		else
			share_put(priv->share);
	}
	free(priv);
	proc->foo = NULL;
}

void vt_builder_init(vt_builder_t *b, vmon_t *vmon)
{
	memset(b, 0, sizeof(*b));
	b->vmon = vmon;
	b->exited_keep = 3;
}

void vt_builder_hook(vt_builder_t *b)
{
	b->vmon->proc_ctor_cb = priv_ctor;
	b->vmon->proc_dtor_cb = priv_dtor;
}

/*
 * The builder on another vmon_t, its history of samples forgotten (a replay
 * that starts again from a keyframe).  The user names stay: the snapshots
 * already handed to the screen point to them.
 */
void vt_builder_reset(vt_builder_t *b, vmon_t *vmon)
{
	for (int i = 0; i < b->ghosts_nr; i++)
		share_put(row_share(&b->ghosts[i].row));
	b->ghosts_nr = 0;
	free(b->prev_cpu_ticks);
	b->prev_cpu_ticks = NULL;
	b->prev_cpus_nr = 0;
	b->seq = 0;
	b->when = 0;
	b->prev_boottime = 0;
	b->prev_when = 0;
	b->prev_self_cpu = 0;
	b->prev_mono = 0;
	b->vmon = vmon;
}

void vt_builder_fini(vt_builder_t *b)
{
	vt_builder_reset(b, NULL);
	free(b->ghosts);
	for (int i = 0; i < b->users_nr; i++)
		free(b->users[i].name);
	free(b->users);
	free(b->prev_cpu_ticks);
	vhash_fini(&b->other_rows);
	free(b->scratch);
	memset(b, 0, sizeof(*b));
}

size_t vt_user_name(uid_t uid, unsigned escape_flags, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];
	int n;

	/* getpwuid_r reads /etc/passwd (or NSS), not /proc */
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		return vmon_escape(buf, size, res->pw_name, strlen(res->pw_name), escape_flags);
	n = snprintf(buf, size, "%u", (unsigned)uid);
	return n > 0 ? (size_t)n : 0;
}

static const char *user_name(vt_builder_t *b, uid_t uid)
{
	char name[256], *copy;
	size_t need;

	for (int i = 0; i < b->users_nr; i++) {
		if (b->users[i].uid == uid)
			return b->users[i].name;
	}
	if (b->users_nr == b->users_cap) {
		int cap = b->users_cap ? b->users_cap * 2 : 16;
		struct vt_user *u = realloc(b->users, sizeof(*u) * (size_t)cap);

		if (!u)
			return "?";
		b->users = u;
		b->users_cap = cap;
	}
	need = vt_user_name(uid, b->escape_flags, name, sizeof(name)) + 1;
	copy = malloc(need);
	if (!copy)
		return "?";
	/* (a name whose escaped text is longer than name[] is looked up again, into its own room) */
	if (need <= sizeof(name))
		memcpy(copy, name, need);
	else
		vt_user_name(uid, b->escape_flags, copy, need);
	b->users[b->users_nr].uid = uid;
	b->users[b->users_nr].name = copy;
	return b->users[b->users_nr++].name;
}

/* the rows array made room for cap rows (more than it has); -1 without memory */
static int rows_grow(vt_snapshot_t *snap, int cap)
{
	vt_row_t *rows = realloc(snap->rows, sizeof(*rows) * (size_t)cap);

	if (!rows)
		return -1;
	snap->rows = rows;
	snap->rows_cap = cap;
	return 0;
}

/*
 * Before a build: room for the rows it will make, which the tree's size
 * and the exited rows kept tell, and an eighth more when it must grow (so
 * that a count that creeps up is not a realloc at every build).  Doubling
 * from ROWS_FIRST as the rows came left up to half of the array unused:
 * 16,384 rows of 96 bytes for 10,000 processes, 0.5 MB of the peak.
 * new_row() still grows it, should the estimate fall short.
 */
static int rows_reserve(vt_snapshot_t *snap, int want)
{
	return want > snap->rows_cap ? rows_grow(snap, want + want / 8) : 0;
}

static vt_row_t *new_row(vt_snapshot_t *snap)
{
	if (snap->rows_nr == snap->rows_cap &&
	    rows_grow(snap, snap->rows_cap ? snap->rows_cap + snap->rows_cap / 2 : ROWS_FIRST) < 0)
		return NULL;
	vt_row_t *row = &snap->rows[snap->rows_nr++];

	/* no stores until add_node() gives some: a row it could not finish is still safe to read */
	memset(row, 0, sizeof(*row));
	row->stores = no_stores.stores;
	return row;
}

/* how a command text is made: from argv or comm, in brackets or not, with which vmon_escape() flags */
static unsigned command_how(bool use_argv, bool brackets, unsigned escape_flags)
{
	return (unsigned)use_argv | (unsigned)brackets << 1 | escape_flags << 2;
}

/*
 * The row's text is what set_command() made last for this node, found
 * without reading the arguments: made from this node's own store at the
 * sample before, with today's escaping, and the library says that since
 * then neither the arguments nor comm changed (so neither did whether it
 * is made from argv or from comm).  A live tree's changed bits are this
 * sample's (a replay's are its log's: b->live false).  Comparing every
 * argument with the text's input each refresh read three or four cache
 * lines a row that nothing else needs (argv[], the arguments, their copy):
 * at 10,000 idle processes, a tenth of what vtop -b spent in user space.
 */
static bool command_unchanged(const vt_builder_t *b, const struct vt_priv *priv, const vmon_proc_t *proc,
			      const vmon_proc_stat_t *s)
{
	static const int syms[] = {
		VMON_PROC_STAT_CMDLINE, VMON_PROC_STAT_ARGC, VMON_PROC_STAT_ARGV, VMON_PROC_STAT_COMM,
	};
	const unsigned escaping = command_how(false, false, b->escape_flags);
	int gen = b->vmon->generation;

	if (!b->live || !priv->made || (priv->made_how & ~3u) != escaping ||
	    s != proc->stores[VMON_STORE_PROC_STAT] || proc->generation != gen || priv->made_gen != gen - 1)
		return false;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (BITTEST(s->changed, syms[i]))
			return false;
	}
	return true;
}

/*
 * Is the text just made into scratch (len bytes, in brackets or not) the
 * node's last one, made the same way, with the same argv[0]?  Then that one
 * stays (no new block, nor freeing the old).  This compares what is shown,
 * not what it was made from: the node keeps no copy of its arguments (a
 * second copy of the library's cmdline, 200 bytes or more a process) nor a
 * hash of them, as a hash that matches proves nothing: a process that sets
 * two titles of the same length whose 64-bit hashes collide (it chooses
 * both: about 2^32 tries by the birthday bound, whatever the hash) would go
 * on showing the first after setting the second.
 * command_unchanged() finds an unchanged text without making it, by the
 * library's changed bits, exactly; this is for what they cannot vouch for
 * (a replay, a copy of the stores, a comm that changed beside unchanged
 * arguments), at the cost of escaping the line again.
 */
static bool command_made(const struct vt_priv *priv, unsigned how, const char *scratch, size_t len, bool brackets,
			 const vt_row_t *row)
{
	const char *m = priv->made;

	if (!m || priv->made_how != how || priv->made_arg0_base != row->arg0_base)
		return false;
	if (brackets && *m++ != '[')
		return false;
	if (strnlen(m, len) != len || memcmp(m, scratch, len) != 0)
		return false;
	m += len;
	return brackets ? m[0] == ']' && m[1] == '\0' : m[0] == '\0';
}

/*
 * Remember the row's text (len bytes) for the next refresh (not
 * remembered: made again, no error).  One copy for every process with the
 * same text (interned: the workers of a server, a fork storm's children).
 */
static bool command_remember(struct vt_priv *priv, unsigned how, const vt_row_t *row, size_t len)
{
	const char *made;

	if (how > USHRT_MAX || len > UINT_MAX)
		return false;
	made = vintern_get(row->command, len);
	if (!made)
		return false;
	vintern_put(priv->made);
	priv->made = made;
	priv->made_how = (unsigned short)how;
	priv->made_arg0_base = row->arg0_base;
	return true;
}

/*
 * The row's text, made (len bytes), is its shared copy's, which the
 * snapshots that share the copy share too (an idle process's text was
 * copied into each of the three), interned (held once more where it is
 * already: the node's); else in the snapshot.  A copy that has a text
 * already (made another way: the escaping changed) keeps it for the rows
 * that point to it.  -1 without memory.
 */
static int command_place(vt_snapshot_t *snap, struct vt_share *sh, vt_row_t *row, const char *text, size_t len,
			 bool interned, unsigned how)
{
	if (!sh || sh->command) {
		row->command = vt_arena_strndup(&snap->arena, text, len);
		return row->command ? 0 : -1;
	}
	if (!(sh->command = interned ? vintern_hold(text) : vintern_get(text, len)))
		return -1;
	row->command = sh->command;
	sh->command_how = how;
	sh->arg0_base = row->arg0_base;
	return 0;
}

/* the row's text is the one the node made last (made the way how says) */
static int command_again(vt_builder_t *b, vt_snapshot_t *snap, vt_row_t *row, struct vt_share *sh,
			 struct vt_priv *priv, unsigned how)
{
	priv->made_gen = b->vmon->generation;
	row->arg0_base = priv->made_arg0_base;
	/* borrowed: made again (and freed) no sooner than the next snapshot's build */
	if (b->borrow) {
		row->command = priv->made;
		row->flags |= VT_ROW_BORROWED;
		return 0;
	}
	return command_place(snap, sh, row, priv->made, strlen(priv->made), true, how);
}

/*
 * A process that shows no arguments now but did (its last text was made
 * from them) keeps that text: a zombie's or a dead one's row shows it, as
 * its last command line; a live one shows [comm] without forgetting it
 * (caught inside its exit, its memory gone before it is a zombie).
 * Returns 1 when the row's text is set, 0 when it is made as any other's
 * (remember false: not in place of the last one), or -1.
 */
static int command_ending(vt_builder_t *b, vt_snapshot_t *snap, vt_row_t *row, struct vt_share *sh,
			  struct vt_priv *priv, const vmon_proc_stat_t *s, unsigned how, bool *remember)
{
	if ((row->flags & VT_ROW_THREAD) || !priv || !priv->made || !(priv->made_how & 1u))
		return 0;
	*remember = false;
	if (s->state != 'Z' && s->state != 'X' && !(row->flags & VT_ROW_EXITED))
		return 0;
	return command_again(b, snap, row, sh, priv, how) < 0 ? -1 : 1;
}

/* the command line, escaped once per exec here so that drawing, filtering and every format share it */
static int set_command(vt_builder_t *b, vt_snapshot_t *snap, vt_row_t *row, const vmon_proc_t *proc,
		       const vmon_proc_stat_t *s, struct vt_priv *priv)
{
	const vmon_field_t *argv_f = &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_ARGV];
	const vmon_field_t *comm_f = &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_COMM];
	struct vt_share *sh = row_share(row);
	bool use_argv, brackets, remember = priv != NULL;
	const vmon_field_t *f;
	unsigned how;
	size_t len;
	char *text;
	int r;

	if (!s) {
		row->command = "?";
		return 0;
	}
	if (priv && command_unchanged(b, priv, proc, s))
		return command_again(b, snap, row, sh, priv, priv->made_how);
	use_argv = s->argc > 0 && s->argv && s->argv[0] && !(row->flags & VT_ROW_THREAD);
	brackets = !use_argv && !(row->flags & VT_ROW_THREAD);
	f = use_argv ? argv_f : comm_f;
	how = command_how(use_argv, brackets, b->escape_flags);
	if (!use_argv && (r = command_ending(b, snap, row, sh, priv, s, how, &remember)) != 0)
		return r < 0 ? -1 : 0;
	if (sh && sh->command && sh->command_how == how) {
		/* made from these very stores (s is the shared copy's) */
		row->command = sh->command;
		row->arg0_base = sh->arg0_base;
		return 0;
	}
	/* escaped into the scratch buffer once, grown and done again only for a longer line */
	for (;;) {
		len = (size_t)vmon_field_format(f, s, b->scratch, b->scratch_cap, b->escape_flags);
		/* (and room for the brackets below) */
		if (b->scratch && len + 3 <= b->scratch_cap)
			break;
		char *bigger = realloc(b->scratch, len + 256);

		if (!bigger)
			return -1;
		b->scratch = bigger;
		b->scratch_cap = len + 256;
	}
	/* where the program's name is in it: argv[0]'s text, up to its last '/' */
	row->arg0_base = 0;
	if (use_argv) {
		size_t arg0_len = vmon_escape(NULL, 0, s->argv[0], strlen(s->argv[0]), b->escape_flags);

		for (size_t i = 0; i + 1 < arg0_len && i + 1 < len; i++) {
			if (b->scratch[i] == '/')
				row->arg0_base = i + 1;
		}
	}
	if (remember && command_made(priv, how, b->scratch, len, brackets, row))
		return command_again(b, snap, row, sh, priv, how);
	/*
	 * Borrowing, the node's remembered text is the row's from the next
	 * refresh on; made there from the first, it is not also in the
	 * snapshot's arena (whose chunks stay: 0.5 MB at 10,000 processes)
	 */
	/* a process without arguments (a kernel thread, a zombie) shows [comm], as ps(1) does */
	text = b->scratch;
	if (brackets) {
		memmove(text + 1, text, len + 1);
		text[0] = '[';
		text[len + 1] = ']';
		text[len + 2] = '\0';
		len += 2;
	}
	if (b->borrow && remember) {
		row->command = text;
		if (command_remember(priv, how, row, len)) {
			priv->made_gen = b->vmon->generation;
			row->command = priv->made;
			row->flags |= VT_ROW_BORROWED;
			return 0;
		}
		row->command = vt_arena_strndup(&snap->arena, text, len);
		return row->command ? 0 : -1;
	}
	if (command_place(snap, sh, row, text, len, false, how) < 0)
		return -1;
	if (remember && command_remember(priv, how, row, len))
		priv->made_gen = b->vmon->generation;
	return 0;
}

static bool present(int store, int sym, const void *s)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[store];

	return vmon_field_present(desc, &desc->fields[sym], s);
}

/*
 * The process (or thread) ended, or left the tree the library watches:
 * stale, or found gone and not yet stale (new in this sample, or a
 * monitored process the library keeps after its end), which its state X says.
 */
bool vt_proc_gone(const vmon_proc_t *proc)
{
	const vmon_proc_stat_t *s = proc->stores[VMON_STORE_PROC_STAT];

	return proc->is_stale || (s && s->state == 'X');
}

/* one node of the tree into a row of the snapshot */
static vt_row_t *add_node(vt_builder_t *b, vt_snapshot_t *snap, vmon_proc_t *proc, int parent,
			  unsigned long long boottime, unsigned long long dt_ticks)
{
	vmon_proc_stat_t *s = proc->stores[VMON_STORE_PROC_STAT];
	vmon_proc_io_t *io = proc->stores[VMON_STORE_PROC_IO];
	struct vt_priv *priv = proc->foo;
	vt_row_t *row = new_row(snap);
	bool gone = vt_proc_gone(proc);
	unsigned long mask = 0, present_mask;
	struct vt_row_stores *own;

	if (!row)
		return NULL;
	row->pid = proc->pid;
	row->parent = parent;
	/* a thread's is its process; a process's is its stat's, below (-p's roots have a parent out of the tree) */
	row->ppid = parent >= 0 ? snap->rows[parent].pid : 0;
	row->exit_code = -1;
	row->io_read_rate = row->io_write_rate = -1;
	if (proc->is_thread)
		row->flags |= VT_ROW_THREAD;
	if (proc->is_new && b->seq > 1)
		row->flags |= VT_ROW_NEW;
	if (gone)
		row->flags |= VT_ROW_EXITED;
	present_mask = stores_present(proc);
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		/* the open files are a list, copied for the one process shown (files.c) */
		if (proc->stores[i] && (proc->wants & (1L << i)) && i != VMON_STORE_PROC_FILES)
			mask |= 1UL << i;
	}
	if (!gone && priv && !b->borrow) {
		struct vt_share *sh = share_stores(priv, proc, mask);

		if (!sh)
			return NULL;
		sh->refs++;
		row->stores = sh->st.stores;
		row->flags |= VT_ROW_SHARED;
	} else if (b->borrow && !gone && mask == present_mask) {
		/* the library's arrays as they are: every store it holds is one the row shows */
		row->stores = proc->stores;
		row->flags |= VT_ROW_BORROWED | VT_ROW_NODE_STORES;
	} else if (gone) {
		/*
		 * a copy of its own (changed below), and shared: its ghost's too
		 * (keep_ghost()), which the next snapshots' rows point to, where
		 * each snapshot copied every exited row again (a storm keeps
		 * thousands for a few refreshes)
		 */
		struct vt_share *sh = share_copy(proc, mask);

		if (!sh)
			return NULL;
		row->stores = sh->st.stores;
		row->flags |= VT_ROW_SHARED;
	} else {
		own = row_stores(&snap->arena, row, proc->errors);
		if (!own)
			return NULL;
		for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
			if (!(mask & (1UL << i)))
				continue;
			if (b->borrow) {
				own->stores[i] = proc->stores[i];
				row->flags |= VT_ROW_BORROWED;
				continue;
			}
			own->stores[i] = copy_store(&snap->arena, &vmon_proc_store_descs[i], proc->stores[i]);
			if (!own->stores[i])
				return NULL;
		}
	}
	s = row->stores[VMON_STORE_PROC_STAT];
	io = row->stores[VMON_STORE_PROC_IO];
	if (s) {
		unsigned long long ticks = s->utime + s->stime;

		row->start = s->start;
		if (!proc->is_thread && present(VMON_STORE_PROC_STAT, VMON_PROC_STAT_PPID, s))
			row->ppid = (int)s->ppid;
		row->state = s->state ? s->state : '?';
		row->user = present(VMON_STORE_PROC_STAT, VMON_PROC_STAT_UID, s) ? user_name(b, s->uid) : "?";
		if ((s->flags & PF_KTHREAD) || proc->pid == 2 || s->ppid == 2 ||
		    (parent >= 0 && (snap->rows[parent].flags & VT_ROW_KTHREAD)))
			row->flags |= VT_ROW_KTHREAD;
		if (gone) {
			/*
			 * The feed saw how it ended; else its last stat line as a
			 * zombie, or a log of the feed's exit, carries its exit status
			 * (the library keeps the exit code of a dead process only then)
			 */
			if (proc->has_exit_status)
				row->exit_code = proc->exit_status;
			else if ((s->state == 'Z' || s->state == 'X') &&
				 present(VMON_STORE_PROC_STAT, VMON_PROC_STAT_EXIT_CODE, s))
				row->exit_code = s->exit_code;
			/* the copy's state is what it is now: dead, as proc(5) calls it */
			s->state = 'X';
			row->state = 'X';
		} else if (priv && priv->have_ticks && dt_ticks) {
			row->cpu_pct = ticks >= priv->ticks ? (double)(ticks - priv->ticks) * 100.0 / (double)dt_ticks : 0;
		} else if (b->prev_boottime && s->start > b->prev_boottime && boottime > s->start) {
			/* born during the interval: its whole life is the interval */
			row->cpu_pct = (double)ticks * 100.0 / (double)(boottime - s->start);
		}
		if (row->cpu_pct > 100.0 * (double)b->vmon->num_cpus)
			row->cpu_pct = 100.0 * (double)b->vmon->num_cpus;
		if (priv) {
			priv->ticks = ticks;
			priv->have_ticks = true;
		}
	} else {
		row->state = '?';
		row->user = "?";
	}
	if (io && present(VMON_STORE_PROC_IO, VMON_PROC_IO_READBYTES, io)) {
		if (priv && priv->have_io && snap->interval > 0 && !gone) {
			row->io_read_rate = io->read_bytes >= priv->read_bytes ?
					    (double)(io->read_bytes - priv->read_bytes) / snap->interval : 0;
			row->io_write_rate = io->write_bytes >= priv->write_bytes ?
					     (double)(io->write_bytes - priv->write_bytes) / snap->interval : 0;
		}
		if (priv) {
			priv->read_bytes = io->read_bytes;
			priv->write_bytes = io->write_bytes;
			priv->have_io = true;
		}
	}
	if (set_command(b, snap, row, proc, s, priv) < 0)
		return NULL;
	return row;
}

static void cpu_pct(vt_cpu_pct_t *out, const unsigned long long *now, const unsigned long long *prev)
{
	unsigned long long d[10], total = 0;

	for (int i = 0; i < 10; i++) {
		d[i] = now[i] >= prev[i] ? now[i] - prev[i] : 0;
		/* guest time is also counted in user (and guest_nice in nice) */
		if (i < 8)
			total += d[i];
	}
	memset(out, 0, sizeof(*out));
	out->online = true;
	if (!total)
		return;
	out->user = 100.0 * (double)(d[0] - (d[8] < d[0] ? d[8] : d[0])) / (double)total;
	out->nice = 100.0 * (double)(d[1] - (d[9] < d[1] ? d[9] : d[1])) / (double)total;
	out->system = 100.0 * (double)d[2] / (double)total;
	out->idle = 100.0 * (double)d[3] / (double)total;
	out->iowait = 100.0 * (double)d[4] / (double)total;
	out->irq = 100.0 * (double)d[5] / (double)total;
	out->softirq = 100.0 * (double)d[6] / (double)total;
	out->steal = 100.0 * (double)d[7] / (double)total;
	out->guest = 100.0 * (double)(d[8] + d[9]) / (double)total;
	out->busy = 100.0 - out->idle - out->iowait;
	if (out->busy < 0)
		out->busy = 0;
}

static void cpu_columns(unsigned long long *v, const vmon_sys_cpu_t *c)
{
	const unsigned long long cols[10] = {
		c->user, c->nice, c->system, c->idle, c->iowait, c->irq, c->softirq, c->steal, c->guest, c->guest_nice,
	};

	memcpy(v, cols, sizeof(cols));
}

static void total_columns(unsigned long long *v, const vmon_sys_stat_t *s)
{
	const unsigned long long cols[10] = {
		s->user, s->nice, s->system, s->idle, s->iowait, s->irq, s->softirq, s->steal, s->guest, s->guest_nice,
	};

	memcpy(v, cols, sizeof(cols));
}

/* the system stores copied, and what the header shows computed from them */
static int add_system(vt_builder_t *b, vt_snapshot_t *snap)
{
	vmon_t *vmon = b->vmon;
	const vmon_sys_stat_t *ss = vmon->stores[VMON_STORE_SYS_STAT];
	const vmon_sys_vm_t *vm = vmon->stores[VMON_STORE_SYS_VM];
	int nr;

	for (int i = 0; i < VMON_STORE_SYS_NR; i++) {
		snap->sys_errors[i] = vmon->sys_errors[i];
		if (!vmon->stores[i] || !(vmon->sys_wants & (1L << i)))
			continue;
		snap->sys_stores[i] = copy_store(&snap->arena, &vmon_sys_store_descs[i], vmon->stores[i]);
		if (!snap->sys_stores[i])
			return -1;
	}
	if (ss) {
		vmon_sys_stat_t *copy = snap->sys_stores[VMON_STORE_SYS_STAT];
		size_t cpus = (size_t)(ss->cpus_nr ? ss->cpus_nr : 1);
		unsigned long long *now;

		copy->cpus = vt_arena_alloc(&snap->arena, sizeof(*copy->cpus) * cpus);
		snap->cpus = vt_arena_alloc(&snap->arena, sizeof(*snap->cpus) * cpus);
		now = malloc(sizeof(*now) * 10 * (size_t)(ss->cpus_nr + 1));
		if (!copy->cpus || !snap->cpus || !now) {
			free(now);
			return -1;
		}
		memcpy(copy->cpus, ss->cpus, sizeof(*ss->cpus) * (size_t)ss->cpus_nr);
		snap->cpus_nr = ss->cpus_nr;
		total_columns(now, ss);
		for (int i = 0; i < ss->cpus_nr; i++)
			cpu_columns(now + 10 * (i + 1), &ss->cpus[i]);
		/* the first sample compares with boot: an average since then */
		nr = b->prev_cpus_nr == ss->cpus_nr && b->prev_cpu_ticks ? ss->cpus_nr + 1 : 0;
		for (int i = 0; i <= ss->cpus_nr; i++) {
			static const unsigned long long zero[10];
			const unsigned long long *prev = i < nr ? b->prev_cpu_ticks + 10 * i : zero;

			cpu_pct(i ? &snap->cpus[i - 1] : &snap->cpu_total, now + 10 * i, prev);
			if (i)
				snap->cpus[i - 1].online = ss->cpus[i - 1].online;
		}
		free(b->prev_cpu_ticks);
		b->prev_cpu_ticks = now;
		b->prev_cpus_nr = ss->cpus_nr;
		snap->uptime = (double)ss->boottime / (double)vmon->ticks_per_sec;
	}
	if (vm) {
		unsigned long long avail = vm->available_kb ? vm->available_kb : vm->free_kb + vm->cached_kb + vm->buffers_kb;

		snap->mem_total_kb = vm->total_kb;
		snap->mem_used_kb = vm->total_kb > avail ? vm->total_kb - avail : 0;
		snap->mem_buffers_kb = vm->buffers_kb;
		snap->mem_cached_kb = vm->cached_kb;
		snap->swap_total_kb = vm->swap_total_kb;
		snap->swap_used_kb = vm->swap_total_kb > vm->swap_free_kb ? vm->swap_total_kb - vm->swap_free_kb : 0;
	}
	return 0;
}

static void count_state(vt_snapshot_t *snap, const vt_row_t *row)
{
	const vmon_proc_stat_t *s = row->stores[VMON_STORE_PROC_STAT];

	if (row->flags & VT_ROW_EXITED)
		return;
	if (row->flags & VT_ROW_THREAD)
		return;
	snap->procs++;
	if (row->flags & VT_ROW_KTHREAD)
		snap->kthreads++;
	if (s && s->num_threads > 1)
		snap->threads += (int)s->num_threads - 1;
	switch (row->state) {
	case 'R': snap->running++; break;
	case 'D': snap->disk++; break;
	case 'Z': snap->zombie++; break;
	case 'T': case 't': snap->stopped++; break;
	case 'I': snap->idle++; break;
	default: snap->sleeping++; break;
	}
}

/* a row's index as a table's value, and back */
#define ROW_VAL(i)	((void *)(uintptr_t)(i))
#define VAL_ROW(v)	((int)(uintptr_t)(v))

/*
 * The rows of a pid in the snapshot being built, without an index of every
 * row (a table of 16,384 slots at 10,000 processes, 278 KB, rebuilt each
 * refresh): the row of the node the library's lookup gives for the pid,
 * which the node keeps (struct vt_priv), and the few others, indexed
 * apart (b->other_rows): exited rows of earlier samples, which have no
 * node, and the rows of nodes that lookup does not give (threads, a
 * process handed twice, one whose pid a newer process holds).  A node's
 * row may be of an earlier build: any row of this pid so far is one of
 * the pid's, and only those are taken.
 */
struct pid_rows {
	const vt_snapshot_t	*snap;
	const vhash_t		*others;
	uint64_t		key;
	size_t			pos;	/* in others, VHASH_END before the first */
	int			node_row;	/* the node's row, -1 once given */
	int			pid;
};

static int pid_rows_next(struct pid_rows *it)
{
	int i = it->node_row;

	it->node_row = -1;
	if (i >= 0 && i < it->snap->rows_nr && it->snap->rows[i].pid == it->pid)
		return i;
	if (!it->others->nr)
		return -1;
	it->pos = it->pos == VHASH_END ? vhash_find(it->others, it->key) :
		  vhash_find_next(it->others, it->key, it->pos);
	return it->pos == VHASH_END ? -1 : VAL_ROW(vhash_val_at(it->others, it->pos));
}

/* the first row of pid, -1 if there is none; node is vmon_proc_lookup()'s for pid */
static int pid_rows_first(struct pid_rows *it, const vt_builder_t *b, const vt_snapshot_t *snap, int pid,
			  const vmon_proc_t *node)
{
	const struct vt_priv *priv = node ? node->foo : NULL;

	it->snap = snap;
	it->others = &b->other_rows;
	it->key = (uint64_t)(unsigned)pid;
	it->pos = VHASH_END;
	it->node_row = priv ? priv->row : -1;
	it->pid = pid;
	return pid_rows_next(it);
}

/*
 * The parent of a process that started at `start`, among the rows of pid
 * ppid: the one with the latest start not after it.  Pids are unique among
 * the living, so whichever process held ppid when the child was forked
 * started before it, and any later holder of that pid started after the
 * child: no pid reuse makes another process its parent.  A live holder is
 * taken first (equal start ticks).  A start the library took from an
 * event's time may be a tick off (it allows as much, node_start_matches()):
 * without a holder started before, one started a tick after will do.  -1
 * if there is none.
 */
static int lookup_parent(const vt_builder_t *b, const vt_snapshot_t *snap, int ppid, unsigned long long start)
{
	struct pid_rows it;
	int best = -1, late = -1;

	for (int i = pid_rows_first(&it, b, snap, ppid, vmon_proc_lookup(b->vmon, ppid)); i >= 0;
	     i = pid_rows_next(&it)) {
		const vt_row_t *r = &snap->rows[i];

		if (r->pid != ppid || (r->flags & VT_ROW_THREAD) || r->start > start + 1)
			continue;
		if (r->start > start)
			late = late < 0 || !(r->flags & VT_ROW_EXITED) ? i : late;
		else if (best < 0 || r->start > snap->rows[best].start ||
			 (r->start == snap->rows[best].start && !(r->flags & VT_ROW_EXITED)))
			best = i;
	}
	return best >= 0 ? best : late;
}

/* would row i under p make a loop (a log or fixture can say anything)? */
static bool descends_from(const vt_snapshot_t *snap, int p, int i)
{
	for (int n = 0; p >= 0 && n <= snap->rows_nr; p = snap->rows[p].parent, n++) {
		if (p == i)
			return true;
	}
	return p >= 0;
}

/*
 * Exited rows hang under their parent, live or exited itself, so that a
 * folded ancestor hides them with the rest (issue: with everything folded,
 * they came out at the top, beside pid 1).  The row of an earlier sample
 * (a ghost) is placed afresh each time: its parent may have exited since,
 * or gone.  One that the library's tree held at the top (its parent went
 * in an earlier pass) is placed by the parent its stat line named.  One
 * whose parent is no longer listed at all was orphaned before it died (its
 * parent's exited row went first): the kernel gave it to the reaper, and
 * it goes under pid 1, everyone's ancestor here (a subreaper between them
 * is not known).
 */
static void place_exited(const vt_builder_t *b, vt_snapshot_t *snap)
{
	for (int i = 0; i < snap->rows_nr; i++) {
		vt_row_t *r = &snap->rows[i];
		const vmon_proc_stat_t *s = r->stores[VMON_STORE_PROC_STAT];
		int ppid = r->ppid, p;

		if ((r->flags & (VT_ROW_EXITED | VT_ROW_THREAD)) != VT_ROW_EXITED || (r->parent >= 0 && !r->exited_age))
			continue;
		if (!ppid && s && present(VMON_STORE_PROC_STAT, VMON_PROC_STAT_PPID, s))
			ppid = (int)s->ppid;
		p = ppid > 0 ? lookup_parent(b, snap, ppid, r->start) : -1;
		if (p < 0 && ppid > 1)
			p = lookup_parent(b, snap, 1, r->start);
		if (p == i || (p >= 0 && descends_from(snap, p, i)))
			p = -1;
		r->parent = p;
		if (p >= 0)
			r->ppid = snap->rows[p].pid;
	}
}

/*
 * One row per process (pid and start time), whatever the tree holds: the
 * same process handed twice (a node the feed made and one the listing
 * found, under churn) is one row, in every output.
 */
/* the row of (pid, start), -1 if there is none yet; owner is vmon_proc_lookup()'s for pid */
static int keys_find(const vt_builder_t *b, const vt_snapshot_t *snap, const vmon_proc_t *owner, int pid,
		     unsigned long long start)
{
	struct pid_rows it;

	for (int i = pid_rows_first(&it, b, snap, pid, owner); i >= 0; i = pid_rows_next(&it)) {
		if (snap->rows[i].start == start)
			return i;
	}
	return -1;
}

/*
 * The row just added (the last one) where pid_rows_next() finds it: kept
 * by the node the library's lookup gives for its pid (priv, the node's:
 * NULL for another node of that pid, a thread, a row without a node), else
 * among the other rows.
 */
static int keys_add(vt_builder_t *b, const vt_snapshot_t *snap, struct vt_priv *priv)
{
	const vt_row_t *r = &snap->rows[snap->rows_nr - 1];

	if (priv) {
		priv->row = snap->rows_nr - 1;
		return 0;
	}
	return vhash_add(&b->other_rows, (uint64_t)(unsigned)r->pid, ROW_VAL(snap->rows_nr - 1));
}

static void add_event(vt_snapshot_t *snap, const vt_row_t *row, char kind)
{
	vt_event_t *e;

	if (snap->events_nr == snap->events_cap) {
		/* the arena does not grow in place: a bigger block, and the old one is left to the reset */
		int cap = snap->events_cap ? snap->events_cap * 2 : 256;
		vt_event_t *v = vt_arena_alloc(&snap->arena, sizeof(*v) * (size_t)cap);

		if (!v)
			return;	/* the log misses an event; the rows are whole */
		if (snap->events_nr)
			memcpy(v, snap->events, sizeof(*v) * (size_t)snap->events_nr);
		snap->events = v;
		snap->events_cap = cap;
	}
	e = &snap->events[snap->events_nr++];
	memset(e, 0, sizeof(*e));
	e->when = snap->when;
	e->kind = kind;
	e->pid = row->pid;
	e->ppid = row->ppid;
	e->exit_code = row->exit_code;
	vt_text_fit(e->comm, sizeof(e->comm), row->command, strlen(row->command));
}

/* the exited rows' first room, and the least they are cut back to (vt_room_fit()) */
#define GHOSTS_FIRST	64

/*
 * The exited rows of earlier samples (ghosts[0, old)): one refresh older,
 * and into this snapshot under their parent.  Those made in this sample
 * (ghosts[old, ghosts_nr)) are in it already, as the stale rows of the tree.
 */
static int add_ghosts(vt_builder_t *b, vt_snapshot_t *snap, int old)
{
	int kept = 0, fresh = b->ghosts_nr - old, fit;

	for (int i = 0; i < old; i++) {
		struct vt_ghost *g = &b->ghosts[i];
		vt_row_t *row;

		g->row.exited_age++;
		if (g->row.exited_age >= b->exited_keep) {
			share_put(row_share(&g->row));
			continue;
		}
		b->ghosts[kept++] = *g;
		/* the tree still holds it (the library handed it again): it has its row */
		if (keys_find(b, snap, vmon_proc_lookup(b->vmon, g->row.pid), g->row.pid, g->row.start) >= 0)
			continue;
		row = new_row(snap);
		if (!row)
			return -1;
		*row = b->ghosts[kept - 1].row;
		row_share(row)->refs++;
		if (keys_add(b, snap, NULL) < 0)
			return -1;
		row->parent = -1;	/* place_exited() */
	}
	if (fresh)
		memmove(b->ghosts + kept, b->ghosts + old, sizeof(*b->ghosts) * (size_t)fresh);
	b->ghosts_nr = kept + fresh;
	/* a storm's exited rows gone: their room too (as the rows', vt_snapshot_clear()) */
	fit = (int)vt_room_fit((size_t)b->ghosts_cap, (size_t)b->ghosts_nr, GHOSTS_FIRST);
	if (fit < b->ghosts_cap) {
		struct vt_ghost *v = realloc(b->ghosts, sizeof(*v) * (size_t)fit);

		if (v) {
			b->ghosts = v;
			b->ghosts_cap = fit;
		}
	}
	return 0;
}

static int keep_ghost(vt_builder_t *b, const vt_row_t *row)
{
	struct vt_share *sh;
	struct vt_ghost *g;

	if (b->exited_keep <= 1)
		return 0;
	if (b->ghosts_nr == b->ghosts_cap) {
		int cap = b->ghosts_cap ? b->ghosts_cap * 2 : GHOSTS_FIRST;
		struct vt_ghost *v = realloc(b->ghosts, sizeof(*v) * (size_t)cap);

		if (!v)
			return -1;
		b->ghosts = v;
		b->ghosts_cap = cap;
	}
	/* the exited row's shared copy (add_node()), with its command: the text the row shows */
	sh = row_share(row);
	if (!sh) {
		errno = EINVAL;
		return -1;
	}
	if (row->command != sh->command) {
		/* made elsewhere (a zombie's last arguments, vtop -b's node's text): no other row has the copy's */
		const char *command = vintern_get(row->command, strlen(row->command));

		if (!command)
			return -1;
		vintern_put(sh->command);
		sh->command = command;
	}
	sh->refs++;
	g = &b->ghosts[b->ghosts_nr];
	g->row = *row;
	g->row.command = sh->command;
	g->row.parent = -1;
	g->row.flags &= (unsigned char)~(VT_ROW_NEW | VT_ROW_BORROWED);
	b->ghosts_nr++;
	return 0;
}

/*
 * Depth first, iteratively: a chain of nested shells is no stack overflow.
 * A frame is a list being walked (the roots, a node's children, a node's
 * threads) and its cursor, so the stack is as deep as the tree, not as
 * wide: pushing every child of a node at once made it 10,000 entries deep
 * under a parent of 10,000 children.  The order: a node, then its threads
 * (each with what is under it), then its children, each list in its order.
 */
struct walk {
	const list_head_t	*head;
	const list_head_t	*next;		/* the cursor: the entry to visit next, head at the end */
	int			parent;		/* the row the entries go under, -1 for none */
	int			leader;		/* threads: the pid of the process, whose own thread node is skipped */
	bool			threads;	/* entries linked by threads, not siblings */
};

static int walk_push(struct walk **stack, size_t *nr, size_t *cap, const list_head_t *head, int parent,
		     const vmon_proc_t *process)
{
	struct walk *w;

	if (head->next == head)
		return 0;	/* nothing under it: no frame */
	if (*nr == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct walk *s = realloc(*stack, sizeof(*s) * c);

		if (!s)
			return -1;
		*stack = s;
		*cap = c;
	}
	w = &(*stack)[(*nr)++];
	w->head = head;
	w->next = head->next;
	w->parent = parent;
	w->leader = process ? process->pid : 0;
	w->threads = process != NULL;
	return 0;
}

/* the lines of a node's row beyond its node: its history (struct vt_priv) and its stat store */
static inline __attribute__((always_inline)) void row_prefetch(const vmon_proc_t *proc)
{
	if (proc->foo)
		prefetch_lines(proc->foo, sizeof(struct vt_priv));
	if (proc->stores[VMON_STORE_PROC_STAT])
		prefetch_lines(proc->stores[VMON_STORE_PROC_STAT], sizeof(vmon_proc_stat_t));
}

/*
 * Ask for the lines the next siblings' rows read before the walk reaches
 * them.  At 10,000 idle processes each row was a wait for memory, one line
 * after another (perf: keys_find(), the first read of a history, a tenth of
 * an interactive refresh).  Two siblings ahead: the rows' lines of the next
 * two (those of the second are the ones that come in time along a long
 * list, those of the first the only ones in a short list) and the node of
 * the third, whose pointers are read two steps later.  The frame on top of
 * the stack is the one walk_next() took proc from (no frame is pushed
 * before this is called), its cursor on proc's next sibling; proc's
 * children and threads, walked before that sibling, are not looked into.
 */
static inline __attribute__((always_inline)) void walk_prefetch(const struct walk *stack, size_t nr)
{
	const struct walk *w;
	const vmon_proc_t *next;

	if (!nr)
		return;
	w = &stack[nr - 1];
	if (w->threads || w->next == w->head)
		return;
	next = list_entry(w->next, vmon_proc_t, siblings);
	row_prefetch(next);
	if (next->siblings.next == w->head)
		return;
	next = list_entry(next->siblings.next, vmon_proc_t, siblings);
	row_prefetch(next);
	if (next->siblings.next != w->head)
		prefetch_lines(list_entry(next->siblings.next, vmon_proc_t, siblings), sizeof(vmon_proc_t));
}

/* the next node of the walk and the row it goes under (*parent), NULL at the end */
static vmon_proc_t *walk_next(struct walk *stack, size_t *nr, int *parent)
{
	while (*nr) {
		struct walk *w = &stack[*nr - 1];
		vmon_proc_t *proc;

		if (w->next == w->head) {
			(*nr)--;
			continue;
		}
		if (!w->threads) {
			proc = list_entry(w->next, vmon_proc_t, siblings);
			w->next = w->next->next;
			*parent = w->parent;
			return proc;
		}
		proc = list_entry(w->next, vmon_proc_t, threads);
		w->next = w->next->next;
		/* the leader's thread node is the process itself */
		if (proc->pid == w->leader || vt_proc_gone(proc))
			continue;
		*parent = w->parent;
		return proc;
	}
	return NULL;
}

static int add_tree(vt_builder_t *b, vt_snapshot_t *snap, unsigned long long boottime, unsigned long long dt_ticks)
{
	vmon_t *vmon = b->vmon;
	struct walk *stack = NULL;
	size_t nr = 0, cap = 0;
	vmon_proc_t *proc;
	int err = 0, parent;

	if (walk_push(&stack, &nr, &cap, &vmon->processes, -1, NULL) < 0)
		goto fail;
	while ((proc = walk_next(stack, &nr, &parent))) {
		const vmon_proc_t *owner;
		struct vt_priv *priv;
		vmon_proc_stat_t *s;
		vt_row_t *row;
		int index;

		walk_prefetch(stack, nr);
		s = proc->stores[VMON_STORE_PROC_STAT];
		if (!s)
			continue;	/* found but not read yet (monitored between samples) */
		priv = proc->foo;
		if (proc->is_stale && priv && priv->shown_exited) {
			/* shown exited when it was found gone, a sample ago: its ghost stands for it now */
			if (walk_push(&stack, &nr, &cap, &proc->children, parent, NULL) < 0)
				goto fail;
			continue;
		}
		/* a process already listed: its children (if this copy has others) go under its one row */
		owner = vmon_proc_lookup(vmon, proc->pid);
		index = keys_find(b, snap, owner, proc->pid, s->start);
		if (index >= 0)
			goto children;
		row = add_node(b, snap, proc, parent, boottime, dt_ticks);
		if (!row || keys_add(b, snap, owner == proc ? priv : NULL) < 0)
			goto fail;
		index = snap->rows_nr - 1;
		row = &snap->rows[index];
		count_state(snap, row);
		/* with the event feed a process can be both: born and gone between two samples */
		if ((row->flags & VT_ROW_NEW) && !proc->is_thread) {
			snap->new_now++;
			if (!b->events_from_feed)
				add_event(snap, row, 'N');
		}
		if ((row->flags & VT_ROW_EXITED) && !proc->is_thread) {
			snap->exited_now++;
			if (b->seq > 1 && !b->events_from_feed)
				add_event(snap, row, 'X');
			if (keep_ghost(b, row) < 0)
				goto fail;
			if (priv && !proc->is_stale)
				priv->shown_exited = true;
		}
children:
		/* the threads' frame on top of the children's: walked first */
		if (walk_push(&stack, &nr, &cap, &proc->children, index, NULL) < 0 ||
		    (!proc->is_thread && b->threads &&
		     walk_push(&stack, &nr, &cap, &proc->threads, index, proc) < 0))
			goto fail;
	}
	free(stack);
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	free(stack);
	errno = err;
	return -1;
}

/*
 * Copy the tree of the sample just taken into snap (which is cleared first).
 * sample_cpu_ms is the CPU time vmon_sample() took, for the header.
 */
int vt_builder_build(vt_builder_t *b, vt_snapshot_t *snap, double sample_cpu_ms)
{
	vmon_t *vmon = b->vmon;
	const vmon_sys_stat_t *ss = vmon->stores[VMON_STORE_SYS_STAT];
	unsigned long long boottime = ss ? ss->boottime : 0, dt_ticks = 0;
	double mono = vclock_secs(CLOCK_MONOTONIC), self;
	struct rusage ru;
	vmon_stats_t st;
	int old;

	vt_snapshot_clear(snap);
	b->seq++;
	snap->seq = b->seq;
	/* the sample's own time when the source gives it (a log records it, a replay shows it) */
	snap->when = b->when > 0 ? b->when : vclock_secs(CLOCK_REALTIME);
	snap->ticks_per_sec = vmon->ticks_per_sec;
	/* the pages of the machine sampled: a replay's are the recorded one's */
	snap->page_size = vmon_page_size(vmon);
	snap->sample_cpu_ms = sample_cpu_ms;
	snap->source = vmon_sampler_name(vmon_get_sampler(vmon));
	snap->threads_shown = b->threads;
	snap->escape_flags = b->escape_flags;
	snap->wchan_read = !(vmon->flags & VMON_FLAG_NO_WCHAN);
	if (b->prev_boottime && boottime > b->prev_boottime)
		dt_ticks = boottime - b->prev_boottime;
	snap->interval = dt_ticks ? (double)dt_ticks / (double)vmon->ticks_per_sec :
			 b->when > 0 ? (b->prev_when ? snap->when - b->prev_when : 0) :
			 b->prev_mono ? mono - b->prev_mono : 0;

	old = b->ghosts_nr;
	vhash_clear(&b->other_rows);
	if (vmon_get_stats(vmon, &st) == 0 &&
	    rows_reserve(snap, st.procs + (b->threads ? st.threads : 0) + b->ghosts_nr) < 0)
		return -1;
	if (add_system(b, snap) < 0 || add_tree(b, snap, boottime, dt_ticks) < 0 ||
	    add_ghosts(b, snap, old) < 0)
		return -1;
	place_exited(b, snap);
	vhash_fit(&b->other_rows);	/* small again after a storm's rows */

	getrusage(RUSAGE_SELF, &ru);
	self = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (b->prev_mono && mono > b->prev_mono)
		snap->self_cpu_pct = 100.0 * (self - b->prev_self_cpu) / (mono - b->prev_mono);
	b->prev_self_cpu = self;
	b->prev_mono = mono;
	b->prev_boottime = boottime;
	b->prev_when = snap->when;
	return 0;
}
