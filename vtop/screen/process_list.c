/*
 * process_list.c: the list panel, at the bottom of the stack: the column
 * header, a line per row of the view, the bottom line (function keys, the
 * prompt, or the message), the key table (htop's keys, and vtop's), the
 * search, filter and go-to prompts, a pid typed, and the mouse.
 *
 * Degrading: columns that do not fit are cut from the right, COMMAND first
 * gets what is left.  Without colour (NO_COLOR, --color never, a monochrome
 * terminal) each mark that colour shows is also a letter (X exited, N new,
 * * tagged).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui.h"

typedef enum {
	PROMPT_NONE,
	PROMPT_SEARCH,
	PROMPT_FILTER,
	PROMPT_TIME,	/* -r: the time to go to */
} prompt_t;

/* the list panel's own: the prompt, a pid being typed, and the layout of the last frame */
static struct {
	prompt_t	prompt;
	char		input[256];	/* the prompt's text as typed */
	size_t		input_len;
	bool		input_regex;
	char		search[256];	/* the last search, for n and N */
	int		search_origin;	/* the line the search started from */
	bool		search_failed;	/* the search as typed finds nothing: the prompt says so, in red */

	/* typing a pid jumps to it */
	char		pid_typed[12];
	double		pid_typed_at;

	/* the layout of the last frame, for the mouse */
	int		list_y;
	int		list_h;
	int		header_y;
	int		col_x[VT_MAX_COLUMNS];	/* where each column's header starts, -1 if not shown */
	int		col_x_end[VT_MAX_COLUMNS];
	int		widths[VT_MAX_COLUMNS];
	int		widths_for[VT_MAX_COLUMNS];	/* the column each width is for */
	bool		shown[VT_MAX_COLUMNS];	/* it fits on this terminal */
	int		hscroll;
	unsigned	columns_gen;	/* the context's columns_gen the widths are for */
} ls;

bool list_prompting(void)
{
	return ls.prompt != PROMPT_NONE;
}

/* a search typed that found nothing yet: the process it is for may have come */
void list_new_snapshot(tui_t *t)
{
	if (ls.prompt == PROMPT_SEARCH && ls.search_failed) {
		int line = vt_view_search(&t->view, t->snap, ls.input, ls.search_origin, 1);

		ls.search_failed = line < 0;
		if (line >= 0)
			vt_view_pick(&t->view, t->snap, line);
	}
}

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
		ls.shown[i] = true;
		if (ls.widths[i])
			need += ls.widths[i] + 1;
		else if (fill < 0)
			fill = i;
	}
	if (fill < 0)
		room = COLS;
	for (int i = cfg->columns_nr - 1; i > 0 && need > room; i--) {
		if (!ls.widths[i] || cfg->columns[i] == sort)
			continue;
		ls.shown[i] = false;
		need -= ls.widths[i] + 1;
	}
}

/* the width of each shown column: labels, the rows on screen, and never narrower than before */
static void column_widths(tui_t *t, int first, int last)
{
	const vt_config_t *cfg = t->cfg;
	char buf[512];

	if (ls.columns_gen != t->columns_gen) {
		memset(ls.widths_for, 0, sizeof(ls.widths_for));
		ls.columns_gen = t->columns_gen;
	}
	for (int i = 0; i < cfg->columns_nr; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int w = (int)strlen(col->label) + (cfg->columns[i] == vt_view_sort_col(&t->view));

		if (ls.widths_for[i] != cfg->columns[i] + 1) {
			ls.widths_for[i] = cfg->columns[i] + 1;
			ls.widths[i] = 0;
		}
		if (col->width == 0) {
			ls.widths[i] = 0;
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
		if (w > ls.widths[i])
			ls.widths[i] = w;
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
		ls.col_x[i] = ls.col_x_end[i] = -1;
	for (int i = 0; i < cfg->columns_nr && x < w; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int cw = ls.widths[i] ? ls.widths[i] : w - x;
		const char *arrow = "";

		if (!ls.shown[i])
			continue;
		if (cfg->columns[i] == sort)
			arrow = vt_view_sort_desc(&t->view) ? (t->utf8 ? "\u25bc" : "v") : (t->utf8 ? "\u25b2" : "^");
		snprintf(label, sizeof(label), "%s%s", col->label, arrow);
		ls.col_x[i] = x;
		if (col->left)
			tui_text(y, x, cw < w - x ? cw : w - x, label, 0);
		else
			tui_text(y, x + cw - tui_text_width(label), w - x, label, 0);
		x += cw + 1;
		ls.col_x_end[i] = x;
	}
	/* how many are tagged, whatever is shown: kill and renice act on them all, hidden or not */
	if (vt_view_tagged_nr(&t->view)) {
		char tags[32];
		int n = snprintf(tags, sizeof(tags), " %d tagged ", vt_view_tagged_nr(&t->view));

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
	unsigned char flags = vt_view_line_flags(&t->view, line);
	bool selected = line == vt_view_cursor(&t->view);
	int attr = row_attr(t, row, flags, selected), x = 2;
	char buf[512], prefix[1024];
	char mark = (row->flags & VT_ROW_EXITED) ? 'X' : vt_view_is_tagged(&t->view, row) ? '*' :
		    (row->flags & VT_ROW_NEW) ? 'N' : ' ';

	tui_fill(y, 0, w, attr);
	attron(attr);
	mvaddch(y, 0, (chtype)mark);
	for (int i = 0; i < cfg->columns_nr && x < w; i++) {
		const vt_column_t *col = &vt_columns[cfg->columns[i]];
		int cw = ls.widths[i], room = w - x;

		if (!ls.shown[i])
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
			tui_text(y, x + used, room - used, text, ls.hscroll);
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
	bool regex;
	const char *filter = vt_view_filter(&t->view, &regex);
	int x = 0;

	move(y, 0);
	clrtoeol();
	if (ls.prompt != PROMPT_NONE) {
		char line[400];
		int matches = vt_view_matches(&t->view);
		/* a search or a filter that finds nothing, or a bad regex: the whole line red, as htop's prompt */
		bool failed = (ls.prompt == PROMPT_SEARCH && ls.search_failed) ||
			      (ls.prompt == PROMPT_FILTER && (vt_view_filter_error(&t->view) || (ls.input[0] && !matches)));
		int attr = failed ? t->attrs[C_ERROR] : t->attrs[C_FKEY_LABEL];

		snprintf(line, sizeof(line), "%s%s: %s", ls.prompt == PROMPT_SEARCH ? "Search" :
			 ls.prompt == PROMPT_TIME ? "Go to" : "Filter",
			 ls.prompt == PROMPT_FILTER && ls.input_regex ? " (regex)" : "", ls.input);
		tui_fill(y, 0, w, attr);
		attron(attr);
		x = tui_text(y, 0, w, line, 0);
		if (ls.prompt == PROMPT_FILTER && vt_view_filter_error(&t->view))
			snprintf(state, sizeof(state), "  bad regex: %s", vt_view_filter_error(&t->view));
		else if (ls.prompt == PROMPT_FILTER)
			snprintf(state, sizeof(state), "  %d match%s  Enter: keep  Esc: clear  ^R: %s", matches,
				 matches == 1 ? "" : "es", ls.input_regex ? "substring" : "regex");
		else if (ls.prompt == PROMPT_TIME)
			snprintf(state, sizeof(state), "  HH:MM[:SS], YYYY-MM-DD HH:MM[:SS], +SECS, -SECS or #SAMPLE  "
				 "Enter: go  Esc: cancel");
		else
			snprintf(state, sizeof(state), "  %sEnter: done  Esc: back  F3/^N: next  ^P: previous",
				 ls.search_failed ? "no match  " : "");
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
	if (filter[0])
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " filter%s: %s", regex ? " (regex)" : "",
			 filter);
	if (vt_view_settings(&t->view)->user_set) {
		char name[64];

		snprintf(state + strlen(state), sizeof(state) - strlen(state), " user: %s",
			 tui_user_name(t, vt_view_settings(&t->view)->user_uid, name, sizeof(name)));
	}
	if (!vt_view_flag(&t->view, VT_VIEW_EXITED))
		snprintf(state + strlen(state), sizeof(state) - strlen(state), " exited: hidden");
	if (vt_view_flag(&t->view, VT_VIEW_FOLLOW))
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
		for (int y = 0; y < ls.list_h && nr < (int)(sizeof(pids) / sizeof(pids[0])); y++) {
			const vt_row_t *row;

			if (vt_view_top(&t->view) + y >= vt_view_lines(&t->view))
				break;
			row = vt_view_row(&t->view, t->snap, vt_view_top(&t->view) + y);
			if (!(row->flags & (VT_ROW_THREAD | VT_ROW_EXITED)))
				pids[nr++] = row->pid;
		}
	}
	vt_sampler_set_visible(t->sampler, pids, nr);
}

static void draw_list(tui_t *t)
{
	int h = LINES, w = COLS, header, y;

	header = meters_draw(t, h, w);
	ls.header_y = header;
	ls.list_y = header + 1;
	ls.list_h = h - header - 2;
	if (ls.list_h < 1) {
		/* not even one line: the header goes */
		erase();
		header = 0;
		ls.header_y = 0;
		ls.list_y = 1;
		ls.list_h = h - 2 > 0 ? h - 2 : 0;
	}
	vt_view_scroll_to_cursor(&t->view, ls.list_h);
	column_widths(t, vt_view_top(&t->view), vt_view_top(&t->view) + ls.list_h < vt_view_lines(&t->view) ? vt_view_top(&t->view) + ls.list_h :
		      vt_view_lines(&t->view));
	if (h >= 2)
		draw_column_header(t, ls.header_y, w);
	for (y = 0; y < ls.list_h; y++) {
		int line = vt_view_top(&t->view) + y;

		if (line >= vt_view_lines(&t->view))
			break;
		draw_row(t, ls.list_y + y, w, line);
	}
	visible_rows(t);
	if (t->snap->seq == 0 && ls.list_h > 0)
		tui_text(ls.list_y, 1, w - 1, "sampling...", 0);
	else if (vt_view_lines(&t->view) == 0 && ls.list_h > 0)
		tui_text(ls.list_y, 1, w - 1, "no process matches", 0);
	if (h >= 1)
		draw_bottom(t, h - 1, w);
}

/* --- keys --- */

static void act_quit(tui_t *t) { t->quit = true; }
static void act_help(tui_t *t);
static void act_setup(tui_t *t) { setup_open(t); }
static void act_events(tui_t *t) { event_log_open(t); }
static void act_details(tui_t *t) { details_open(t); }
static void act_files(tui_t *t) { if (tui_not_in_replay(t, "a log does not record open files")) files_view_open(t); }
static void act_kill(tui_t *t) { if (tui_not_in_replay(t, "its processes are not to be signalled")) dialog_open_kill(t); }
static void act_nice_down(tui_t *t) { if (tui_not_in_replay(t, "its processes are not to be reniced")) dialog_open_renice(t, -1); }
static void act_nice_up(tui_t *t) { if (tui_not_in_replay(t, "its processes are not to be reniced")) dialog_open_renice(t, 1); }
static void act_ioprio(tui_t *t) { if (tui_not_in_replay(t, "its processes are not to be changed")) dialog_open_ioprio(t); }
static void act_affinity(tui_t *t) { if (tui_not_in_replay(t, "its processes are not to be changed")) dialog_open_affinity(t); }
static void act_sort_menu(tui_t *t) { dialog_open_sort(t); }
static void act_user_menu(tui_t *t) { dialog_open_user(t); }

static void start_prompt(tui_t *t, prompt_t p)
{
	ls.prompt = p;
	ls.search_failed = false;
	if (p == PROMPT_FILTER) {
		snprintf(ls.input, sizeof(ls.input), "%s", vt_view_filter(&t->view, &ls.input_regex));
	} else {
		ls.input[0] = '\0';
		ls.search_origin = vt_view_cursor(&t->view);
	}
	ls.input_len = strlen(ls.input);
}

static void act_search(tui_t *t) { start_prompt(t, PROMPT_SEARCH); }
static void act_filter(tui_t *t) { start_prompt(t, PROMPT_FILTER); }

/* a switch of the view turned round: its new state */
static bool toggle(tui_t *t, vt_view_flag_t flag)
{
	vt_view_set_flag(&t->view, flag, !vt_view_flag(&t->view, flag));
	return vt_view_flag(&t->view, flag);
}

static void act_tree(tui_t *t)
{
	bool tree = toggle(t, VT_VIEW_TREE);

	tui_rebuild(t);
	tui_message(t, false, "%s view", tree ? "tree" : "flat");
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
static void act_pgup(tui_t *t) { vt_view_move(&t->view, t->snap, -(ls.list_h > 1 ? ls.list_h - 1 : 1)); }
static void act_pgdn(tui_t *t) { vt_view_move(&t->view, t->snap, ls.list_h > 1 ? ls.list_h - 1 : 1); }
static void act_home(tui_t *t) { vt_view_select(&t->view, t->snap, 0); }
static void act_end(tui_t *t) { vt_view_select(&t->view, t->snap, vt_view_lines(&t->view) - 1); }
static void act_left(tui_t *t) { ls.hscroll = ls.hscroll > 4 ? ls.hscroll - 4 : 0; }
static void act_right(tui_t *t) { ls.hscroll += 4; }

static void set_collapsed(tui_t *t, bool collapsed)
{
	const vt_row_t *row = tui_selected(t);

	if (!row || !vt_view_flag(&t->view, VT_VIEW_TREE))
		return;
	vt_view_set_collapsed(&t->view, row, collapsed);
	tui_rebuild(t);
}

static void act_expand(tui_t *t) { set_collapsed(t, false); }
static void act_collapse(tui_t *t) { set_collapsed(t, true); }

static void act_toggle_all(tui_t *t)
{
	vt_view_collapse_all(&t->view, t->snap, vt_view_collapsed_nr(&t->view) == 0);
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
	int line = vt_view_cursor(&t->view), depth;

	if (!tui_selected(t))
		return;
	depth = vt_view_line_depth(&t->view, line);
	do {
		vt_view_set_tagged(&t->view, vt_view_row(&t->view, t->snap, line), true);
		line++;
	} while (vt_view_flag(&t->view, VT_VIEW_TREE) && line < vt_view_lines(&t->view) && vt_view_line_depth(&t->view, line) > depth);
}

static void act_untag(tui_t *t) { vt_view_clear_tags(&t->view); }

static void act_follow(tui_t *t)
{
	bool follow = !vt_view_flag(&t->view, VT_VIEW_FOLLOW) && tui_selected(t);

	vt_view_set_flag(&t->view, VT_VIEW_FOLLOW, follow);
	tui_message(t, false, follow ? "following %d" : "not following", vt_view_selected(&t->view).pid);
}

static void act_threads(tui_t *t)
{
	bool shown = toggle(t, VT_VIEW_THREADS);

	tui_apply_columns(t);
	tui_rebuild(t);
	tui_message(t, false, "threads %s%s", shown ? "shown" : "hidden", shown ? " from the next sample" : "");
}

static void act_kthreads(tui_t *t)
{
	bool shown = toggle(t, VT_VIEW_KTHREADS);

	tui_rebuild(t);
	tui_message(t, false, "kernel threads %s", shown ? "shown" : "hidden");
}

/* X: exited rows hidden or shown (the header still counts what exited) */
static void act_exited(tui_t *t)
{
	bool shown = toggle(t, VT_VIEW_EXITED);

	tui_rebuild(t);
	tui_message(t, false, "exited processes %s", shown ? "shown" : "hidden");
}

static void act_path(tui_t *t)
{
	toggle(t, VT_VIEW_PATH);
	tui_rebuild(t);
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

	if (!parse_goto(t, ls.input, &index, &when)) {
		tui_message(t, true, "go to: \"%s\" is no time (HH:MM[:SS], +SECS, -SECS, #SAMPLE)", ls.input);
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
	int line = vt_view_search(&t->view, t->snap, ls.search, vt_view_cursor(&t->view) + dir, dir);

	ls.search_failed = line < 0 && ls.search[0];
	if (line >= 0)
		vt_view_pick(&t->view, t->snap, line);
	else if (ls.search[0] && ls.prompt == PROMPT_NONE)
		tui_message(t, true, "no process matches \"%s\"", ls.search);
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

/* the help panel lists the table above, which it is given when it opens */
static const char *key_names(int i)
{
	return i < ACTIONS_NR ? actions[i].names : replay_actions[i - ACTIONS_NR].names;
}

static const char *key_help(int i)
{
	return i < ACTIONS_NR ? actions[i].help : replay_actions[i - ACTIONS_NR].help;
}

static const help_keys_t list_help = { ACTIONS_NR + REPLAY_ACTIONS_NR, key_names, key_help };

static void act_help(tui_t *t) { help_open(t, &list_help); }

/* digits: jump to the pid typed so far */
static bool pid_key(tui_t *t, int ch)
{
	size_t len;
	int line;

	if (ch < '0' || ch > '9')
		return false;
	if (vclock_secs(CLOCK_MONOTONIC) - ls.pid_typed_at > 1.5)
		ls.pid_typed[0] = '\0';
	len = strlen(ls.pid_typed);
	if (len + 1 < sizeof(ls.pid_typed)) {
		ls.pid_typed[len] = (char)ch;
		ls.pid_typed[len + 1] = '\0';
	}
	ls.pid_typed_at = vclock_secs(CLOCK_MONOTONIC);
	line = vt_view_find_line(&t->view, t->snap, atoi(ls.pid_typed));
	if (line >= 0)
		vt_view_pick(&t->view, t->snap, line);
	tui_message(t, line < 0, line < 0 ? "no process %s shown" : "pid %s", ls.pid_typed);
	return true;
}

static void prompt_key(tui_t *t, int ch)
{
	bool changed = false;

	switch (ch) {
	case 27:	/* Esc: a search goes back where it began; a filter is cleared */
		if (ls.prompt == PROMPT_TIME) {
			/* nothing to undo */
		} else if (ls.prompt == PROMPT_FILTER) {
			vt_view_set_filter(&t->view, "", false);
			tui_rebuild(t);
		} else {
			vt_view_select(&t->view, t->snap, ls.search_origin);
		}
		ls.prompt = PROMPT_NONE;
		return;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (ls.prompt == PROMPT_SEARCH)
			snprintf(ls.search, sizeof(ls.search), "%s", ls.input);
		if (ls.prompt == PROMPT_TIME)
			goto_typed(t);
		ls.prompt = PROMPT_NONE;
		return;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (ls.input_len) {
			/* a whole UTF-8 character */
			do
				ls.input_len--;
			while (ls.input_len && ((unsigned char)ls.input[ls.input_len] & 0xc0) == 0x80);
			ls.input[ls.input_len] = '\0';
			changed = true;
		}
		break;
	case 'U' - 'A' + 1:	/* ^U: erase */
		ls.input_len = 0;
		ls.input[0] = '\0';
		changed = true;
		break;
	case 'R' - 'A' + 1:	/* ^R: regex or substring */
		if (ls.prompt == PROMPT_FILTER) {
			ls.input_regex = !ls.input_regex;
			changed = true;
		}
		break;
	case KEY_F(3):
	case 'N' - 'A' + 1:
		snprintf(ls.search, sizeof(ls.search), "%s", ls.input);
		act_next_match(t);
		return;
	case 'P' - 'A' + 1:
		snprintf(ls.search, sizeof(ls.search), "%s", ls.input);
		act_prev_match(t);
		return;
	case KEY_UP:
	case KEY_DOWN:
		ls.prompt = PROMPT_NONE;
		vt_view_move(&t->view, t->snap, ch == KEY_UP ? -1 : 1);
		return;
	default:
		if (ch >= 0x20 && ch < 0x100 && ch != 0x7f && ls.input_len + 1 < sizeof(ls.input)) {
			ls.input[ls.input_len++] = (char)ch;
			ls.input[ls.input_len] = '\0';
			changed = true;
		}
		break;
	}
	if (!changed || ls.prompt == PROMPT_TIME)
		return;
	if (ls.prompt == PROMPT_FILTER) {
		vt_view_set_filter(&t->view, ls.input, ls.input_regex);
		tui_rebuild(t);
	} else {
		int line = vt_view_search(&t->view, t->snap, ls.input, ls.search_origin, 1);

		/* as htop: nothing found turns the prompt red (and says so, for a screen without colour) */
		ls.search_failed = line < 0 && ls.input[0];
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
	if (ev.y == ls.header_y) {
		/* a click on a column's header sorts by it; again, the other way */
		for (int i = 0; i < t->cfg->columns_nr; i++) {
			if (ls.col_x[i] >= 0 && ev.x >= ls.col_x[i] && ev.x < ls.col_x_end[i]) {
				sort_by_name(t, vt_columns[t->cfg->columns[i]].name);
				return;
			}
		}
	} else if (ev.y >= ls.list_y && ev.y < ls.list_y + ls.list_h) {
		int line = vt_view_top(&t->view) + ev.y - ls.list_y;

		if (line < vt_view_lines(&t->view))
			vt_view_pick(&t->view, t->snap, line);
	} else if (ev.y == LINES - 1 && ls.prompt == PROMPT_NONE && !t->msg[0]) {
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
	if (ls.prompt != PROMPT_NONE) {
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
