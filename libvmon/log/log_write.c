/*
 * log_write.c: the log writer (vmon_log_writer_open(3)).
 *
 * Each record is built whole in memory and handed to write(2) with the
 * others waiting, at each sample, at close, and when 64 KiB wait: a writer
 * that dies leaves at worst a record cut short at the end, which a reader
 * takes for the end of the log.
 *
 * A sample lists every node of the tree in pre-order.  For each node the
 * writer keeps what it last wrote (a "base": numbers, texts and present
 * bits per store), and writes only what differs: a process that slept
 * through the interval costs its pid and a flag byte.  Bases are found by
 * pid; a node that is new, or that is not the node the base was made for
 * (its pid reused between two written samples), starts a fresh base, and
 * the reader, which keeps the same bases, follows the same rules
 * (vmon_log(5)).  Every keyframe_interval samples every base is dropped,
 * so that a reader can start there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "log/log.h"

#define FLUSH_BYTES		(64 * 1024)
#define KEYFRAME_DEFAULT	60

/* what was last written of one store of one node (or of the system) */
typedef struct wstate {
	uint64_t	*nums;		/* [nums_nr] */
	uint8_t		*present;	/* [BITNSLOTS(fields_nr)] */
	struct wtext {
		char	*p;		/* NULL: the field was NULL */
		size_t	len;
	} *texts;			/* [texts_nr] */
	/* the per-CPU lines (LOG_STORE_CPUS) */
	uint64_t	*cpu_nums;	/* [cpus_nr * cpu_nr] */
	uint8_t		*cpu_online;
	int		cpus_nr;
} wstate_t;

typedef struct wbase {
	log_base_t		base;
	const vmon_proc_t	*node;		/* the node it was made for */
	unsigned long long	start;		/* and its start time */
	unsigned long		wants;		/* in log bits */
	unsigned long		stores;
	int			errors[LOG_STORES_MAX];
	wstate_t		*st[LOG_STORES_MAX];
} wbase_t;

struct _vmon_log_writer {
	int			fd;
	enum {
		FD_QUIET,	/* a file: writing raises no signal */
		FD_SOCKET,	/* send() with MSG_NOSIGNAL */
		FD_PIPE,	/* a pipe, a FIFO, a device: SIGPIPE blocked around the write */
	}			fd_kind;
	int			err;		/* sticky: the errno of a failed write */
	log_schema_t		schema;
	log_out_t		out;		/* records waiting for write(2) */
	log_out_t		body;		/* the record being built */
	log_out_t		block;		/* a store's changes, before their count is known */
	log_out_t		entry;		/* a node's store blocks, before their mask is known */
	log_out_t		scratch;	/* a vector of strings, serialized */
	unsigned		keyframe_interval;
	vmon_log_writer_stats_t	stats;

	wstate_t		*sys[LOG_STORES_MAX];
	log_bases_t		bases;
	bool			force_keyframe;	/* a sample failed half-written: the next starts over */

	/* vmon_log_writer_follow_feed() */
	vmon_t			*followed;	/* the instance whose feed's events are written, or NULL */
	unsigned long long	feed_lost;	/* its feed's lost counter when last looked at */
	unsigned long long	own_lost;	/* events of it this writer could not write */

	/* the sample being written */
	vmon_proc_t		**nodes;
	wbase_t			**nbase;
	size_t			nodes_cap;
	vhash_t			index;		/* node -> entry index */
};

/* --- the schema of this library --- */

static int schema_build(log_schema_t *s)
{
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < LOG_KINDS; k++) {
		for (int id = 0; id < log_descs_nr(k); id++) {
			const vmon_store_desc_t *desc = &log_descs(k)[id];
			log_store_t *st;

			if (!log_store_recordable(desc))
				continue;
			st = &s->stores[k][s->nr[k]];
			s->pub[k][s->nr[k]++].name = desc->name;
			st->id = id;
			st->fields_nr = desc->fields_nr;
			st->f = calloc((size_t)desc->fields_nr + 1, sizeof(*st->f));
			st->pub = calloc((size_t)desc->fields_nr + 1, sizeof(*st->pub));
			if (!st->f || !st->pub)
				return -1;
			for (int j = 0; j < desc->fields_nr; j++) {
				const vmon_field_t *cf = &desc->fields[j];
				const vmon_field_t *text = log_split_text(desc, cf);

				st->pub[j].name = cf->name;
				st->pub[j].label = cf->label;
				st->pub[j].desc = cf->desc;
				st->pub[j].type = cf->type;
				st->f[j].wire = log_wire_type(cf->type);
				if (log_cpu_offset(cf) >= 0) {
					st->f[j].flags |= LOG_FIELD_PERCPU;
					st->flags |= LOG_STORE_CPUS;
				}
				if (text) {
					st->f[j].flags |= LOG_FIELD_SPLIT;
					st->f[j].split_text = text->sym;
					st->f[j].split_count = cf->sym - 1;
				}
			}
		}
	}
	return log_schema_finish(s);
}

static unsigned long log_bits(const vmon_log_writer_t *w, int kind, unsigned long wants)
{
	unsigned long bits = 0;

	for (int id = 0; id < log_descs_nr(kind); id++) {
		if ((wants & (1UL << id)) && w->schema.log_of[kind][id] >= 0)
			bits |= 1UL << w->schema.log_of[kind][id];
	}
	return bits;
}

/* --- records --- */

static void record_begin(vmon_log_writer_t *w)
{
	w->body.len = 0;
}

/*
 * A write to a pipe, FIFO or socket whose reader is gone raises SIGPIPE,
 * whose default action ends the process: the library promises EPIPE and
 * never ends the process, nor does it touch the program's dispositions.  A
 * socket is told not to raise it.  Anything else that might is written
 * with SIGPIPE blocked in this thread: the kernel sends the signal to the
 * thread that wrote, so it waits there, and is taken back before the mask
 * is restored, unless a SIGPIPE was pending already (the program's, which
 * it keeps; the two cannot be told apart).  A program that ignores or
 * handles SIGPIPE sees nothing either way.
 */
static ssize_t write_quiet(vmon_log_writer_t *w, const void *p, size_t len)
{
	const struct timespec now = { 0, 0 };
	sigset_t pipe_set, old, pending;
	bool had = true;
	ssize_t n;
	int err;

	if (w->fd_kind == FD_SOCKET)
		return send(w->fd, p, len, MSG_NOSIGNAL);
	if (w->fd_kind == FD_QUIET)
		return write(w->fd, p, len);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (sigpending(&pending) == 0)
		had = sigismember(&pending, SIGPIPE);
	n = write(w->fd, p, len);
	err = errno;
	if (n < 0 && err == EPIPE && !had) {
		while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

static int flush(vmon_log_writer_t *w)
{
	size_t done = 0;

	if (w->err) {
		errno = w->err;
		return -1;
	}
	while (done < w->out.len) {
		ssize_t n = write_quiet(w, w->out.data + done, w->out.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* a record may be cut: nothing written after it could be read, so stop here */
			w->err = n < 0 ? errno : EIO;
			errno = w->err;
			return -1;
		}
		done += (size_t)n;
		w->stats.bytes += (unsigned long long)n;
	}
	w->out.len = 0;
	return 0;
}

/* frame the body built in w->body as a record of the kind, after those waiting */
static int record_end(vmon_log_writer_t *w, vmon_log_type_t kind)
{
	size_t start;
	uint32_t crc;

	if (w->err) {
		/* a record may have been cut: nothing written after it could be read */
		errno = w->err;
		return -1;
	}
	if (w->body.failed) {
		w->body.failed = false;
		errno = ENOMEM;
		return -1;
	}
	if (w->body.len > LOG_RECORD_MAX) {
		errno = EFBIG;
		return -1;
	}
	start = w->out.len;
	log_put_u8(&w->out, (uint8_t)kind);
	log_put_varint(&w->out, w->body.len);
	if (!w->out.failed)
		log_put_u8(&w->out, log_crc8(w->out.data + start, w->out.len - start));
	log_put_bytes(&w->out, w->body.data, w->body.len);
	log_out_reserve(&w->out, LOG_CRC_LEN);
	if (w->out.failed) {
		w->out.failed = false;
		w->out.len = start;
		errno = ENOMEM;
		return -1;
	}
	crc = log_crc32(0, w->out.data + start, w->out.len - start);
	for (int i = 0; i < 4; i++)
		w->out.data[w->out.len++] = (uint8_t)(crc >> (8 * i));
	w->stats.records++;
	if (kind == VMON_LOG_SAMPLE)
		w->stats.sample_bytes += w->out.len - start;
	return 0;
}

static int record_end_maybe_flush(vmon_log_writer_t *w, vmon_log_type_t kind)
{
	if (record_end(w, kind) < 0)
		return -1;
	return w->out.len >= FLUSH_BYTES ? flush(w) : 0;
}

static unsigned long long ns_of(const struct timespec *ts)
{
	return (unsigned long long)ts->tv_sec * 1000000000ULL + (unsigned long long)ts->tv_nsec;
}

/* a one-line file under the proc root (boot_id), without its newline; "" if unreadable */
static void read_line(const vmon_t *vmon, const char *path, char *buf, size_t size)
{
	int fd = procfs_openat((vmon_t *)vmon, vmon->internal->proc_fd, path, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int write_header(vmon_log_writer_t *w, const vmon_t *vmon)
{
	struct utsname uts;
	struct timespec now;
	char boot_id[64];
	uint8_t pre[LOG_PREAMBLE_LEN];

	memcpy(pre, LOG_MAGIC, LOG_MAGIC_LEN);
	pre[8] = VMON_LOG_VERSION_MAJOR & 0xff;
	pre[9] = VMON_LOG_VERSION_MAJOR >> 8;
	pre[10] = VMON_LOG_VERSION_MINOR & 0xff;
	pre[11] = VMON_LOG_VERSION_MINOR >> 8;
	log_put_bytes(&w->out, pre, sizeof(pre));

	if (uname(&uts) < 0)
		memset(&uts, 0, sizeof(uts));
	read_line(vmon, "sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
	clock_gettime(CLOCK_REALTIME, &now);
	record_begin(w);
	log_put_string(&w->body, uts.nodename);
	log_put_string(&w->body, uts.release);
	log_put_string(&w->body, boot_id);
	log_put_string(&w->body, PACKAGE_NAME " " PACKAGE_VERSION);
	log_put_varint(&w->body, (uint64_t)vmon->ticks_per_sec);
	log_put_varint(&w->body, (uint64_t)vmon->internal->page_size);
	log_put_varint(&w->body, (uint64_t)vmon->num_cpus);
	log_put_varint(&w->body, ns_of(&now));
	log_put_varint(&w->body, (uint64_t)vmon->flags);
	log_put_varint(&w->body, log_bits(w, LOG_SYS, (unsigned long)vmon->sys_wants));
	log_put_varint(&w->body, log_bits(w, LOG_PROC, (unsigned long)vmon->proc_wants));
	for (int k = 0; k < LOG_KINDS; k++) {
		log_put_varint(&w->body, (uint64_t)w->schema.nr[k]);
		for (int i = 0; i < w->schema.nr[k]; i++) {
			const log_store_t *st = &w->schema.stores[k][i];

			log_put_string(&w->body, w->schema.pub[k][i].name);
			log_put_u8(&w->body, st->flags);
			log_put_varint(&w->body, (uint64_t)st->fields_nr);
			for (int j = 0; j < st->fields_nr; j++) {
				log_put_string(&w->body, st->pub[j].name);
				log_put_u8(&w->body, st->f[j].wire);
				log_put_u8(&w->body, st->f[j].flags);
				if (st->f[j].flags & LOG_FIELD_SPLIT) {
					log_put_varint(&w->body, (uint64_t)st->f[j].split_text);
					log_put_varint(&w->body, (uint64_t)st->f[j].split_count);
				}
				log_put_string(&w->body, st->pub[j].label);
				log_put_string(&w->body, st->pub[j].desc);
			}
		}
	}
	if (record_end(w, VMON_LOG_HEADER) < 0)
		return -1;
	return flush(w);
}

/* --- bases --- */

static void state_free(wstate_t *s, const log_store_t *st)
{
	if (!s)
		return;
	for (int i = 0; i < st->texts_nr; i++)
		free(s->texts[i].p);
	free(s->cpu_nums);
	free(s->cpu_online);
	free(s);
}

/* one allocation: the struct, then its numbers, texts and present bits */
static wstate_t *state_new(const log_store_t *st)
{
	size_t nums = sizeof(uint64_t) * (size_t)st->nums_nr, texts = sizeof(struct wtext) * (size_t)st->texts_nr;
	wstate_t *s = calloc(1, sizeof(*s) + nums + texts + (size_t)BITNSLOTS(st->fields_nr));

	if (!s)
		return NULL;
	s->nums = (uint64_t *)(s + 1);
	s->texts = (struct wtext *)((char *)s->nums + nums);
	s->present = (uint8_t *)s->texts + texts;
	return s;
}

static void base_free(void *ctx, log_base_t *base)
{
	vmon_log_writer_t *w = ctx;
	wbase_t *b = (wbase_t *)base;

	for (int i = 0; i < w->schema.nr[LOG_PROC]; i++)
		state_free(b->st[i], &w->schema.stores[LOG_PROC][i]);
	free(b);
}

/* --- store deltas --- */

/* a vector of strings as bytes: count + 1 (0 for NULL), then each length and its bytes */
static void strv_serialize(log_out_t *o, char *const *v)
{
	size_t n = 0;

	o->len = 0;
	if (!v) {
		log_put_varint(o, 0);
		return;
	}
	while (v[n])
		n++;
	log_put_varint(o, n + 1);
	for (size_t i = 0; i < n; i++)
		log_put_string(o, v[i]);
}

static int text_set(struct wtext *t, const char *p, size_t len)
{
	char *copy = NULL;

	if (p) {
		copy = malloc(len + 1);
		if (!copy)
			return -1;
		memcpy(copy, p, len);
		copy[len] = '\0';
	}
	free(t->p);
	t->p = copy;
	t->len = len;
	return 0;
}

/*
 * The changes of one store's fields against s, into w->block, and s made
 * what was written.  Returns the number of changed fields, -1 on ENOMEM.
 */
static int fields_delta(vmon_log_writer_t *w, const log_store_t *st, wstate_t *s, const void *store)
{
	int prev = -1, changes = 0;

	for (int j = 0; j < st->fields_nr; j++) {
		const log_field_t *f = &st->f[j];
		const vmon_field_t *cf = f->cf;
		bool present = vmon_field_present(st->desc, cf, store) != 0;
		unsigned bits = present != (BITTEST(s->present, j) != 0) ? LOG_D_PRESENT : 0;
		uint64_t v = 0;
		const char *text = NULL;
		size_t len = 0;

		if (f->num >= 0) {
			v = log_field_get(cf, store);
			if (v != s->nums[f->num])
				bits |= LOG_D_VALUE;
		} else if (f->text >= 0) {
			struct wtext *t = &s->texts[f->text];

			if (f->wire == LOG_T_CHAR_ARRAY) {
				const vmon_char_array_t *a = (const vmon_char_array_t *)((const char *)store + cf->offset);

				text = a->array;
				len = a->array ? a->len : 0;
			} else {
				strv_serialize(&w->scratch, *(char *const *const *)((const char *)store + cf->offset));
				if (w->scratch.failed)
					return -1;
				text = (const char *)w->scratch.data;
				len = w->scratch.len;
			}
			if (!text != !t->p || (text && (len != t->len || memcmp(text, t->p, len))))
				bits |= LOG_D_VALUE;
		}
		if (!bits)
			continue;
		log_put_varint(&w->block, ((uint64_t)(j - prev - 1) << 2) | bits);
		prev = j;
		changes++;
		if (bits & LOG_D_PRESENT)
			s->present[j / 8] ^= (uint8_t)(1u << (j % 8));
		if (!(bits & LOG_D_VALUE))
			continue;
		if (f->num >= 0) {
			log_put_svarint(&w->block, (int64_t)(v - s->nums[f->num]));
			s->nums[f->num] = v;
		} else if (f->wire == LOG_T_CHAR_ARRAY) {
			log_put_varint(&w->block, text ? len + 1 : 0);
			log_put_bytes(&w->block, text, len);
			if (text_set(&s->texts[f->text], text, len) < 0)
				return -1;
		} else {
			/* already serialized: count + 1 first, so NULL is 0 as for a text */
			log_put_bytes(&w->block, text, len);
			if (text_set(&s->texts[f->text], text, len) < 0)
				return -1;
		}
	}
	return w->block.failed ? -1 : changes;
}

/* the per-CPU lines of a store that has them: changed ones in full against s */
static int cpus_delta(vmon_log_writer_t *w, const log_store_t *st, wstate_t *s, const vmon_sys_stat_t *ss)
{
	int changes = 0;

	if (ss->cpus_nr != s->cpus_nr) {
		size_t n = (size_t)(ss->cpus_nr > 0 ? ss->cpus_nr : 0);
		uint64_t *nums = calloc(n * (size_t)st->cpu_nr + 1, sizeof(*nums));
		uint8_t *online = calloc(n + 1, 1);

		if (!nums || !online) {
			free(nums);
			free(online);
			return -1;
		}
		for (int c = 0; c < ss->cpus_nr && c < s->cpus_nr; c++) {
			memcpy(nums + (size_t)c * (size_t)st->cpu_nr, s->cpu_nums + (size_t)c * (size_t)st->cpu_nr,
			       sizeof(*nums) * (size_t)st->cpu_nr);
			online[c] = s->cpu_online[c];
		}
		free(s->cpu_nums);
		free(s->cpu_online);
		s->cpu_nums = nums;
		s->cpu_online = online;
		s->cpus_nr = ss->cpus_nr;
		changes++;
	}
	log_put_varint(&w->block, (uint64_t)s->cpus_nr);
	for (int c = 0; c < s->cpus_nr; c++) {
		const vmon_sys_cpu_t *cpu = &ss->cpus[c];
		uint64_t *nums = s->cpu_nums + (size_t)c * (size_t)st->cpu_nr;
		size_t count_at;
		int prev = -1, n = 0;

		log_put_u8(&w->block, cpu->online ? 1 : 0);
		if (cpu->online != s->cpu_online[c]) {
			s->cpu_online[c] = cpu->online;
			changes++;
		}
		/* the count goes first: room for a one-byte varint, fixed up when more */
		count_at = w->block.len;
		log_put_u8(&w->block, 0);
		for (int j = 0; j < st->fields_nr; j++) {
			const log_field_t *f = &st->f[j];
			uint64_t v;

			if (f->cpu < 0)
				continue;
			v = log_field_get(&(vmon_field_t){ .type = f->cf->type, .offset = f->cpu_offset }, cpu);
			if (v == nums[f->cpu])
				continue;
			log_put_varint(&w->block, (uint64_t)(f->cpu - prev - 1));
			log_put_svarint(&w->block, (int64_t)(v - nums[f->cpu]));
			nums[f->cpu] = v;
			prev = f->cpu;
			n++;
		}
		if (w->block.failed)
			return -1;
		/* at most st->cpu_nr columns, which a header caps at LOG_FIELDS_MAX: two bytes at most */
		if (n >= 0x80) {
			log_out_reserve(&w->block, 1);
			if (w->block.failed)
				return -1;
			memmove(w->block.data + count_at + 2, w->block.data + count_at + 1, w->block.len - count_at - 1);
			w->block.len++;
			w->block.data[count_at] = (uint8_t)(n | 0x80);
			w->block.data[count_at + 1] = (uint8_t)(n >> 7);
		} else {
			w->block.data[count_at] = (uint8_t)n;
		}
		changes += n;
	}
	return changes;
}

/*
 * One store's block into out, if anything changed: the count of changed
 * fields, the changes, and the CPU lines.  Returns 1 if written, 0 if the
 * store did not change, -1 on ENOMEM.
 */
static int store_delta(vmon_log_writer_t *w, log_out_t *out, const log_store_t *st, wstate_t *s, const void *store)
{
	size_t fields_at;
	int changes, cpus = 0;

	w->block.len = 0;
	changes = fields_delta(w, st, s, store);
	if (changes < 0)
		return -1;
	fields_at = w->block.len;
	if (st->flags & LOG_STORE_CPUS) {
		cpus = cpus_delta(w, st, s, store);
		if (cpus < 0)
			return -1;
	}
	if (!changes && !cpus)
		return 0;
	log_put_varint(out, (uint64_t)changes);
	log_put_bytes(out, w->block.data, fields_at);
	log_put_bytes(out, w->block.data + fields_at, w->block.len - fields_at);
	return out->failed ? -1 : 1;
}

/* --- samples --- */

static int nodes_reserve(vmon_log_writer_t *w, size_t n)
{
	if (n > w->nodes_cap) {
		size_t cap = w->nodes_cap ? w->nodes_cap : 256;
		vmon_proc_t **nodes;
		wbase_t **nbase;

		while (cap < n)
			cap *= 2;
		nodes = realloc(w->nodes, sizeof(*nodes) * cap);
		if (!nodes)
			return -1;
		w->nodes = nodes;
		nbase = realloc(w->nbase, sizeof(*nbase) * cap);
		if (!nbase)
			return -1;
		w->nbase = nbase;
		w->nodes_cap = cap;
	}
	vhash_clear(&w->index);
	return vhash_reserve(&w->index, n);
}

/* nodes_reserve() made room for the sample's nodes: no growth, no failure */
static void index_put(vmon_log_writer_t *w, const vmon_proc_t *node, int i)
{
	(void)vhash_add(&w->index, (uintptr_t)node, (void *)(uintptr_t)i);
}

static int index_get(const vmon_log_writer_t *w, const vmon_proc_t *node)
{
	return vhash_get_index(&w->index, (uintptr_t)node);
}

/*
 * The stores of a node (or of the system) in mask, each into w->entry as a
 * block if it changed, against its state in states[] (made for a store new
 * to mask; those out of mask are dropped).  *changed gets the stores
 * written.  -1 on ENOMEM.
 */
static int stores_delta(vmon_log_writer_t *w, int kind, wstate_t **states, unsigned long mask, void *const *stores,
			unsigned long *changed)
{
	*changed = 0;
	w->entry.len = 0;
	for (int k = 0; k < w->schema.nr[kind]; k++) {
		const log_store_t *st = &w->schema.stores[kind][k];
		int r;

		if (!(mask & (1UL << k))) {
			state_free(states[k], st);
			states[k] = NULL;
			continue;
		}
		if (!states[k] && !(states[k] = state_new(st)))
			return -1;
		r = store_delta(w, &w->entry, st, states[k], stores[st->id]);
		if (r < 0)
			return -1;
		if (r)
			*changed |= 1UL << k;
	}
	return 0;
}

static int write_sys(vmon_log_writer_t *w, const vmon_t *vmon, bool keyframe)
{
	const log_schema_t *s = &w->schema;
	unsigned long mask = 0, changed = 0;
	int errors = 0;

	for (int i = 0; i < s->nr[LOG_SYS]; i++) {
		int id = s->stores[LOG_SYS][i].id;

		if (vmon->stores[id] && (vmon->sys_wants & (1L << id)))
			mask |= 1UL << i;
		if (vmon->sys_errors[id])
			errors++;
	}
	log_put_varint(&w->body, mask);
	log_put_varint(&w->body, (uint64_t)errors);
	for (int i = 0; i < s->nr[LOG_SYS]; i++) {
		int id = s->stores[LOG_SYS][i].id;

		if (!vmon->sys_errors[id])
			continue;
		log_put_varint(&w->body, (uint64_t)i);
		log_put_varint(&w->body, (uint64_t)vmon->sys_errors[id]);
	}
	/* a keyframe owes nothing to the samples before */
	for (int i = 0; keyframe && i < s->nr[LOG_SYS]; i++) {
		state_free(w->sys[i], &s->stores[LOG_SYS][i]);
		w->sys[i] = NULL;
	}
	if (stores_delta(w, LOG_SYS, w->sys, mask, vmon->stores, &changed) < 0)
		return -1;
	log_put_varint(&w->body, changed);
	log_put_bytes(&w->body, w->entry.data, w->entry.len);
	return 0;
}

static int write_node(vmon_log_writer_t *w, int i, unsigned long long seq)
{
	const log_schema_t *s = &w->schema;
	vmon_proc_t *node = w->nodes[i];
	const vmon_proc_stat_t *stat = node->stores[VMON_STORE_PROC_STAT];
	unsigned long long start = stat ? stat->start : 0;
	wbase_t *b = (wbase_t *)log_bases_find(&w->bases, node->pid, node->is_thread, seq);
	int parent = node->parent ? index_get(w, node->parent) : -1;
	unsigned long wants = log_bits(w, LOG_PROC, (unsigned long)node->wants), stores = 0, changed = 0;
	uint8_t flags = 0;
	size_t flags_at;
	int errors = 0;

	if (!b || b->node != node || b->start != start || node->is_new) {
		b = log_bases_new(&w->bases, sizeof(*b), node->pid, node->is_thread, seq);
		if (!b)
			return -1;
		b->node = node;
		b->start = start;
		flags |= LOG_E_FRESH;
	}
	w->nbase[i] = b;
	b->base.seen = seq;
	b->base.stale = node->is_stale;
	flags |= (node->is_thread ? LOG_E_THREAD : 0) | (node->is_new ? LOG_E_NEW : 0) |
		 (node->is_stale ? LOG_E_STALE : 0);
	for (int k = 0; k < s->nr[LOG_PROC]; k++) {
		int id = s->stores[LOG_PROC][k].id;

		if (node->stores[id] && (node->wants & (1L << id)))
			stores |= 1UL << k;
		if (node->errors[id] != b->errors[k])
			errors++;
	}

	log_put_varint(&w->body, (uint64_t)node->pid);
	flags_at = w->body.len;
	log_put_u8(&w->body, 0);
	/* the parent: an entry before this one (pre-order), as how far back; 0 for the top */
	if ((flags & LOG_E_FRESH) || b->base.parent != (parent >= 0 ? w->nbase[parent]->base.id : 0)) {
		flags |= LOG_E_PARENT;
		log_put_varint(&w->body, parent >= 0 ? (uint64_t)(i - parent) : 0);
		b->base.parent = parent >= 0 ? w->nbase[parent]->base.id : 0;
	}
	if ((flags & LOG_E_FRESH) || wants != b->wants || stores != b->stores) {
		flags |= LOG_E_WANTS;
		log_put_varint(&w->body, wants);
		log_put_varint(&w->body, stores);
		b->wants = wants;
	}
	if (errors) {
		flags |= LOG_E_ERRORS;
		log_put_varint(&w->body, (uint64_t)errors);
		for (int k = 0; k < s->nr[LOG_PROC]; k++) {
			int id = s->stores[LOG_PROC][k].id;

			if (node->errors[id] == b->errors[k])
				continue;
			log_put_varint(&w->body, (uint64_t)k);
			log_put_varint(&w->body, (uint64_t)node->errors[id]);
			b->errors[k] = node->errors[id];
		}
	}
	if (stores_delta(w, LOG_PROC, b->st, stores, node->stores, &changed) < 0)
		return -1;
	b->stores = stores;
	if (changed) {
		flags |= LOG_E_DATA;
		log_put_varint(&w->body, changed);
		log_put_bytes(&w->body, w->entry.data, w->entry.len);
	}
	if (!w->body.failed)
		w->body.data[flags_at] = flags;
	w->stats.entries++;
	return 0;
}

static int write_gone(vmon_log_writer_t *w, const vmon_proc_t *node)
{
	const vmon_proc_stat_t *s = node->stores[VMON_STORE_PROC_STAT];
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
	int status = -1;

	/* a zombie's last stat line carries its exit status, or the feed's exit did (then kept, state X) */
	if (s && (s->state == 'Z' || s->state == 'X') &&
	    vmon_field_present(desc, &desc->fields[VMON_PROC_STAT_EXIT_CODE], s))
		status = s->exit_code;
	record_begin(w);
	log_put_svarint(&w->body, node->pid);
	log_put_varint(&w->body, s ? s->start : 0);
	log_put_svarint(&w->body, status);
	return record_end(w, VMON_LOG_GONE);
}

/* --- following a feed --- */

/*
 * A writer that follows an instance's feed listens to it (feed_listen()):
 * it hears every event the feed delivers, inside vmon_sample() and before
 * the caller's own callback, so that a program records events without giving up its
 * callback.  What was lost on the way is written as one drop notice before
 * the next sample: the feed's losses (its lost counter grew since the last
 * look) and the events this writer could not frame (out of memory).
 */
static int write_event(vmon_log_writer_t *w, const vmon_event_t *ev, int node);

static void follow_event(vmon_t *vmon, const vmon_event_t *ev, proc_node_t *node, void *ctx)
{
	vmon_log_writer_t *w = ctx;

	(void)vmon;
	if (write_event(w, ev, node != NULL) < 0)
		w->own_lost++;
}

/* the followed instance goes */
static void follow_gone(void *ctx)
{
	vmon_log_writer_t *w = ctx;

	w->followed = NULL;
}

static unsigned long long feed_lost_now(const vmon_t *vmon)
{
	vmon_feed_stats_t st;

	return vmon && vmon_feed_get_stats(vmon, &st) == 0 ? st.lost : 0;
}

static int write_losses(vmon_log_writer_t *w)
{
	unsigned long long feed = feed_lost_now(w->followed), lost = w->own_lost;

	if (w->followed && feed > w->feed_lost)
		lost += feed - w->feed_lost;
	w->feed_lost = feed;
	if (!lost)
		return 0;
	w->own_lost = 0;
	return vmon_log_write_drop(w, lost);
}

int vmon_log_writer_follow_feed(vmon_log_writer_t *w, vmon_t *vmon)
{
	if (!w || (vmon && !vmon->internal)) {
		errno = EINVAL;
		return -1;
	}
	if (vmon && w->followed != vmon) {
		void *other = feed_listener_ctx(vmon, follow_event);

		if (other && other != w) {
			errno = EBUSY;
			return -1;
		}
		/* first: the log has an event before anything a callback does about it */
		if (feed_listen(vmon, follow_event, follow_gone, w, true) < 0)
			return -1;
	}
	if (w->followed && w->followed != vmon)
		feed_unlisten(w->followed, follow_event, w);
	w->followed = vmon;
	w->feed_lost = feed_lost_now(vmon);
	return 0;
}

/* --- the public writes --- */

int vmon_log_write_sample(vmon_log_writer_t *w, const vmon_t *vmon, const struct timespec *when)
{
	unsigned long long seq;
	struct timespec now;
	vmon_proc_t *node;
	bool keyframe;
	size_t n = 0;
	int err;

	if (!w || !vmon || !vmon->internal) {
		errno = EINVAL;
		return -1;
	}
	if (w->err) {
		errno = w->err;
		return -1;
	}
	if (write_losses(w) < 0)
		return -1;
	if (!when) {
		clock_gettime(CLOCK_REALTIME, &now);
		when = &now;
	}
	keyframe = w->force_keyframe || w->stats.samples % w->keyframe_interval == 0;
	seq = w->stats.samples + 1;
	if (keyframe)
		log_bases_sweep(&w->bases, seq, true, base_free, w);

	for (node = tree_first((vmon_t *)vmon); node; node = tree_next((vmon_t *)vmon, node, true))
		n++;
	if (nodes_reserve(w, n) < 0)
		return -1;
	n = 0;
	for (node = tree_first((vmon_t *)vmon); node; node = tree_next((vmon_t *)vmon, node, true)) {
		w->nodes[n] = node;
		index_put(w, node, (int)n++);
	}

	record_begin(w);
	log_put_varint(&w->body, seq);
	log_put_varint(&w->body, keyframe ? VMON_LOG_SAMPLE_KEYFRAME : 0);
	log_put_varint(&w->body, ns_of(when));
	if (write_sys(w, vmon, keyframe) < 0)
		goto fail;
	log_put_varint(&w->body, n);
	for (size_t i = 0; i < n; i++) {
		if (write_node(w, (int)i, seq) < 0)
			goto fail;
	}
	if (record_end(w, VMON_LOG_SAMPLE) < 0)
		goto fail;
	w->stats.samples++;
	w->stats.keyframes += keyframe;
	w->force_keyframe = false;
	for (size_t i = 0; i < n; i++) {
		if (w->nodes[i]->is_stale && !w->nodes[i]->is_thread && write_gone(w, w->nodes[i]) < 0)
			goto fail;
	}
	log_bases_sweep(&w->bases, seq, false, base_free, w);
	return flush(w);
fail:
	/*
	 * The bases may hold part of a sample the reader never sees: start
	 * over with a keyframe, whose entries owe nothing to them.
	 */
	err = w->body.failed || !errno ? ENOMEM : errno;
	log_bases_sweep(&w->bases, seq, true, base_free, w);
	w->force_keyframe = true;
	w->body.failed = false;
	errno = err;
	return -1;
}

/* node: whether the feed handed it with a node of the tree (1, 0), or not known (-1: nothing written) */
static int write_event(vmon_log_writer_t *w, const vmon_event_t *ev, int node)
{
	unsigned has;

	if (!w || !ev || (unsigned)ev->kind >= VMON_EVENT_KIND_NR) {
		errno = EINVAL;
		return -1;
	}
	has = ev->has;
	record_begin(w);
	log_put_varint(&w->body, (uint64_t)ev->kind);
	log_put_varint(&w->body, has);
	log_put_varint(&w->body, ev->time_ns);
	log_put_svarint(&w->body, ev->pid);
	log_put_svarint(&w->body, ev->tid);
	if (has & VMON_EVENT_HAS_PPID)
		log_put_svarint(&w->body, ev->ppid);
	if (has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX))
		log_put_varint(&w->body, ev->start);
	if (has & VMON_EVENT_HAS_UID)
		log_put_varint(&w->body, ev->uid);
	if (has & VMON_EVENT_HAS_COMM) {
		size_t len = strnlen(ev->comm, sizeof(ev->comm) - 1);

		log_put_varint(&w->body, len);
		log_put_bytes(&w->body, ev->comm, len);
	}
	if (has & VMON_EVENT_HAS_FILENAME)
		log_put_string(&w->body, ev->filename);
	if (has & VMON_EVENT_HAS_ARGS) {
		log_put_varint(&w->body, ev->args ? ev->args_len : 0);
		log_put_bytes(&w->body, ev->args, ev->args ? ev->args_len : 0);
		log_put_u8(&w->body, ev->args_truncated);
	}
	if (has & VMON_EVENT_HAS_EXIT_STATUS)
		log_put_svarint(&w->body, ev->exit_status);
	if (has & VMON_EVENT_HAS_TIMES) {
		log_put_varint(&w->body, ev->utime);
		log_put_varint(&w->body, ev->stime);
	}
	if (has & VMON_EVENT_HAS_MAXRSS)
		log_put_varint(&w->body, ev->maxrss_kb);
	if (has & VMON_EVENT_HAS_FAULTS) {
		log_put_varint(&w->body, ev->minflt);
		log_put_varint(&w->body, ev->majflt);
	}
	if (node >= 0)
		log_put_varint(&w->body, (uint64_t)node);
	if (record_end_maybe_flush(w, VMON_LOG_EVENT) < 0)
		return -1;
	w->stats.events++;
	return 0;
}

int vmon_log_write_event(vmon_log_writer_t *w, const vmon_event_t *ev)
{
	return write_event(w, ev, -1);
}

int vmon_log_write_drop(vmon_log_writer_t *w, unsigned long long lost)
{
	if (!w) {
		errno = EINVAL;
		return -1;
	}
	record_begin(w);
	log_put_varint(&w->body, lost);
	return record_end_maybe_flush(w, VMON_LOG_DROP);
}

int vmon_log_write_user(vmon_log_writer_t *w, const void *data, size_t len)
{
	if (!w || (!data && len) || len > LOG_RECORD_MAX) {
		errno = EINVAL;
		return -1;
	}
	record_begin(w);
	log_put_bytes(&w->body, data, len);
	return record_end_maybe_flush(w, VMON_LOG_USER);
}

int vmon_log_writer_set_keyframe_interval(vmon_log_writer_t *w, unsigned samples)
{
	if (!w || !samples) {
		errno = EINVAL;
		return -1;
	}
	/* the count goes on from a multiple of the new interval, so the next keyframe is on time */
	w->keyframe_interval = samples;
	return 0;
}

int vmon_log_writer_get_stats(const vmon_log_writer_t *w, vmon_log_writer_stats_t *stats)
{
	if (!w || !stats) {
		errno = EINVAL;
		return -1;
	}
	*stats = w->stats;
	return 0;
}

static void writer_free(vmon_log_writer_t *w)
{
	log_bases_fini(&w->bases, base_free, w);
	for (int i = 0; i < w->schema.nr[LOG_SYS]; i++)
		state_free(w->sys[i], &w->schema.stores[LOG_SYS][i]);
	free(w->nodes);
	free(w->nbase);
	vhash_fini(&w->index);
	log_out_free(&w->out);
	log_out_free(&w->body);
	log_out_free(&w->block);
	log_out_free(&w->entry);
	log_out_free(&w->scratch);
	log_schema_free(&w->schema);
	free(w);
}

/* how write_quiet() writes to fd (one that fstat() refuses gets write()'s error) */
static int fd_kind_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return FD_QUIET;
	return S_ISSOCK(st.st_mode) ? FD_SOCKET : FD_PIPE;
}

vmon_log_writer_t *vmon_log_writer_open(int fd, const vmon_t *vmon)
{
	vmon_log_writer_t *w;
	int err;

	if (fd < 0 || !vmon || !vmon->internal) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->fd_kind = fd_kind_of(fd);
	w->keyframe_interval = KEYFRAME_DEFAULT;
	if (schema_build(&w->schema) < 0 || log_bases_init(&w->bases) < 0) {
		writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	if (write_header(w, vmon) < 0) {
		err = errno;
		writer_free(w);
		errno = err;
		return NULL;
	}
	return w;
}

int vmon_log_writer_close(vmon_log_writer_t *w)
{
	int r = 0, err = 0;

	if (!w)
		return 0;
	if (write_losses(w) < 0) {
		r = -1;
		err = errno;
	}
	vmon_log_writer_follow_feed(w, NULL);
	record_begin(w);
	log_put_varint(&w->body, w->stats.samples);
	log_put_varint(&w->body, w->stats.events);
	if ((record_end(w, VMON_LOG_CLOSE) < 0 || flush(w) < 0) && !r) {
		r = -1;
		err = errno;
	}
	writer_free(w);
	if (r < 0)
		errno = err;
	return r;
}
