/*
 * batch.c: vtop -b, refreshes written to stdout for a log, a script or a
 * fleet collector, in one of four formats.  All four are written over the
 * column table, so every column there is in every format:
 *
 *   text         top -b's layout: a summary, then one line per process
 *   json         one object per refresh, on one line; numbers are numbers,
 *                missing values null, text escaped twice: vmon_escape()
 *                for what came from a process, then JSON's own rules
 *   csv          RFC 4180: one header, then a row per process per refresh
 *   openmetrics  the Prometheus text exposition, one per refresh, each
 *                ending with "# EOF"
 *
 * The first refresh is printed after two samples, so its CPU% is real.
 * --events prints one line per process event instead (vt_event_write()).
 */
#include "config.h"

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

/* the process's identity columns come first in every format; the rest in the order asked for */
static bool is_identity(int col)
{
	return !strcmp(vt_columns[col].name, "pid") || !strcmp(vt_columns[col].name, "ppid");
}

static const char *row_status(const vt_row_t *row)
{
	return (row->flags & VT_ROW_EXITED) ? "exited" : (row->flags & VT_ROW_NEW) ? "new" : "running";
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

	/* the header, then each line: a mark (N new, X exited), a space and the columns */
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
		char mark = (row->flags & VT_ROW_EXITED) ? 'X' : (row->flags & VT_ROW_NEW) ? 'N' : ' ';

		line_put(&line, &mark, 1);
		line_put(&line, " ", 1);
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

static void json_field(FILE *out, const vmon_store_desc_t *desc, const vmon_field_t *f, const void *store,
		       char *buf, size_t size)
{
	if (!vmon_field_present(desc, f, store)) {
		fputs("null", out);
		return;
	}
	vmon_field_format(f, store, buf, size, 0);
	if (f->type == VMON_TYPE_char || f->type == VMON_TYPE_char_array || f->type == VMON_TYPE_str_array)
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

static void write_json(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap)
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

		fprintf(out, "%s{\"pid\":%d,\"ppid\":%d,\"status\":\"%s\",\"thread\":%s", l ? "," : "", row->pid,
			row->ppid, row_status(row), (row->flags & VT_ROW_THREAD) ? "true" : "false");
		for (int i = 0; i < cfg->columns_nr; i++) {
			const vt_column_t *col = &vt_columns[cfg->columns[i]];

			if (is_identity(cfg->columns[i]))
				continue;
			fprintf(out, ",\"%s\":", col->name);
			if (vt_column_format(col, row, snap, buf, sizeof(buf), true) < 0)
				fputs("null", out);
			else if (col->kind == VT_VALUE_STRING)
				vt_json_string(out, !strcmp(col->name, "command") ? vt_view_command(view, row) : buf);
			else if (is_json_number(buf))
				fputs(buf, out);
			else
				fputs("null", out);
		}
		fputc('}', out);
	}
	fputs("]}\n", out);
}

/* --- csv --- */

static void csv_value(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void write_csv(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap, bool first)
{
	char buf[65536];

	if (first) {
		fputs("seq,time,pid,ppid,status", out);
		for (int i = 0; i < cfg->columns_nr; i++) {
			if (!is_identity(cfg->columns[i]))
				fprintf(out, ",%s", vt_columns[cfg->columns[i]].name);
		}
		fputs("\r\n", out);
	}
	for (int l = 0; l < view->lines_nr; l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		fprintf(out, "%llu,%.3f,%d,%d,%s", snap->seq, snap->when, row->pid, row->ppid, row_status(row));
		for (int i = 0; i < cfg->columns_nr; i++) {
			const vt_column_t *col = &vt_columns[cfg->columns[i]];

			if (is_identity(cfg->columns[i]))
				continue;
			fputc(',', out);
			if (vt_column_format(col, row, snap, buf, sizeof(buf), true) >= 0)
				csv_value(out, !strcmp(col->name, "command") ? vt_view_command(view, row) : buf);
		}
		fputs("\r\n", out);
	}
}

/* --- openmetrics --- */

/* OpenMetrics reserves these endings for the samples of other metric types */
static bool reserved_suffix(const char *name)
{
	static const char *const suffixes[] = {
		"_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info",
	};
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (len >= n && !strcmp(name + len - n, suffixes[i]))
			return true;
	}
	return false;
}

static void om_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# TYPE %s %s\n# HELP %s ", name, type, name);
	for (; *help; help++) {
		if (*help == '\\' || *help == '\n')
			fputs(*help == '\\' ? "\\\\" : "\\n", out);
		else
			fputc(*help, out);
	}
	fputc('\n', out);
}

static void om_name(char *buf, size_t size, const char *a, const char *b)
{
	snprintf(buf, size, "vtop_%s_%s%s", a, b, reserved_suffix(b) ? "_value" : "");
}

static void om_process_labels(FILE *out, const vt_row_t *row, char *buf, size_t size)
{
	const vmon_field_t *comm = &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_COMM];

	/* pid and start time: two processes can hold one pid in a refresh (a pid reused by short lives) */
	fprintf(out, "{pid=\"%d\",start=\"%llu\",comm=", row->pid, row->start);
	if (row->stores[VMON_STORE_PROC_STAT])
		vmon_field_format(comm, row->stores[VMON_STORE_PROC_STAT], buf, size, 0);
	else
		buf[0] = '\0';
	vt_om_label(out, buf);
	fputc('}', out);
}

static void om_cpu(FILE *out, const char *cpu, const vt_cpu_pct_t *c)
{
	const struct { const char *mode; double v; } modes[] = {
		{ "user", c->user }, { "nice", c->nice }, { "system", c->system }, { "idle", c->idle },
		{ "iowait", c->iowait }, { "irq", c->irq }, { "softirq", c->softirq }, { "steal", c->steal },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(out, "vtop_cpu_percent{cpu=\"%s\",mode=\"%s\"} %.2f\n", cpu, modes[i].mode, modes[i].v);
}

static void write_openmetrics(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap)
{
	char name[128], buf[65536];
	bool any_string = false;

	/* the system stores, a family per numeric field */
	for (int s = 0; s < VMON_STORE_SYS_NR; s++) {
		const vmon_store_desc_t *desc = &vmon_sys_store_descs[s];

		for (int i = 0; i < desc->fields_nr && snap->sys_stores[s]; i++) {
			const vmon_field_t *f = &desc->fields[i];

			if (f->type == VMON_TYPE_char || f->type == VMON_TYPE_char_array ||
			    f->type == VMON_TYPE_str_array || !vmon_field_present(desc, f, snap->sys_stores[s]))
				continue;
			om_name(name, sizeof(name), desc->name, f->name);
			om_family(out, name, "gauge", f->desc);
			vmon_field_format(f, snap->sys_stores[s], buf, sizeof(buf), 0);
			fprintf(out, "%s %s\n", name, buf);
		}
	}
	om_family(out, "vtop_cpu_percent", "gauge", "CPU time by mode over the last interval (percent)");
	om_cpu(out, "total", &snap->cpu_total);
	for (int i = 0; i < snap->cpus_nr; i++) {
		char cpu[16];

		snprintf(cpu, sizeof(cpu), "%d", i);
		om_cpu(out, cpu, &snap->cpus[i]);
	}
	om_family(out, "vtop_tasks", "gauge", "processes by state, and the threads of all");
	fprintf(out, "vtop_tasks{state=\"running\"} %d\nvtop_tasks{state=\"sleeping\"} %d\n"
		"vtop_tasks{state=\"disk\"} %d\nvtop_tasks{state=\"stopped\"} %d\nvtop_tasks{state=\"zombie\"} %d\n"
		"vtop_tasks{state=\"idle\"} %d\nvtop_tasks{state=\"threads\"} %d\n", snap->running, snap->sleeping,
		snap->disk, snap->stopped, snap->zombie, snap->idle, snap->threads);
	om_family(out, "vtop_processes_exited", "gauge", "processes found gone in the last refresh");
	fprintf(out, "vtop_processes_exited %d\n", snap->exited_now);

	/* a family per numeric column, a sample per process */
	for (int i = 0; i < cfg->columns_nr; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];

		if (col->kind != VT_VALUE_NUMBER) {
			any_string = true;
			continue;
		}
		om_name(name, sizeof(name), "process", col->name);
		om_family(out, name, "gauge", col->desc);
		for (int l = 0; l < view->lines_nr; l++) {
			const vt_row_t *row = vt_view_row(view, snap, l);
			char value[64];

			if (vt_column_format(col, row, snap, value, sizeof(value), true) < 0 || !is_json_number(value))
				continue;
			fputs(name, out);
			om_process_labels(out, row, buf, sizeof(buf));
			fprintf(out, " %s\n", value);
		}
	}
	/* the text columns: labels of an info metric */
	if (any_string) {
		om_family(out, "vtop_process", "info", "the text columns of each process, escaped");
		for (int l = 0; l < view->lines_nr; l++) {
			const vt_row_t *row = vt_view_row(view, snap, l);

			fprintf(out, "vtop_process_info{pid=\"%d\",start=\"%llu\",status=\"%s\"", row->pid, row->start,
				row_status(row));
			for (int i = 0; i < cfg->columns_nr; i++) {
				const vt_column_t *col = &vt_columns[cfg->columns[i]];

				if (col->kind != VT_VALUE_STRING ||
				    vt_column_format(col, row, snap, buf, sizeof(buf), true) < 0)
					continue;
				fprintf(out, ",%s=", col->name);
				vt_om_label(out, !strcmp(col->name, "command") ? vt_view_command(view, row) : buf);
			}
			fputs("} 1\n", out);
		}
	}
	fputs("# EOF\n", out);
}

void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first)
{
	switch (format) {
	case VT_FORMAT_TEXT:
		write_text(out, cfg, view, snap, !cfg->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8"));
		break;
	case VT_FORMAT_JSON:
		write_json(out, cfg, view, snap);
		break;
	case VT_FORMAT_CSV:
		write_csv(out, cfg, view, snap, first);
		break;
	case VT_FORMAT_OPENMETRICS:
		write_openmetrics(out, cfg, view, snap);
		break;
	}
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

void vt_view_configure(vt_view_t *view, const vt_config_t *cfg)
{
	view->tree = cfg->tree;
	view->sort_col[0] = cfg->sort_col[0];
	view->sort_col[1] = cfg->sort_col[1];
	view->sort_desc[0] = cfg->sort_desc[0];
	view->sort_desc[1] = cfg->sort_desc[1];
	view->show_threads = cfg->threads;
	view->show_kthreads = cfg->kthreads;
	view->show_exited = cfg->exited_rows;
	view->show_path = cfg->show_path;
	view->user_set = cfg->user_set;
	view->user_uid = cfg->user_uid;
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
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "vtop: writing the output: %s\n", strerror(errno));
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
	return 0;
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
	vt_snapshot_free(&snap);
	vt_source_fini(&src);
	return 1;
}
