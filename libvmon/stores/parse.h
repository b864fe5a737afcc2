/*
 * parse.h: the table-driven parsers generated from defs/ (parse.c).
 */
#ifndef VMON_PARSE_H
#define VMON_PARSE_H

#include "core/instance.h"

size_t parse_complete_len(const char *text, size_t len);

/* a store's present bitmap of `bytes` with no bit set: nothing read into it yet (its samplers' first read) */
static inline bool parse_none_present(const char *present, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++) {
		if (present[i])
			return false;
	}
	return true;
}
const char *parse_stat_fields(const char *line, size_t len, const char **comm, size_t *comm_len);

/* what the tree needs of a /proc/PID/stat line (parse_stat_ident()) */
typedef struct stat_ident {
	const char		*comm;		/* into the line, without its parentheses, not terminated */
	size_t			comm_len;
	char			state;		/* a task being reaped: see stat_ident_reaped() */
	int			ppid;
	int			num_threads;
	unsigned long long	start;		/* in ticks since boot */
} stat_ident_t;

int parse_stat_ident(const char *line, size_t len, stat_ident_t *id);
/*
 * The line of a task being reaped, which is no longer the task's: state
 * 'X', or no thread.  The kernel writes the state first and the parent,
 * group, session and thread count under the task's signal lock, which a
 * reaped task no longer has: a task reaped while its line was written shows
 * the state it had ('R', 'S', 'Z'), with parent 0, group and session -1 and
 * 0 threads, where a live task has at least one.  The task is gone; its
 * pid may not be, for a moment, when another thread's exec took it (the
 * readers read such a line once more: procfs_read_ident(), procfs_source.c).
 */
static inline bool stat_ident_reaped(const stat_ident_t *id)
{
	return id->state == 'X' || id->num_threads == 0;
}
int parse_store(const vmon_field_t *fields, int fields_nr, vmon_source_t source, const char *file,
		const char *text, size_t len, void *store, char *changed, char *present, bool first);
int parse_stat_rest(const vmon_field_t *fields, int fields_nr, const char *rest, size_t len,
		    void *store, char *changed, char *present, bool first);
int parse_set_string(const vmon_field_t *f, void *store, const char *text, size_t len, char *changed, bool first);
/* a char_array's text given back (its buffer freed, or its hold on a shared copy dropped), the array zeroed */
void parse_free_string(vmon_char_array_t *a);
/* a str_array's vector freed, unless it is a shared text's (VMON_FIELD_SHARED); *vp is NULL after */
void parse_free_vector(const vmon_field_t *f, char ***vp);
int parse_set_ull(const vmon_field_t *f, void *store, unsigned long long value, char *changed, bool first);
/* present from now on, and changed if it was absent: after a writer's parse_set_ull() or parse_set_string() */
int parse_given(const vmon_field_t *f, int r, char *changed, char *present);

/*
 * A number of a source's record (an __u64 at `from`) and the store member
 * it goes to (`to`, of `size` bytes: an integer type), made from the defs
 * tables (VMON_TASK_COPY, _begin.def): the member's place and size known
 * when the table is built, where parse_set_ull() asks the field's type.
 * parse_copy_numbers()'s changed and present are the store's bitmaps, never
 * NULL.
 */
typedef struct parse_copy {
	int		sym;
	unsigned short	from;
	unsigned short	to;
	unsigned char	size;
} parse_copy_t;
int parse_copy_numbers(const parse_copy_t *table, size_t nr, const void *record, void *store, char *changed,
		       char *present, bool first);
int parse_clear(const vmon_field_t *f, void *store, char *changed, char *present);
int parse_clear_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present);
int parse_split_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present, bool first);
bool parse_ull(const char **p, const char *end, unsigned long long *value);
bool parse_ll(const char **p, const char *end, long long *value);

#endif
