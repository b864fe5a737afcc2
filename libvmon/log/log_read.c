/*
 * log_read.c: the log reader (vmon_log_open(3)), after pmclog(3).
 *
 * The reader holds the bytes of the stream it has not consumed, from read(2)
 * on the fd or from vmon_log_feed(), and hands out one whole record per
 * vmon_log_read().  It never trusts a length before the bytes are there:
 * the buffer grows with the bytes that arrive, not with what a record claims
 * to hold, and every count in a record is checked against what is left of
 * it before anything is allocated for it.  A record is whole only when its
 * CRC says so; anything else malformed is VMON_LOG_ERROR with the offset,
 * and the reader stays in that state.
 *
 * For samples it keeps what the writer keeps: a base per node (numbers,
 * and this library's store structs, into which every change is written as
 * it is decoded), found by the same rules, so that each entry's deltas land
 * on the values they were taken against (vmon_log(5)).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"

#define READ_CHUNK	(64 * 1024)
#define CPUS_MAX	8192	/* CPU lines in a sample */

enum phase { PHASE_PREAMBLE, PHASE_HEADER, PHASE_RECORDS, PHASE_FAILED };

/* one store of one node (or of the system), as last decoded */
typedef struct rstate {
	uint64_t	*nums;		/* [nums_nr]: the exact values the deltas apply to */
	void		*store;		/* this library's struct, NULL if the store is not this library's */
	uint64_t	*cpu_nums;	/* [cpus_nr * cpu_nr] */
	int		cpus_nr;
	bool		fresh;		/* made in this sample */
} rstate_t;

typedef struct rbase {
	log_base_t		base;
	unsigned long		stores;		/* log bits */
	unsigned long		wants;
	int			errors[LOG_STORES_MAX];
	rstate_t		*st[LOG_STORES_MAX];
} rbase_t;

struct _vmon_log {
	int			fd;		/* VMON_LOG_FD_NONE for memory */
	enum phase		phase;
	bool			have_header;
	uint8_t			*buf;
	size_t			start;		/* consumed bytes at the front of buf */
	size_t			len;		/* bytes in buf */
	size_t			cap;
	off_t			buf_off;	/* offset in the stream of buf[0] */
	unsigned long long	serial;
	char			error[256];
	int			err;

	log_schema_t		schema;
	char			**strings;	/* the header's, freed at close */
	size_t			strings_nr;
	vmon_log_header_t	header;

	rstate_t		*sys[LOG_STORES_MAX];
	log_bases_t		bases;
	bool			need_keyframe;	/* after vmon_log_seek() */
	unsigned long long	samples;	/* decoded, to tell bases made in this one */

	vmon_log_sample_t	sample;
	vmon_log_proc_t		*procs;
	rbase_t			**ebase;	/* the base of each entry of the sample */
	size_t			procs_cap;
	vhash_t			ids;		/* base id -> entry index, in the sample being decoded */

	char			*text;		/* an event's strings, NUL-terminated */
	size_t			text_cap;
};

static void set_error(vmon_log_t *log, int err, off_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_error(vmon_log_t *log, int err, off_t offset, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(log->error, sizeof(log->error), "offset %lld: ", (long long)offset);
	va_start(ap, fmt);
	vsnprintf(log->error + n, sizeof(log->error) - (size_t)n, fmt, ap);
	va_end(ap);
	log->err = err;
	log->phase = PHASE_FAILED;
}

/* --- bytes --- */

static int reserve(vmon_log_t *log, size_t more)
{
	size_t cap;
	uint8_t *buf;

	if (log->len + more <= log->cap)
		return 0;
	cap = log->cap ? log->cap : READ_CHUNK;
	while (cap < log->len + more)
		cap *= 2;
	buf = realloc(log->buf, cap);
	if (!buf)
		return -1;
	log->buf = buf;
	log->cap = cap;
	return 0;
}

/* drop the consumed bytes: the last record's pointers are no longer promised */
static void compact(vmon_log_t *log)
{
	if (!log->start)
		return;
	memmove(log->buf, log->buf + log->start, log->len - log->start);
	log->len -= log->start;
	log->buf_off += (off_t)log->start;
	log->start = 0;
}

/*
 * Make `need` unconsumed bytes available if the stream has them.  Returns
 * 1 when they are, 0 when the stream ends or would block first (*state
 * says which), -1 on an error (recorded).
 */
static int fill(vmon_log_t *log, size_t need, vmon_log_state_t *state)
{
	while (log->len - log->start < need) {
		ssize_t n;

		if (log->fd == VMON_LOG_FD_NONE) {
			*state = VMON_LOG_REQUIRE_DATA;
			return 0;
		}
		/* grow with what arrives, never with what a record claims */
		if (reserve(log, READ_CHUNK) < 0) {
			set_error(log, ENOMEM, log->buf_off + (off_t)log->len, "out of memory");
			return -1;
		}
		n = read(log->fd, log->buf + log->len, log->cap - log->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*state = VMON_LOG_REQUIRE_DATA;
			return 0;
		}
		if (n < 0) {
			int err = errno;

			set_error(log, err, log->buf_off + (off_t)log->len, "read: %s", strerror(err));
			return -1;
		}
		if (n == 0) {
			*state = VMON_LOG_EOF;
			return 0;
		}
		log->len += (size_t)n;
	}
	return 1;
}

/* --- the header --- */

static const char *get_text(vmon_log_t *log, log_in_t *in)
{
	const uint8_t *p;
	uint64_t len;
	char *s, **v;

	if (!log_get_count(in, LOG_TEXT_MAX, &len) || !log_get_bytes(in, (size_t)len, &p))
		return NULL;
	v = realloc(log->strings, sizeof(*v) * (log->strings_nr + 1));
	if (!v)
		return NULL;
	log->strings = v;
	s = malloc((size_t)len + 1);
	if (!s)
		return NULL;
	memcpy(s, p, (size_t)len);
	s[len] = '\0';
	log->strings[log->strings_nr++] = s;
	return s;
}

static int store_id(int kind, const char *name)
{
	for (int id = 0; id < log_descs_nr(kind); id++) {
		const vmon_store_desc_t *desc = &log_descs(kind)[id];

		if (!strcmp(desc->name, name) && log_store_recordable(desc))
			return id;
	}
	return -1;
}

static vmon_type_t type_of(uint8_t wire)
{
	static const vmon_type_t types[] = {
		[LOG_T_CHAR] = VMON_TYPE_char, [LOG_T_INT] = VMON_TYPE_int, [LOG_T_UINT] = VMON_TYPE_uint,
		[LOG_T_LONG] = VMON_TYPE_long, [LOG_T_ULONG] = VMON_TYPE_ulong,
		[LOG_T_LONGLONG] = VMON_TYPE_longlong, [LOG_T_ULONGLONG] = VMON_TYPE_ulonglong,
		[LOG_T_CHAR_ARRAY] = VMON_TYPE_char_array, [LOG_T_STR_ARRAY] = VMON_TYPE_str_array,
	};

	return types[wire];
}

/* log bits of wants to this library's */
static unsigned long my_bits(const vmon_log_t *log, int kind, unsigned long bits)
{
	unsigned long mine = 0;

	for (int i = 0; i < log->schema.nr[kind]; i++) {
		if ((bits & (1UL << i)) && log->schema.stores[kind][i].id >= 0)
			mine |= 1UL << log->schema.stores[kind][i].id;
	}
	return mine;
}

static const char *parse_header(vmon_log_t *log, log_in_t *in)
{
	vmon_log_header_t *h = &log->header;
	uint64_t ticks, page, cpus, start, flags, sys_wants, proc_wants;

	if (!(h->hostname = get_text(log, in)) || !(h->release = get_text(log, in)) ||
	    !(h->boot_id = get_text(log, in)) || !(h->writer = get_text(log, in)))
		return in->bad ? "header: a text cut short" : "out of memory";
	if (!log_get_varint(in, &ticks) || !log_get_varint(in, &page) || !log_get_varint(in, &cpus) ||
	    !log_get_varint(in, &start) || !log_get_varint(in, &flags) || !log_get_varint(in, &sys_wants) ||
	    !log_get_varint(in, &proc_wants))
		return "header: cut short";
	/* a page is a power of two bytes: what a replay's pages count (vmon_page_size()) */
	if (!ticks || ticks > 1000000 || !page || page > (1ULL << 40) || (page & (page - 1)) || cpus > CPUS_MAX)
		return "header: clock ticks, page size or CPU count out of range";
	h->ticks_per_sec = (long)ticks;
	h->page_size = (long)page;
	h->num_cpus = (long)cpus;
	h->start.tv_sec = (time_t)(start / 1000000000ULL);
	h->start.tv_nsec = (long)(start % 1000000000ULL);
	/* only the flags this library knows: a replay must not be told what it cannot do */
	h->flags = (vmon_flags_t)(flags & (VMON_FLAG_PROC_ARRAY | VMON_FLAG_PROC_ALL | VMON_FLAG_2PASS));

	for (int k = 0; k < LOG_KINDS; k++) {
		uint64_t nr;

		if (!log_get_count(in, LOG_STORES_MAX, &nr))
			return "header: store count out of range";
		for (uint64_t i = 0; i < nr; i++) {
			log_store_t *st = &log->schema.stores[k][i];
			vmon_log_store_t *pub = &log->schema.pub[k][i];
			uint64_t fields;

			if (!(pub->name = get_text(log, in)))
				return in->bad ? "header: a store name cut short" : "out of memory";
			if (!log_get_u8(in, &st->flags) || !log_get_count(in, LOG_FIELDS_MAX, &fields))
				return "header: field count out of range";
			st->id = store_id(k, pub->name);
			st->f = calloc((size_t)fields + 1, sizeof(*st->f));
			st->pub = calloc((size_t)fields + 1, sizeof(*st->pub));
			log->schema.nr[k] = (int)i + 1;
			if (!st->f || !st->pub)
				return "out of memory";
			st->fields_nr = (int)fields;
			for (int j = 0; j < st->fields_nr; j++) {
				log_field_t *f = &st->f[j];
				vmon_log_field_t *pf = &st->pub[j];
				uint64_t text = 0, count = 0;

				if (!(pf->name = get_text(log, in)))
					return in->bad ? "header: a field name cut short" : "out of memory";
				if (!log_get_u8(in, &f->wire) || !log_get_u8(in, &f->flags))
					return "header: cut short";
				if (!f->wire || f->wire > LOG_T_MAX)
					return "header: a field of an unknown type";
				if ((f->flags & LOG_FIELD_SPLIT) &&
				    (!log_get_count(in, LOG_FIELDS_MAX, &text) || !log_get_count(in, LOG_FIELDS_MAX, &count)))
					return "header: cut short";
				f->split_text = (int)text;
				f->split_count = (int)count;
				pf->type = type_of(f->wire);
				if (!(pf->label = get_text(log, in)) || !(pf->desc = get_text(log, in)))
					return in->bad ? "header: a label cut short" : "out of memory";
			}
		}
	}
	/* what a later minor version appends to the header is after this: skipped */
	if (log_schema_finish(&log->schema) < 0)
		return "header: the field tables contradict themselves";
	h->sys_wants = (vmon_sys_wants_t)my_bits(log, LOG_SYS, (unsigned long)sys_wants);
	h->proc_wants = (vmon_proc_wants_t)my_bits(log, LOG_PROC, (unsigned long)proc_wants);
	h->sys_stores = log->schema.pub[LOG_SYS];
	h->sys_stores_nr = log->schema.nr[LOG_SYS];
	h->proc_stores = log->schema.pub[LOG_PROC];
	h->proc_stores_nr = log->schema.nr[LOG_PROC];
	h->fields_unknown = log->schema.unknown;
	h->fields_missing = log->schema.missing;
	return NULL;
}

/* --- states and bases --- */

static void state_free(int kind, const log_store_t *st, rstate_t *s)
{
	if (!s)
		return;
	if (st->id >= 0)
		log_store_free(kind, st->id, s->store);
	free(s->cpu_nums);
	free(s);
}

static rstate_t *state_new(int kind, const log_store_t *st)
{
	rstate_t *s = calloc(1, sizeof(*s) + sizeof(uint64_t) * (size_t)st->nums_nr);

	if (!s)
		return NULL;
	s->nums = (uint64_t *)(s + 1);
	s->fresh = true;
	if (st->id >= 0 && !(s->store = log_store_new(kind, st->id))) {
		free(s);
		return NULL;
	}
	return s;
}

static void base_free(void *ctx, log_base_t *base)
{
	vmon_log_t *log = ctx;
	rbase_t *b = (rbase_t *)base;

	for (int i = 0; i < log->schema.nr[LOG_PROC]; i++)
		state_free(LOG_PROC, &log->schema.stores[LOG_PROC][i], b->st[i]);
	free(b);
}

static void sys_drop(vmon_log_t *log)
{
	for (int i = 0; i < log->schema.nr[LOG_SYS]; i++) {
		state_free(LOG_SYS, &log->schema.stores[LOG_SYS][i], log->sys[i]);
		log->sys[i] = NULL;
	}
}

/* --- store blocks --- */

static void clear_changed(int kind, const log_store_t *st, rstate_t *s)
{
	char *changed;

	s->fresh = false;
	if (st->id < 0 || !(changed = log_store_changed(kind, st->id, s->store)))
		return;
	memset(changed, 0, (size_t)BITNSLOTS(st->desc->fields_nr));
	if (kind == LOG_SYS && st->id == VMON_STORE_SYS_STAT) {
		vmon_sys_stat_t *ss = s->store;

		for (int c = 0; c < ss->cpus_nr; c++)
			memset(ss->cpus[c].changed, 0, sizeof(ss->cpus[c].changed));
	}
}

/* a vector of strings from its wire form, pointers and bytes in one allocation */
static const char *get_strv(log_in_t *in, char ***out)
{
	const uint8_t *save = in->p, *p;
	uint64_t n, len;
	size_t bytes = 0;
	char **v, *q;

	*out = NULL;
	/* the count + 1, 0 for NULL; each string takes a byte at least */
	if (!log_get_varint(in, &n) || (n && n - 1 > (uint64_t)(in->end - in->p)))
		return "a vector cut short";
	if (!n)
		return NULL;
	n--;
	for (uint64_t i = 0; i < n; i++) {
		if (!log_get_count(in, LOG_RECORD_MAX, &len) || !log_get_bytes(in, (size_t)len, &p))
			return "a vector cut short";
		bytes += (size_t)len + 1;
	}
	v = malloc(sizeof(*v) * ((size_t)n + 1) + bytes);
	if (!v)
		return "out of memory";
	/* again, now that it is known to be whole: the strings after the pointers */
	in->p = save;
	log_get_varint(in, &n);
	n--;
	q = (char *)(v + n + 1);
	for (uint64_t i = 0; i < n; i++) {
		log_get_varint(in, &len);
		log_get_bytes(in, (size_t)len, &p);
		memcpy(q, p, (size_t)len);
		q[len] = '\0';
		v[i] = q;
		q += len + 1;
	}
	v[n] = NULL;
	*out = v;
	return NULL;
}

/*
 * The split vectors of a store whose text changed, rebuilt as the sampler
 * builds them.  Their counts are the vectors' lengths, whatever the log
 * says: a caller may index argv up to argc (vmon.h), and a log is
 * untrusted input (a true one gives the same numbers).
 */
static const char *resplit(const log_store_t *st, void *store, char *changed, const char *text_changed)
{
	const vmon_store_desc_t *desc = st->desc;

	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i], *text = log_split_text(desc, f);
		char *const *v;
		uint64_t n = 0;

		if (!text)
			continue;
		if (text_changed && BITTEST(text_changed, text->sym)) {
			if (parse_split_strings(text, &desc->fields[f->sym - 1], f, store, NULL, NULL, false) < 0)
				return "out of memory";
			if (changed)
				BITSET(changed, f->sym);
			continue;
		}
		/* the text stayed: a count the log changed on its own goes back to the vector's */
		v = *(char *const *const *)((const char *)store + f->offset);
		while (v && v[n])
			n++;
		parse_set_ull(&desc->fields[f->sym - 1], store, n, NULL, false);
	}
	return NULL;
}

static const char *get_fields(int kind, const log_store_t *st, rstate_t *s, log_in_t *in)
{
	char *changed = st->id >= 0 ? log_store_changed(kind, st->id, s->store) : NULL;
	char *present = st->id >= 0 ? log_store_present(kind, st->id, s->store) : NULL;
	char text_changed[BITNSLOTS(LOG_FIELDS_MAX)];
	const char *bad = NULL;
	bool any_text = false;
	uint64_t count;
	int j = -1;

	if (!log_get_count(in, (uint64_t)st->fields_nr, &count))
		return "a store's change count out of range";
	for (uint64_t c = 0; c < count; c++) {
		const log_field_t *f;
		const vmon_field_t *cf;
		uint64_t d;

		if (!log_get_varint(in, &d) || !(d & 3) || (d >> 2) >= (uint64_t)(st->fields_nr - j - 1)) {
			bad = "a field change out of range";
			break;
		}
		j += (int)(d >> 2) + 1;
		f = &st->f[j];
		cf = f->cf;
		if (cf && changed)
			BITSET(changed, cf->sym);
		if ((d & LOG_D_PRESENT) && cf && present)
			present[cf->sym / 8] ^= (char)(1 << (cf->sym % 8));
		if (!(d & LOG_D_VALUE))
			continue;
		if (f->num >= 0) {
			int64_t delta;

			if (!log_get_svarint(in, &delta)) {
				bad = "a value cut short";
				break;
			}
			s->nums[f->num] += (uint64_t)delta;
			if (cf)
				parse_set_ull(cf, s->store, s->nums[f->num], NULL, false);
		} else if (f->wire == LOG_T_CHAR_ARRAY) {
			const uint8_t *p = NULL;
			uint64_t n;

			/* the length + 1, 0 for NULL */
			if (!log_get_varint(in, &n) || (n && (n - 1 > (uint64_t)(in->end - in->p) ||
							      !log_get_bytes(in, (size_t)n - 1, &p)))) {
				bad = "a text cut short";
				break;
			}
			if (!cf)
				continue;
			if (!n) {
				parse_free_string((vmon_char_array_t *)((char *)s->store + cf->offset));
			} else if (parse_set_string(cf, s->store, (const char *)p, (size_t)n - 1, NULL, false) < 0) {
				bad = "out of memory";
				break;
			}
			if (!any_text)
				memset(text_changed, 0, sizeof(text_changed));
			any_text = true;
			BITSET(text_changed, cf->sym);
		} else {
			char **v;
			const char *err;

			if (f->flags & LOG_FIELD_SPLIT) {
				bad = "a value for a field that has none";
				break;
			}
			if ((err = get_strv(in, &v))) {
				bad = err;
				break;
			}
			if (cf) {
				char ***m = (char ***)((char *)s->store + cf->offset);

				free(*m);
				*m = v;
			} else {
				free(v);
			}
		}
	}
	/* even after a bad change: a text changed before it has its vector again, not the freed one */
	if (st->id >= 0) {
		const char *err = resplit(st, s->store, changed, any_text ? text_changed : NULL);

		if (!bad)
			bad = err;
	}
	return bad;
}

static const char *get_cpus(const log_store_t *st, rstate_t *s, log_in_t *in)
{
	vmon_sys_stat_t *ss = st->id == VMON_STORE_SYS_STAT ? s->store : NULL;
	uint64_t nr;

	/* a CPU line takes two bytes at least: what is allocated for them is no more than the record warrants */
	if (!log_get_count(in, CPUS_MAX, &nr) || nr > (uint64_t)(in->end - in->p) / 2)
		return "the CPU count out of range";
	if ((int)nr != s->cpus_nr) {
		uint64_t *nums = calloc((size_t)nr * (size_t)st->cpu_nr + 1, sizeof(*nums));

		if (!nums)
			return "out of memory";
		for (int c = 0; c < (int)nr && c < s->cpus_nr; c++)
			memcpy(nums + (size_t)c * (size_t)st->cpu_nr, s->cpu_nums + (size_t)c * (size_t)st->cpu_nr,
			       sizeof(*nums) * (size_t)st->cpu_nr);
		free(s->cpu_nums);
		s->cpu_nums = nums;
		s->cpus_nr = (int)nr;
		if (ss) {
			vmon_sys_cpu_t *cpus = nr ? realloc(ss->cpus, sizeof(*cpus) * (size_t)nr) : NULL;

			if (nr && !cpus)
				return "out of memory";
			if (!nr)
				free(ss->cpus);
			for (int c = ss->cpus_nr; c < (int)nr; c++)
				memset(&cpus[c], 0, sizeof(cpus[c]));
			ss->cpus = cpus;
			ss->cpus_nr = (int)nr;
		}
	}
	for (int c = 0; c < s->cpus_nr; c++) {
		uint64_t *nums = s->cpu_nums + (size_t)c * (size_t)st->cpu_nr;
		uint64_t count;
		uint8_t online;
		int k = -1;

		if (!log_get_u8(in, &online) || online > 1 || !log_get_count(in, (uint64_t)st->cpu_nr, &count))
			return "a CPU line out of range";
		if (ss)
			ss->cpus[c].online = online;
		for (uint64_t n = 0; n < count; n++) {
			uint64_t gap;
			int64_t delta;

			if (!log_get_varint(in, &gap) || gap >= (uint64_t)(st->cpu_nr - k - 1) ||
			    !log_get_svarint(in, &delta))
				return "a CPU column out of range";
			k += (int)gap + 1;
			nums[k] += (uint64_t)delta;
		}
		if (!ss)
			continue;
		for (int j = 0; j < st->fields_nr; j++) {
			const log_field_t *f = &st->f[j];
			vmon_field_t cf;

			if (f->cpu < 0 || !f->cf)
				continue;
			cf = *f->cf;
			cf.offset = f->cpu_offset;
			parse_set_ull(&cf, &ss->cpus[c], nums[f->cpu], ss->cpus[c].changed, false);
		}
	}
	return NULL;
}

static const char *get_block(int kind, const log_store_t *st, rstate_t *s, log_in_t *in)
{
	const char *err = get_fields(kind, st, s, in);

	if (!err && (st->flags & LOG_STORE_CPUS))
		err = get_cpus(st, s, in);
	return err;
}

/* --- samples --- */

static int procs_reserve(vmon_log_t *log, size_t n)
{
	if (n > log->procs_cap) {
		size_t cap = log->procs_cap ? log->procs_cap : 256;
		vmon_log_proc_t *procs;
		rbase_t **ebase;

		while (cap < n)
			cap *= 2;
		procs = realloc(log->procs, sizeof(*procs) * cap);
		if (!procs)
			return -1;
		log->procs = procs;
		ebase = realloc(log->ebase, sizeof(*ebase) * cap);
		if (!ebase)
			return -1;
		log->ebase = ebase;
		log->procs_cap = cap;
	}
	vhash_clear(&log->ids);
	return vhash_reserve(&log->ids, n);
}

/* procs_reserve() made room for the sample's entries: no growth, no failure */
static void id_put(vmon_log_t *log, unsigned long long id, int index)
{
	(void)vhash_add(&log->ids, id, (void *)(uintptr_t)index);
}

static int id_get(const vmon_log_t *log, unsigned long long id)
{
	return vhash_get_index(&log->ids, id);
}

/*
 * The stores in mask of a node (or of the system), each with its state
 * (made for a store new to mask; those out of mask are dropped), the
 * changed ones decoded from their blocks.  out[] and *activity get this
 * library's stores and those that changed.
 */
static const char *get_stores(vmon_log_t *log, log_in_t *in, int kind, rstate_t **states, uint64_t mask,
			      uint64_t changed, void **out, unsigned long *activity)
{
	for (int k = 0; k < log->schema.nr[kind]; k++) {
		const log_store_t *st = &log->schema.stores[kind][k];
		const char *err;

		if (!(mask & (1ULL << k))) {
			state_free(kind, st, states[k]);
			states[k] = NULL;
			continue;
		}
		if (!states[k] && !(states[k] = state_new(kind, st)))
			return "out of memory";
		if (!states[k]->fresh)
			clear_changed(kind, st, states[k]);
		if ((changed & (1ULL << k)) && (err = get_block(kind, st, states[k], in)))
			return err;
		if (st->id >= 0) {
			out[st->id] = states[k]->store;
			if ((changed & (1ULL << k)) || states[k]->fresh)
				*activity |= 1UL << st->id;
		}
		states[k]->fresh = false;
	}
	return NULL;
}

static const char *get_sys(vmon_log_t *log, log_in_t *in)
{
	const log_schema_t *s = &log->schema;
	vmon_log_sample_t *smp = &log->sample;
	uint64_t mask, errors, changed, all = (1ULL << s->nr[LOG_SYS]) - 1;
	unsigned long activity = 0;
	const char *err;

	if (!log_get_varint(in, &mask) || (mask & ~all) || !log_get_count(in, (uint64_t)s->nr[LOG_SYS], &errors))
		return "the system stores out of range";
	for (uint64_t e = 0; e < errors; e++) {
		uint64_t i, e_no;

		if (!log_get_varint(in, &i) || i >= (uint64_t)s->nr[LOG_SYS] || !log_get_varint(in, &e_no) ||
		    e_no > INT32_MAX)
			return "a system error out of range";
		if (s->stores[LOG_SYS][i].id >= 0)
			smp->sys_errors[s->stores[LOG_SYS][i].id] = (int)e_no;
	}
	if (!log_get_varint(in, &changed) || (changed & ~mask))
		return "the changed system stores out of range";
	if ((err = get_stores(log, in, LOG_SYS, log->sys, mask, changed, smp->sys_stores, &activity)))
		return err;
	smp->sys_activity = (vmon_sys_wants_t)activity;
	if (smp->sys_stores[VMON_STORE_SYS_VM])
		sys_vm_names_of_old(smp->sys_stores[VMON_STORE_SYS_VM]);
	for (int id = 0; id < VMON_STORE_SYS_NR; id++) {
		if (smp->sys_stores[id])
			smp->sys_wants |= (vmon_sys_wants_t)(1L << id);
	}
	return NULL;
}

static const char *get_entry(vmon_log_t *log, log_in_t *in, int i, unsigned long long seq, bool keyframe)
{
	const log_schema_t *s = &log->schema;
	vmon_log_proc_t *p = &log->procs[i];
	uint64_t pid, all = (1ULL << s->nr[LOG_PROC]) - 1, changed = 0;
	unsigned long activity = 0;
	const char *err;
	int parent = -1;
	uint8_t flags;
	rbase_t *b;

	memset(p, 0, sizeof(*p));
	if (!log_get_varint(in, &pid) || !pid || pid > INT32_MAX || !log_get_u8(in, &flags))
		return "an entry cut short";
	if (keyframe && !(flags & LOG_E_FRESH))
		return "a keyframe entry that refers to an earlier sample";
	if (flags & LOG_E_FRESH) {
		if ((flags & (LOG_E_PARENT | LOG_E_WANTS)) != (LOG_E_PARENT | LOG_E_WANTS))
			return "a fresh entry without its parent or wants";
		if (!(b = log_bases_new(&log->bases, sizeof(*b), (int)pid, flags & LOG_E_THREAD, seq)))
			return "out of memory";
	} else {
		b = (rbase_t *)log_bases_find(&log->bases, (int)pid, flags & LOG_E_THREAD, seq);
		if (!b || b->base.seen == seq)
			return "an entry that refers to no earlier state";
	}
	log->ebase[i] = b;
	b->base.seen = seq;
	b->base.stale = flags & LOG_E_STALE;
	if (flags & LOG_E_PARENT) {
		uint64_t back;

		if (!log_get_varint(in, &back) || back > (uint64_t)i)
			return "a parent out of range";
		b->base.parent = back ? log->ebase[i - back]->base.id : 0;
		parent = back ? i - (int)back : -1;
	} else if (b->base.parent && (parent = id_get(log, b->base.parent)) < 0) {
		return "an entry whose parent is not in the sample";
	}
	/* a thread hangs from a process, a process from a process */
	if (parent >= 0 && (log->procs[parent].flags & VMON_LOG_PROC_THREAD))
		return "an entry under a thread";
	if ((flags & LOG_E_THREAD) && parent < 0)
		return "a thread without its process";
	id_put(log, b->base.id, i);
	if (flags & LOG_E_WANTS) {
		uint64_t wants, stores;

		if (!log_get_varint(in, &wants) || (wants & ~all) || !log_get_varint(in, &stores) || (stores & ~all))
			return "wants out of range";
		b->wants = (unsigned long)wants;
		b->stores = (unsigned long)stores;
	}
	if (flags & LOG_E_ERRORS) {
		uint64_t errors;

		if (!log_get_count(in, (uint64_t)s->nr[LOG_PROC], &errors))
			return "errors out of range";
		for (uint64_t e = 0; e < errors; e++) {
			uint64_t k, e_no;

			if (!log_get_varint(in, &k) || k >= (uint64_t)s->nr[LOG_PROC] || !log_get_varint(in, &e_no) ||
			    e_no > INT32_MAX)
				return "an error out of range";
			b->errors[k] = (int)e_no;
		}
	}
	if ((flags & LOG_E_DATA) && (!log_get_varint(in, &changed) || (changed & ~(uint64_t)b->stores)))
		return "changed stores out of range";
	if ((err = get_stores(log, in, LOG_PROC, b->st, b->stores, changed, p->stores, &activity)))
		return err;
	p->activity = (vmon_proc_wants_t)activity;
	for (int k = 0; k < s->nr[LOG_PROC]; k++) {
		if (s->stores[LOG_PROC][k].id >= 0)
			p->errors[s->stores[LOG_PROC][k].id] = b->errors[k];
	}
	p->pid = (int)pid;
	p->parent = parent;
	p->flags = ((flags & LOG_E_THREAD) ? VMON_LOG_PROC_THREAD : 0) | ((flags & LOG_E_NEW) ? VMON_LOG_PROC_NEW : 0) |
		   ((flags & LOG_E_STALE) ? VMON_LOG_PROC_STALE : 0);
	p->wants = (vmon_proc_wants_t)my_bits(log, LOG_PROC, b->wants);
	p->id = b->base.id;
	return NULL;
}

static const char *parse_sample(vmon_log_t *log, log_in_t *in)
{
	vmon_log_sample_t *smp = &log->sample;
	uint64_t seq, flags, time, n;
	const char *err;
	bool keyframe;

	memset(smp, 0, sizeof(*smp));
	if (!log_get_varint(in, &seq) || !log_get_varint(in, &flags) || !log_get_varint(in, &time))
		return "a sample cut short";
	keyframe = flags & VMON_LOG_SAMPLE_KEYFRAME;
	if (log->need_keyframe && !keyframe)
		return "vmon_log_seek() to a sample that is not a keyframe";
	log->need_keyframe = false;
	/*
	 * The bases the last sample did not list, or listed as gone, go now,
	 * not at its end: the caller reads their stores until this call.
	 * Samples are counted by the reader, whatever seq the writer gives.
	 */
	log_bases_sweep(&log->bases, log->samples, false, base_free, log);
	log->samples++;
	if (keyframe) {
		log_bases_sweep(&log->bases, 0, true, base_free, log);
		sys_drop(log);
	}
	smp->seq = seq;
	smp->flags = (unsigned)(flags & VMON_LOG_SAMPLE_KEYFRAME);
	smp->time.tv_sec = (time_t)(time / 1000000000ULL);
	smp->time.tv_nsec = (long)(time % 1000000000ULL);
	if ((err = get_sys(log, in)))
		return err;
	/* an entry takes two bytes at least */
	if (!log_get_varint(in, &n) || n > (uint64_t)(in->end - in->p) / 2)
		return "the entry count out of range";
	if (procs_reserve(log, (size_t)n) < 0)
		return "out of memory";
	for (uint64_t i = 0; i < n; i++) {
		if ((err = get_entry(log, in, (int)i, log->samples, keyframe)))
			return err;
	}
	smp->procs = log->procs;
	smp->procs_nr = (int)n;
	return NULL;
}

/* --- other records --- */

static bool get_ull(log_in_t *in, unsigned long long *v)
{
	uint64_t u;

	if (!log_get_varint(in, &u))
		return false;
	*v = u;
	return true;
}

static char *text_room(vmon_log_t *log, size_t len)
{
	if (len > log->text_cap) {
		char *t = realloc(log->text, len);

		if (!t)
			return NULL;
		log->text = t;
		log->text_cap = len;
	}
	return log->text;
}

static const char *parse_event(vmon_log_t *log, log_in_t *in, vmon_event_t *ev, int *node)
{
	uint64_t kind, has, time, u;
	int64_t pid, tid, s;
	const uint8_t *fname = NULL, *args = NULL;
	uint64_t fname_len = 0, args_len = 0;
	char *text;

	memset(ev, 0, sizeof(*ev));
	if (!log_get_varint(in, &kind) || kind >= VMON_EVENT_KIND_NR || !log_get_varint(in, &has) ||
	    !log_get_varint(in, &time) || !log_get_svarint(in, &pid) || !log_get_svarint(in, &tid) ||
	    pid < INT32_MIN || pid > INT32_MAX || tid < INT32_MIN || tid > INT32_MAX)
		return "an event cut short or out of range";
	ev->kind = (vmon_event_kind_t)kind;
	ev->kinds = 1u << kind;
	/* the members a log carries (a duration is not one: the reader's start and time give it), and the found mark */
	ev->has = (unsigned)(has & (0x7ff | VMON_EVENT_FOUND_GONE));
	ev->time_ns = time;
	ev->pid = (int)pid;
	ev->tid = (int)tid;
	ev->exit_status = -1;
	if (has & VMON_EVENT_HAS_PPID) {
		if (!log_get_svarint(in, &s) || s < INT32_MIN || s > INT32_MAX)
			return "an event's ppid";
		ev->ppid = (int)s;
	}
	if ((has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX)) && !get_ull(in, &ev->start))
		return "an event's start";
	if (has & VMON_EVENT_HAS_UID) {
		if (!log_get_varint(in, &u) || u > UINT32_MAX)
			return "an event's uid";
		ev->uid = (unsigned)u;
	}
	if (has & VMON_EVENT_HAS_COMM) {
		const uint8_t *p;

		if (!log_get_count(in, sizeof(ev->comm) - 1, &u) || !log_get_bytes(in, (size_t)u, &p))
			return "an event's comm";
		memcpy(ev->comm, p, (size_t)u);
	}
	if ((has & VMON_EVENT_HAS_FILENAME) &&
	    (!log_get_count(in, LOG_RECORD_MAX, &fname_len) || !log_get_bytes(in, (size_t)fname_len, &fname)))
		return "an event's filename";
	if (has & VMON_EVENT_HAS_ARGS) {
		uint8_t cut;

		if (!log_get_count(in, LOG_RECORD_MAX, &args_len) || !log_get_bytes(in, (size_t)args_len, &args) ||
		    !log_get_u8(in, &cut) || cut > 1)
			return "an event's arguments";
		ev->args_truncated = cut;
	}
	if (has & VMON_EVENT_HAS_EXIT_STATUS) {
		if (!log_get_svarint(in, &s) || s < INT32_MIN || s > INT32_MAX)
			return "an event's exit status";
		ev->exit_status = (int)s;
	}
	if ((has & VMON_EVENT_HAS_TIMES) && (!get_ull(in, &ev->utime) || !get_ull(in, &ev->stime)))
		return "an event's times";
	if ((has & VMON_EVENT_HAS_MAXRSS) && !get_ull(in, &ev->maxrss_kb))
		return "an event's maxrss";
	if ((has & VMON_EVENT_HAS_FAULTS) && (!get_ull(in, &ev->minflt) || !get_ull(in, &ev->majflt)))
		return "an event's faults";
	/* whether the feed handed it with a node: written by a writer that follows the feed */
	*node = -1;
	if (in->p < in->end) {
		if (!log_get_varint(in, &u) || u > 1)
			return "an event's node flag";
		*node = (int)u;
	}
	/* the strings, NUL-terminated, in the reader's memory */
	text = text_room(log, (size_t)fname_len + (size_t)args_len + 2);
	if (!text)
		return "out of memory";
	if (fname) {
		memcpy(text, fname, (size_t)fname_len);
		text[fname_len] = '\0';
		ev->filename = text;
	}
	if (args) {
		char *a = text + fname_len + 1;

		memcpy(a, args, (size_t)args_len);
		a[args_len] = '\0';
		ev->args = a;
		ev->args_len = (size_t)args_len;
	}
	return NULL;
}

static const char *parse_record(vmon_log_t *log, vmon_log_record_t *rec, log_in_t *in)
{
	int64_t pid, status;
	uint64_t u;

	switch (rec->type) {
	case VMON_LOG_SAMPLE:
		rec->u.sample = &log->sample;
		return parse_sample(log, in);
	case VMON_LOG_EVENT:
		return parse_event(log, in, &rec->u.event, &rec->event_node);
	case VMON_LOG_DROP:
		return get_ull(in, &rec->u.lost) ? NULL : "a drop notice cut short";
	case VMON_LOG_GONE:
		if (!log_get_svarint(in, &pid) || pid <= 0 || pid > INT32_MAX || !log_get_varint(in, &u) ||
		    !log_get_svarint(in, &status) || status < INT32_MIN || status > INT32_MAX)
			return "a gone notice cut short or out of range";
		rec->u.gone.pid = (int)pid;
		rec->u.gone.start = u;
		rec->u.gone.exit_status = (int)status;
		return NULL;
	case VMON_LOG_USER:
		rec->u.user.data = in->p;
		rec->u.user.len = (size_t)(in->end - in->p);
		return NULL;
	case VMON_LOG_CLOSE:
		return NULL;
	case VMON_LOG_HEADER:
		return "a second header";
	}
	return NULL;
}

/* --- the API --- */

vmon_log_t *vmon_log_open(int fd)
{
	vmon_log_t *log;

	if (fd < 0 && fd != VMON_LOG_FD_NONE) {
		errno = EINVAL;
		return NULL;
	}
	log = calloc(1, sizeof(*log));
	if (!log)
		return NULL;
	log->fd = fd;
	if (log_bases_init(&log->bases) < 0) {
		free(log);
		errno = ENOMEM;
		return NULL;
	}
	return log;
}

static int preamble(vmon_log_t *log, vmon_log_record_t *rec)
{
	vmon_log_state_t state = VMON_LOG_OK;
	size_t have;
	const uint8_t *p;
	unsigned major, minor;
	int r = fill(log, LOG_PREAMBLE_LEN, &state);

	if (r < 0)
		return -1;
	have = log->len - log->start;
	if (!have) {
		rec->state = state;
		return 0;
	}
	p = log->buf + log->start;
	if (memcmp(p, LOG_MAGIC, have < LOG_MAGIC_LEN ? have : LOG_MAGIC_LEN)) {
		set_error(log, EBADMSG, log->buf_off, "not a vmon log (vmon_log(5)): no \"%s\" at the start", LOG_MAGIC);
		return -1;
	}
	if (!r) {
		/* a log cut within its first bytes is an empty log */
		rec->state = state;
		return 0;
	}
	major = (unsigned)p[8] | (unsigned)p[9] << 8;
	minor = (unsigned)p[10] | (unsigned)p[11] << 8;
	log->header.version_major = major;
	log->header.version_minor = minor;
	if (major != VMON_LOG_VERSION_MAJOR) {
		set_error(log, EPROTONOSUPPORT, log->buf_off + LOG_MAGIC_LEN,
			  "the log's format version %u.%u %s this reader's %d.%d: it cannot be read",
			  major, minor, major > VMON_LOG_VERSION_MAJOR ? "is newer than" : "is not", VMON_LOG_VERSION_MAJOR,
			  VMON_LOG_VERSION_MINOR);
		return -1;
	}
	log->start += LOG_PREAMBLE_LEN;
	log->phase = PHASE_HEADER;
	return 1;
}

/*
 * The next whole record at the front of the buffer: 1 with its kind, head
 * (kind and length bytes) and total size; 0 when the stream has no more yet
 * (*state says why); -1 on an error (recorded).
 */
static int next_record(vmon_log_t *log, size_t *head, size_t *total, vmon_log_state_t *state)
{
	const uint8_t *p;
	off_t offset;
	uint64_t body;
	log_in_t in;
	size_t have;
	uint32_t crc;
	int r;

	/* the kind, the length and its check: 12 bytes at most, fewer at the end of the stream */
	if ((r = fill(log, LOG_HEAD_MAX, state)) < 0)
		return -1;
	have = log->len - log->start;
	if (!have)
		return 0;
	p = log->buf + log->start;
	offset = log->buf_off + (off_t)log->start;
	if (!p[0]) {
		set_error(log, EBADMSG, offset, "a record of kind 0");
		return -1;
	}
	in = (log_in_t){ p + 1, p + (have < LOG_HEAD_MAX ? have : LOG_HEAD_MAX), false };
	if (!log_get_varint(&in, &body) || in.p == in.end) {
		if (r) {
			set_error(log, EBADMSG, offset, "a record length that is no number");
			return -1;
		}
		return 0;	/* cut within the head: more may come */
	}
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (*in.p != log_crc8(p, (size_t)(in.p - p))) {
		set_error(log, EBADMSG, offset, "a record head whose check is wrong (kind %u)", p[0]);
		return -1;
	}
#endif
	in.p++;
	if (body > LOG_RECORD_MAX) {
		set_error(log, EBADMSG, offset, "a record of %" PRIu64 " bytes, beyond the limit of %u", body,
			  LOG_RECORD_MAX);
		return -1;
	}
	*head = (size_t)(in.p - p);
	*total = *head + (size_t)body + LOG_CRC_LEN;
	if ((r = fill(log, *total, state)) <= 0)
		return r;
	p = log->buf + log->start;
	crc = (uint32_t)p[*total - 4] | (uint32_t)p[*total - 3] << 8 | (uint32_t)p[*total - 2] << 16 |
	      (uint32_t)p[*total - 1] << 24;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (crc != log_crc32(0, p, *total - LOG_CRC_LEN)) {
		set_error(log, EBADMSG, offset, "a record whose checksum is wrong (kind %u, %" PRIu64 " bytes)", p[0], body);
		return -1;
	}
#else
	/* the fuzzer cannot forge checksums: let it reach what is behind them */
	(void)crc;
#endif
	return 1;
}

static int failed(vmon_log_t *log, vmon_log_record_t *rec)
{
	rec->state = VMON_LOG_ERROR;
	errno = log->err;
	return -1;
}

int vmon_log_read(vmon_log_t *log, vmon_log_record_t *rec)
{
	if (!log || !rec) {
		errno = EINVAL;
		return -1;
	}
	memset(rec, 0, sizeof(*rec));
	if (log->phase == PHASE_FAILED)
		return failed(log, rec);
	compact(log);
	if (log->phase == PHASE_PREAMBLE) {
		int r = preamble(log, rec);

		if (r < 0)
			return failed(log, rec);
		if (!r)
			return -1;
	}
	for (;;) {
		vmon_log_state_t state = VMON_LOG_OK;
		size_t head, total;
		const uint8_t *p;
		const char *err;
		log_in_t in;
		int r = next_record(log, &head, &total, &state);

		if (r < 0)
			return failed(log, rec);
		if (!r) {
			rec->state = state;
			return -1;
		}
		p = log->buf + log->start;
		rec->offset = log->buf_off + (off_t)log->start;
		rec->serial = log->serial++;
		rec->type = (vmon_log_type_t)p[0];
		rec->event_node = -1;
		log->start += total;
		in = (log_in_t){ p + head, p + total - LOG_CRC_LEN, false };
		if (log->phase == PHASE_HEADER) {
			if (rec->type != VMON_LOG_HEADER) {
				set_error(log, EBADMSG, rec->offset, "the first record is not a header (kind %u)", p[0]);
				return failed(log, rec);
			}
			err = parse_header(log, &in);
			if (!err) {
				log->phase = PHASE_RECORDS;
				log->have_header = true;
			}
			rec->u.header = &log->header;
		} else if (rec->type < VMON_LOG_HEADER || rec->type > VMON_LOG_CLOSE) {
			continue;	/* a kind of a later version: skipped, its serial counted */
		} else {
			err = parse_record(log, rec, &in);
		}
		if (err) {
			/* half a sample leaves the bases in no state a next sample could use: no going on */
			set_error(log, strcmp(err, "out of memory") ? EBADMSG : ENOMEM, rec->offset, "%s", err);
			return failed(log, rec);
		}
		rec->state = VMON_LOG_OK;
		return 0;
	}
}

int vmon_log_feed(vmon_log_t *log, const void *data, size_t len)
{
	if (!log || log->fd != VMON_LOG_FD_NONE || !data) {
		errno = EINVAL;
		return -1;
	}
	if (reserve(log, len) < 0)
		return -1;
	if (len)
		memcpy(log->buf + log->len, data, len);
	log->len += len;
	return 0;
}

int vmon_log_seek(vmon_log_t *log, const vmon_log_record_t *rec)
{
	if (!log || !rec || log->fd == VMON_LOG_FD_NONE || rec->state != VMON_LOG_OK || rec->type != VMON_LOG_SAMPLE ||
	    log->phase != PHASE_RECORDS || rec->offset < LOG_PREAMBLE_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (lseek(log->fd, rec->offset, SEEK_SET) < 0)
		return -1;
	log->start = log->len = 0;
	log->buf_off = rec->offset;
	log->serial = rec->serial;
	log_bases_sweep(&log->bases, 0, true, base_free, log);
	sys_drop(log);
	log->need_keyframe = true;
	return 0;
}

const vmon_log_header_t *vmon_log_header(const vmon_log_t *log)
{
	if (!log || !log->have_header)
		return NULL;
	return &log->header;
}

const char *vmon_log_error(const vmon_log_t *log)
{
	return log && log->phase == PHASE_FAILED ? log->error : NULL;
}

void vmon_log_close(vmon_log_t *log)
{
	if (!log)
		return;
	log_bases_fini(&log->bases, base_free, log);
	sys_drop(log);
	for (size_t i = 0; i < log->strings_nr; i++)
		free(log->strings[i]);
	free(log->strings);
	log_schema_free(&log->schema);
	free(log->procs);
	free(log->ebase);
	vhash_fini(&log->ids);
	free(log->text);
	free(log->buf);
	free(log);
}
