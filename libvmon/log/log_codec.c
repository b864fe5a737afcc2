/*
 * log_codec.c: what the log writer, reader and replay share: varints and
 * CRC-32 on the wire, the schema (a log's field tables mapped onto this
 * library's), and the stores' values and memory.
 *
 * Numbers travel as LEB128 varints, signed ones zigzag-encoded, so that the
 * small deltas between two samples of a process take a byte or two.  Every
 * record ends with a CRC-32 (the IEEE polynomial of zlib and Ethernet) of
 * its kind, length and body, so that a flipped bit is an error, not a wrong
 * value.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

/* --- bytes out --- */

void log_out_reserve(log_out_t *o, size_t more)
{
	size_t cap;
	uint8_t *data;

	if (o->failed || o->len + more <= o->cap)
		return;
	cap = o->cap ? o->cap : 4096;
	while (cap < o->len + more)
		cap *= 2;
	data = realloc(o->data, cap);
	if (!data) {
		o->failed = true;
		errno = ENOMEM;
		return;
	}
	o->data = data;
	o->cap = cap;
}

void log_put_u8(log_out_t *o, uint8_t v)
{
	log_out_reserve(o, 1);
	if (!o->failed)
		o->data[o->len++] = v;
}

void log_put_varint(log_out_t *o, uint64_t v)
{
	log_out_reserve(o, 10);
	if (o->failed)
		return;
	while (v >= 0x80) {
		o->data[o->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o->data[o->len++] = (uint8_t)v;
}

void log_put_svarint(log_out_t *o, int64_t v)
{
	log_put_varint(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void log_put_bytes(log_out_t *o, const void *p, size_t len)
{
	log_out_reserve(o, len);
	if (o->failed || !len)
		return;
	memcpy(o->data + o->len, p, len);
	o->len += len;
}

void log_put_string(log_out_t *o, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	log_put_varint(o, len);
	log_put_bytes(o, s, len);
}

void log_out_free(log_out_t *o)
{
	free(o->data);
	memset(o, 0, sizeof(*o));
}

size_t log_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* --- bytes in --- */

static bool fail(log_in_t *in)
{
	in->bad = true;
	return false;
}

bool log_get_u8(log_in_t *in, uint8_t *v)
{
	if (in->bad || in->p >= in->end)
		return fail(in);
	*v = *in->p++;
	return true;
}

bool log_get_varint(log_in_t *in, uint64_t *v)
{
	uint64_t r = 0;

	if (in->bad)
		return false;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (in->p >= in->end)
			return fail(in);
		b = *in->p++;
		/* the tenth byte holds one bit; more is not a 64-bit number */
		if (shift == 63 && b > 1)
			return fail(in);
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return fail(in);
}

bool log_get_svarint(log_in_t *in, int64_t *v)
{
	uint64_t u;

	if (!log_get_varint(in, &u))
		return false;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

bool log_get_bytes(log_in_t *in, size_t len, const uint8_t **p)
{
	if (in->bad || (size_t)(in->end - in->p) < len)
		return fail(in);
	*p = in->p;
	in->p += len;
	return true;
}

bool log_get_count(log_in_t *in, uint64_t max, uint64_t *v)
{
	if (!log_get_varint(in, v))
		return false;
	if (*v > max || *v > (uint64_t)(in->end - in->p))
		return fail(in);
	return true;
}

/* --- CRC-32 --- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t log_crc32(uint32_t crc, const void *data, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const uint8_t *p = data;

	pthread_once(&once, crc_init);
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* CRC-8 with the polynomial x^8 + x^2 + x + 1: every one- and two-bit error in a record's head */
uint8_t log_crc8(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint8_t crc = 0;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
	}
	return crc;
}

/* --- the schema --- */

const vmon_store_desc_t *log_descs(int kind)
{
	return kind == LOG_SYS ? vmon_sys_store_descs : vmon_proc_store_descs;
}

int log_descs_nr(int kind)
{
	return kind == LOG_SYS ? VMON_STORE_SYS_NR : VMON_STORE_PROC_NR;
}

/*
 * A store the log can carry: one whose fields describe the store itself,
 * each of a type the wire has.  PROC_FILES describes each open fd (a list
 * under the store), not the store, and its cstr fields point at the
 * library's own names: it is not recorded (vmon_log(5)).
 */
bool log_store_recordable(const vmon_store_desc_t *desc)
{
	for (int i = 0; i < desc->fields_nr; i++) {
		if (desc->fields[i].offset + desc->fields[i].size > desc->size ||
		    !log_wire_type(desc->fields[i].type))
			return false;
	}
	return true;
}

uint8_t log_wire_type(vmon_type_t type)
{
	switch (type) {
	case VMON_TYPE_char:		return LOG_T_CHAR;
	case VMON_TYPE_int:		return LOG_T_INT;
	case VMON_TYPE_uint:		return LOG_T_UINT;
	case VMON_TYPE_long:		return LOG_T_LONG;
	case VMON_TYPE_ulong:		return LOG_T_ULONG;
	case VMON_TYPE_longlong:	return LOG_T_LONGLONG;
	case VMON_TYPE_ulonglong:	return LOG_T_ULONGLONG;
	case VMON_TYPE_char_array:	return LOG_T_CHAR_ARRAY;
	case VMON_TYPE_str_array:	return LOG_T_STR_ARRAY;
	case VMON_TYPE_cstr:		return 0;	/* a pointer to the library's constant: no value of its own */
	}
	return 0;
}

bool log_wire_numeric(uint8_t wire)
{
	return wire >= LOG_T_CHAR && wire <= LOG_T_ULONGLONG;
}

static const struct cpu_column {
	int		n;
	int		sym;
	vmon_type_t	type;
	size_t		offset;
} cpu_columns[] = {
#define VMON_CPU_OFFSET_TABLE
#include "defs/sys_stat.def"
};

long log_cpu_offset(const vmon_field_t *f)
{
	if (f->source != VMON_SOURCE_CPU || f != &vmon_sys_store_descs[VMON_STORE_SYS_STAT].fields[f->sym])
		return -1;
	for (size_t i = 0; i < sizeof(cpu_columns) / sizeof(cpu_columns[0]); i++) {
		if (cpu_columns[i].sym == f->sym)
			return (long)cpu_columns[i].offset;
	}
	return -1;
}

const vmon_field_t *log_split_text(const vmon_store_desc_t *desc, const vmon_field_t *f)
{
	if (f->type != VMON_TYPE_str_array || !f->key || f->sym < 1)
		return NULL;
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *t = &desc->fields[i];

		if (t->type == VMON_TYPE_char_array && !strcmp(t->name, f->key))
			return t;
	}
	return NULL;
}

static bool compatible(uint8_t wire, vmon_type_t type)
{
	uint8_t mine = log_wire_type(type);

	if (log_wire_numeric(wire))
		return log_wire_numeric(mine);
	return wire == mine;
}

/*
 * With the stores' ids and fields (name, wire type, flags) filled in: the
 * numeric slots, the per-CPU columns, the mapping onto this library's
 * fields, and the counts of fields either side lacks.
 */
int log_schema_finish(log_schema_t *s)
{
	s->unknown = s->missing = 0;
	for (int k = 0; k < LOG_KINDS; k++) {
		for (int i = 0; i < LOG_STORES_MAX; i++)
			s->log_of[k][i] = -1;
		for (int i = 0; i < s->nr[k]; i++) {
			log_store_t *st = &s->stores[k][i];
			int mapped = 0;

			st->desc = st->id >= 0 ? &log_descs(k)[st->id] : NULL;
			if (st->id >= 0) {
				if (s->log_of[k][st->id] >= 0)
					return -1;	/* a store twice */
				s->log_of[k][st->id] = i;
			}
			st->nums_nr = st->cpu_nr = st->texts_nr = 0;
			for (int j = 0; j < st->fields_nr; j++) {
				log_field_t *f = &st->f[j];
				vmon_log_field_t *pub = &st->pub[j];

				f->num = log_wire_numeric(f->wire) ? st->nums_nr++ : -1;
				f->text = -1;
				if (f->wire == LOG_T_CHAR_ARRAY ||
				    (f->wire == LOG_T_STR_ARRAY && !(f->flags & LOG_FIELD_SPLIT)))
					f->text = st->texts_nr++;
				f->cpu = -1;
				if (f->flags & LOG_FIELD_PERCPU) {
					if (!log_wire_numeric(f->wire) || !(st->flags & LOG_STORE_CPUS))
						return -1;
					f->cpu = st->cpu_nr++;
				}
				if (f->flags & LOG_FIELD_SPLIT) {
					if (f->wire != LOG_T_STR_ARRAY || f->split_text < 0 || f->split_text >= st->fields_nr ||
					    f->split_count < 0 || f->split_count >= st->fields_nr ||
					    st->f[f->split_text].wire != LOG_T_CHAR_ARRAY ||
					    !log_wire_numeric(st->f[f->split_count].wire))
						return -1;
				}
				f->cf = NULL;
				pub->sym = -1;
				for (int c = 0; st->desc && c < st->desc->fields_nr; c++) {
					const vmon_field_t *cf = &st->desc->fields[c];

					if (strcmp(cf->name, pub->name) || !compatible(f->wire, cf->type))
						continue;
					/*
					 * A split is rebuilt from this library's text field, so it
					 * must have one; and a vector this library splits (argv:
					 * argc pointers into cmdline) is never taken whole from a
					 * log, where it need agree with neither.
					 */
					if (cf->type == VMON_TYPE_str_array &&
					    !(f->flags & LOG_FIELD_SPLIT) != !log_split_text(st->desc, cf))
						break;
					if (f->cpu >= 0 && log_cpu_offset(cf) < 0)
						break;
					f->cf = cf;
					f->cpu_offset = f->cpu >= 0 ? (size_t)log_cpu_offset(cf) : 0;
					pub->sym = cf->sym;
					mapped++;
					break;
				}
				if (!f->cf)
					s->unknown++;
			}
			if (st->desc)
				s->missing += st->desc->fields_nr - mapped;
			s->pub[k][i].id = st->id;
			s->pub[k][i].fields = st->pub;
			s->pub[k][i].fields_nr = st->fields_nr;
		}
		/* and the stores of this library the log has none of */
		for (int id = 0; id < log_descs_nr(k); id++) {
			if (s->log_of[k][id] < 0)
				s->missing += log_descs(k)[id].fields_nr;
		}
	}
	return 0;
}

void log_schema_free(log_schema_t *s)
{
	for (int k = 0; k < LOG_KINDS; k++) {
		for (int i = 0; i < s->nr[k]; i++) {
			free(s->stores[k][i].f);
			free(s->stores[k][i].pub);
		}
	}
	memset(s, 0, sizeof(*s));
}

/* --- bases --- */

static uint64_t base_key(int pid, bool thread)
{
	return (uint64_t)(unsigned)pid << 1 | thread;
}

int log_bases_init(log_bases_t *m)
{
	memset(m, 0, sizeof(*m));
	return vhash_reserve(&m->index, 512);
}

log_base_t *log_bases_find(const log_bases_t *m, int pid, bool thread, unsigned long long seq)
{
	uint64_t key = base_key(pid, thread);
	log_base_t *found = NULL;

	/* of those made before seq, the last made (a pid's new life before its last) */
	for (size_t pos = vhash_find(&m->index, key); pos != VHASH_END; pos = vhash_find_next(&m->index, key, pos)) {
		log_base_t *b = vhash_val_at(&m->index, pos);

		if (b->created < seq && (!found || b->id > found->id))
			found = b;
	}
	return found;
}

void *log_bases_new(log_bases_t *m, size_t size, int pid, bool thread, unsigned long long seq)
{
	log_base_t *b = calloc(1, size);

	if (!b)
		return NULL;
	if (vhash_add(&m->index, base_key(pid, thread), b) < 0) {
		free(b);
		return NULL;
	}
	b->pid = pid;
	b->thread = thread;
	b->created = seq;
	b->id = ++m->ids;
	return b;
}

void log_bases_sweep(log_bases_t *m, unsigned long long seq, bool all, void (*drop)(void *ctx, log_base_t *b),
		     void *ctx)
{
	size_t pos;

	vhash_for_each(&m->index, pos) {
		log_base_t *b = vhash_val_at(&m->index, pos);

		if (all || b->seen != seq || b->stale) {
			vhash_remove_at(&m->index, pos);
			drop(ctx, b);
		}
	}
}

void log_bases_fini(log_bases_t *m, void (*drop)(void *ctx, log_base_t *b), void *ctx)
{
	log_bases_sweep(m, 0, true, drop, ctx);
	vhash_fini(&m->index);
	memset(m, 0, sizeof(*m));
}

/* --- values and stores --- */

uint64_t log_field_get(const vmon_field_t *f, const void *store)
{
	const char *m = (const char *)store + f->offset;

	switch (f->type) {
	case VMON_TYPE_char:		return *(const unsigned char *)m;
	case VMON_TYPE_int:		return (uint64_t)(int64_t)*(const int *)m;
	case VMON_TYPE_uint:		return *(const unsigned int *)m;
	case VMON_TYPE_long:		return (uint64_t)(int64_t)*(const long *)m;
	case VMON_TYPE_ulong:		return *(const unsigned long *)m;
	case VMON_TYPE_longlong:	return (uint64_t)*(const long long *)m;
	case VMON_TYPE_ulonglong:	return *(const unsigned long long *)m;
	default:			return 0;
	}
}

/* the fds each store holds are no field of the defs: they start closed */
void *log_store_new(int kind, int id)
{
	void *store = calloc(1, log_descs(kind)[id].size);

	if (!store)
		return NULL;
	if (kind == LOG_SYS) {
		switch (id) {
		case VMON_STORE_SYS_STAT:	((vmon_sys_stat_t *)store)->stat_fd = -1; break;
		case VMON_STORE_SYS_VM:		((vmon_sys_vm_t *)store)->meminfo_fd = -1; break;
		case VMON_STORE_SYS_LOADAVG:	((vmon_sys_loadavg_t *)store)->loadavg_fd = -1; break;
		case VMON_STORE_SYS_SOCKETS: {
			vmon_sys_sockets_t *s = store;

			s->unix_fd = s->tcp_fd = s->tcp6_fd = s->udp_fd = s->udp6_fd = -1;
			break;
		}
		default: break;
		}
		return store;
	}
	switch (id) {
	case VMON_STORE_PROC_STAT: {
		vmon_proc_stat_t *s = store;

		s->cmdline_fd = s->comm_fd = s->wchan_fd = s->stat_fd = -1;
		break;
	}
	case VMON_STORE_PROC_VM:		((vmon_proc_vm_t *)store)->statm_fd = -1; break;
	case VMON_STORE_PROC_IO:		((vmon_proc_io_t *)store)->io_fd = -1; break;
	case VMON_STORE_PROC_FOLLOW_CHILDREN:	((vmon_proc_follow_children_t *)store)->children_fd = -1; break;
	default: break;
	}
	return store;
}

static void fields_free(const vmon_store_desc_t *desc, void *store)
{
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		char *m = (char *)store + f->offset;

		if (f->type == VMON_TYPE_char_array)
			parse_free_string((vmon_char_array_t *)m);
		else if (f->type == VMON_TYPE_str_array)
			parse_free_vector(f, (char ***)m);
	}
}

void log_store_free(int kind, int id, void *store)
{
	if (!store)
		return;
	fields_free(&log_descs(kind)[id], store);
	if (kind == LOG_SYS && id == VMON_STORE_SYS_STAT)
		free(((vmon_sys_stat_t *)store)->cpus);
	free(store);
}

char *log_store_changed(int kind, int id, void *store)
{
	size_t off;

	if (kind == LOG_SYS) {
		switch (id) {
		case VMON_STORE_SYS_STAT:	off = offsetof(vmon_sys_stat_t, changed); break;
		case VMON_STORE_SYS_VM:		off = offsetof(vmon_sys_vm_t, changed); break;
		case VMON_STORE_SYS_LOADAVG:	off = offsetof(vmon_sys_loadavg_t, changed); break;
		case VMON_STORE_SYS_SOCKETS:	off = offsetof(vmon_sys_sockets_t, changed); break;
		default:			return NULL;
		}
	} else {
		switch (id) {
		case VMON_STORE_PROC_STAT:	off = offsetof(vmon_proc_stat_t, changed); break;
		case VMON_STORE_PROC_VM:	off = offsetof(vmon_proc_vm_t, changed); break;
		case VMON_STORE_PROC_IO:	off = offsetof(vmon_proc_io_t, changed); break;
		case VMON_STORE_PROC_ENV:	off = offsetof(vmon_proc_env_t, changed); break;
		case VMON_STORE_PROC_SCHED:	off = offsetof(vmon_proc_sched_t, changed); break;
		case VMON_STORE_PROC_ROLLUP:	off = offsetof(vmon_proc_rollup_t, changed); break;
		case VMON_STORE_PROC_STAT_EXTRA: off = offsetof(vmon_proc_stat_extra_t, changed); break;
		case VMON_STORE_PROC_VM_STATUS:	off = offsetof(vmon_proc_vm_status_t, changed); break;
		default:			return NULL;
		}
	}
	return (char *)store + off;
}

char *log_store_present(int kind, int id, void *store)
{
	const vmon_store_desc_t *desc = &log_descs(kind)[id];

	return desc->present_offset ? (char *)store + desc->present_offset : NULL;
}

/* a copy of a vector of strings, pointers and bytes in one allocation (free() frees it) */
static char **strv_dup(char *const *v)
{
	size_t n = 0, bytes = 0;
	char **copy, *p;

	if (!v)
		return NULL;
	for (; v[n]; n++)
		bytes += strlen(v[n]) + 1;
	copy = malloc(sizeof(*copy) * (n + 1) + bytes);
	if (!copy)
		return NULL;
	p = (char *)(copy + n + 1);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;

		memcpy(p, v[i], len);
		copy[i] = p;
		p += len;
	}
	copy[n] = NULL;
	return copy;
}

int log_store_copy(int kind, int id, void *dst, const void *src)
{
	const vmon_store_desc_t *desc = &log_descs(kind)[id];
	char *dc = log_store_changed(kind, id, dst), *dp = log_store_present(kind, id, dst);
	const char *sc = log_store_changed(kind, id, (void *)src), *sp = log_store_present(kind, id, (void *)src);
	size_t bits = (size_t)BITNSLOTS(desc->fields_nr);

	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		const char *s = (const char *)src + f->offset;
		char *d = (char *)dst + f->offset;

		if (f->type == VMON_TYPE_char_array) {
			const vmon_char_array_t *a = (const vmon_char_array_t *)s;
			vmon_char_array_t *b = (vmon_char_array_t *)d;

			if (!a->array)
				parse_free_string(b);
			else if (parse_set_string(f, dst, a->array, a->len, NULL, false) < 0)
				return -1;
		} else if (f->type != VMON_TYPE_str_array) {
			memcpy(d, s, f->size);
		}
	}
	/* vectors last: a split points into the text just copied */
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		const vmon_field_t *text = log_split_text(desc, f);
		char ***d = (char ***)((char *)dst + f->offset);
		char *const *s;

		if (f->type != VMON_TYPE_str_array)
			continue;
		s = *(char *const *const *)((const char *)src + f->offset);
		if (!s) {
			parse_free_vector(f, d);
		} else if (text) {
			/* the count is the field before the vector (vmon.h); it was copied above and stays */
			uint64_t count = log_field_get(&desc->fields[f->sym - 1], dst);

			if (parse_split_strings(text, &desc->fields[f->sym - 1], f, dst, NULL, NULL, false) < 0)
				return -1;
			parse_set_ull(&desc->fields[f->sym - 1], dst, count, NULL, false);
		} else {
			char **v = strv_dup(s);

			if (!v)
				return -1;
			free(*d);
			*d = v;
		}
	}
	if (dc && sc)
		memcpy(dc, sc, bits);
	if (dp && sp)
		memcpy(dp, sp, bits);
	if (kind == LOG_SYS && id == VMON_STORE_SYS_STAT) {
		const vmon_sys_stat_t *a = src;
		vmon_sys_stat_t *b = dst;

		if (b->cpus_nr != a->cpus_nr) {
			vmon_sys_cpu_t *cpus = a->cpus_nr ? realloc(b->cpus, sizeof(*cpus) * (size_t)a->cpus_nr) : NULL;

			if (a->cpus_nr && !cpus)
				return -1;
			if (!a->cpus_nr)
				free(b->cpus);
			b->cpus = cpus;
			b->cpus_nr = a->cpus_nr;
		}
		if (a->cpus_nr)
			memcpy(b->cpus, a->cpus, sizeof(*a->cpus) * (size_t)a->cpus_nr);
	}
	return 0;
}
