/*
 * parse.c: the parsers, driven by the field tables generated from defs/.
 *
 * A store's rows say where each value is: field n of a one-line file
 * (VMON_SOURCE_POS) or value n of a keyed line (VMON_SOURCE_KEY).  So one
 * positional parser and one key parser serve every store, and adding a
 * field the kernel prints is one row in a .def file.
 *
 * Nothing here trusts the input: numbers are checked digit by digit (an
 * overflowing or missing number is an error, not a zero), keys are matched
 * whole, and a line that is cut short leaves the fields it lacks absent.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "util/intern.h"

bool parse_ull(const char **p, const char *end, unsigned long long *value)
{
	const char *s = *p;
	unsigned long long v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		/* the overflow checks cost a flag test, where a division per digit showed in profiles */
		if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, (unsigned)(*s - '0'), &v))
			return false;
	}
	*p = s;
	*value = v;
	return true;
}

bool parse_ll(const char **p, const char *end, long long *value)
{
	const char *s = *p;
	unsigned long long v;
	bool neg = false;

	if (s < end && *s == '-') {
		neg = true;
		s++;
	}
	if (!parse_ull(&s, end, &v))
		return false;
	if (neg ? v > (unsigned long long)LLONG_MAX + 1 : v > (unsigned long long)LLONG_MAX)
		return false;
	*value = neg ? (long long)(0 - v) : (long long)v;
	*p = s;
	return true;
}

/*
 * /proc/PID/stat: "pid (comm) state ppid ...".  comm is whatever the task
 * named itself, parentheses and spaces included, so it ends at the last ')'.
 * Returns where field 3 starts, or NULL for a line without "(...) ".
 */
const char *parse_stat_fields(const char *line, size_t len, const char **comm, size_t *comm_len)
{
	const char *open = memchr(line, '(', len), *close = NULL;

	if (!open)
		return NULL;
	for (const char *p = line + len; p > open; p--) {
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	}
	if (!close || close + 2 > line + len || close[1] != ' ')
		return NULL;
	if (comm) {
		*comm = open + 1;
		*comm_len = (size_t)(close - open - 1);
	}
	return close + 2;
}

/*
 * The few fields of a stat line the tree needs, for every reader of one (the
 * probe, the feed, a pidfd's check): comm, state (3), ppid (4), num_threads
 * (20) and start (22).  The others are only stepped over, so that a bad
 * value in one of them is an error on that field (the PROC_STAT sampler
 * parses them all, parse_stat_rest()), not on the whole task.  A line cut
 * short is trusted up to its last whole word only.  0, or -1 with EPROTO.
 */
int parse_stat_ident(const char *line, size_t len, stat_ident_t *id)
{
	const char *end = line + parse_complete_len(line, len);
	const char *p = parse_stat_fields(line, (size_t)(end - line), &id->comm, &id->comm_len);

	if (!p || p >= end) {
		errno = EPROTO;
		return -1;
	}
	id->state = *p;
	for (int field = 4; field <= 22; field++) {
		unsigned long long value;

		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
		if (field != 4 && field != 20 && field != 22)
			continue;
		if (!parse_ull(&p, end, &value) || (p < end && *p != ' ' && *p != '\n')) {
			errno = EPROTO;
			return -1;
		}
		if (field == 4)
			id->ppid = (int)value;
		else if (field == 20)
			id->num_threads = (int)value;
		else
			id->start = value;
	}
	return 0;
}

static void mark_changed(const vmon_field_t *f, char *changed)
{
	if (changed)
		BITSET(changed, f->sym);
}

/* copy size bytes of value into the member; did it differ? */
static int set_bytes(char *member, const void *value, size_t size)
{
	int diff = memcmp(member, value, size) != 0;

	memcpy(member, value, size);
	return diff;
}

/* store a number held in an unsigned long long, typed as the field says */
int parse_set_ull(const vmon_field_t *f, void *store, unsigned long long value, char *changed, bool first)
{
	char *m = (char *)store + f->offset;
	int diff;

	switch (f->type) {
	case VMON_TYPE_char:		{ char v = (char)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_int:		{ int v = (int)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_uint:		{ unsigned int v = (unsigned int)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_long:		{ long v = (long)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_ulong:		{ unsigned long v = (unsigned long)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_longlong:	{ long long v = (long long)value; diff = set_bytes(m, &v, sizeof(v)); break; }
	case VMON_TYPE_ulonglong:	diff = set_bytes(m, &value, sizeof(value)); break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (diff || first)
		mark_changed(f, changed);
	return diff;
}

/*
 * The numbers of a record into a store, as parse_set_ull() stores each
 * (the value converted to the member's size: the same bits as its type's
 * conversion, whatever the byte order), and present: the number of members
 * that changed, or -1 (EINVAL) for a size no integer has (the defs tables
 * let only integer members into a table: VMON_TASK_INT_, _begin.def).  The
 * task iterator's every record that changed, up to 72 numbers (70 for
 * PROC_STAT|PROC_VM|PROC_IO): the member's place and size come from the
 * table, in a few cache lines, where parse_set_ull() reads each field's
 * descriptor and jumps on its type (in a profile of a pass where every
 * process ran, the jump and the descriptor took most of that function's
 * samples).
 */
int parse_copy_numbers(const parse_copy_t *table, size_t nr, const void *record, void *store, char *changed,
		       char *present, bool first)
{
	int changes = 0;

	for (size_t i = 0; i < nr; i++) {
		const parse_copy_t *c = &table[i];
		char *m = (char *)store + c->to;
		unsigned long long x;
		int diff;

		memcpy(&x, (const char *)record + c->from, sizeof(x));
		if (c->size == sizeof(x)) {
			diff = set_bytes(m, &x, sizeof(x));
		} else if (c->size == sizeof(uint32_t)) {
			uint32_t v = (uint32_t)x;

			diff = set_bytes(m, &v, sizeof(v));
		} else if (c->size == sizeof(unsigned char)) {
			unsigned char v = (unsigned char)x;

			diff = set_bytes(m, &v, sizeof(v));
		} else {
			errno = EINVAL;
			return -1;
		}
		if (diff || first)
			BITSET(changed, c->sym);
		BITSET(present, c->sym);
		changes += diff;
	}
	return changes;
}

/* parse the number [text, end) as the field's type and store it */
static int set_number(const vmon_field_t *f, void *store, const char *text, const char *end, char *changed,
		      bool first)
{
	const char *p = text;
	unsigned long long u;
	long long s;

	/*
	 * text is one whole word: a value with anything after its digits
	 * ("12x", "0x10") is malformed, not the number its prefix spells.
	 */
	switch (f->type) {
	case VMON_TYPE_char:
		if (end - p != 1 || !*p || *p == ' ' || *p == '\n')
			break;
		return parse_set_ull(f, store, (unsigned char)*p, changed, first);
	case VMON_TYPE_int:
	case VMON_TYPE_long:
	case VMON_TYPE_longlong:
		if (!parse_ll(&p, end, &s) || p != end)
			break;
		if ((f->type == VMON_TYPE_int && (s < INT_MIN || s > INT_MAX)) ||
		    (f->type == VMON_TYPE_long && (s < LONG_MIN || s > LONG_MAX)))
			break;
		return parse_set_ull(f, store, (unsigned long long)s, changed, first);
	case VMON_TYPE_uint:
	case VMON_TYPE_ulong:
	case VMON_TYPE_ulonglong:
		if (!parse_ull(&p, end, &u) || p != end)
			break;
		if (f->type == VMON_TYPE_uint && u > UINT_MAX)
			break;
		return parse_set_ull(f, store, u, changed, first);
	default:
		break;
	}
	errno = EPROTO;
	return -1;
}

/* does the array hold a shared copy (util/intern.h) rather than a buffer of its own? */
static bool is_shared(const vmon_char_array_t *a)
{
	return a->array && a->alloc_len == 0;
}

void parse_free_string(vmon_char_array_t *a)
{
	if (is_shared(a))
		vintern_put(a->array);
	else
		free(a->array);
	memset(a, 0, sizeof(*a));
}

void parse_free_vector(const vmon_field_t *f, char ***vp)
{
	/* a shared one is its text's (parse_split_strings()) */
	if (!(f->flags & VMON_FIELD_SHARED))
		free(*vp);
	*vp = NULL;
}

/* the text in a buffer of the array's own, grown as needed */
static int copy_string(vmon_char_array_t *a, const char *text, size_t len)
{
	if (a->alloc_len < len + 1 || !a->array) {
		size_t alloc = len + 1 < 16 ? 16 : len + 1;
		char *array = realloc(a->array, alloc);

		if (!array)
			return -1;
		a->array = array;
		a->alloc_len = alloc;
	}
	memcpy(a->array, text, len);
	a->array[len] = '\0';
	a->len = len;
	return 0;
}

/* the text as the shared copy of its bytes, the one held before given back */
static int share_string(vmon_char_array_t *a, const char *text, size_t len)
{
	/* taken before the old is put: text may be in it */
	const char *copy = vintern_get(text, len);

	if (!copy)
		return -1;
	parse_free_string(a);
	a->array = (char *)copy;
	a->len = len;
	return 0;
}

/*
 * Store len bytes of text in a vmon_char_array_t field, always
 * NUL-terminated: the shared copy for a VMON_FIELD_SHARED field, a buffer
 * of its own for the others.  Every writer of a char_array comes here (or
 * to parse_clear(), parse_free_string()), so that no shared copy is ever
 * written, grown or freed.
 */
int parse_set_string(const vmon_field_t *f, void *store, const char *text, size_t len, char *changed, bool first)
{
	vmon_char_array_t *a = (vmon_char_array_t *)((char *)store + f->offset);
	int r;

	if (f->type != VMON_TYPE_char_array) {
		errno = EINVAL;
		return -1;
	}
	if (a->array && a->len == len && memcmp(a->array, text, len) == 0) {
		if (first)
			mark_changed(f, changed);
		return 0;
	}
	if (f->flags & VMON_FIELD_SHARED) {
		r = share_string(a, text, len);
	} else {
		if (is_shared(a))
			parse_free_string(a);
		r = copy_string(a, text, len);
	}
	if (r < 0)
		return -1;
	mark_changed(f, changed);
	return 1;
}

/*
 * A writer's value given to a field (r: what parse_set_ull() or
 * parse_set_string() returned): the field is present from now on, and a
 * field that was absent changed, whatever the value (an absent field reads
 * 0 or "", which the value may equal).  r, or 1 where it was absent.
 */
int parse_given(const vmon_field_t *f, int r, char *changed, char *present)
{
	if (r < 0 || BITTEST(present, f->sym))
		return r;
	BITSET(present, f->sym);
	mark_changed(f, changed);
	return 1;
}

/* the kernel no longer prints this field: zero it and clear its present bit */
int parse_clear(const vmon_field_t *f, void *store, char *changed, char *present)
{
	int diff = 0;

	if (present && BITTEST(present, f->sym)) {
		BITCLEAR(present, f->sym);
		diff = 1;
	}
	if (f->type == VMON_TYPE_char_array) {
		vmon_char_array_t *a = (vmon_char_array_t *)((char *)store + f->offset);

		/* an absent string is still "", never NULL: clients print array as it is */
		if (!a->array) {
			parse_set_string(f, store, "", 0, NULL, false);
			return diff;
		}
		if (a->len) {
			/* emptied in place when the buffer is its own; a shared one becomes the shared "" */
			if (is_shared(a)) {
				/* out of memory, it keeps its old value, absent (as a NULL would be worse) */
				parse_set_string(f, store, "", 0, NULL, false);
			} else {
				a->len = 0;
				a->array[0] = '\0';
			}
			diff = 1;
		}
	} else if (f->type != VMON_TYPE_str_array) {
		diff |= parse_set_ull(f, store, 0, NULL, false) > 0;
	}
	if (diff)
		mark_changed(f, changed);
	return diff;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/*
 * How much of text can be trusted.  The kernel ends every line of the files
 * we parse with a newline, so text that does not end with one was cut short
 * (a fixture, a short read): its last word may be a prefix of the real one
 * ("12" of "1234"), so it is trusted only up to that word.
 */
size_t parse_complete_len(const char *text, size_t len)
{
	if (len == 0 || text[len - 1] == '\n')
		return len;
	while (len > 0 && !is_space(text[len - 1]))
		len--;
	return len;
}

/* the n-th (1-based) whitespace-separated word of [p, end), or NULL */
static const char *nth_word(const char *p, const char *end, int n)
{
	while (p < end && is_space(*p))
		p++;
	for (int i = 1; i < n && p < end; i++) {
		while (p < end && !is_space(*p))
			p++;
		while (p < end && is_space(*p))
			p++;
	}
	return p < end ? p : NULL;
}

/*
 * Parse the word at p as the field's number, in place (a copy and a strlen()
 * per value showed in profiles).  A word too long for any number we store
 * (the longest, 2^64 - 1, has 20 digits; 32 bytes leave room for leading
 * zeros) is malformed, rather than parsed.
 */
static int set_word(const vmon_field_t *f, void *store, const char *p, const char *end, char *changed, bool first)
{
	const char *e = p;

	while (e < end && !is_space(*e))
		e++;
	if (e - p >= 32) {
		errno = EPROTO;
		return -1;
	}
	return set_number(f, store, p, e, changed, first);
}

/* is a row's file the one being parsed?  (the first byte settles most: stat, statm, status, io...) */
static bool same_file(const char *a, const char *b)
{
	return a == b || (a[0] == b[0] && strcmp(a, b) == 0);
}

/* is a row's key the klen bytes at line? */
static bool same_key(const char *key, const char *line, size_t klen)
{
	return key[0] == line[0] && strncmp(key, line, klen) == 0 && key[klen] == '\0';
}

/*
 * Fill a store's POS rows for `file` from text, whose first word is field
 * number first_n.  Rows of a file are listed in increasing field order, so
 * the text is walked once.  A field the line lacks (an older kernel, a
 * truncated read) is cleared, not left stale.
 */
static int parse_pos(const vmon_field_t *fields, int fields_nr, const char *file, int first_n,
		     const char *text, size_t len, void *store, char *changed, char *present, bool first)
{
	size_t whole = parse_complete_len(text, len);
	const char *p = text, *end = text + whole;
	int n = first_n, changes = 0, rows = 0, found = 0;
	/* a line cut short is an error, though the fields before the cut are kept */
	int errors = whole < len;

	while (p < end && is_space(*p))
		p++;
	for (int i = 0; i < fields_nr; i++) {
		const vmon_field_t *f = &fields[i];
		int r;

		if (f->source != VMON_SOURCE_POS || !same_file(f->file, file) || f->n < first_n)
			continue;
		rows++;
		if (p) {
			p = nth_word(p, end, f->n - n + 1);
			n = f->n;
		}
		if (!p) {
			changes += parse_clear(f, store, changed, present);
			continue;
		}
		r = set_word(f, store, p, end, changed, first);
		if (r < 0) {
			errors++;
			changes += parse_clear(f, store, changed, present);
			continue;
		}
		if (present)
			BITSET(present, f->sym);
		changes += r;
		found++;
	}
	/* fewer fields is an older kernel; none at all is no such line */
	if (errors || (rows && !found)) {
		errno = EPROTO;
		return -1;
	}
	return changes;
}

/*
 * Fill a store's KEY rows for `file` from "Key: v1 v2...\n" lines.  The
 * kernel prints keys in the order our tables list them, so the next row is
 * tried first and a search happens only for the lines we do not want.  A
 * row whose key never shows up is cleared (vmon_sys_vm_t on an older kernel,
 * the memory lines of a kernel thread's status).
 */
static int parse_keys(const vmon_field_t *fields, int fields_nr, const char *file,
		      const char *text, size_t len, void *store, char *changed, char *present, bool first)
{
	size_t whole = parse_complete_len(text, len);
	const char *line = text, *end = text + whole;
	/* a file cut short, or empty, is an error (its whole lines are still read) */
	int changes = 0, errors = whole < len || len == 0, cursor = 0;
	unsigned char found[(256 + 7) / 8] = { 0 };

	if (fields_nr > 256) {
		errno = E2BIG;
		return -1;
	}
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line)), *k = line, *v;
		size_t klen;
		int i, tries;

		if (!eol)
			eol = end;
		while (k < eol && *k != ':' && !is_space(*k))
			k++;
		klen = (size_t)(k - line);
		v = k < eol && *k == ':' ? k + 1 : k;

		/* from the cursor round to it again: usually the first try hits */
		for (i = cursor, tries = 0; tries < fields_nr; tries++, i = (i + 1) % fields_nr) {
			const vmon_field_t *f = &fields[i];

			if (f->source == VMON_SOURCE_KEY && same_key(f->key, line, klen) && same_file(f->file, file))
				break;
		}
		if (tries < fields_nr && klen) {
			/* every row for this key: a line can give several values */
			for (; i < fields_nr && fields[i].source == VMON_SOURCE_KEY &&
			       same_key(fields[i].key, line, klen); i++) {
				const vmon_field_t *f = &fields[i];
				const char *w = nth_word(v, eol, f->n);
				int r;

				if (!w) {
					/* the key without its value: malformed, not absent */
					errors++;
					changes += parse_clear(f, store, changed, present);
					continue;
				}
				r = set_word(f, store, w, eol, changed, first);
				if (r < 0) {
					errors++;
					changes += parse_clear(f, store, changed, present);
					continue;
				}
				found[i / 8] |= (unsigned char)(1u << (i % 8));
				if (present)
					BITSET(present, f->sym);
				changes += r;
			}
			cursor = i % fields_nr;
		}
		line = eol + 1;
	}
	for (int i = 0; i < fields_nr; i++) {
		const vmon_field_t *f = &fields[i];

		if (f->source == VMON_SOURCE_KEY && !(found[i / 8] & (1u << (i % 8))) && same_file(f->file, file))
			changes += parse_clear(f, store, changed, present);
	}
	if (errors) {
		errno = EPROTO;
		return -1;
	}
	return changes;
}

/*
 * Fill the rows of `fields` that come from `file` by `source` (POS: text
 * starts at field 1; use parse_stat_fields() and parse the rest yourself for
 * stat lines).  Returns the number of fields that changed, or -1 with errno
 * EPROTO when some value was malformed (the others are still stored).
 */
int parse_store(const vmon_field_t *fields, int fields_nr, vmon_source_t source, const char *file,
		const char *text, size_t len, void *store, char *changed, char *present, bool first)
{
	switch (source) {
	case VMON_SOURCE_POS:
		return parse_pos(fields, fields_nr, file, 1, text, len, store, changed, present, first);
	case VMON_SOURCE_KEY:
		return parse_keys(fields, fields_nr, file, text, len, store, changed, present, first);
	default:
		errno = EINVAL;
		return -1;
	}
}

/* the POS rows of a stat line from field 3 on, where parse_stat_fields() left it (proc_stat.c) */
int parse_stat_rest(const vmon_field_t *fields, int fields_nr, const char *rest, size_t len,
		    void *store, char *changed, char *present, bool first)
{
	return parse_pos(fields, fields_nr, "stat", 3, rest, len, store, changed, present, first);
}

/* how many NUL-terminated strings [p, end) holds: the last may lack its NUL (a process that rewrote its arguments) */
static int count_strings(const char *p, const char *end)
{
	int n = 0;

	for (const char *q = p; q < end; q++) {
		if (*q == '\0' || q + 1 == end)
			n++;
	}
	return n;
}

/* v[0..n-1] pointed at the strings of [p, end), v[n] NULL */
static void fill_vector(char **v, int n, const char *p, const char *end)
{
	int i = 0;

	for (const char *q = p; q < end && i < n; i++) {
		v[i] = (char *)q;
		q += strnlen(q, (size_t)(end - q)) + 1;
	}
	v[n] = NULL;
}

/* the vector of a shared text of n strings: built by its first holder, the same for all (freed with the text) */
static char **shared_vector(const vmon_char_array_t *a, int n)
{
	/* no strings: one empty vector for every empty or absent text */
	static char *no_strings[1];
	char **v;

	if (n == 0)
		return no_strings;
	if (!is_shared(a)) {
		errno = EINVAL;
		return NULL;
	}
	v = vintern_attachment(a->array);
	if (v)
		return v;
	v = malloc(sizeof(*v) * (size_t)(n + 1));
	if (!v)
		return NULL;
	fill_vector(v, n, a->array, a->array + a->len);
	return vintern_attach(a->array, v);
}

/*
 * Split a char_array field of NUL-terminated strings (cmdline, environ) into
 * a str_array field of pointers into it, NULL-terminated, and store their
 * number in the count field.  The last string may lack its NUL (a process
 * that rewrote its arguments): it still counts.  Call it whenever the text
 * changed; the pointers are only valid until the text changes again.  A
 * VMON_FIELD_SHARED vector is its shared text's, built once for all.
 */
int parse_split_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present, bool first)
{
	const vmon_char_array_t *a = (const vmon_char_array_t *)((const char *)store + text->offset);
	char ***vp = (char ***)((char *)store + vec->offset);
	const char *p = a->array, *end = p ? p + a->len : p;
	int n = count_strings(p, end);
	char **v;

	if (vec->flags & VMON_FIELD_SHARED) {
		v = shared_vector(a, n);
		if (!v) {
			/*
			 * The old vector may have gone with the old text: no
			 * pointer into it stays, and no count that would be
			 * read through it (the next change of the text tries again)
			 */
			*vp = NULL;
			parse_set_ull(count, store, 0, changed, first);
			if (present) {
				BITCLEAR(present, vec->sym);
				BITCLEAR(present, count->sym);
			}
			return -1;
		}
	} else {
		v = realloc(*vp, sizeof(*v) * (size_t)(n + 1));
		if (!v)
			return -1;
		fill_vector(v, n, p, end);
	}
	*vp = v;
	mark_changed(vec, changed);
	if (present) {
		BITSET(present, vec->sym);
		BITSET(present, count->sym);
	}
	return parse_set_ull(count, store, (unsigned long long)n, changed, first);
}

/*
 * The text of a split field (cmdline, environ) could not be read: it is
 * absent, and so are its count and vector, which hold no string rather
 * than pointers into what the text was.  Their changed bits are set only
 * when that is a change.  Returns whether anything changed, or -1.
 */
int parse_clear_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present)
{
	char **v = *(char ***)((char *)store + vec->offset);
	/* asked before the text goes: a shared vector goes with it */
	bool not_empty = !v || v[0];
	int changes = parse_clear(text, store, changed, present);

	if (changes || not_empty) {
		if (parse_split_strings(text, count, vec, store, changed, NULL, false) < 0)
			return -1;
		changes = 1;
	}
	BITCLEAR(present, count->sym);
	BITCLEAR(present, vec->sym);
	return changes;
}
