/*
 * text.c: vtop -b's text format, top -b's layout: a summary, then one line
 * per process, its text escaped for a terminal (vmon_escape()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vtop.h"
#include "batch/formats.h"
#include "data/columns.h"
#include "data/model.h"

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
 * cost more than all the rest of a refresh of vtop -b.  And the pieces of a
 * line are short (a number, its padding, a space): a call to memcpy() for
 * each was most of what was left (perf at 10,000 processes: memmove 4.7 %
 * of vtop -b, all from here), so a piece of at most SHORT_PIECE bytes is
 * copied as one block of that size, a constant the compiler copies with a
 * few moves, and padding is set so too.  The bytes past the piece's end
 * are overwritten by the next piece or never written out: the buffer keeps
 * SPACES bytes of room past what it holds (line_room()), where either block
 * fits, and a short piece is only ever copied from a buffer longer than the
 * block (struct text_piece).
 */
#define SHORT_PIECE	16
#define SPACES		32
_Static_assert(SHORT_PIECE <= SPACES, "a short piece's block fits in the room past a line's end");

struct text_line {
	FILE		*out;
	size_t		len;
	unsigned	flushes;	/* buf written out and emptied: what it held is gone */
	char		buf[16384];
};

/* a column's text, in room a short copy may read past its end */
struct text_piece {
	char	text[8192];
};

static void line_flush(struct text_line *line)
{
	if (line->len)
		fwrite(line->buf, 1, line->len, line->out);
	line->len = 0;
	line->flushes++;
}

/* room for n more bytes, and past them for a block of SPACES (a short piece's, the padding's) */
static inline void line_room(struct text_line *line, size_t n)
{
	if (line->len + n + SPACES > sizeof(line->buf))
		line_flush(line);
}

static void line_put(struct text_line *line, const char *s, size_t n)
{
	if (n + SPACES > sizeof(line->buf)) {
		line_flush(line);
		fwrite(s, 1, n, line->out);
		return;
	}
	line_room(line, n);
	memcpy(line->buf + line->len, s, n);
	line->len += n;
}

static inline void line_char(struct text_line *line, char c)
{
	line_room(line, 1);
	line->buf[line->len++] = c;
}

static inline void line_spaces(struct text_line *line, size_t n)
{
	while (n) {
		size_t k = n < SPACES ? n : SPACES;

		line_room(line, 0);	/* the block is in the room past the end */
		memset(line->buf + line->len, ' ', SPACES);
		line->len += k;
		n -= k;
	}
}

/* a piece's first len bytes: one block of SHORT_PIECE if they fit in it */
static inline void line_piece(struct text_line *line, const struct text_piece *p, size_t len)
{
	if (len > SHORT_PIECE) {
		line_put(line, p->text, len);
		return;
	}
	line_room(line, 0);	/* the block is in the room past the end */
	memcpy(line->buf + line->len, p->text, SHORT_PIECE);
	line->len += len;
}

/* a piece as printf's "%*s" puts it: right-aligned in width, left-aligned in -width, never cut */
static void line_field(struct text_line *line, const struct text_piece *p, size_t len, int width)
{
	size_t w = (size_t)(width < 0 ? -width : width), pad = w > len ? w - len : 0;

	if (width < 0)
		line_piece(line, p, len);
	if (pad)
		line_spaces(line, pad);
	if (width >= 0)
		line_piece(line, p, len);
}

/*
 * The columns of a row before its command are the same text refresh after
 * refresh while the process is idle, and making them was most of what
 * writing a line cost (at 10,000 processes, 2.3 of the 4.9 ms of vtop -b's
 * own time a refresh).  So that text is kept with the row's node
 * (vt_row_memo()), good while no sample changed its stores, under a key of
 * what else it was made from: the row's own fields, and an epoch that
 * moves when the snapshot's figures the columns read, or the columns,
 * differ from the last call's (struct memo_context).  Not when a column
 * reads the snapshot's time (the start time's "today" or not), or when the
 * command is not the last column (the text kept is the line's part before
 * it).
 */
struct memo_context {
	long			page_size, ticks_per_sec;
	unsigned long long	mem_total_kb, btime;
	unsigned		escape_flags;
	int			columns_nr;
	int			columns[VT_MAX_COLUMNS];
};

struct memo_key {
	unsigned		epoch;
	int			pid, ppid, exit_code;
	unsigned long long	start;
	double			cpu_pct, io_read_rate, io_write_rate;
	const char		*user;		/* the builder's, one string a user while it lives */
	unsigned short		exited_age;
	unsigned char		flags;
	char			state;
};

#define MEMO_ROOM	1024

static struct memo_context memo_last;
static unsigned memo_epoch;

/* the columns kept with the rows (those before a last command column), or -1: none */
static int memo_columns(const vt_config_t *cfg, const vt_snapshot_t *snap, const bool *is_command)
{
	const vmon_sys_stat_t *ss = snap->sys_stores[VMON_STORE_SYS_STAT];
	struct memo_context now;
	int n = cfg->columns_nr;

	for (int i = 0; i < n; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];

		if ((col->derived && col->derived->timed) || (is_command[i] && i + 1 < n))
			return -1;
	}
	if (n && is_command[n - 1])
		n--;
	memset(&now, 0, sizeof(now));
	now.page_size = snap->page_size;
	now.ticks_per_sec = snap->ticks_per_sec;
	now.mem_total_kb = snap->mem_total_kb;
	now.btime = ss ? ss->btime : 0;
	now.escape_flags = snap->escape_flags;
	now.columns_nr = cfg->columns_nr;
	memcpy(now.columns, cfg->columns, sizeof(now.columns[0]) * (size_t)cfg->columns_nr);
	if (memcmp(&now, &memo_last, sizeof(now)) != 0) {
		memo_last = now;
		memo_epoch++;
	}
	return n;
}

static void memo_key_of(struct memo_key *k, const vt_row_t *row)
{
	memset(k, 0, sizeof(*k));
	k->epoch = memo_epoch;
	k->pid = row->pid;
	k->ppid = row->ppid;
	k->exit_code = row->exit_code;
	k->start = row->start;
	k->cpu_pct = row->cpu_pct;
	k->io_read_rate = row->io_read_rate;
	k->io_write_rate = row->io_write_rate;
	k->user = row->user;
	k->exited_age = row->exited_age;
	/* (what the row is; not where its stores are) */
	k->flags = row->flags & (VT_ROW_THREAD | VT_ROW_KTHREAD | VT_ROW_NEW | VT_ROW_EXITED);
	k->state = row->state;
}

void batch_write_text(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		       bool utf8)
{
	const vmon_sys_loadavg_t *la = snap->sys_stores[VMON_STORE_SYS_LOADAVG];
	const vt_cpu_pct_t *c = &snap->cpu_total;
	time_t now = (time_t)snap->when;
	char when[16], up[48], prefix[4096];
	struct text_piece piece;
	struct text_line line;
	bool is_command[VT_MAX_COLUMNS];
	int kept_nr;
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
	line.flushes = 0;
	kept_nr = memo_columns(cfg, snap, is_command);
	for (int l = 0; l < vt_view_lines(view); l++) {
		const vt_row_t *row = vt_view_row(view, snap, l);
		bool memo = kept_nr > 0;
		struct memo_key key;
		const char *kept = NULL;
		size_t kept_len = 0, from = 0;
		unsigned flushes = 0;
		int i = 0;

		line_char(&line, (row->flags & VT_ROW_EXITED) ? 'X' : (row->flags & VT_ROW_NEW) ? 'N' : ' ');
		line_char(&line, batch_line_is_context(view, l) ? 'c' : ' ');
		if (memo) {
			/* (each step's lines are there when the next one, and vt_row_memo(), read them) */
			for (int step = 0; step < 3; step++) {
				int ahead = l + 2 * (3 - step);

				if (ahead < vt_view_lines(view))
					vt_row_memo_prefetch(vt_view_row(view, snap, ahead), step);
			}
			memo_key_of(&key, row);
			kept = vt_row_memo(row, &key, sizeof(key), &kept_len);
			if (kept) {
				line_put(&line, kept, kept_len);
				i = kept_nr;
			} else {
				/* room for the usual line, so that its columns are still in buf to keep */
				line_room(&line, MEMO_ROOM);
				from = line.len;
				flushes = line.flushes;
			}
		}
		for (;; i++) {
			const vt_column_t *col;
			int len;

			if (i == kept_nr && memo && !kept && line.flushes == flushes)
				vt_row_memo_keep(row, &key, sizeof(key), line.buf + from, line.len - from);
			if (i == cfg->columns_nr)
				break;
			col = &vt_columns[cfg->columns[i]];
			if (i)
				line_char(&line, ' ');
			if (is_command[i]) {
				size_t n = vt_view_tree_prefix(view, l, utf8, 0, prefix, sizeof(prefix));
				const char *text = vt_view_command(view, row);

				line_put(&line, prefix, n < sizeof(prefix) ? n : strlen(prefix));
				line_put(&line, text, strlen(text));
				continue;
			}
			len = vt_column_format(col, row, snap, piece.text, sizeof(piece.text), false);
			if (len < 0) {
				piece.text[0] = '-';
				len = 1;
			} else if ((size_t)len >= sizeof(piece.text)) {
				/* cut to the buffer between whole characters, "..." said (snprintf()'s cut may split one) */
				vt_text_fit(piece.text, sizeof(piece.text) - 1, piece.text, strlen(piece.text));
				len = (int)strlen(piece.text);
			}
			line_field(&line, &piece, (size_t)len, col->left && i + 1 < cfg->columns_nr ? -col->width :
				   col->left ? 0 : col->width);
		}
		line_char(&line, '\n');
	}
	line_flush(&line);
	fputc('\n', out);
}
