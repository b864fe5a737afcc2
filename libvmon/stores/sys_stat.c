/*
 * sys_stat.c: the SYS_STAT want, /proc/stat (defs/sys_stat.def).  The cpu
 * columns fill the store from the "cpu" line and store->cpus[N] from each
 * "cpuN" line; the keyed lines go through the generic key parser; boottime
 * comes from /proc/uptime so that a fixture root can pin it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

static const struct cpu_column {
	int		n;
	int		sym;
	vmon_type_t	type;
	size_t		offset;	/* in vmon_sys_cpu_t */
} cpu_columns[] = {
#define VMON_CPU_OFFSET_TABLE
#include "defs/sys_stat.def"
};

#define CPU_COLUMNS_NR ((int)(sizeof(cpu_columns) / sizeof(cpu_columns[0])))

/*
 * Parse the columns of one cpu line into a vmon_sys_cpu_t-shaped struct at
 * base.  present (the store's, for the "cpu" total line; NULL for a cpuN
 * line, whose struct has none) gets a bit for each column the line has: an
 * older kernel prints fewer, and those it lacks are zero and absent.
 */
static int parse_cpu_line(const char *p, const char *end, void *base, size_t offset_shift, char *changed,
			  char *present, bool first)
{
	const vmon_field_t *fields = vmon_sys_store_descs[VMON_STORE_SYS_STAT].fields;
	int changes = 0, n = 1, errors = 0;

	while (p < end && *p == ' ')
		p++;
	for (int i = 0; i < CPU_COLUMNS_NR; i++) {
		const struct cpu_column *c = &cpu_columns[i];
		vmon_field_t f = fields[c->sym];
		unsigned long long v = 0;

		/* cpu_columns[] are in column order: walk forward to column c->n */
		for (; n < c->n && p < end && *p != '\n'; n++) {
			while (p < end && *p != ' ' && *p != '\n')
				p++;
			while (p < end && *p == ' ')
				p++;
		}
		/* the same row, addressed in the per-CPU struct when offset_shift says so */
		f.offset = offset_shift ? c->offset : f.offset;
		if (n < c->n || p >= end || *p == '\n') {
			changes += parse_clear(&f, base, changed, present);
			continue;
		}
		/* a whole number, or the column is malformed: absent, not its old value */
		if (!parse_ull(&p, end, &v) || (p < end && *p != ' ' && *p != '\n')) {
			errors++;
			changes += parse_clear(&f, base, changed, present);
			continue;
		}
		changes += parse_set_ull(&f, base, v, changed, first);
		if (present)
			BITSET(present, c->sym);
	}
	return errors ? -1 : changes;
}

static int grow_cpus(vmon_sys_stat_t *s, int nr)
{
	vmon_sys_cpu_t *cpus;

	if (nr <= s->cpus_nr)
		return 0;
	cpus = realloc(s->cpus, sizeof(*cpus) * (size_t)nr);
	if (!cpus)
		return -1;
	memset(cpus + s->cpus_nr, 0, sizeof(*cpus) * (size_t)(nr - s->cpus_nr));
	s->cpus = cpus;
	s->cpus_nr = nr;
	return 0;
}

static int sample_boottime(vmon_t *vmon, vmon_sys_stat_t *s, bool first)
{
	const vmon_field_t *f = &vmon_sys_store_descs[VMON_STORE_SYS_STAT].fields[VMON_SYS_STAT_BOOTTIME];
	buf_t *buf = &vmon->internal->buf;
	int fd = -1;
	unsigned long long sec, cs = 0;
	const char *p, *end;
	int r;

	/* uptime is not kept open: it is one small read per pass, not per process */
	r = procfs_read_root(vmon, "uptime", &fd, buf);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return -1;
	p = buf->data;
	end = p + buf->len;
	if (!parse_ull(&p, end, &sec))
		goto malformed;
	if (p < end && *p == '.') {
		const char *frac = ++p;

		if (!parse_ull(&p, end, &cs) || p - frac > 2)
			goto malformed;
		if (p - frac == 1)
			cs *= 10;
	}
	/* "seconds[.hundredths] idle": anything else after the number is not uptime */
	if (p < end && *p != ' ' && *p != '\n')
		goto malformed;
	BITSET(s->present, VMON_SYS_STAT_BOOTTIME);
	return parse_set_ull(f, s, sec * (unsigned long long)vmon->ticks_per_sec +
			     cs * (unsigned long long)vmon->ticks_per_sec / 100, s->changed, first);
malformed:
	errno = EPROTO;
	return -1;
}

int sys_stat_sample(vmon_t *vmon, void **store)
{
	const vmon_store_desc_t *desc = &vmon_sys_store_descs[VMON_STORE_SYS_STAT];
	buf_t *buf = &vmon->internal->buf;
	vmon_sys_stat_t *s = *store;
	const char *line, *end;
	bool first;
	int changes = 0, r, errors = 0;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->stat_fd = -1;
		*store = s;
	}
	first = !BITTEST(s->present, VMON_SYS_STAT_CPU_USER);
	memset(s->changed, 0, sizeof(s->changed));
	for (int i = 0; i < s->cpus_nr; i++) {
		memset(s->cpus[i].changed, 0, sizeof(s->cpus[i].changed));
		s->cpus[i].online = 0;
	}

	if (procfs_read_root(vmon, "stat", &s->stat_fd, buf) < 0)
		return -1;

	/* the cpu lines; the keyed lines are left to the key parser below */
	end = buf->data + buf->len;
	for (line = buf->data; line < end; ) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;
		if (eol - line > 4 && strncmp(line, "cpu ", 4) == 0) {
			r = parse_cpu_line(line + 4, eol, s, 0, s->changed, s->present, first);
			if (r < 0)
				errors++;
			else
				changes += r;
		} else if (eol - line > 3 && strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
			const char *p = line + 3;
			unsigned long long cpu;

			if (!parse_ull(&p, eol, &cpu) || cpu > 65535 || grow_cpus(s, (int)cpu + 1) < 0) {
				errors++;
			} else {
				vmon_sys_cpu_t *c = &s->cpus[cpu];
				bool cpu_first = !c->online && !c->user && !c->system && !c->idle;

				r = parse_cpu_line(p, eol, c, 1, c->changed, NULL, first || cpu_first);
				if (r < 0)
					errors++;
				else
					changes += r;
				c->online = 1;
			}
		}
		line = eol + 1;
	}

	r = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "stat", buf->data, buf->len,
			s, s->changed, s->present, first);
	if (r < 0)
		errors++;
	else
		changes += r;

	r = sample_boottime(vmon, s, first);
	if (r < 0)
		errors++;
	else
		changes += r;

	if (errors) {
		errno = EPROTO;
		return -1;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

void sys_stat_free(vmon_t *vmon, vmon_sys_stat_t *s)
{
	if (!s)
		return;
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	free(s->cpus);
	free(s);
}
