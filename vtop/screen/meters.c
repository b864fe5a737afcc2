/*
 * meters.c: the header over the list, as htop's: a bar per CPU (or one for
 * all when they do not fit), memory and swap, and beside them the tasks,
 * load, uptime, exits, the feed and vtop's own cost.  Below 12 lines it is
 * one line of the figures that matter most, below 6 none.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tui.h"

typedef struct segment {
	double	frac;
	char	ch;
	int	attr;
} segment_t;

/* "LBL[||||###     12.3%]": the label, the segments, and text right-aligned inside */
static void draw_bar(tui_t *t, int y, int x, int w, const char *label, const segment_t *segs, int nr,
		     const char *text)
{
	int lw = (int)strlen(label), inner = w - lw - 2, pos = 0, tw = (int)strlen(text);

	if (w < lw + 3)
		return;
	attron(t->attrs[C_METER_LABEL]);
	mvaddstr(y, x, label);
	attroff(t->attrs[C_METER_LABEL]);
	mvaddch(y, x + lw, '[');
	for (int i = 0; i < nr && pos < inner; i++) {
		int n = (int)(segs[i].frac * inner + 0.5);

		if (n > inner - pos)
			n = inner - pos;
		attron(segs[i].attr);
		mvhline(y, x + lw + 1 + pos, (chtype)segs[i].ch, n);
		attroff(segs[i].attr);
		pos += n;
	}
	mvhline(y, x + lw + 1 + pos, ' ', inner - pos);
	if (tw <= inner)
		mvaddstr(y, x + lw + 1 + inner - tw, text);
	mvaddch(y, x + w - 1, ']');
}

static void cpu_bar(tui_t *t, int y, int x, int w, const char *label, const vt_cpu_pct_t *c)
{
	segment_t segs[] = {
		{ c->user / 100, '|', t->attrs[C_BAR_USER] },
		{ c->nice / 100, '+', t->attrs[C_BAR_NICE] },
		{ c->system / 100, '#', t->attrs[C_BAR_SYSTEM] },
		{ (c->irq + c->softirq + c->steal) / 100, '*', t->attrs[C_BAR_OTHER] },
	};
	char text[16];

	snprintf(text, sizeof(text), c->online || !strcmp(label, "CPU") ? "%.1f%%" : "off", c->busy);
	draw_bar(t, y, x, w, label, segs, 4, text);
}

static void mem_bar(tui_t *t, int y, int x, int w, const char *label, unsigned long long used_kb,
		    unsigned long long cache_kb, unsigned long long total_kb)
{
	double total = total_kb ? (double)total_kb : 1;
	segment_t segs[] = {
		{ (double)used_kb / total, '|', t->attrs[C_BAR_MEM] },
		{ (double)cache_kb / total, '*', t->attrs[C_BAR_CACHE] },
	};
	char text[48], a[16], b[16];

	vt_format_size(a, sizeof(a), (double)used_kb * 1024);
	vt_format_size(b, sizeof(b), (double)total_kb * 1024);
	snprintf(text, sizeof(text), "%s/%s", a, b);
	draw_bar(t, y, x, w, label, segs, 2, text);
}

static void uptime_text(char *buf, size_t size, double secs)
{
	unsigned long s = (unsigned long)secs, days = s / 86400;

	if (days)
		snprintf(buf, size, "%lu day%s, %02lu:%02lu:%02lu", days, days == 1 ? "" : "s", s / 3600 % 24,
			 s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%02lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
}

/* the right-hand texts of the header, in order of importance */
static int header_texts(tui_t *t, char lines[][160], int max)
{
	const vt_snapshot_t *s = t->snap;
	const vmon_sys_loadavg_t *la = s->sys_stores[VMON_STORE_SYS_LOADAVG];
	char up[48];
	int n = 0;

	if (n < max)
		snprintf(lines[n++], 160, "Tasks: %d, %d thr, %d kthr; %d running", s->procs - s->kthreads,
			 s->threads, s->kthreads, s->running);
	if (n < max && la)
		snprintf(lines[n++], 160, "Load average: %lu.%02lu %lu.%02lu %lu.%02lu", la->load1 / 100,
			 la->load1 % 100, la->load5 / 100, la->load5 % 100, la->load15 / 100, la->load15 % 100);
	else if (n < max)
		snprintf(lines[n++], 160, "Load average: unknown (%s)", strerror(s->sys_errors[VMON_STORE_SYS_LOADAVG]));
	uptime_text(up, sizeof(up), s->uptime);
	if (n < max)
		snprintf(lines[n++], 160, "Uptime: %s", up);
	if (n < max)
		snprintf(lines[n++], 160, "Exited since last refresh: %d", s->exited_now);
	/* "Feed: ebpf, 120 ev/s, lost 0", or "Feed: none (why)"; in a replay, the recording's */
	if (n < max)
		snprintf(lines[n++], 160, "Feed: %.60s%s%.90s%s", s->feed[0] ? s->feed : "none",
			 s->feed_why[0] ? " (" : "", s->feed_why, s->feed_why[0] ? ")" : "");
	if (n < max && t->replay)
		snprintf(lines[n++], 160, "%.100s%s, %gx%s", s->replay[0] ? s->replay : "replay: no sample yet",
			 vt_sampler_replay_ended(t->sampler) ? " END" : "", t->speed, t->paused ? "; PAUSED" : "");
	else if (n < max)
		snprintf(lines[n++], 160, "vtop: %.1f%% CPU, %.1f ms per sample (%s)%s", s->self_cpu_pct,
			 s->sample_cpu_ms, s->source ? s->source : "?", t->paused ? "; PAUSED" : "");
	return n;
}

/* one line for small terminals: the figures that matter most */
static void draw_compact_header(tui_t *t, int y, int w)
{
	const vt_snapshot_t *s = t->snap;
	const vmon_sys_loadavg_t *la = s->sys_stores[VMON_STORE_SYS_LOADAVG];
	char line[256], mem[16];

	vt_format_size(mem, sizeof(mem), (double)s->mem_used_kb * 1024);
	snprintf(line, sizeof(line), "CPU %.0f%% Mem %s Load %lu.%02lu Tasks %d X %d %s%s%s", s->cpu_total.busy, mem,
		 la ? la->load1 / 100 : 0, la ? la->load1 % 100 : 0, s->procs, s->exited_now,
		 t->replay && s->replay[0] ? "" : "feed ", t->replay && s->replay[0] ? s->replay : s->feed[0] ? s->feed : "none",
		 t->paused ? " PAUSED" : "");
	tui_text(y, 0, w, line, 0);
}

/* the header: returns the lines it took */
int meters_draw(tui_t *t, int h, int w)
{
	const vt_snapshot_t *s = t->snap;
	char texts[6][160], label[16];
	int ntext, cpus = s->cpus_nr, per_line, cpu_lines, left_lines, rows, lw, rx;

	if (h < 6 || s->seq == 0)
		return 0;
	if (h < 12 || w < 30) {
		draw_compact_header(t, 0, w);
		return 1;
	}
	/* CPUs: one bar each while they fit, several per line, or one for all */
	per_line = cpus <= 8 ? 1 : cpus <= 32 ? (w >= 80 ? 2 : 1) * 2 : 0;
	cpu_lines = per_line ? (cpus + per_line - 1) / per_line : 1;
	if (cpu_lines > (h - 6) / 2) {
		per_line = 0;
		cpu_lines = 1;
	}
	left_lines = cpu_lines + 2;
	if (w >= 80) {
		lw = w / 2 - 1;
		rx = w / 2 + 1;
		ntext = header_texts(t, texts, 6);
		rows = left_lines > ntext ? left_lines : ntext;
	} else {
		lw = w;
		rx = 0;
		ntext = header_texts(t, texts, (h - 6) / 2 - left_lines > 0 ? (h - 6) / 2 - left_lines : 0);
		rows = left_lines + ntext;
	}
	if (per_line == 0) {
		cpu_bar(t, 0, 0, lw, "CPU", &s->cpu_total);
	} else {
		int bw = lw / per_line;

		for (int i = 0; i < cpus; i++) {
			snprintf(label, sizeof(label), "%3d", i);
			cpu_bar(t, i / per_line, (i % per_line) * bw, bw - (per_line > 1), label, &s->cpus[i]);
		}
	}
	mem_bar(t, cpu_lines, 0, lw, "Mem", s->mem_used_kb, s->mem_buffers_kb + s->mem_cached_kb, s->mem_total_kb);
	mem_bar(t, cpu_lines + 1, 0, lw, "Swp", s->swap_used_kb, 0, s->swap_total_kb);
	for (int i = 0; i < ntext; i++) {
		int y = w >= 80 ? i : left_lines + i;

		attron(t->attrs[C_METER_LABEL]);
		tui_text(y, rx, w - rx, texts[i], 0);
		attroff(t->attrs[C_METER_LABEL]);
	}
	return rows;
}
