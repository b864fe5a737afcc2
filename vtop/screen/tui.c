/*
 * tui.c: the screen.  This file owns curses: the loop, the header meters,
 * the process list, the prompt and message line, and the key table.
 *
 * The loop polls two fds: the terminal and the sampler's eventfd.  Keys are
 * read until none is left, each handled at once against the snapshot in
 * hand (moving, sorting, filtering and searching never wait for a sample),
 * and the screen is drawn once when they are all done: a burst of keys is
 * all handled, and costs one frame.  A new snapshot is taken when the
 * sampler says so; the view is rebuilt from it and drawn.
 *
 * Degrading: the header shrinks to one line below 12 lines and goes below
 * 6; columns that do not fit are cut from the right, COMMAND first gets
 * what is left; every dialog fits itself into what there is.  Nothing is
 * ever refused for size.  Without colour (NO_COLOR, --color never, a
 * monochrome terminal) the same distinctions are made with attributes, and
 * each mark that colour shows is also a letter (X exited, N new, * tagged).
 */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tui.h"

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tui_message(tui_t *t, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_error = error;
	/* errors stay until a key; news goes after a few seconds */
	t->msg_until = error ? 0 : now_mono() + 4;
}

/* --- text of any width --- */

static int char_width(const char *s, size_t *bytes)
{
	mbstate_t st;
	wchar_t wc;
	size_t n;
	int w;

	memset(&st, 0, sizeof(st));
	n = mbrtowc(&wc, s, MB_CUR_MAX, &st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		*bytes = 1;
		return 1;
	}
	*bytes = n;
	w = wcwidth(wc);
	return w < 0 ? 1 : w;
}

int tui_text_width(const char *s)
{
	int w = 0;

	while (*s) {
		size_t n;

		w += char_width(s, &n);
		s += n;
	}
	return w;
}

/*
 * Draw s at (y, x), skipping its first `skip` columns and using at most
 * `width`: the text comes from vmon_escape(), so it is printable, but a
 * wide character must not be cut in half at either end.
 */
int tui_text(int y, int x, int width, const char *s, int skip)
{
	const char *start;
	int col = 0, used = 0;
	size_t n;

	if (width <= 0)
		return 0;
	while (*s && col < skip) {
		col += char_width(s, &n);
		s += n;
	}
	/* a wide character cut by the skip: a blank in its place */
	if (col > skip) {
		mvaddch(y, x++, ' ');
		used++;
	}
	start = s;
	while (*s) {
		int w = char_width(s, &n);

		if (used + w > width)
			break;
		used += w;
		s += n;
	}
	mvaddnstr(y, x, start, (int)(s - start));
	return used;
}

void tui_fill(int y, int x, int width, int attr)
{
	if (width <= 0)
		return;
	attron(attr);
	mvhline(y, x, ' ', width);
	attroff(attr);
}

void tui_box(int y, int x, int h, int w, const char *title, int attr)
{
	attron(attr);
	for (int i = 0; i < h; i++)
		mvhline(y + i, x, ' ', w);
	if (h >= 2 && w >= 2) {
		mvhline(y, x + 1, ACS_HLINE, w - 2);
		mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
		mvvline(y + 1, x, ACS_VLINE, h - 2);
		mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
		mvaddch(y, x, ACS_ULCORNER);
		mvaddch(y, x + w - 1, ACS_URCORNER);
		mvaddch(y + h - 1, x, ACS_LLCORNER);
		mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
	}
	if (title && w > 4)
		tui_text(y, x + 2, w - 4, title, 0);
	attroff(attr);
}

/* --- colours --- */

static void init_colors(tui_t *t)
{
	static const struct { short fg, bg; int mono; } pairs[C_NR] = {
		[C_NORMAL] = { -1, -1, A_NORMAL },
		[C_METER_LABEL] = { COLOR_CYAN, -1, A_BOLD },
		[C_BAR_USER] = { COLOR_GREEN, -1, A_BOLD },
		[C_BAR_NICE] = { COLOR_BLUE, -1, A_NORMAL },
		[C_BAR_SYSTEM] = { COLOR_RED, -1, A_BOLD },
		[C_BAR_OTHER] = { COLOR_MAGENTA, -1, A_NORMAL },
		[C_BAR_MEM] = { COLOR_GREEN, -1, A_BOLD },
		[C_BAR_CACHE] = { COLOR_YELLOW, -1, A_NORMAL },
		[C_HEADER] = { COLOR_BLACK, COLOR_GREEN, A_REVERSE },
		[C_SELECTED] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
		[C_EXITED] = { COLOR_RED, -1, A_BOLD },
		[C_NEW] = { COLOR_GREEN, -1, A_BOLD },
		[C_KTHREAD] = { COLOR_BLUE, -1, A_DIM },
		[C_CONTEXT] = { COLOR_WHITE, -1, A_DIM },
		[C_THREAD] = { COLOR_GREEN, -1, A_NORMAL },
		[C_TREE] = { COLOR_CYAN, -1, A_NORMAL },
		[C_FKEY] = { COLOR_WHITE, -1, A_BOLD },
		[C_FKEY_LABEL] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
		[C_ERROR] = { COLOR_WHITE, COLOR_RED, A_REVERSE | A_BOLD },
		[C_DIALOG] = { COLOR_BLACK, COLOR_WHITE, A_REVERSE },
		[C_TAGGED] = { COLOR_YELLOW, -1, A_BOLD },
	};

	for (int i = 1; i < C_NR; i++)
		t->attrs[i] = pairs[i].mono;
	if (!t->color)
		return;
	start_color();
	use_default_colors();
	for (int i = 1; i < C_NR; i++) {
		short fg = pairs[i].fg, bg = pairs[i].bg;

		/* with 256 colours the dim text is a grey, not a faint white */
		if (COLORS >= 256 && i == C_CONTEXT)
			fg = 244;
		if (COLORS >= 256 && i == C_KTHREAD)
			fg = 67;
		init_pair((short)i, fg, bg);
		t->attrs[i] = COLOR_PAIR(i) | ((i == C_FKEY || i == C_EXITED || i == C_NEW) ? A_BOLD : 0);
	}
}

/* --- the model, kept in step with the settings --- */

/*
 * A user's name as the list shows it: from a row of theirs (the builder
 * resolved it), else from the user database as the builder does, else the
 * number.
 */
const char *tui_user_name(const tui_t *t, uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];

	for (int i = 0; i < t->snap->rows_nr; i++) {
		if (t->snap->rows[i].uid == uid && t->snap->rows[i].user && strcmp(t->snap->rows[i].user, "?"))
			return t->snap->rows[i].user;
	}
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, size, "%s", res->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

const vt_row_t *tui_selected(const tui_t *t)
{
	return vt_view_row(&t->view, t->snap, t->view.cursor);
}

void tui_rebuild(tui_t *t)
{
	vt_view_build(&t->view, t->snap);
	t->cfg->tree = t->view.tree;
	memcpy(t->cfg->sort_col, t->view.sort_col, sizeof(t->cfg->sort_col));
	memcpy(t->cfg->sort_desc, t->view.sort_desc, sizeof(t->cfg->sort_desc));
	t->cfg->threads = t->view.show_threads;
	t->cfg->kthreads = t->view.show_kthreads;
	t->cfg->exited_rows = t->view.show_exited;
	t->cfg->show_path = t->view.show_path;
}

/* the columns or the threads toggle changed what must be sampled */
void tui_apply_columns(tui_t *t)
{
	t->wants = vt_columns_wants(t->cfg->columns, t->cfg->columns_nr);
	vt_sampler_set_wants(t->sampler, t->wants, t->view.show_threads);
	memset(t->widths_for, 0, sizeof(t->widths_for));
}

/* --- the header --- */

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
static int draw_header(tui_t *t, int h, int w)
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

/* --- the list --- */

/*
 * On a narrow terminal the line-filling column (COMMAND) keeps at least a
 * few characters: the other columns are left out from the right, except the
 * first and the one the list is sorted by.
 */
static void drop_columns(tui_t *t)
{
	const vt_config_t *cfg = t->cfg;
	int need = 2, fill = -1, sort = vt_view_sort_col(&t->view), room = COLS - 12;

	for (int i = 0; i < cfg->columns_nr; i++) {
		t->shown[i] = true;
		if (t->widths[i])
			need += t->widths[i] + 1;
		else if (fill < 0)
			fill = i;
	}
	if (fill < 0)
		room = COLS;
	for (int i = cfg->columns_nr - 1; i > 0 && need > room; i--) {
		if (!t->widths[i] || cfg->columns[i] == sort)
			continue;
		t->shown[i] = false;
		need -= t->widths[i] + 1;
	}
}

/* the width of each shown column: labels, the rows on screen, and never narrower than before */
static void column_widths(tui_t *t, int first, int last)
{
	const vt_config_t *cfg = t->cfg;
	char buf[512];

	for (int i = 0; i < cfg->columns_nr; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int w = (int)strlen(col->label) + (cfg->columns[i] == vt_view_sort_col(&t->view));

		if (t->widths_for[i] != cfg->columns[i] + 1) {
			t->widths_for[i] = cfg->columns[i] + 1;
			t->widths[i] = 0;
		}
		if (col->width == 0) {
			t->widths[i] = 0;
			continue;
		}
		if (col->derived) {
			if (w < col->width)
				w = col->width;
		} else {
			for (int l = first; l < last; l++) {
				int n = vt_column_format(col, vt_view_row(&t->view, t->snap, l), t->snap, buf,
							 sizeof(buf), false);

				n = n < 0 ? 1 : tui_text_width(buf);
				if (n > w)
					w = n;
			}
			if (col->left && w > 24)
				w = 24;
		}
		if (w > t->widths[i])
			t->widths[i] = w;
	}
	drop_columns(t);
}

static int row_attr(const tui_t *t, const vt_row_t *row, unsigned char flags, bool selected)
{
	if (selected)
		return t->attrs[C_SELECTED];
	if (row->flags & VT_ROW_EXITED)
		return t->attrs[C_EXITED];
	if (vt_view_is_tagged(&t->view, row))
		return t->attrs[C_TAGGED];
	if (row->flags & VT_ROW_NEW)
		return t->attrs[C_NEW];
	if (flags & VT_LINE_CONTEXT)
		return t->attrs[C_CONTEXT];
	if (row->flags & VT_ROW_KTHREAD)
		return t->attrs[C_KTHREAD];
	if (row->flags & VT_ROW_THREAD)
		return t->attrs[C_THREAD];
	return t->attrs[C_NORMAL];
}

static void draw_column_header(tui_t *t, int y, int w)
{
	const vt_config_t *cfg = t->cfg;
	int x = 2, sort = vt_view_sort_col(&t->view);
	char label[64];

	tui_fill(y, 0, w, t->attrs[C_HEADER]);
	attron(t->attrs[C_HEADER]);
	for (int i = 0; i < cfg->columns_nr; i++)
		t->col_x[i] = t->col_x_end[i] = -1;
	for (int i = 0; i < cfg->columns_nr && x < w; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int cw = t->widths[i] ? t->widths[i] : w - x;
		const char *arrow = "";

		if (!t->shown[i])
			continue;
		if (cfg->columns[i] == sort)
			arrow = vt_view_sort_desc(&t->view) ? (t->utf8 ? "\u25bc" : "v") : (t->utf8 ? "\u25b2" : "^");
		snprintf(label, sizeof(label), "%s%s", col->label, arrow);
		t->col_x[i] = x;
		if (col->left)
			tui_text(y, x, cw < w - x ? cw : w - x, label, 0);
		else
			tui_text(y, x + cw - tui_text_width(label), w - x, label, 0);
		x += cw + 1;
		t->col_x_end[i] = x;
	}
	/* how many are tagged, whatever is shown: kill and renice act on them all, hidden or not */
	if (t->view.tagged_nr) {
		char tags[32];
		int n = snprintf(tags, sizeof(tags), " %d tagged ", t->view.tagged_nr);

		attron(A_BOLD);
		tui_text(y, w > n ? w - n : 0, w, tags, 0);
		attroff(A_BOLD);
	}
	attroff(t->attrs[C_HEADER]);
}

static void draw_row(tui_t *t, int y, int w, int line)
{
	const vt_config_t *cfg = t->cfg;
	const vt_row_t *row = vt_view_row(&t->view, t->snap, line);
	unsigned char flags = t->view.line_flags[line];
	bool selected = line == t->view.cursor;
	int attr = row_attr(t, row, flags, selected), x = 2;
	char buf[512], prefix[1024];
	char mark = (row->flags & VT_ROW_EXITED) ? 'X' : vt_view_is_tagged(&t->view, row) ? '*' :
		    (row->flags & VT_ROW_NEW) ? 'N' : ' ';

	tui_fill(y, 0, w, attr);
	attron(attr);
	mvaddch(y, 0, (chtype)mark);
	for (int i = 0; i < cfg->columns_nr && x < w; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int cw = t->widths[i], room = w - x;

		if (!t->shown[i])
			continue;
		if (cw == 0) {
			/* the rest of the line: the tree's branches, then the text, scrolled sideways */
			int used = 0;
			const char *text = buf;

			if (col->derived && !strcmp(col->name, "command")) {
				vt_view_tree_prefix(&t->view, line, t->utf8, room / 2, prefix, sizeof(prefix));
				text = vt_view_command(&t->view, row);
			} else {
				prefix[0] = '\0';
				if (vt_column_format(col, row, t->snap, buf, sizeof(buf), false) < 0)
					text = "-";
			}
			if (!selected)
				attron(t->attrs[C_TREE]);
			used = tui_text(y, x, room, prefix, 0);
			if (!selected) {
				attroff(t->attrs[C_TREE]);
				attron(attr);
			}
			tui_text(y, x + used, room - used, text, t->hscroll);
			break;
		}
		if (vt_column_format(col, row, t->snap, buf, sizeof(buf), false) < 0)
			snprintf(buf, sizeof(buf), "-");
		if (col->left) {
			tui_text(y, x, cw < room ? cw : room, buf, 0);
		} else {
			int tw = tui_text_width(buf);

			tui_text(y, x + (cw > tw ? cw - tw : 0), room - (cw > tw ? cw - tw : 0), buf, 0);
		}
		x += cw + 1;
	}
	attroff(attr);
}

static const struct fkey {
	const char	*key;
	const char	*label;
	int		code;
} fkeys[] = {
	{ "F1", "Help", KEY_F(1) }, { "F2", "Setup", KEY_F(2) }, { "F3", "Search", KEY_F(3) },
	{ "F4", "Filter", KEY_F(4) }, { "F5", "Tree", KEY_F(5) }, { "F6", "SortBy", KEY_F(6) },
	{ "F7", "Nice-", KEY_F(7) }, { "F8", "Nice+", KEY_F(8) }, { "F9", "Kill", KEY_F(9) },
	{ "F10", "Quit", KEY_F(10) },
};

static int fkey_x[sizeof(fkeys) / sizeof(fkeys[0]) + 1];

static void draw_bottom(tui_t *t, int y, int w)
{
	char state[300] = "";
	int x = 0;

	move(y, 0);
	clrtoeol();
	if (t->prompt != PROMPT_NONE) {
		char line[400];
		int matches = t->view.matches;
		/* a search or a filter that finds nothing, or a bad regex: the whole line red, as htop's prompt */
		bool failed = (t->prompt == PROMPT_SEARCH && t->search_failed) ||
			      (t->prompt == PROMPT_FILTER && (!t->view.filter_ok || (t->input[0] && !matches)));
		int attr = failed ? t->attrs[C_ERROR] : t->attrs[C_FKEY_LABEL];

		snprintf(line, sizeof(line), "%s%s: %s", t->prompt == PROMPT_SEARCH ? "Search" :
			 t->prompt == PROMPT_TIME ? "Go to" : "Filter",
			 t->prompt == PROMPT_FILTER && t->input_regex ? " (regex)" : "", t->input);
		tui_fill(y, 0, w, attr);
		attron(attr);
		x = tui_text(y, 0, w, line, 0);
		if (t->prompt == PROMPT_FILTER && !t->view.filter_ok)
			snprintf(state, sizeof(state), "  bad regex: %s", t->view.filter_error);
		else if (t->prompt == PROMPT_FILTER)
			snprintf(state, sizeof(state), "  %d match%s  Enter: keep  Esc: clear  ^R: %s", matches,
				 matches == 1 ? "" : "es", t->input_regex ? "substring" : "regex");
		else if (t->prompt == PROMPT_TIME)
			snprintf(state, sizeof(state), "  HH:MM[:SS], YYYY-MM-DD HH:MM[:SS], +SECS, -SECS or #SAMPLE  "
				 "Enter: go  Esc: cancel");
		else
			snprintf(state, sizeof(state), "  %sEnter: done  Esc: back  F3/^N: next  ^P: previous",
				 t->search_failed ? "no match  " : "");
		tui_text(y, x, w - x, state, 0);
		attroff(attr);
		move(y, x < w ? x : w - 1);
		return;
	}
	if (t->msg[0]) {
		int attr = t->msg_error ? t->attrs[C_ERROR] : t->attrs[C_FKEY_LABEL];

		tui_fill(y, 0, w, attr);
		attron(attr);
		tui_text(y, 0, w, t->msg, 0);
		attroff(attr);
		return;
	}
	for (size_t i = 0; i < sizeof(fkeys) / sizeof(fkeys[0]) && x < w; i++) {
		fkey_x[i] = x;
		attron(t->attrs[C_FKEY]);
		x += tui_text(y, x, w - x, fkeys[i].key, 0);
		attroff(t->attrs[C_FKEY]);
		attron(t->attrs[C_FKEY_LABEL]);
		x += tui_text(y, x, w - x, fkeys[i].label, 0);
		x += tui_text(y, x, w - x, " ", 0);
		attroff(t->attrs[C_FKEY_LABEL]);
	}
	fkey_x[sizeof(fkeys) / sizeof(fkeys[0])] = x;
	/* what is narrowing the list, said in words */
	if (t->view.filter[0])
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " filter%s: %s", t->view.filter_regex ?
			 " (regex)" : "", t->view.filter);
	if (t->view.user_set) {
		char name[64];

		snprintf(state + strlen(state), sizeof(state) - strlen(state), " user: %s",
			 tui_user_name(t, t->view.user_uid, name, sizeof(name)));
	}
	if (!t->view.show_exited)
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " exited: hidden");
	if (t->view.follow)
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " FOLLOW");
	if (t->paused)
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " PAUSED");
	if (state[0] && x < w) {
		attron(t->attrs[C_TAGGED]);
		tui_text(y, x, w - x, state, 0);
		attroff(t->attrs[C_TAGGED]);
	}
}

/* with a PSS column shown, its costly source is read for the processes on screen only */
static void visible_rows(tui_t *t)
{
	int pids[512], nr = 0;

	if (t->wants & VMON_WANT_PROC_ROLLUP) {
		for (int y = 0; y < t->list_h && nr < (int)(sizeof(pids) / sizeof(pids[0])); y++) {
			const vt_row_t *row;

			if (t->view.top + y >= t->view.lines_nr)
				break;
			row = vt_view_row(&t->view, t->snap, t->view.top + y);
			if (!(row->flags & (VT_ROW_THREAD | VT_ROW_EXITED)))
				pids[nr++] = row->pid;
		}
	}
	vt_sampler_set_visible(t->sampler, pids, nr);
}

static void draw_list(tui_t *t)
{
	int h = LINES, w = COLS, header, y;

	header = draw_header(t, h, w);
	t->header_y = header;
	t->list_y = header + 1;
	t->list_h = h - header - 2;
	if (t->list_h < 1) {
		/* not even one line: the header goes */
		erase();
		header = 0;
		t->header_y = 0;
		t->list_y = 1;
		t->list_h = h - 2 > 0 ? h - 2 : 0;
	}
	vt_view_scroll_to_cursor(&t->view, t->list_h);
	column_widths(t, t->view.top, t->view.top + t->list_h < t->view.lines_nr ? t->view.top + t->list_h :
		      t->view.lines_nr);
	if (h >= 2)
		draw_column_header(t, t->header_y, w);
	for (y = 0; y < t->list_h; y++) {
		int line = t->view.top + y;

		if (line >= t->view.lines_nr)
			break;
		draw_row(t, t->list_y + y, w, line);
	}
	visible_rows(t);
	if (t->snap->seq == 0 && t->list_h > 0)
		tui_text(t->list_y, 1, w - 1, "sampling...", 0);
	else if (t->view.lines_nr == 0 && t->list_h > 0)
		tui_text(t->list_y, 1, w - 1, "no process matches", 0);
	if (h >= 1)
		draw_bottom(t, h - 1, w);
}

/* --- the panel stack --- */

bool tui_open(tui_t *t, const panel_t *panel)
{
	if (t->panels_nr == TUI_PANELS_MAX)
		return false;
	t->panels[t->panels_nr++] = panel;
	return true;
}

/* the panel at `at` leaves the stack (the list, at 0, never does) */
static void close_panel(tui_t *t, int at)
{
	if (at <= 0)
		return;
	memmove(&t->panels[at], &t->panels[at + 1], sizeof(t->panels[0]) * (size_t)(t->panels_nr - at - 1));
	t->panels_nr--;
}

/* from the topmost full-screen panel up: each dialog over what is below it */
static void draw(tui_t *t)
{
	int from = t->panels_nr - 1;

	erase();
	while (from > 0 && t->panels[from]->dialog)
		from--;
	for (int i = from; i < t->panels_nr; i++) {
		const panel_t *p = t->panels[i];

		if (p->title && !p->dialog && LINES >= 1) {
			char title[512];

			p->title(t, title, sizeof(title));
			tui_fill(0, 0, COLS, t->attrs[C_HEADER]);
			attron(t->attrs[C_HEADER]);
			tui_text(0, 0, COLS, title, 0);
			attroff(t->attrs[C_HEADER]);
		}
		p->draw(t);
	}
	curs_set(t->prompt != PROMPT_NONE && t->panels_nr == 1 ? 1 : 0);
	refresh();
}

/* --- keys --- */

static void act_quit(tui_t *t) { t->quit = true; }
static void act_help(tui_t *t) { help_open(t); }
static void act_setup(tui_t *t) { setup_open(t); }
static void act_events(tui_t *t) { event_log_open(t); }
static void act_details(tui_t *t) { details_open(t); }
/*
 * A replay's pids are a log's: another process may have any of them now, so
 * it is neither signalled nor reniced, and its open files, which a log does
 * not record (vmon_log(5)), are not read from /proc either.
 */
static bool not_in_replay(tui_t *t, const char *what)
{
	if (t->replay)
		tui_message(t, true, "a replay: %s", what);
	return !t->replay;
}

static void act_files(tui_t *t) { if (not_in_replay(t, "a log does not record open files")) files_view_open(t); }
static void act_kill(tui_t *t) { if (not_in_replay(t, "its processes are not to be signalled")) dialog_open_kill(t); }
static void act_nice_down(tui_t *t) { if (not_in_replay(t, "its processes are not to be reniced")) dialog_open_renice(t, -1); }
static void act_nice_up(tui_t *t) { if (not_in_replay(t, "its processes are not to be reniced")) dialog_open_renice(t, 1); }
static void act_ioprio(tui_t *t) { if (not_in_replay(t, "its processes are not to be changed")) sched_open_ioprio(t); }
static void act_affinity(tui_t *t) { if (not_in_replay(t, "its processes are not to be changed")) sched_open_affinity(t); }
static void act_sort_menu(tui_t *t) { dialog_open_sort(t); }
static void act_user_menu(tui_t *t) { dialog_open_user(t); }

static void start_prompt(tui_t *t, tui_prompt_t p)
{
	t->prompt = p;
	t->search_failed = false;
	if (p == PROMPT_FILTER) {
		snprintf(t->input, sizeof(t->input), "%s", t->view.filter);
		t->input_regex = t->view.filter_regex;
	} else {
		t->input[0] = '\0';
		t->search_origin = t->view.cursor;
	}
	t->input_len = strlen(t->input);
}

static void act_search(tui_t *t) { start_prompt(t, PROMPT_SEARCH); }
static void act_filter(tui_t *t) { start_prompt(t, PROMPT_FILTER); }

static void act_tree(tui_t *t)
{
	t->view.tree = !t->view.tree;
	tui_rebuild(t);
	tui_message(t, false, "%s view", t->view.tree ? "tree" : "flat");
}

/* sort by a column, largest first for numbers; the same key again turns the order round, as in htop */
static void sort_by(tui_t *t, int col, bool desc)
{
	if (col < 0)
		return;
	if (vt_view_sort_col(&t->view) == col)
		desc = !vt_view_sort_desc(&t->view);
	vt_view_set_sort(&t->view, col, desc);
	tui_rebuild(t);
}

static void sort_by_name(tui_t *t, const char *name)
{
	int col = vt_column_find(name);

	sort_by(t, col, col >= 0 && vt_columns[col].kind == VT_VALUE_NUMBER);
}

static void act_sort_cpu(tui_t *t) { sort_by_name(t, "cpu_percent"); }
static void act_sort_mem(tui_t *t) { sort_by_name(t, "mem_percent"); }
static void act_sort_time(tui_t *t) { sort_by_name(t, "time"); }
static void act_sort_pid(tui_t *t) { sort_by(t, vt_column_find("pid"), false); }

static void act_sort_invert(tui_t *t)
{
	vt_view_set_sort(&t->view, vt_view_sort_col(&t->view), !vt_view_sort_desc(&t->view));
	tui_rebuild(t);
}

/* < and >: the sort column moves along the shown columns */
static void sort_step(tui_t *t, int dir)
{
	const vt_config_t *cfg = t->cfg;
	int cur = vt_view_sort_col(&t->view), at = -1, next;

	if (!cfg->columns_nr)
		return;
	for (int i = 0; i < cfg->columns_nr; i++) {
		if (cfg->columns[i] == cur)
			at = i;
	}
	next = at < 0 ? 0 : (at + dir + cfg->columns_nr) % cfg->columns_nr;
	vt_view_set_sort(&t->view, cfg->columns[next], vt_columns[cfg->columns[next]].kind == VT_VALUE_NUMBER);
	tui_rebuild(t);
	tui_message(t, false, "sorted by %s", vt_columns[cfg->columns[next]].label);
}

static void act_sort_prev(tui_t *t) { sort_step(t, -1); }
static void act_sort_next(tui_t *t) { sort_step(t, 1); }

static void act_up(tui_t *t) { vt_view_move(&t->view, t->snap, -1); }
static void act_down(tui_t *t) { vt_view_move(&t->view, t->snap, 1); }
static void act_pgup(tui_t *t) { vt_view_move(&t->view, t->snap, -(t->list_h > 1 ? t->list_h - 1 : 1)); }
static void act_pgdn(tui_t *t) { vt_view_move(&t->view, t->snap, t->list_h > 1 ? t->list_h - 1 : 1); }
static void act_home(tui_t *t) { vt_view_select(&t->view, t->snap, 0); }
static void act_end(tui_t *t) { vt_view_select(&t->view, t->snap, t->view.lines_nr - 1); }
static void act_left(tui_t *t) { t->hscroll = t->hscroll > 4 ? t->hscroll - 4 : 0; }
static void act_right(tui_t *t) { t->hscroll += 4; }

static void set_collapsed(tui_t *t, bool collapsed)
{
	const vt_row_t *row = tui_selected(t);

	if (!row || !t->view.tree)
		return;
	vt_view_set_collapsed(&t->view, row, collapsed);
	tui_rebuild(t);
}

static void act_expand(tui_t *t) { set_collapsed(t, false); }
static void act_collapse(tui_t *t) { set_collapsed(t, true); }

static void act_toggle_all(tui_t *t)
{
	vt_view_collapse_all(&t->view, t->snap, t->view.collapsed_nr == 0);
	tui_rebuild(t);
}

static void act_tag(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);

	if (!row)
		return;
	if (row->flags & VT_ROW_EXITED) {
		tui_message(t, true, "%d has exited: there is nothing to tag", row->pid);
		return;
	}
	vt_view_set_tagged(&t->view, row, !vt_view_is_tagged(&t->view, row));
	vt_view_move(&t->view, t->snap, 1);
}

/* c: tag the process and everything below it */
static void act_tag_tree(tui_t *t)
{
	int line = t->view.cursor, depth;

	if (!tui_selected(t))
		return;
	depth = t->view.line_depth[line];
	do {
		vt_view_set_tagged(&t->view, vt_view_row(&t->view, t->snap, line), true);
		line++;
	} while (t->view.tree && line < t->view.lines_nr && t->view.line_depth[line] > depth);
}

static void act_untag(tui_t *t) { vt_view_clear_tags(&t->view); }

static void act_follow(tui_t *t)
{
	t->view.follow = !t->view.follow && tui_selected(t);
	tui_message(t, false, t->view.follow ? "following %d" : "not following", t->view.sel.pid);
}

static void act_threads(tui_t *t)
{
	t->view.show_threads = !t->view.show_threads;
	tui_apply_columns(t);
	tui_rebuild(t);
	tui_message(t, false, "threads %s%s", t->view.show_threads ? "shown" : "hidden",
		    t->view.show_threads ? " from the next sample" : "");
}

static void act_kthreads(tui_t *t)
{
	t->view.show_kthreads = !t->view.show_kthreads;
	tui_rebuild(t);
	tui_message(t, false, "kernel threads %s", t->view.show_kthreads ? "shown" : "hidden");
}

/* X: exited rows hidden or shown (the header still counts what exited) */
static void act_exited(tui_t *t)
{
	t->view.show_exited = !t->view.show_exited;
	tui_rebuild(t);
	tui_message(t, false, "exited processes %s", t->view.show_exited ? "shown" : "hidden");
}

static void act_path(tui_t *t)
{
	t->view.show_path = !t->view.show_path;
	tui_rebuild(t);
}

/* Z, in the list and in the event log (which then stands still to be read) */
void tui_toggle_pause(tui_t *t)
{
	t->paused = !t->paused;
	vt_sampler_set_paused(t->sampler, t->paused);
	if (t->replay)
		tui_message(t, false, t->paused ? "paused: Z to play, [ and ] to step" : "playing at %gx", t->speed);
	else
		tui_message(t, false, t->paused ? "paused: Z to go on" : "sampling again");
}

/* --- replay (-r) --- */

static void act_step(tui_t *t, int delta)
{
	t->paused = true;
	vt_sampler_replay_step(t->sampler, delta);
}

static void act_step_back(tui_t *t) { act_step(t, -1); }
static void act_step_on(tui_t *t) { act_step(t, 1); }

static void act_speed(tui_t *t, double factor)
{
	double speed = t->speed * factor;

	if (speed < 1.0 / 16 || speed > 256) {
		tui_message(t, true, "%gx is as %s as a replay goes", t->speed, factor > 1 ? "fast" : "slow");
		return;
	}
	t->speed = speed;
	vt_sampler_set_speed(t->sampler, speed);
	tui_message(t, false, "%gx the pace recorded", speed);
}

static void act_faster(tui_t *t) { act_speed(t, 2); }
static void act_slower(tui_t *t) { act_speed(t, 0.5); }
static void act_goto(tui_t *t) { start_prompt(t, PROMPT_TIME); }

/* seconds with an optional unit: 90, 90s, 5m, 2h */
static bool parse_span(const char *s, double *secs)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return false;
	if (*end == 'm')
		v *= 60, end++;
	else if (*end == 'h')
		v *= 3600, end++;
	else if (*end == 's')
		end++;
	*secs = v;
	return !*end;
}

/* the prompt's text as a sample index (#N) or a time; false if it is neither */
static bool parse_goto(const tui_t *t, const char *in, long *index, double *when)
{
	time_t now = (time_t)t->snap->when;
	struct tm tm;
	const char *end;
	double secs;
	long n;

	*index = -1;
	while (*in == ' ')
		in++;
	if (in[0] == '#') {
		char *e;

		n = strtol(in + 1, &e, 10);
		if (e == in + 1 || *e || n < 1)
			return false;
		*index = n - 1;
		return true;
	}
	if ((in[0] == '+' || in[0] == '-') && parse_span(in + 1, &secs)) {
		*when = t->snap->when + (in[0] == '+' ? secs : -secs);
		return true;
	}
	localtime_r(&now, &tm);
	tm.tm_sec = 0;
	end = strptime(in, "%Y-%m-%d %H:%M:%S", &tm);
	if (!end || *end)
		end = strptime(in, "%Y-%m-%d %H:%M", &tm);
	if (!end || *end) {
		/* a time of the day of the sample shown */
		localtime_r(&now, &tm);
		tm.tm_sec = 0;
		end = strptime(in, "%H:%M:%S", &tm);
		if (!end || *end)
			end = strptime(in, "%H:%M", &tm);
	}
	if (!end || *end)
		return false;
	tm.tm_isdst = -1;
	*when = (double)mktime(&tm);
	return true;
}

static void goto_typed(tui_t *t)
{
	double when = 0;
	long index;

	if (!parse_goto(t, t->input, &index, &when)) {
		tui_message(t, true, "go to: \"%s\" is no time (HH:MM[:SS], +SECS, -SECS, #SAMPLE)", t->input);
		return;
	}
	if (index >= 0)
		vt_sampler_replay_goto(t->sampler, index);
	else
		vt_sampler_replay_seek(t->sampler, when);
}

static void act_redraw(tui_t *t)
{
	(void)t;
	clearok(curscr, TRUE);
}

/* n, N, and F3, ^N, ^P in the search prompt: the next match of the last search either way */
static void search_step(tui_t *t, int dir)
{
	int line = vt_view_search(&t->view, t->snap, t->search, t->view.cursor + dir, dir);

	t->search_failed = line < 0 && t->search[0];
	if (line >= 0)
		vt_view_pick(&t->view, t->snap, line);
	else if (t->search[0] && t->prompt == PROMPT_NONE)
		tui_message(t, true, "no process matches \"%s\"", t->search);
}

static void act_next_match(tui_t *t) { search_step(t, 1); }
static void act_prev_match(tui_t *t) { search_step(t, -1); }

typedef void (*action_fn)(tui_t *t);

/* the key map: htop's, plus what vtop adds; the help screen is made from it */
static const struct action {
	int		keys[4];
	action_fn	fn;
	const char	*names;
	const char	*help;
} actions[] = {
	{ { KEY_UP, 'P' - 'A' + 1, 0 }, act_up, "Up ^P", "select the line above" },
	{ { KEY_DOWN, 'N' - 'A' + 1, 0 }, act_down, "Down ^N", "select the line below" },
	{ { KEY_PPAGE, 0 }, act_pgup, "PgUp", "a page up" },
	{ { KEY_NPAGE, 0 }, act_pgdn, "PgDn", "a page down" },
	{ { KEY_HOME, 0 }, act_home, "Home", "the first line" },
	{ { KEY_END, 0 }, act_end, "End", "the last line" },
	{ { KEY_LEFT, 0 }, act_left, "Left Right", "scroll the command lines sideways" },
	{ { KEY_RIGHT, 0 }, act_right, NULL, NULL },
	{ { KEY_F(1), 'h', '?', 0 }, act_help, "F1 h ?", "this help" },
	{ { KEY_F(2), 'S', 'C', 0 }, act_setup, "F2 S C", "setup: columns and options, saved to vtoprc" },
	{ { KEY_F(3), '/', 0 }, act_search, "F3 /", "search the command lines as you type" },
	{ { 'n', 0 }, act_next_match, "n N", "the next or previous match of the last search" },
	{ { 'N', 0 }, act_prev_match, NULL, NULL },
	{ { KEY_F(4), '\\', 0 }, act_filter, "F4 \\", "filter: show only matching processes (^R: regular expression)" },
	{ { 'u', 0 }, act_user_menu, "u", "show one user's processes only" },
	{ { KEY_F(5), 't', 0 }, act_tree, "F5 t", "tree or flat list" },
	{ { '+', '=', 0 }, act_expand, "+ -", "unfold or fold the selected process's children" },
	{ { '-', 0 }, act_collapse, NULL, NULL },
	{ { '*', 0 }, act_toggle_all, "*", "fold or unfold everything" },
	{ { KEY_F(6), 0 }, act_sort_menu, "F6", "choose the sort column" },
	{ { '<', ',', 0 }, act_sort_prev, "< >", "sort by the previous or next column" },
	{ { '>', '.', 0 }, act_sort_next, NULL, NULL },
	{ { 'P', 0 }, act_sort_cpu, "P M T", "sort by CPU%, MEM% or TIME+ (again: reverse)" },
	{ { 'M', 0 }, act_sort_mem, NULL, NULL },
	{ { 'T', 0 }, act_sort_time, NULL, NULL },
	{ { 'I', 0 }, act_sort_invert, "I", "reverse the sort order" },
	{ { 'O', 0 }, act_sort_pid, "O", "sort by PID, lowest first (again: reverse)" },
	{ { KEY_F(7), ']', 0 }, act_nice_down, "F7 ]", "renice: more priority (lower nice; root only)" },
	{ { KEY_F(8), '[', 0 }, act_nice_up, "F8 [", "renice: less priority (higher nice)" },
	{ { KEY_F(9), 'k', 0 }, act_kill, "F9 k", "send a signal to the selected or tagged processes" },
	{ { 'i', 0 }, act_ioprio, "i", "I/O priority of the selected process: class and level (realtime: root only)" },
	{ { 'a', 0 }, act_affinity, "a", "CPU affinity of the selected process: the CPUs it may run on" },
	{ { ' ', 0 }, act_tag, "Space", "tag or untag the process (kill and renice act on all tagged)" },
	{ { 'c', 0 }, act_tag_tree, "c", "tag the process and its descendants" },
	{ { 'U', 0 }, act_untag, "U", "untag all" },
	{ { 'F', 0 }, act_follow, "F", "follow the selected process wherever the sort puts it" },
	{ { 'H', 0 }, act_threads, "H", "show or hide threads" },
	{ { 'K', 0 }, act_kthreads, "K", "show or hide kernel threads" },
	{ { 'X', 0 }, act_exited, "X", "show or hide exited processes (the X rows)" },
	{ { 'p', 0 }, act_path, "p", "show the program's path or only its name" },
	{ { 'Z', 'z', 0 }, tui_toggle_pause, "Z", "pause or resume sampling" },
	{ { '\n', '\r', KEY_ENTER, 0 }, act_details, "Enter", "details: command line, exe, cwd, environment, children" },
	{ { 'e', 0 }, act_events, "e", "the event log: processes that started and exited" },
	{ { 'l', 0 }, act_files, "l", "open files of the process (lsof), and who else holds its pipes and sockets" },
	{ { 'L' - 'A' + 1, 0 }, act_redraw, "^L", "redraw the screen" },
	{ { KEY_F(10), 'q', 0 }, act_quit, "F10 q", "quit" },
};

/* -r: these first (t goes to a time there; F5 still switches the tree) */
static const struct action replay_actions[] = {
	{ { 't', 0 }, act_goto, "t", "replay: go to a time: HH:MM[:SS], +SECS, -SECS, or #N for sample N" },
	{ { '[', 0 }, act_step_back, "[ ]", "replay: one sample back or on, and pause (Z plays again)" },
	{ { ']', 0 }, act_step_on, NULL, NULL },
	{ { '{', 0 }, act_slower, "{ }", "replay: half or twice the pace" },
	{ { '}', 0 }, act_faster, NULL, NULL },
};

#define ACTIONS_NR ((int)(sizeof(actions) / sizeof(actions[0])))
#define REPLAY_ACTIONS_NR ((int)(sizeof(replay_actions) / sizeof(replay_actions[0])))

/* the help screen lists the table above */
int tui_key_help_nr(void)
{
	return ACTIONS_NR + REPLAY_ACTIONS_NR;
}

const char *tui_key_help_keys(int i)
{
	return i < ACTIONS_NR ? actions[i].names : replay_actions[i - ACTIONS_NR].names;
}

const char *tui_key_help_text(int i)
{
	return i < ACTIONS_NR ? actions[i].help : replay_actions[i - ACTIONS_NR].help;
}

/* digits: jump to the pid typed so far */
static bool pid_key(tui_t *t, int ch)
{
	size_t len;
	int line;

	if (ch < '0' || ch > '9')
		return false;
	if (now_mono() - t->pid_typed_at > 1.5)
		t->pid_typed[0] = '\0';
	len = strlen(t->pid_typed);
	if (len + 1 < sizeof(t->pid_typed)) {
		t->pid_typed[len] = (char)ch;
		t->pid_typed[len + 1] = '\0';
	}
	t->pid_typed_at = now_mono();
	line = vt_view_find_line(&t->view, t->snap, atoi(t->pid_typed));
	if (line >= 0)
		vt_view_pick(&t->view, t->snap, line);
	tui_message(t, line < 0, line < 0 ? "no process %s shown" : "pid %s", t->pid_typed);
	return true;
}

static void prompt_key(tui_t *t, int ch)
{
	bool changed = false;

	switch (ch) {
	case 27:	/* Esc: a search goes back where it began; a filter is cleared */
		if (t->prompt == PROMPT_TIME) {
			/* nothing to undo */
		} else if (t->prompt == PROMPT_FILTER) {
			vt_view_set_filter(&t->view, "", false);
			tui_rebuild(t);
		} else {
			vt_view_select(&t->view, t->snap, t->search_origin);
		}
		t->prompt = PROMPT_NONE;
		return;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (t->prompt == PROMPT_SEARCH)
			snprintf(t->search, sizeof(t->search), "%s", t->input);
		if (t->prompt == PROMPT_TIME)
			goto_typed(t);
		t->prompt = PROMPT_NONE;
		return;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (t->input_len) {
			/* a whole UTF-8 character */
			do
				t->input_len--;
			while (t->input_len && ((unsigned char)t->input[t->input_len] & 0xc0) == 0x80);
			t->input[t->input_len] = '\0';
			changed = true;
		}
		break;
	case 'U' - 'A' + 1:	/* ^U: erase */
		t->input_len = 0;
		t->input[0] = '\0';
		changed = true;
		break;
	case 'R' - 'A' + 1:	/* ^R: regex or substring */
		if (t->prompt == PROMPT_FILTER) {
			t->input_regex = !t->input_regex;
			changed = true;
		}
		break;
	case KEY_F(3):
	case 'N' - 'A' + 1:
		snprintf(t->search, sizeof(t->search), "%s", t->input);
		act_next_match(t);
		return;
	case 'P' - 'A' + 1:
		snprintf(t->search, sizeof(t->search), "%s", t->input);
		act_prev_match(t);
		return;
	case KEY_UP:
	case KEY_DOWN:
		t->prompt = PROMPT_NONE;
		vt_view_move(&t->view, t->snap, ch == KEY_UP ? -1 : 1);
		return;
	default:
		if (ch >= 0x20 && ch < 0x100 && ch != 0x7f && t->input_len + 1 < sizeof(t->input)) {
			t->input[t->input_len++] = (char)ch;
			t->input[t->input_len] = '\0';
			changed = true;
		}
		break;
	}
	if (!changed || t->prompt == PROMPT_TIME)
		return;
	if (t->prompt == PROMPT_FILTER) {
		vt_view_set_filter(&t->view, t->input, t->input_regex);
		tui_rebuild(t);
	} else {
		int line = vt_view_search(&t->view, t->snap, t->input, t->search_origin, 1);

		/* as htop: nothing found turns the prompt red (and says so, for a screen without colour) */
		t->search_failed = line < 0 && t->input[0];
		if (line >= 0)
			vt_view_pick(&t->view, t->snap, line);
	}
}

static void mouse_key(tui_t *t)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & BUTTON4_PRESSED) {
		vt_view_move(&t->view, t->snap, -3);
		return;
	}
	if (ev.bstate & (BUTTON5_PRESSED)) {
		vt_view_move(&t->view, t->snap, 3);
		return;
	}
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return;
	if (ev.y == t->header_y) {
		/* a click on a column's header sorts by it; again, the other way */
		for (int i = 0; i < t->cfg->columns_nr; i++) {
			if (t->col_x[i] >= 0 && ev.x >= t->col_x[i] && ev.x < t->col_x_end[i]) {
				sort_by_name(t, vt_columns[t->cfg->columns[i]].name);
				return;
			}
		}
	} else if (ev.y >= t->list_y && ev.y < t->list_y + t->list_h) {
		int line = t->view.top + ev.y - t->list_y;

		if (line < t->view.lines_nr)
			vt_view_pick(&t->view, t->snap, line);
	} else if (ev.y == LINES - 1 && t->prompt == PROMPT_NONE && !t->msg[0]) {
		for (size_t i = 0; i < sizeof(fkeys) / sizeof(fkeys[0]); i++) {
			if (ev.x >= fkey_x[i] && ev.x < fkey_x[i + 1]) {
				ungetch(fkeys[i].code);
				return;
			}
		}
	}
}

static void list_key(tui_t *t, int ch)
{
	if (t->prompt != PROMPT_NONE) {
		prompt_key(t, ch);
		return;
	}
	if (ch == KEY_MOUSE) {
		mouse_key(t);
		return;
	}
	if (ch == 27) {
		t->msg[0] = '\0';
		return;
	}
	if (pid_key(t, ch))
		return;
	for (int i = 0; t->replay && i < REPLAY_ACTIONS_NR; i++) {
		for (int k = 0; k < 4 && replay_actions[i].keys[k]; k++) {
			if (replay_actions[i].keys[k] == ch) {
				replay_actions[i].fn(t);
				return;
			}
		}
	}
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		for (int k = 0; k < 4 && actions[i].keys[k]; k++) {
			if (actions[i].keys[k] == ch) {
				actions[i].fn(t);
				return;
			}
		}
	}
}

static panel_next_t list_panel_key(tui_t *t, int ch)
{
	list_key(t, ch);
	return t->quit ? PANEL_QUIT : PANEL_STAY;
}

const panel_t list_panel = { "list", false, NULL, draw_list, list_panel_key };

/* a key for the top panel */
static void handle_key(tui_t *t, int ch)
{
	int top = t->panels_nr - 1;

	if (ch == KEY_RESIZE)
		return;
	/* an error stays until the next key, which also does its own work */
	if (t->msg[0] && t->msg_until == 0)
		t->msg[0] = '\0';
	switch (t->panels[top]->key(t, ch)) {
	case PANEL_STAY:
		break;
	case PANEL_CLOSE:
		/* the panel may have opened another above itself, which stays */
		close_panel(t, top);
		break;
	case PANEL_QUIT:
		t->quit = true;
		break;
	}
}

static void new_snapshot(tui_t *t)
{
	const char *err;

	vt_view_build(&t->view, t->snap);
	/* a replay that jumped: the event log is what happened up to the sample it jumped to */
	if (t->replay && t->snap->seq != t->last_seq + 1)
		event_log_clear(t);
	t->last_seq = t->snap->seq;
	event_log_add(t, t->snap);
	/* a search typed that found nothing yet: the process it is for may have come */
	if (t->prompt == PROMPT_SEARCH && t->search_failed) {
		int line = vt_view_search(&t->view, t->snap, t->input, t->search_origin, 1);

		t->search_failed = line < 0;
		if (line >= 0)
			vt_view_pick(&t->view, t->snap, line);
	}
	/* once: the header's "(proc)" says which source, this says why it is not the one asked for */
	if (t->snap->source_why[0] && !t->source_told) {
		tui_message(t, true, "no task iterator (%s): sampling /proc", t->snap->source_why);
		t->source_told = true;
	}
	err = vt_sampler_error(t->sampler);
	if (err)
		tui_message(t, true, "%s", err);
}

static bool use_color(const vt_config_t *cfg)
{
	const char *no_color = getenv("NO_COLOR");

	if (cfg->color == VT_COLOR_NEVER)
		return false;
	/* https://no-color.org: set and not empty means no colour, unless asked for on the command line */
	if (cfg->color == VT_COLOR_AUTO && no_color && no_color[0])
		return false;
	return has_colors();
}

int vt_tui_run(vt_config_t *cfg)
{
	tui_t *t = calloc(1, sizeof(*t));
	char err[256];
	int status = 0;

	if (!t) {
		fprintf(stderr, "vtop: out of memory\n");
		return 1;
	}
	if (event_log_init() < 0) {
		free(t);
		fprintf(stderr, "vtop: out of memory\n");
		return 1;
	}
	t->cfg = cfg;
	t->panels[t->panels_nr++] = &list_panel;
	t->replay = cfg->replay_path[0] != '\0';
	t->speed = 1;
	t->wants = vt_columns_wants(cfg->columns, cfg->columns_nr);
	if (vt_sampler_start(&t->sampler, cfg, t->wants, err, sizeof(err)) < 0) {
		fprintf(stderr, "vtop: %s\n", err);
		event_log_free();
		free(t);
		return 1;
	}
	vt_view_init(&t->view);
	vt_view_configure(&t->view, cfg);
	bool changed;

	t->snap = vt_sampler_take(t->sampler, &changed);
	t->utf8 = !cfg->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");

	if (!initscr()) {
		fprintf(stderr, "vtop: cannot start curses on this terminal\n");
		status = 1;
		goto out;
	}
	t->color = use_color(cfg);
	init_colors(t);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	t->mouse = cfg->mouse;
	if (t->mouse) {
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
		mouseinterval(0);
	}
	if (cfg->warnings[0])
		tui_message(t, true, "settings: %s", cfg->warnings);

	draw(t);
	while (!t->quit) {
		struct pollfd fds[2] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = vt_sampler_fd(t->sampler), .events = POLLIN },
		};
		int timeout = t->msg[0] && t->msg_until ? 250 : -1, ch;
		bool dirty = false;

		if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
			status = 1;
			break;
		}
		if (fds[1].revents & POLLIN) {
			t->snap = vt_sampler_take(t->sampler, &changed);
			if (changed)
				new_snapshot(t);
			/* a replay's wake-up without a sample may be its end, which the header says */
			dirty = changed || t->replay;
		}
		/* every key that is there, each handled before the one drawing */
		while ((ch = getch()) != ERR) {
			handle_key(t, ch);
			dirty = true;
			if (t->quit)
				break;
		}
		if (t->msg[0] && t->msg_until && now_mono() > t->msg_until) {
			t->msg[0] = '\0';
			dirty = true;
		}
		if (dirty && !t->quit)
			draw(t);
	}
	endwin();
out:
	vt_sampler_stop(t->sampler);
	vt_view_free(&t->view);
	dialogs_free();
	sched_free();
	event_log_free();
	free(t);
	return status;
}
