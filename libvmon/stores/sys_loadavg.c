/*
 * sys_loadavg.c: the SYS_LOADAVG want, /proc/loadavg (defs/sys_loadavg.def).
 *
 * The three averages are fixed-point numbers with two decimals ("0.27"):
 * they are kept in hundredths, which is exactly what the kernel prints, so
 * no floating point enters a store.  "1/123" gives the runnable and total
 * task counts; the last field, the last pid given out, is an ordinary
 * positional row.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

#define FIELD(_sym) (&vmon_sys_store_descs[VMON_STORE_SYS_LOADAVG].fields[_sym])

/* "12.34" at *p: 1234 hundredths; one decimal ("0.5") is 50 */
static bool parse_hundredths(const char **p, const char *end, unsigned long long *value)
{
	unsigned long long whole, frac = 0;
	const char *start;

	if (!parse_ull(p, end, &whole) || *p >= end || **p != '.')
		return false;
	start = ++*p;
	if (!parse_ull(p, end, &frac) || *p - start > 2)
		return false;
	if (*p - start == 1)
		frac *= 10;
	if (whole > (~0ULL - frac) / 100)
		return false;
	*value = whole * 100 + frac;
	return true;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	++*p;
	return true;
}

int sys_loadavg_sample(vmon_t *vmon, void **store)
{
	const vmon_store_desc_t *desc = &vmon_sys_store_descs[VMON_STORE_SYS_LOADAVG];
	static const int loads[] = { VMON_SYS_LOADAVG_LOAD1, VMON_SYS_LOADAVG_LOAD5, VMON_SYS_LOADAVG_LOAD15 };
	buf_t *buf = &vmon->internal->buf;
	vmon_sys_loadavg_t *s = *store;
	unsigned long long v[5];
	const char *p, *end;
	bool first;
	int changes = 0, r;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->loadavg_fd = -1;
		*store = s;
	}
	first = !BITTEST(s->present, VMON_SYS_LOADAVG_LOAD1);
	memset(s->changed, 0, sizeof(s->changed));
	if (procfs_read_root(vmon, "loadavg", &s->loadavg_fd, buf) < 0)
		return -1;

	p = buf->data;
	end = p + buf->len;
	for (int i = 0; i < 3; i++) {
		if (!parse_hundredths(&p, end, &v[i]) || !expect(&p, end, ' '))
			goto malformed;
	}
	if (!parse_ull(&p, end, &v[3]) || !expect(&p, end, '/') || !parse_ull(&p, end, &v[4]) ||
	    !expect(&p, end, ' '))
		goto malformed;

	for (int i = 0; i < 3; i++) {
		changes += parse_set_ull(FIELD(loads[i]), s, v[i], s->changed, first);
		BITSET(s->present, loads[i]);
	}
	changes += parse_set_ull(FIELD(VMON_SYS_LOADAVG_RUNNABLE), s, v[3], s->changed, first);
	changes += parse_set_ull(FIELD(VMON_SYS_LOADAVG_TASKS), s, v[4], s->changed, first);
	BITSET(s->present, VMON_SYS_LOADAVG_RUNNABLE);
	BITSET(s->present, VMON_SYS_LOADAVG_TASKS);

	r = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_POS, "loadavg", buf->data, buf->len,
			s, s->changed, s->present, first);
	if (r < 0)
		return -1;
	changes += r;
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;

malformed:
	/* nothing half-parsed is kept: every value reads as missing */
	for (int i = 0; i < desc->fields_nr; i++)
		parse_clear(&desc->fields[i], s, s->changed, s->present);
	errno = EPROTO;
	return -1;
}

void sys_loadavg_free(vmon_t *vmon, vmon_sys_loadavg_t *s)
{
	if (!s)
		return;
	if (s->loadavg_fd >= 0)
		close(s->loadavg_fd);
	free(s);
}
