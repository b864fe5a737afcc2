/*
 * setup.c: the setup screen (F2): options, the shown columns in their order,
 * and every column there is to add.  The columns are the table of
 * columns.c, so every field of the defs tables can be chosen here.
 *
 * Changes take effect at once (a column that needs another store changes
 * what is sampled from the next sample on) and are saved to vtoprc when the
 * screen is left; a failure to save is shown, and nothing is lost for this
 * session.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui.h"

enum { PANE_OPTIONS, PANE_ACTIVE, PANE_AVAILABLE, PANES };

static const char *const pane_titles[PANES] = { "Options", "Columns shown", "Columns to add" };

enum {
	OPT_TREE, OPT_THREADS, OPT_KTHREADS, OPT_EXITED_ROWS, OPT_PATH, OPT_DELAY, OPT_COLOR, OPT_ASCII, OPT_MOUSE, OPT_EXITED,
	OPTS
};

/* the pane with the keys, and each pane's selection and first line shown */
static struct {
	int	pane;
	int	sel[3];
	int	top[3];
} setup;

static void option_text(const tui_t *t, int i, char *buf, size_t size)
{
	static const char *const colors[] = { "auto", "never", "always" };
	const vt_config_t *cfg = t->cfg;

	switch (i) {
	case OPT_TREE:
		snprintf(buf, size, "[%c] tree view", vt_view_flag(&t->view, VT_VIEW_TREE) ? 'x' : ' ');
		break;
	case OPT_THREADS:
		snprintf(buf, size, "[%c] threads", vt_view_flag(&t->view, VT_VIEW_THREADS) ? 'x' : ' ');
		break;
	case OPT_KTHREADS:
		snprintf(buf, size, "[%c] kernel threads", vt_view_flag(&t->view, VT_VIEW_KTHREADS) ? 'x' : ' ');
		break;
	case OPT_EXITED_ROWS:
		snprintf(buf, size, "[%c] exited processes", vt_view_flag(&t->view, VT_VIEW_EXITED) ? 'x' : ' ');
		break;
	case OPT_PATH:
		snprintf(buf, size, "[%c] program path", vt_view_flag(&t->view, VT_VIEW_PATH) ? 'x' : ' ');
		break;
	case OPT_DELAY:
		snprintf(buf, size, "refresh every %g s", cfg->delay);
		break;
	case OPT_COLOR:
		snprintf(buf, size, "colour: %s *", colors[cfg->color]);
		break;
	case OPT_ASCII:
		snprintf(buf, size, "[%c] ASCII only *", cfg->ascii ? 'x' : ' ');
		break;
	case OPT_MOUSE:
		snprintf(buf, size, "[%c] mouse", cfg->mouse ? 'x' : ' ');
		break;
	case OPT_EXITED:
		snprintf(buf, size, "exited rows stay %d refreshes *", cfg->exited_keep);
		break;
	}
}

/* the columns not shown, in table order (into out, unless NULL); how many */
static int available(const tui_t *t, int *out)
{
	int nr = 0;

	for (int c = 0; c < vt_columns_nr; c++) {
		bool shown = false;

		for (int i = 0; i < t->cfg->columns_nr; i++)
			shown |= t->cfg->columns[i] == c;
		if (!shown && out)
			out[nr] = c;
		nr += !shown;
	}
	return nr;
}

static int pane_count(const tui_t *t, int pane)
{
	if (pane == PANE_OPTIONS)
		return OPTS;
	if (pane == PANE_ACTIVE)
		return t->cfg->columns_nr;
	return available(t, NULL);
}

void setup_open(tui_t *t)
{
	setup.pane = PANE_ACTIVE;
	memset(setup.sel, 0, sizeof(setup.sel));
	memset(setup.top, 0, sizeof(setup.top));
	tui_open(t, &setup_panel);
}

static void draw_pane(tui_t *t, int pane, int y, int x, int h, int w)
{
	int n = pane_count(t, pane), *avail = NULL, nr_avail = 0;
	int *sel = &setup.sel[pane], *top = &setup.top[pane];
	char line[512];

	if (w < 4 || h < 2)
		return;
	if (pane == PANE_AVAILABLE) {
		avail = malloc(sizeof(*avail) * (size_t)vt_columns_nr);
		if (!avail)
			return;
		nr_avail = available(t, avail);
		n = nr_avail;
	}
	if (*sel >= n)
		*sel = n - 1;
	if (*sel < 0)
		*sel = 0;
	if (*sel < *top)
		*top = *sel;
	if (*sel >= *top + h - 1)
		*top = *sel - (h - 1) + 1;
	tui_fill(y, x, w, pane == setup.pane ? t->attrs[C_FKEY_LABEL] : t->attrs[C_HEADER]);
	attron(pane == setup.pane ? t->attrs[C_FKEY_LABEL] : t->attrs[C_HEADER]);
	tui_text(y, x, w, pane_titles[pane], 0);
	attroff(pane == setup.pane ? t->attrs[C_FKEY_LABEL] : t->attrs[C_HEADER]);
	for (int i = 0; i < h - 1 && *top + i < n; i++) {
		int e = *top + i, attr = e == *sel && pane == setup.pane ? t->attrs[C_SELECTED] : t->attrs[C_NORMAL];

		if (pane == PANE_OPTIONS)
			option_text(t, e, line, sizeof(line));
		else if (pane == PANE_ACTIVE)
			snprintf(line, sizeof(line), "%-10s %s", vt_columns[t->cfg->columns[e]].label,
				 vt_columns[t->cfg->columns[e]].name);
		else
			snprintf(line, sizeof(line), "%-10s %s", vt_columns[avail[e]].label, vt_columns[avail[e]].desc);
		tui_fill(y + 1 + i, x, w, attr);
		attron(attr);
		tui_text(y + 1 + i, x, w, line, 0);
		attroff(attr);
	}
	free(avail);
}

static void setup_draw(tui_t *t)
{
	int h = LINES, w = COLS, body = h - 2;
	const char *hint = " Tab: next pane  Enter Space: add/remove/change  F7 F8: move column  "
			   "+ -: change  Esc F10: save and leave";

	if (body < 2)
		body = 2;
	if (w >= 90) {
		int w0 = 34, w1 = 24;

		draw_pane(t, PANE_OPTIONS, 0, 0, body, w0 - 1);
		draw_pane(t, PANE_ACTIVE, 0, w0, body, w1 - 1);
		draw_pane(t, PANE_AVAILABLE, 0, w0 + w1, body, w - w0 - w1);
	} else {
		/* narrow: one pane at a time, Tab to the next */
		draw_pane(t, setup.pane, 0, 0, body, w);
	}
	if (h >= 3) {
		char desc[256] = "";

		if (setup.pane == PANE_OPTIONS)
			snprintf(desc, sizeof(desc), " * from the next start of vtop");
		else if (setup.pane == PANE_ACTIVE && t->cfg->columns_nr)
			snprintf(desc, sizeof(desc), " %s: %s", vt_columns[t->cfg->columns[setup.sel[1]]].label,
				 vt_columns[t->cfg->columns[setup.sel[1]]].desc);
		tui_text(h - 2, 0, w, desc, 0);
	}
	tui_fill(h - 1, 0, w, t->attrs[C_FKEY_LABEL]);
	attron(t->attrs[C_FKEY_LABEL]);
	tui_text(h - 1, 0, w, hint, 0);
	attroff(t->attrs[C_FKEY_LABEL]);
}

/* the switches of the view, in the order of the options */
static const vt_view_flag_t view_flags[] = {
	[OPT_TREE] = VT_VIEW_TREE, [OPT_THREADS] = VT_VIEW_THREADS, [OPT_KTHREADS] = VT_VIEW_KTHREADS,
	[OPT_EXITED_ROWS] = VT_VIEW_EXITED, [OPT_PATH] = VT_VIEW_PATH,
};

static void change_option(tui_t *t, int i, int dir)
{
	switch (i) {
	case OPT_TREE: case OPT_THREADS: case OPT_KTHREADS: case OPT_EXITED_ROWS: case OPT_PATH:
		vt_view_set_flag(&t->view, view_flags[i], !vt_view_flag(&t->view, view_flags[i]));
		if (i == OPT_THREADS)
			tui_apply_columns(t);
		break;
	case OPT_DELAY:
		vt_config_step(t->cfg, VT_SETTING_DELAY, dir);
		vt_sampler_set_interval(t->sampler, t->cfg->delay);
		break;
	case OPT_COLOR:
		vt_config_step(t->cfg, VT_SETTING_COLOR, dir);
		break;
	case OPT_ASCII:
		vt_config_step(t->cfg, VT_SETTING_ASCII, dir);
		break;
	case OPT_MOUSE:
		vt_config_step(t->cfg, VT_SETTING_MOUSE, dir);
		mousemask(t->cfg->mouse ? BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED : 0, NULL);
		break;
	case OPT_EXITED:
		vt_config_step(t->cfg, VT_SETTING_EXITED_KEEP, dir);
		break;
	}
	tui_rebuild(t);
}

static void move_column(tui_t *t, int dir)
{
	int j = vt_config_column_move(t->cfg, setup.sel[PANE_ACTIVE], dir);

	if (j < 0)
		return;
	setup.sel[PANE_ACTIVE] = j;
	tui_columns_moved(t);
}

static void remove_column(tui_t *t)
{
	if (vt_config_column_remove(t->cfg, setup.sel[PANE_ACTIVE]) < 0) {
		tui_message(t, true, "the last column stays");
		return;
	}
	tui_apply_columns(t);
}

static void add_column(tui_t *t)
{
	int *avail = malloc(sizeof(*avail) * (size_t)vt_columns_nr), n, at;

	if (!avail)
		return;
	n = available(t, avail);
	/* after the selected shown column */
	at = t->cfg->columns_nr ? setup.sel[PANE_ACTIVE] + 1 : 0;
	if (n && vt_config_column_insert(t->cfg, at, avail[setup.sel[PANE_AVAILABLE]]) == 0) {
		tui_message(t, false, "%s shown", vt_columns[avail[setup.sel[PANE_AVAILABLE]]].label);
		tui_apply_columns(t);
	}
	free(avail);
}

static void leave(tui_t *t)
{
	char err[512];

	tui_rebuild(t);
	if (vt_config_save(t->cfg, t->cfg->config_path, err, sizeof(err)) < 0)
		tui_message(t, true, "settings not saved: %s", err);
	else
		tui_message(t, false, "settings saved to %s", t->cfg->config_path);
}

/*
 * Every pane's selection on one of its rows.  Drawing keeps them so, but
 * keys can come faster than the screen is drawn (two Enters in one read
 * add two columns): each key acts on a selection made valid first, so
 * that the second Enter adds the column that is now last, not one past
 * the end.
 */
static void selections_clamp(const tui_t *t)
{
	for (int pane = 0; pane < PANES; pane++) {
		int n = pane_count(t, pane);

		if (setup.sel[pane] >= n)
			setup.sel[pane] = n - 1;
		if (setup.sel[pane] < 0)
			setup.sel[pane] = 0;
	}
}

static panel_next_t setup_key(tui_t *t, int ch)
{
	int pane = setup.pane, *sel = &setup.sel[pane];

	selections_clamp(t);
	switch (ch) {
	case '\t':
	case KEY_RIGHT:
		setup.pane = (pane + 1) % PANES;
		break;
	case KEY_BTAB:
	case KEY_LEFT:
		setup.pane = (pane + PANES - 1) % PANES;
		break;
	case KEY_UP:
		(*sel)--;
		break;
	case KEY_DOWN:
		(*sel)++;
		break;
	case KEY_PPAGE:
		*sel -= 10;
		break;
	case KEY_NPAGE:
		*sel += 10;
		break;
	case KEY_HOME:
		*sel = 0;
		break;
	case KEY_END:
		*sel = pane_count(t, pane) - 1;
		break;
	case KEY_F(7):
	case '[':
		if (pane == PANE_ACTIVE)
			move_column(t, -1);
		break;
	case KEY_F(8):
	case ']':
		if (pane == PANE_ACTIVE)
			move_column(t, 1);
		break;
	case '+':
	case '-':
		if (pane == PANE_OPTIONS)
			change_option(t, *sel, ch == '+' ? 1 : -1);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case ' ':
	case KEY_DC:
		if (pane == PANE_OPTIONS)
			change_option(t, *sel, 1);
		else if (pane == PANE_ACTIVE)
			remove_column(t);
		else
			add_column(t);
		break;
	case 27:
	case 'q':
	case KEY_F(10):
	case KEY_F(2):
		leave(t);
		return PANEL_CLOSE;
	}
	selections_clamp(t);
	return PANEL_STAY;
}

const panel_t setup_panel = { "setup", false, NULL, setup_draw, setup_key };
