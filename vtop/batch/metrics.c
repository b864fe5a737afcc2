/*
 * metrics.c: vtop -b's prometheus (text format 0.0.4) and openmetrics (1.0)
 * expositions, one per refresh, in base units converted with the unit
 * each defs/ row declares.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtop.h"
#include "batch/formats.h"
#include "data/columns.h"
#include "data/model.h"

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
	char small[1024], *text = batch_real_text(escaped, small, sizeof(small));

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

	if (!batch_is_json_number(text))
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

void batch_write_exposition(FILE *out, bool om, const struct batch_plan *p, const vt_view_t *view,
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
		for (int l = 0; l < vt_view_lines(view); l++) {
			const vt_row_t *row = vt_view_row(view, snap, l);
			const char *text;
			char *big;

			if (batch_line_is_context(view, l))
				continue;
			text = batch_machine_text(p, col, view, row, snap, e->buf, sizeof(e->buf), &big);
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
	for (int l = 0; any_info && l < vt_view_lines(view); l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		if (batch_line_is_context(view, l))
			continue;
		fprintf(out, "vtop_process_info{pid=\"%d\",start=\"%llu\",ppid=\"%d\",status=\"%s\",thread=\"%s\"",
			row->pid, row->start, row->ppid, batch_row_status(row), (row->flags & VT_ROW_THREAD) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];
			const char *text;
			char *big;

			if (col->kind == VT_VALUE_NUMBER && exported(col->measure))
				continue;
			text = batch_machine_text(p, col, view, row, snap, e->buf, sizeof(e->buf), &big);
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
