/*
 * batch.c: vtop -b, refreshes written to stdout for a log, a script or a
 * fleet collector.  Every format is written over the column table, so every
 * column is in every format, and each is read back by its real parser in
 * the tests (json, csv, promtool, prometheus_client):
 *
 *   text         top -b's layout: a summary, then one line per process,
 *                text escaped for a terminal (vmon_escape())
 *   json         one object per refresh, on one line; numbers are numbers,
 *                a missing value null, strings the process's real text
 *   csv          RFC 4180: one header, then a row per process per refresh
 *   prometheus   the Prometheus text format 0.0.4, one exposition per
 *                refresh (a blank line after each)
 *   openmetrics  OpenMetrics 1.0, one exposition per refresh, each ending
 *                with "# EOF"
 *
 * The machine formats (all but text) carry text as it is: what
 * vmon_escape() made of it is turned back into the bytes, and a byte that
 * is not UTF-8 becomes U+FFFD (vt_text_real()).  The metrics are in base
 * units, converted with the unit each defs/ row declares.
 *
 * The first refresh is printed after two samples, so its CPU% is real.
 * --events prints one line per process event instead (vt_event_write()).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <langinfo.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vtop.h"
#include "batch/batch.h"
#include "data/columns.h"
#include "data/model.h"
#include "data/sampler.h"

/* a row's identity comes first in json and csv, by these names: the columns of the same name are not repeated */
static bool is_identity(int col)
{
	const char *name = vt_columns[col].name;

	return !strcmp(name, "pid") || !strcmp(name, "ppid") || !strcmp(name, "start");
}

static const char *row_status(const vt_row_t *row)
{
	return (row->flags & VT_ROW_EXITED) ? "exited" : (row->flags & VT_ROW_NEW) ? "new" : "running";
}

/* shown only as the ancestor of a match (-u in the tree): another user's, say, with nothing of its own to show */
static bool line_is_context(const vt_view_t *view, int line)
{
	return view->tree && (view->line_flags[line] & VT_LINE_CONTEXT);
}

static bool is_json_number(const char *s)
{
	char *end;
	double d;

	if (!*s)
		return false;
	d = strtod(s, &end);
	return !*end && isfinite(d) && s[0] != '+' && s[0] != '.' && !(s[0] == '0' && s[1] >= '0' && s[1] <= '9');
}

/*
 * What json, csv and the metrics write of a process beyond its identity:
 * the columns asked for, each followed by the one that goes with it
 * (exit_status by term_signal), none twice.
 */
struct plan {
	int			cols[2 * VT_MAX_COLUMNS];
	int			nr;
	const vt_column_t	*command;	/* COMMAND shows argv[0] whole or not (vt_view_command()) */
};

static void plan_add(struct plan *p, int col)
{
	for (int i = 0; i < p->nr; i++) {
		if (p->cols[i] == col)
			return;
	}
	p->cols[p->nr++] = col;
}

static void plan_make(struct plan *p, const vt_config_t *cfg)
{
	int command = vt_column_find("command");

	p->nr = 0;
	p->command = command >= 0 ? &vt_columns[command] : NULL;
	for (int i = 0; i < cfg->columns_nr; i++) {
		int c = cfg->columns[i];

		if (is_identity(c))
			continue;
		plan_add(p, c);
		if (vt_columns[c].with >= 0)
			plan_add(p, vt_columns[c].with);
	}
}

/*
 * The column's text for a program, whole: in buf, or when longer in *big
 * (which the caller frees); NULL when the row has no value.
 */
static const char *machine_text(const struct plan *p, const vt_column_t *col, const vt_view_t *view,
				const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, char **big)
{
	int len;

	*big = NULL;
	if (col == p->command)
		return vt_view_command(view, row);
	len = vt_column_format(col, row, snap, buf, size, true);
	if (len < 0)
		return NULL;
	if ((size_t)len >= size && (*big = malloc((size_t)len + 1)))
		vt_column_format(col, row, snap, *big, (size_t)len + 1, true);
	return *big ? *big : buf;
}

/* --- text --- */

static void uptime_text(char *buf, size_t size, double secs)
{
	unsigned long s = (unsigned long)secs, days = s / 86400;

	if (days)
		snprintf(buf, size, "%lu day%s, %lu:%02lu", days, days == 1 ? "" : "s", s / 3600 % 24, s / 60 % 60);
	else
		snprintf(buf, size, "%lu:%02lu", s / 3600, s / 60 % 60);
}

/*
 * The process lines are put together here and written a buffer at a time:
 * an fprintf() per column (its format parsed each time, its stream locked)
 * cost more than all the rest of a refresh of vtop -b.
 */
struct text_line {
	FILE	*out;
	size_t	len;
	char	buf[16384];
};

static void line_flush(struct text_line *line)
{
	if (line->len)
		fwrite(line->buf, 1, line->len, line->out);
	line->len = 0;
}

static void line_put(struct text_line *line, const char *s, size_t n)
{
	if (line->len + n > sizeof(line->buf)) {
		line_flush(line);
		if (n > sizeof(line->buf)) {
			fwrite(s, 1, n, line->out);
			return;
		}
	}
	memcpy(line->buf + line->len, s, n);
	line->len += n;
}

/* s as printf's "%*s" puts it: right-aligned in width, left-aligned in -width, never cut */
static void line_field(struct text_line *line, const char *s, size_t len, int width)
{
	static const char spaces[] = "                                ";
	size_t w = (size_t)(width < 0 ? -width : width), pad = w > len ? w - len : 0;

	if (width < 0)
		line_put(line, s, len);
	while (pad) {
		size_t n = pad < sizeof(spaces) - 1 ? pad : sizeof(spaces) - 1;

		line_put(line, spaces, n);
		pad -= n;
	}
	if (width >= 0)
		line_put(line, s, len);
}

static void write_text(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		       bool utf8)
{
	const vmon_sys_loadavg_t *la = snap->sys_stores[VMON_STORE_SYS_LOADAVG];
	const vt_cpu_pct_t *c = &snap->cpu_total;
	time_t now = (time_t)snap->when;
	char when[16], up[48], buf[8192], prefix[4096];
	struct text_line line;
	bool is_command[VT_MAX_COLUMNS];
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	uptime_text(up, sizeof(up), snap->uptime);
	fprintf(out, "vtop - %s up %s", when, up);
	if (la)
		fprintf(out, ", load average: %lu.%02lu, %lu.%02lu, %lu.%02lu", la->load1 / 100, la->load1 % 100,
			la->load5 / 100, la->load5 % 100, la->load15 / 100, la->load15 % 100);
	fprintf(out, "; feed: %s\n", snap->feed[0] ? snap->feed : "none");
	fprintf(out, "Tasks: %d total, %d running, %d sleeping, %d stopped, %d zombie; %d threads; %d exited, %d new\n",
		snap->procs, snap->running, snap->sleeping + snap->idle + snap->disk, snap->stopped, snap->zombie,
		snap->threads, snap->exited_now, snap->new_now);
	fprintf(out, "%%Cpu(s): %5.1f us, %5.1f sy, %5.1f ni, %5.1f id, %5.1f wa, %5.1f hi, %5.1f si, %5.1f st\n",
		c->user, c->system, c->nice, c->idle, c->iowait, c->irq, c->softirq, c->steal);
	fprintf(out, "MiB Mem:  %9.1f total, %9.1f used, %9.1f buff/cache\n", (double)snap->mem_total_kb / 1024,
		(double)snap->mem_used_kb / 1024, (double)(snap->mem_buffers_kb + snap->mem_cached_kb) / 1024);
	fprintf(out, "MiB Swap: %9.1f total, %9.1f used\n\n", (double)snap->swap_total_kb / 1024,
		(double)snap->swap_used_kb / 1024);

	/* the header, then each line: a mark (N new, X exited), c for context (as the screen dims it), the columns */
	fputs("  ", out);
	for (int i = 0; i < cfg->columns_nr; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];

		fprintf(out, "%s%*s", i ? " " : "", col->left ? -col->width : col->width, col->label);
		is_command[i] = col->derived && !strcmp(col->name, "command");
	}
	fputc('\n', out);
	line.out = out;
	line.len = 0;
	for (int l = 0; l < view->lines_nr; l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);
		char mark[2] = {
			(row->flags & VT_ROW_EXITED) ? 'X' : (row->flags & VT_ROW_NEW) ? 'N' : ' ',
			line_is_context(view, l) ? 'c' : ' ',
		};

		line_put(&line, mark, 2);
		for (int i = 0; i < cfg->columns_nr; i++) {
			const vt_column_t *col = &vt_columns[cfg->columns[i]];
			const char *text = buf;
			int len;

			if (i)
				line_put(&line, " ", 1);
			if (is_command[i]) {
				size_t n = vt_view_tree_prefix(view, l, utf8, 0, prefix, sizeof(prefix));

				line_put(&line, prefix, n < sizeof(prefix) ? n : strlen(prefix));
				text = vt_view_command(view, row);
				line_put(&line, text, strlen(text));
				continue;
			}
			len = vt_column_format(col, row, snap, buf, sizeof(buf), false);
			if (len < 0) {
				text = "-";
				len = 1;
			} else if ((size_t)len >= sizeof(buf)) {
				len = (int)strlen(buf);	/* cut to the buffer, as printed before */
			}
			line_field(&line, text, (size_t)len, col->left && i + 1 < cfg->columns_nr ? -col->width :
				   col->left ? 0 : col->width);
		}
		line_put(&line, "\n", 1);
	}
	line_flush(&line);
	fputc('\n', out);
}

/* --- json --- */

/* a string vector (argv, envv) as an array of strings */
static void json_strings(FILE *out, char *const *v)
{
	char small[1024], *buf;

	fputc('[', out);
	for (size_t i = 0; v && v[i]; i++) {
		size_t len = strlen(v[i]), need = vmon_escape(NULL, 0, v[i], len, 0) + 1;

		buf = need <= sizeof(small) ? small : malloc(need);
		fputs(i ? "," : "", out);
		if (!buf) {
			fputs("null", out);
			continue;
		}
		vmon_escape(buf, need, v[i], len, 0);
		vt_json_string(out, buf);
		if (buf != small)
			free(buf);
	}
	fputc(']', out);
}

static void json_field(FILE *out, const vmon_store_desc_t *desc, const vmon_field_t *f, const void *store,
		       char *buf, size_t size)
{
	if (!vmon_field_present(desc, f, store)) {
		fputs("null", out);
		return;
	}
	if (f->type == VMON_TYPE_str_array) {
		json_strings(out, *(char *const *const *)((const char *)store + f->offset));
		return;
	}
	vmon_field_format(f, store, buf, size, 0);
	if (f->kind == VMON_KIND_text)
		vt_json_string(out, buf);
	else
		fputs(buf, out);
}

static void json_cpu(FILE *out, const vt_cpu_pct_t *c)
{
	fprintf(out, "{\"user\":%.2f,\"nice\":%.2f,\"system\":%.2f,\"idle\":%.2f,\"iowait\":%.2f,\"irq\":%.2f,"
		"\"softirq\":%.2f,\"steal\":%.2f,\"guest\":%.2f,\"busy\":%.2f}", c->user, c->nice, c->system,
		c->idle, c->iowait, c->irq, c->softirq, c->steal, c->guest, c->busy);
}

static void json_column(FILE *out, const struct plan *p, const vt_column_t *col, const vt_view_t *view,
			const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size)
{
	const char *text;
	char *big;

	if (col->field && col->field->type == VMON_TYPE_str_array) {
		json_field(out, &vmon_proc_store_descs[col->store], col->field, row->stores[col->store], buf, size);
		return;
	}
	text = machine_text(p, col, view, row, snap, buf, size, &big);
	if (!text)
		fputs("null", out);
	else if (col->kind == VT_VALUE_STRING)
		vt_json_string(out, text);
	else
		fputs(is_json_number(text) ? text : "null", out);
	free(big);
}

static void write_json(FILE *out, const struct plan *p, const vt_view_t *view, const vt_snapshot_t *snap)
{
	char buf[65536];

	fprintf(out, "{\"seq\":%llu,\"time\":%.3f,\"interval\":%.3f,\"uptime\":%.2f,\"feed\":", snap->seq,
		snap->when, snap->interval, snap->uptime);
	vt_json_string(out, snap->feed[0] ? snap->feed : "none");
	fprintf(out, ",\"tasks\":{\"total\":%d,\"running\":%d,\"sleeping\":%d,\"disk\":%d,\"stopped\":%d,"
		"\"zombie\":%d,\"idle\":%d,\"threads\":%d,\"kernel_threads\":%d,\"exited\":%d,\"new\":%d}",
		snap->procs, snap->running, snap->sleeping, snap->disk, snap->stopped, snap->zombie, snap->idle,
		snap->threads, snap->kthreads, snap->exited_now, snap->new_now);
	fputs(",\"cpu\":", out);
	json_cpu(out, &snap->cpu_total);
	fputs(",\"cpus\":[", out);
	for (int i = 0; i < snap->cpus_nr; i++) {
		fputs(i ? "," : "", out);
		json_cpu(out, &snap->cpus[i]);
	}
	fputs("],\"system\":{", out);
	for (int s = 0, n = 0; s < VMON_STORE_SYS_NR; s++) {
		const vmon_store_desc_t *desc = &vmon_sys_store_descs[s];

		fprintf(out, "%s\"%s\":", n++ ? "," : "", desc->name);
		if (!snap->sys_stores[s]) {
			fputs("null", out);
			continue;
		}
		fputc('{', out);
		for (int i = 0; i < desc->fields_nr; i++) {
			fprintf(out, "%s\"%s\":", i ? "," : "", desc->fields[i].name);
			json_field(out, desc, &desc->fields[i], snap->sys_stores[s], buf, sizeof(buf));
		}
		fputc('}', out);
	}
	fputs("},\"processes\":[", out);
	for (int l = 0; l < view->lines_nr; l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		fprintf(out, "%s{\"pid\":%d,\"ppid\":%d,\"start\":%llu,\"status\":\"%s\",\"thread\":%s,\"context\":%s",
			l ? "," : "", row->pid, row->ppid, row->start, row_status(row),
			(row->flags & VT_ROW_THREAD) ? "true" : "false", line_is_context(view, l) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];

			fprintf(out, ",\"%s\":", col->name);
			json_column(out, p, col, view, row, snap, buf, sizeof(buf));
		}
		fputc('}', out);
	}
	fputs("]}\n", out);
}

/* --- csv --- */

/*
 * The real text of escaped text for csv and the metrics' labels, into
 * small or a buffer the caller frees (NULL: no memory).  A NUL (what
 * separates the strings of cmdline and environ) is a space there, as ps(1)
 * shows a command line: text files hold none.
 */
static char *real_text(const char *escaped, char *small, size_t small_size)
{
	size_t len = strlen(escaped), n;
	char *text = VT_TEXT_REAL_SIZE(len) <= small_size ? small : malloc(VT_TEXT_REAL_SIZE(len));

	if (!text)
		return NULL;
	n = vt_text_real(text, escaped, len);
	for (char *z = memchr(text, '\0', n); z; z = memchr(z, '\0', n - (size_t)(z - text)))
		*z = ' ';
	return text;
}

/* a field as RFC 4180 quotes it: the real text, in quotes when it holds a comma, a quote or a line break */
static void csv_value(FILE *out, const char *escaped)
{
	char small[1024], *text = real_text(escaped, small, sizeof(small));

	if (!text)
		return;	/* an empty field: no value rather than half of one */
	if (!strpbrk(text, ",\"\r\n")) {
		fputs(text, out);
	} else {
		fputc('"', out);
		for (const char *s = text; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	}
	if (text != small)
		free(text);
}

/* the refresh and the row's identity, then the columns: "timestamp", as the column "time" is TIME+ */
static void write_csv(FILE *out, const struct plan *p, const vt_view_t *view, const vt_snapshot_t *snap, bool first)
{
	char buf[65536];

	if (first) {
		fputs("seq,timestamp,pid,ppid,start,status,thread,context", out);
		for (int i = 0; i < p->nr; i++)
			fprintf(out, ",%s", vt_columns[p->cols[i]].name);
		fputs("\r\n", out);
	}
	for (int l = 0; l < view->lines_nr; l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		fprintf(out, "%llu,%.3f,%d,%d,%llu,%s,%s,%s", snap->seq, snap->when, row->pid, row->ppid, row->start,
			row_status(row), (row->flags & VT_ROW_THREAD) ? "true" : "false",
			line_is_context(view, l) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];
			const char *text;
			char *big;

			fputc(',', out);
			text = machine_text(p, col, view, row, snap, buf, sizeof(buf), &big);
			if (text && col->kind == VT_VALUE_STRING)
				csv_value(out, text);
			else if (text)
				fputs(text, out);
			free(big);
		}
		fputs("\r\n", out);
	}
}

/* --- prometheus and openmetrics --- */

/*
 * The two exposition formats differ in a few points, all here: OpenMetrics
 * names a counter's family without the "_total" its samples carry, has
 * UNIT lines and the info type, escapes quotes in HELP, and ends with
 * "# EOF"; the Prometheus text format 0.0.4 (what node_exporter's textfile
 * collector reads) has none of these: an info metric is a gauge of 1.
 */
struct expo {
	FILE			*out;
	bool			om;		/* OpenMetrics 1.0, else Prometheus 0.0.4 */
	const vt_snapshot_t	*snap;
	char			buf[65536];
};

/* the unit's name in a metric name, once converted to a base unit */
static const char *base_unit(vmon_unit_t unit)
{
	switch (unit) {
	case VMON_UNIT_ticks:
	case VMON_UNIT_seconds:
		return "seconds";
	case VMON_UNIT_pages:
	case VMON_UNIT_kb:
	case VMON_UNIT_bytes:
		return "bytes";
	default:
		return NULL;
	}
}

static bool ends_with(const char *s, size_t len, const char *end)
{
	size_t n = strlen(end);

	return len >= n && !memcmp(s + len - n, end, n);
}

/* of a member's name, what stays without the unit word it carries (total_kb, size_pages) */
static size_t unit_stem(const char *name, vmon_unit_t unit)
{
	size_t len = strlen(name);

	if (unit == VMON_UNIT_kb && ends_with(name, len, "_kb"))
		return len - 3;
	if (unit == VMON_UNIT_pages && ends_with(name, len, "_pages"))
		return len - 6;
	return len;
}

/* OpenMetrics reserves these endings for the samples of other metric types */
static bool reserved_suffix(const char *name, size_t len)
{
	static const char *const suffixes[] = {
		"_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info",
	};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (ends_with(name, len, suffixes[i]))
			return true;
	}
	return false;
}

/*
 * A family's name: vtop_<prefix>_<name> with the unit the value is
 * converted to (_seconds, _bytes, _per_second).  A member's own unit word
 * is left out (total_kb in bytes is total_bytes); where a sibling (names[],
 * units[] of nr) would then have the same name, the label names it instead
 * (data_pages and data_kb are data_bytes and vmdata_bytes): labels are
 * unique, and a unit word such as "kb" in a name is what promtool refuses.
 * Names are the same whatever columns are asked for.
 */
static void family_name(char *buf, size_t size, const char *prefix, const char *name, const char *label,
			vmon_unit_t unit, bool rate, const char *const *names, const vmon_unit_t *units, int nr)
{
	const char *base = base_unit(unit);
	size_t stem = unit_stem(name, unit), len;
	bool clash = false;

	for (int i = 0; i < nr && stem < strlen(name); i++) {
		if (strcmp(names[i], name) != 0 && unit_stem(names[i], units[i]) == stem && !strncmp(names[i], name, stem))
			clash = true;
	}
	len = (size_t)snprintf(buf, size, "vtop_%s_", prefix);
	for (size_t i = 0; clash && label[i] && len + 1 < size; i++) {
		char c = (char)tolower((unsigned char)label[i]);

		buf[len++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	if (clash && len < size)
		buf[len] = '\0';
	else
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%.*s", (int)stem, name);
	if (len >= size)
		return;
	if (base && !ends_with(buf, len, base)) {
		snprintf(buf + len, size - len, "_%s", base);
		len = strlen(buf);
	}
	if (rate)
		snprintf(buf + len, size - len, "_per_second");
	else if (!base && reserved_suffix(buf, len))
		snprintf(buf + len, size - len, "_value");
}

/* HELP text: a backslash and a line break escaped in both formats, a quote in OpenMetrics */
static void expo_help(struct expo *e, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", e->out);
		else if (*s == '\n')
			fputs("\\n", e->out);
		else if (*s == '"' && e->om)
			fputs("\\\"", e->out);
		else
			fputc(*s, e->out);
	}
}

/* TYPE, UNIT (OpenMetrics) and HELP of a family; a counter's samples are name_total */
static void expo_family(struct expo *e, const char *name, vmon_kind_t kind, vmon_unit_t unit, bool rate,
			const char *help)
{
	const char *type = kind == VMON_KIND_counter ? "counter" : "gauge", *total = "";
	const char *base = base_unit(unit);

	if (kind == VMON_KIND_counter && !e->om)
		total = "_total";
	fprintf(e->out, "# TYPE %s%s %s\n", name, total, type);
	if (e->om && base)
		fprintf(e->out, "# UNIT %s %s%s\n", name, base, rate ? "_per_second" : "");
	fprintf(e->out, "# HELP %s%s ", name, total);
	expo_help(e, help);
	/* what the number was turned into, where the description names another unit */
	if (unit == VMON_UNIT_ticks || unit == VMON_UNIT_pages || unit == VMON_UNIT_kb)
		fprintf(e->out, "; in %s here", base);
	else if (unit == VMON_UNIT_hundredths)
		fputs("; divided by 100 here", e->out);
	fputc('\n', e->out);
}

/* a label value: the real text, with a backslash, a quote and a line break escaped */
static void expo_label(struct expo *e, const char *name, const char *escaped, bool first)
{
	char small[1024], *text = real_text(escaped, small, sizeof(small));

	fprintf(e->out, "%s%s=\"", first ? "" : ",", name);
	if (text) {
		for (const char *s = text; *s; s++) {
			if (*s == '\\' || *s == '"')
				fprintf(e->out, "\\%c", *s);
			else if (*s == '\n')
				fputs("\\n", e->out);
			else
				fputc(*s, e->out);
		}
		if (text != small)
			free(text);
	}
	fputc('"', e->out);
}

/*
 * A number of the defs tables (or vtop's own, already in base units) as
 * the sample's value in base units: seconds for ticks, bytes for pages and
 * kB, hundredths divided.  false when the text is no number.
 */
static bool expo_value(const struct expo *e, const char *text, vmon_unit_t unit, char *out, size_t size)
{
	long tps = e->snap->ticks_per_sec > 0 ? e->snap->ticks_per_sec : 100;
	unsigned long long v;
	char *end;
	int decimals = 0;

	if (!is_json_number(text))
		return false;
	if (unit != VMON_UNIT_ticks && unit != VMON_UNIT_pages && unit != VMON_UNIT_kb && unit != VMON_UNIT_hundredths) {
		snprintf(out, size, "%s", text);
		return true;
	}
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || text[0] == '-') {
		/* a negative or a fraction (no field of these units has one): as a double */
		double d = strtod(text, NULL);

		snprintf(out, size, "%.17g", unit == VMON_UNIT_ticks ? d / (double)tps : unit == VMON_UNIT_hundredths ?
			 d / 100 : d * (unit == VMON_UNIT_kb ? 1024.0 : (double)e->snap->page_size));
		return true;
	}
	switch (unit) {
	case VMON_UNIT_ticks:
		/* 100 ticks a second on every Linux: hundredths, exactly */
		for (long t = tps - 1; t > 0; t /= 10)
			decimals++;
		snprintf(out, size, "%.*f", decimals, (double)v / (double)tps);
		break;
	case VMON_UNIT_hundredths:
		snprintf(out, size, "%llu.%02llu", v / 100, v % 100);
		break;
	default:
		snprintf(out, size, "%llu", v * (unit == VMON_UNIT_kb ? 1024ULL : (unsigned long long)e->snap->page_size));
		break;
	}
	return true;
}

static bool exported(vmon_kind_t kind)
{
	return kind == VMON_KIND_gauge || kind == VMON_KIND_counter;
}

/* a family per number of each system store (a counter or a gauge: ids, addresses and bitmaps are no measure) */
static void expo_system(struct expo *e)
{
	char name[160], value[64];

	for (int s = 0; s < VMON_STORE_SYS_NR; s++) {
		const vmon_store_desc_t *desc = &vmon_sys_store_descs[s];
		int nr = desc->fields_nr;
		const char **names = calloc((size_t)nr + 1, sizeof(*names));
		vmon_unit_t *units = calloc((size_t)nr + 1, sizeof(*units));

		if (!e->snap->sys_stores[s] || !names || !units)
			nr = 0;	/* nothing of this store (it failed, or no memory to name its families) */
		for (int i = 0; i < nr; i++) {
			names[i] = desc->fields[i].name;
			units[i] = desc->fields[i].unit;
		}
		for (int i = 0; i < nr; i++) {
			const vmon_field_t *f = &desc->fields[i];
			const void *store = e->snap->sys_stores[s];

			if (!exported(f->kind) || !vmon_field_present(desc, f, store))
				continue;
			vmon_field_format(f, store, e->buf, sizeof(e->buf), 0);
			if (!expo_value(e, e->buf, f->unit, value, sizeof(value)))
				continue;
			family_name(name, sizeof(name), desc->name, f->name, f->label, f->unit, false, names, units, nr);
			expo_family(e, name, f->kind, f->unit, false, f->desc);
			fprintf(e->out, "%s%s %s\n", name, f->kind == VMON_KIND_counter ? "_total" : "", value);
		}
		free(names);
		free(units);
	}
}

static void expo_cpu(struct expo *e, const char *cpu, const vt_cpu_pct_t *c)
{
	const struct { const char *mode; double v; } modes[] = {
		{ "user", c->user }, { "nice", c->nice }, { "system", c->system }, { "idle", c->idle },
		{ "iowait", c->iowait }, { "irq", c->irq }, { "softirq", c->softirq }, { "steal", c->steal },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(e->out, "vtop_cpu_percent{cpu=\"%s\",mode=\"%s\"} %.2f\n", cpu, modes[i].mode, modes[i].v);
}

/* what every process sample is labelled with: pid and start time (a pid reused within a refresh), and comm */
static void expo_process_labels(struct expo *e, const vt_row_t *row)
{
	const vmon_field_t *comm = &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_COMM];

	fprintf(e->out, "{pid=\"%d\",start=\"%llu\"", row->pid, row->start);
	if (row->stores[VMON_STORE_PROC_STAT])
		vmon_field_format(comm, row->stores[VMON_STORE_PROC_STAT], e->buf, sizeof(e->buf), 0);
	else
		e->buf[0] = '\0';
	expo_label(e, "comm", e->buf, false);
	fputc('}', e->out);
}

/* the process columns' names and units, for family_name()'s siblings: all of them, so names never depend on -o */
static void column_names(const char **names, vmon_unit_t *units)
{
	for (int i = 0; i < vt_columns_nr; i++) {
		names[i] = vt_columns[i].name;
		units[i] = vt_columns[i].unit;
	}
}

static void write_exposition(FILE *out, bool om, const struct plan *p, const vt_view_t *view,
			     const vt_snapshot_t *snap)
{
	struct expo *e = malloc(sizeof(*e));
	const char **names = calloc((size_t)vt_columns_nr + 1, sizeof(*names));
	vmon_unit_t *units = calloc((size_t)vt_columns_nr + 1, sizeof(*units));
	char name[160], value[64];
	bool any_info = false;

	if (!e || !names || !units) {
		free(e);
		free(names);
		free(units);
		fputs("# vtop: out of memory\n", out);
		return;
	}
	e->out = out;
	e->om = om;
	e->snap = snap;
	column_names(names, units);
	expo_system(e);
	expo_family(e, "vtop_cpu_percent", VMON_KIND_gauge, VMON_UNIT_none, false,
		    "CPU time by mode over the last interval (percent)");
	expo_cpu(e, "total", &snap->cpu_total);
	for (int i = 0; i < snap->cpus_nr; i++) {
		char cpu[16];

		snprintf(cpu, sizeof(cpu), "%d", i);
		expo_cpu(e, cpu, &snap->cpus[i]);
	}
	expo_family(e, "vtop_tasks", VMON_KIND_gauge, VMON_UNIT_none, false, "processes by state, and the threads of all");
	fprintf(out, "vtop_tasks{state=\"running\"} %d\nvtop_tasks{state=\"sleeping\"} %d\n"
		"vtop_tasks{state=\"disk\"} %d\nvtop_tasks{state=\"stopped\"} %d\nvtop_tasks{state=\"zombie\"} %d\n"
		"vtop_tasks{state=\"idle\"} %d\nvtop_tasks{state=\"threads\"} %d\n", snap->running, snap->sleeping,
		snap->disk, snap->stopped, snap->zombie, snap->idle, snap->threads);
	expo_family(e, "vtop_processes_exited", VMON_KIND_gauge, VMON_UNIT_none, false,
		    "processes found gone in the last refresh");
	fprintf(out, "vtop_processes_exited %d\n", snap->exited_now);

	/*
	 * A family per column that is a measure, a sample per process; the
	 * rest (text, ids, addresses) are labels of vtop_process_info.  Rows
	 * shown only as context (another user's ancestors with -u) are no
	 * process asked for: left out.
	 */
	for (int i = 0; i < p->nr; i++) {
		const vt_column_t *col = &vt_columns[p->cols[i]];
		bool family = false;

		if (col->kind != VT_VALUE_NUMBER || !exported(col->measure)) {
			any_info = true;
			continue;
		}
		family_name(name, sizeof(name), "process", col->name, col->label, col->unit, col->rate, names, units,
			    vt_columns_nr);
		for (int l = 0; l < view->lines_nr; l++) {
			const vt_row_t *row = vt_view_row(view, snap, l);
			const char *text;
			char *big;

			if (line_is_context(view, l))
				continue;
			text = machine_text(p, col, view, row, snap, e->buf, sizeof(e->buf), &big);
			if (text && expo_value(e, text, col->derived ? VMON_UNIT_none : col->unit, value, sizeof(value))) {
				if (!family)
					expo_family(e, name, col->measure, col->unit, col->rate, col->desc);
				family = true;
				fprintf(out, "%s%s", name, col->measure == VMON_KIND_counter ? "_total" : "");
				expo_process_labels(e, row);
				fprintf(out, " %s\n", value);
			}
			free(big);
		}
	}
	/* an info metric in OpenMetrics; in the Prometheus text format, by convention, a gauge of 1 */
	if (any_info)
		fprintf(out, "# TYPE %s %s\n# HELP %s the text columns, ids and addresses of each process\n",
			om ? "vtop_process" : "vtop_process_info", om ? "info" : "gauge",
			om ? "vtop_process" : "vtop_process_info");
	for (int l = 0; any_info && l < view->lines_nr; l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		if (line_is_context(view, l))
			continue;
		fprintf(out, "vtop_process_info{pid=\"%d\",start=\"%llu\",ppid=\"%d\",status=\"%s\",thread=\"%s\"",
			row->pid, row->start, row->ppid, row_status(row), (row->flags & VT_ROW_THREAD) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];
			const char *text;
			char *big;

			if (col->kind == VT_VALUE_NUMBER && exported(col->measure))
				continue;
			text = machine_text(p, col, view, row, snap, e->buf, sizeof(e->buf), &big);
			if (text)
				expo_label(e, col->name, text, false);
			free(big);
		}
		fputs("} 1\n", out);
	}
	fputs(om ? "# EOF\n" : "\n", out);
	free(e);
	free(names);
	free(units);
}

void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first)
{
	struct plan *p = malloc(sizeof(*p));

	if (!p)
		return;
	plan_make(p, cfg);
	switch (format) {
	case VT_FORMAT_TEXT:
		write_text(out, cfg, view, snap, !cfg->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8"));
		break;
	case VT_FORMAT_JSON:
		write_json(out, p, view, snap);
		break;
	case VT_FORMAT_CSV:
		write_csv(out, p, view, snap, first);
		break;
	case VT_FORMAT_PROMETHEUS:
	case VT_FORMAT_OPENMETRICS:
		write_exposition(out, format == VT_FORMAT_OPENMETRICS, p, view, snap);
		break;
	}
	free(p);
}

/*
 * --events: one line per event, oldest first:
 *   TIME fork pid=P ppid=Q comm=NAME
 *   TIME exec pid=P ppid=Q comm=NAME file=PATH args=ARG0 ARG1...
 *   TIME exit pid=P ppid=Q code=N comm=NAME	(or signal=SIGNAME)
 * and without the feed "new" and "exit", found by comparing samples, with
 * the command line as comm.  Every text is vmon_escape()d; args is the last
 * field and runs to the end of the line.
 */
void vt_event_write(FILE *out, const vt_event_t *e)
{
	time_t t = (time_t)e->when;
	char when[32];
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, "%s.%03d %s pid=%d ppid=%d", when, (int)((e->when - (double)t) * 1000),
		e->kind == 'E' ? "exec" : e->kind == 'X' ? "exit" : e->from_feed ? "fork" : "new", e->pid, e->ppid);
	if (e->kind == 'X' && e->exit_code >= 0) {
		if (WIFSIGNALED(e->exit_code))
			fprintf(out, " signal=SIG%s", vt_signal_name(WTERMSIG(e->exit_code)));
		else
			fprintf(out, " code=%d", WEXITSTATUS(e->exit_code));
	}
	fprintf(out, " comm=%s", e->comm);
	if (e->kind == 'E')
		fprintf(out, " file=%s args=%s", e->file, e->args);
	fputc('\n', out);
}

/* --events with the feed (or a replay of its log): each event printed as the library applies it (no ring, nothing dropped) */
static void print_event(const vt_event_t *e, void *arg)
{
	vt_event_write(arg, e);
}

int vt_batch_run(const vt_config_t *cfg)
{
	vmon_proc_wants_t wants = vt_columns_wants(cfg->columns, cfg->columns_nr);
	vt_snapshot_t snap;
	vt_source_t src;
	vt_view_t view;
	char err[256];
	long n = 0;
	bool replay = cfg->replay_path[0] != '\0', printed = false;
	int status = 0;

	/* what the screen shows on its bottom line, once, goes to stderr here */
	if (cfg->warnings[0])
		fprintf(stderr, "vtop: settings: %s\n", cfg->warnings);
	if (vt_source_init(&src, cfg, wants, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "vtop: %s\n", err);
		return 1;
	}
	/* each snapshot is printed before the next sample (or the next record of a replay): it may point into the tree */
	src.builder.borrow = true;
	if (src.source_why[0])
		fprintf(stderr, "vtop: the task iterator was asked for but cannot be used (%s): processes are sampled "
			"from /proc\n", src.source_why);
	vt_snapshot_init(&snap);
	vt_view_init(&view);
	vt_view_configure(&view, cfg);
	if (cfg->events && vt_feed_delivers(src.feed)) {
		vt_feed_set_sink(src.feed, print_event, stdout);
	} else if (cfg->events && !replay) {
		const char *why = vt_feed_fallback(src.feed);

		fprintf(stderr, "vtop: no event feed%s%s%s: events are found by comparing samples %g s apart; "
			"processes that live shorter are missed\n", why ? " (" : "", why ? why : "", why ? ")" : "",
			cfg->delay);
	} else if (!replay && vt_feed_fallback(src.feed)) {
		fprintf(stderr, "vtop: no event feed (%s): processes that live shorter than a refresh (%g s) are not "
			"listed\n", vt_feed_fallback(src.feed), cfg->delay);
	}

	/* two samples before the first output: CPU% needs an interval (a replay reads them as they were) */
	if (vt_source_sample(&src, &snap) < 0)
		goto fail;
	if (!replay)
		vt_source_wait(&src, cfg->delay < 0.5 ? cfg->delay : 0.5, -1);
	for (;;) {
		if (vt_source_sample(&src, &snap) < 0)
			goto fail;
		if (src.log_error[0])
			goto fail;
		if (cfg->events) {
			for (int i = 0; i < snap.events_nr; i++)
				vt_event_write(stdout, &snap.events[i]);
		} else {
			vt_view_build(&view, &snap);
			vt_batch_write(stdout, cfg, &view, &snap, cfg->format, n == 0);
		}
		printed = true;
		/* vtop(1) promises 1 when the output cannot be written (a full disk, a closed pipe) */
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "vtop: cannot write the output: %s\n", strerror(errno));
			status = 1;
			break;
		}
		if (cfg->iterations && ++n >= cfg->iterations)
			break;
		if (!cfg->iterations)
			n++;
		if (!replay)
			vt_source_wait(&src, cfg->delay, -1);
	}
	vt_view_free(&view);
	vt_snapshot_free(&snap);
	vt_source_fini(&src);
	if (src.log_error[0]) {
		fprintf(stderr, "vtop: -w %s: %s\n", cfg->write_path, src.log_error);
		return 1;
	}
	return status;
fail:
	if (src.log_error[0]) {
		fprintf(stderr, "vtop: -w %s: %s\n", cfg->write_path, src.log_error);
	} else if (replay && errno == ENODATA && !vt_replay_error(&src)) {
		/* the end of the log: everything recorded was printed */
		vt_view_free(&view);
		vt_snapshot_free(&snap);
		vt_source_fini(&src);
		if (printed)
			return 0;
		fprintf(stderr, "vtop: -r %s: no sample to print (the first output is a log's second sample)\n",
			cfg->replay_path);
		return 1;
	} else if (replay) {
		fprintf(stderr, "vtop: -r %s\n", vt_replay_error(&src) ? vt_replay_error(&src) : strerror(errno));
	} else {
		fprintf(stderr, "vtop: sampling failed: %s\n", strerror(errno));
	}
	vt_view_free(&view);
	vt_snapshot_free(&snap);
	vt_source_fini(&src);
	return 1;
}
