/*
 * json_csv.c: vtop -b's json (an object per refresh, on one line; numbers
 * are numbers, a missing value null, strings the process's real text) and
 * csv (RFC 4180: one header, then a row per process per refresh).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtop.h"
#include "batch/formats.h"
#include "data/columns.h"
#include "data/model.h"

/* bytes a process gave (len of them, no NUL among them) as a JSON string of their text */
void batch_json_bytes(FILE *out, const char *s, size_t len)
{
	size_t need = vmon_escape(NULL, 0, s, len, 0) + 1;
	char small[1024], *buf = need <= sizeof(small) ? small : malloc(need);

	if (!buf) {
		fputs("null", out);
		return;
	}
	vmon_escape(buf, need, s, len, 0);
	vt_json_string(out, buf);
	if (buf != small)
		free(buf);
}

/* a string vector (argv, envv) as an array of strings */
static void json_strings(FILE *out, char *const *v)
{
	fputc('[', out);
	for (size_t i = 0; v && v[i]; i++) {
		fputs(i ? "," : "", out);
		batch_json_bytes(out, v[i], strlen(v[i]));
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

static void json_column(FILE *out, const struct batch_plan *p, const vt_column_t *col, const vt_view_t *view,
			const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size)
{
	const char *text;
	char *big;

	if (col->field && col->field->type == VMON_TYPE_str_array) {
		json_field(out, &vmon_proc_store_descs[col->store], col->field, row->stores[col->store], buf, size);
		return;
	}
	text = batch_machine_text(p, col, view, row, snap, buf, size, &big);
	if (!text)
		fputs("null", out);
	else if (col->kind == VT_VALUE_STRING)
		vt_json_string(out, text);
	else
		fputs(batch_is_json_number(text) ? text : "null", out);
	free(big);
}

void batch_write_json(FILE *out, const struct batch_plan *p, const vt_view_t *view, const vt_snapshot_t *snap)
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
	for (int l = 0; l < vt_view_lines(view); l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		fprintf(out, "%s{\"pid\":%d,\"ppid\":%d,\"start\":%llu,\"status\":\"%s\",\"thread\":%s,\"context\":%s",
			l ? "," : "", row->pid, row->ppid, row->start, batch_row_status(row),
			(row->flags & VT_ROW_THREAD) ? "true" : "false", batch_line_is_context(view, l) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];

			fprintf(out, ",\"%s\":", col->name);
			json_column(out, p, col, view, row, snap, buf, sizeof(buf));
		}
		fputc('}', out);
	}
	fputs("]}\n", out);
}

/* real text as RFC 4180 quotes a field: in quotes when it holds a comma, a quote or a line break */
void batch_csv_text(FILE *out, const char *text)
{
	if (!strpbrk(text, ",\"\r\n")) {
		fputs(text, out);
		return;
	}
	fputc('"', out);
	for (const char *s = text; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* escaped text (vmon_escape()'s) as a csv field of the real text */
void batch_csv_value(FILE *out, const char *escaped)
{
	char small[1024], *text = batch_real_text(escaped, small, sizeof(small));

	if (!text)
		return;	/* an empty field: no value rather than half of one */
	batch_csv_text(out, text);
	if (text != small)
		free(text);
}

/* the refresh and the row's identity, then the columns: "timestamp", as the column "time" is TIME+ */
void batch_write_csv(FILE *out, const struct batch_plan *p, const vt_view_t *view, const vt_snapshot_t *snap, bool first)
{
	char buf[65536];

	if (first) {
		fputs("seq,timestamp,pid,ppid,start,status,thread,context", out);
		for (int i = 0; i < p->nr; i++)
			fprintf(out, ",%s", vt_columns[p->cols[i]].name);
		fputs("\r\n", out);
	}
	for (int l = 0; l < vt_view_lines(view); l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);

		fprintf(out, "%llu,%.3f,%d,%d,%llu,%s,%s,%s", snap->seq, snap->when, row->pid, row->ppid, row->start,
			batch_row_status(row), (row->flags & VT_ROW_THREAD) ? "true" : "false",
			batch_line_is_context(view, l) ? "true" : "false");
		for (int i = 0; i < p->nr; i++) {
			const vt_column_t *col = &vt_columns[p->cols[i]];
			const char *text;
			char *big;

			fputc(',', out);
			text = batch_machine_text(p, col, view, row, snap, buf, sizeof(buf), &big);
			if (text && col->kind == VT_VALUE_STRING)
				batch_csv_value(out, text);
			else if (text)
				fputs(text, out);
			free(big);
		}
		fputs("\r\n", out);
	}
}
