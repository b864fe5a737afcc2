/*
 * log.h: what the log writer, reader and replay share (log_*.c): the wire
 * constants of vmon_log(5), byte codecs, the schema (the field tables as a
 * log has them, mapped onto this library's), and store helpers.
 */
#ifndef VMON_LOG_INTERNAL_H
#define VMON_LOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "util/hash.h"
#include "vmon_log.h"

/* the preamble: 8 bytes of magic, then the version as two little-endian u16 */
#define LOG_MAGIC		"VMON-LOG"
#define LOG_MAGIC_LEN		8
#define LOG_PREAMBLE_LEN	12

/*
 * a record: kind (1 byte), body length (varint), a CRC-8 of those (1 byte),
 * body, a CRC-32 of all that (4 bytes, little-endian).  The CRC-8 catches a
 * damaged length before the reader waits for bytes that never come.
 */
#define LOG_HEAD_MAX		12	/* kind, length, CRC-8 */
#define LOG_CRC_LEN		4
#define LOG_RECORD_MAX		(256u << 20)	/* bytes of body a reader accepts */

/* header limits: a reader allocates by these counts only after checking them */
#define LOG_STORES_MAX		32	/* of each kind (wants masks are bits of a long) */
#define LOG_FIELDS_MAX		1024	/* per store */
#define LOG_TEXT_MAX		4096	/* a name, label or description */

/* field types on the wire (vmon_type_t is this library's, and may be renumbered) */
enum {
	LOG_T_CHAR = 1,
	LOG_T_INT,
	LOG_T_UINT,
	LOG_T_LONG,
	LOG_T_ULONG,
	LOG_T_LONGLONG,
	LOG_T_ULONGLONG,
	LOG_T_CHAR_ARRAY,
	LOG_T_STR_ARRAY,
	LOG_T_MAX = LOG_T_STR_ARRAY
};

/* header: flags of a store */
#define LOG_STORE_CPUS		0x1	/* a per-CPU section follows its fields in samples */
/* header: flags of a field */
#define LOG_FIELD_PERCPU	0x1	/* also a column of each CPU's line */
#define LOG_FIELD_SPLIT		0x2	/* a str_array never written: the reader splits the text field it names */

/* sample: entry flags (one byte) */
#define LOG_E_THREAD		0x01
#define LOG_E_NEW		0x02
#define LOG_E_STALE		0x04
#define LOG_E_FRESH		0x08	/* no previous state: deltas against nothing */
#define LOG_E_PARENT		0x10	/* a parent reference follows */
#define LOG_E_WANTS		0x20	/* wants and store masks follow */
#define LOG_E_ERRORS		0x40	/* changed errors follow */
#define LOG_E_DATA		0x80	/* store deltas follow */

/* a field change in a store delta: (gap << 2) | these */
#define LOG_D_VALUE		0x1	/* a value follows */
#define LOG_D_PRESENT		0x2	/* the present bit flips */

/*
 * An event's kind and its bits of what is known go on the wire as
 * vmon_event_t has them, which must stay the numbers vmon_log(5) gives.
 */
_Static_assert(VMON_EVENT_FORK == 0 && VMON_EVENT_EXEC == 1 && VMON_EVENT_EXIT == 2,
	       "vmon_log(5) numbers the event kinds 0 fork, 1 exec, 2 exit");
_Static_assert(VMON_EVENT_HAS_PPID == 0x1 && VMON_EVENT_HAS_START == 0x2 && VMON_EVENT_HAS_START_APPROX == 0x4 &&
	       VMON_EVENT_HAS_UID == 0x8 && VMON_EVENT_HAS_COMM == 0x10 && VMON_EVENT_HAS_FILENAME == 0x20 &&
	       VMON_EVENT_HAS_ARGS == 0x40 && VMON_EVENT_HAS_EXIT_STATUS == 0x80 && VMON_EVENT_HAS_TIMES == 0x100 &&
	       VMON_EVENT_HAS_MAXRSS == 0x200 && VMON_EVENT_HAS_FAULTS == 0x400,
	       "vmon_log(5) numbers the bits of what an event has");

/* --- bytes out --- */
typedef struct log_out {
	uint8_t	*data;
	size_t	len;
	size_t	cap;
	bool	failed;		/* an allocation failed: the record is lost, errno was ENOMEM */
} log_out_t;

void log_out_reserve(log_out_t *o, size_t more);
void log_put_u8(log_out_t *o, uint8_t v);
void log_put_varint(log_out_t *o, uint64_t v);
void log_put_svarint(log_out_t *o, int64_t v);
void log_put_bytes(log_out_t *o, const void *p, size_t len);
void log_put_string(log_out_t *o, const char *s);
void log_out_free(log_out_t *o);

/* --- bytes in: every getter fails (and the cursor stays failed) on a short or malformed body --- */
typedef struct log_in {
	const uint8_t	*p;
	const uint8_t	*end;
	bool		bad;
} log_in_t;

bool log_get_u8(log_in_t *in, uint8_t *v);
bool log_get_varint(log_in_t *in, uint64_t *v);
bool log_get_svarint(log_in_t *in, int64_t *v);
bool log_get_bytes(log_in_t *in, size_t len, const uint8_t **p);
/* a varint that must fit in max; a count of things that each take at least one byte must also fit what is left */
bool log_get_count(log_in_t *in, uint64_t max, uint64_t *v);

uint32_t log_crc32(uint32_t crc, const void *data, size_t len);
uint8_t log_crc8(const void *data, size_t len);
size_t log_varint_len(uint64_t v);

/* --- the schema --- */
typedef struct log_field {
	uint8_t			wire;		/* LOG_T_* */
	uint8_t			flags;		/* LOG_FIELD_* */
	int			split_text;	/* LOG_FIELD_SPLIT: the log index of the text */
	int			split_count;	/* ... and of the count */
	int			num;		/* index among the store's numbers, -1 for text */
	int			text;		/* index among its texts (char_array, and str_array not split), else -1 */
	int			cpu;		/* LOG_FIELD_PERCPU: index among the per-CPU columns, else -1 */
	const vmon_field_t	*cf;		/* this library's field it maps onto, NULL if none */
	size_t			cpu_offset;	/* LOG_FIELD_PERCPU and mapped: offset in vmon_sys_cpu_t */
} log_field_t;

typedef struct log_store {
	int			id;		/* this library's store, -1 if none */
	const vmon_store_desc_t	*desc;		/* its description, or NULL */
	uint8_t			flags;		/* LOG_STORE_* */
	int			fields_nr;
	log_field_t		*f;
	vmon_log_field_t	*pub;		/* what vmon_log_header() shows */
	int			nums_nr;	/* numeric fields (char included) */
	int			cpu_nr;		/* per-CPU columns */
	int			texts_nr;	/* char_array fields, and str_array fields not split */
} log_store_t;

enum { LOG_SYS, LOG_PROC, LOG_KINDS };

typedef struct log_schema {
	log_store_t		stores[LOG_KINDS][LOG_STORES_MAX];
	vmon_log_store_t	pub[LOG_KINDS][LOG_STORES_MAX];
	int			nr[LOG_KINDS];
	int			log_of[LOG_KINDS][LOG_STORES_MAX];	/* this library's store id -> log index, -1 */
	int			unknown, missing;
} log_schema_t;

const vmon_store_desc_t *log_descs(int kind);
int log_descs_nr(int kind);
bool log_store_recordable(const vmon_store_desc_t *desc);
uint8_t log_wire_type(vmon_type_t type);
bool log_wire_numeric(uint8_t wire);
/* the compiled field's per-CPU offset in vmon_sys_cpu_t, or -1 when it has no per-CPU column */
long log_cpu_offset(const vmon_field_t *f);
/* the char_array field a str_array splits (named by its key), and its count (the field before it) */
const vmon_field_t *log_split_text(const vmon_store_desc_t *desc, const vmon_field_t *f);
/* fill the slots, maps and counts once the stores' fields are known; -1 on a table that makes no sense */
int log_schema_finish(log_schema_t *s);
void log_schema_free(log_schema_t *s);

/*
 * --- bases: what writer and reader keep of each node's last entry ---
 * A base is found by pid and by whether it is a thread, among those made
 * by an earlier sample (vmon_log(5), "Deltas").  The writer's and the
 * reader's bases embed this as their first member.
 */
typedef struct log_base {
	int			pid;
	bool			thread;
	bool			stale;		/* listed as stale: dropped after its sample */
	unsigned long long	created;	/* the sample that made it */
	unsigned long long	seen;		/* the last sample that listed it */
	unsigned long long	id;		/* never reused, unlike the memory of a base */
	unsigned long long	parent;		/* the id of its parent's base, 0 at the top */
} log_base_t;

typedef struct log_bases {
	vhash_t			index;		/* (pid, thread) -> its bases (a pid's new life beside its last) */
	unsigned long long	ids;
} log_bases_t;

int log_bases_init(log_bases_t *m);
/* the base made before sample seq for this pid, or NULL */
log_base_t *log_bases_find(const log_bases_t *m, int pid, bool thread, unsigned long long seq);
/* a new base of `size` bytes (a struct that starts with a log_base_t), made by sample seq; NULL ENOMEM */
void *log_bases_new(log_bases_t *m, size_t size, int pid, bool thread, unsigned long long seq);
/* drop the bases sample seq did not list or listed as stale (all of them with all), each through drop */
void log_bases_sweep(log_bases_t *m, unsigned long long seq, bool all, void (*drop)(void *ctx, log_base_t *b),
		     void *ctx);
void log_bases_fini(log_bases_t *m, void (*drop)(void *ctx, log_base_t *b), void *ctx);

/* --- values of this library's fields --- */
uint64_t log_field_get(const vmon_field_t *f, const void *store);
/* a new store as its sampler would make it (held fds -1), zeroed */
void *log_store_new(int kind, int id);
/* free what log_store_new() made and everything its fields point to */
void log_store_free(int kind, int id, void *store);
/* copy the fields, changed[], present[] (and the CPU lines) of src into dst, as dst's own memory; -1 ENOMEM */
int log_store_copy(int kind, int id, void *dst, const void *src);
/* the store's changed[] and present[] bitmaps, or NULL */
char *log_store_changed(int kind, int id, void *store);
char *log_store_present(int kind, int id, void *store);

#endif
