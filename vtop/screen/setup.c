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

static const double delays[] = { 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30 };

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
		snprintf(buf, size, "[%c] tree view", t->view.tree ? 'x' : ' ');
		break;
	case OPT_THREADS:
		snprintf(buf, size, "[%c] threads", t->view.show_threads ? 'x' : ' ');
		break;
	case OPT_KTHREADS:
		snprintf(buf, size, "[%c] kernel threads", t->view.show_kthreads ? 'x' : ' ');
		break;
	case OPT_EXITED_ROWS:
		snprintf(buf, size, "[%c] exited processes", t->view.show_exited ? 'x' : ' ');
		break;
	case OPT_PATH:
		snprintf(buf, size, "[%c] program path", t->view.show_path ? 'x' : ' ');
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

static void change_option(tui_t *t, int i, int dir)
{
	vt_config_t *cfg = t->cfg;

	switch (i) {
	case OPT_TREE:
		t->view.tree = !t->view.tree;
		break;
	case OPT_THREADS:
		t->view.show_threads = !t->view.show_threads;
		tui_apply_columns(t);
		break;
	case OPT_KTHREADS:
		t->view.show_kthreads = !t->view.show_kthreads;
		break;
	case OPT_EXITED_ROWS:
		t->view.show_exited = !t->view.show_exited;
		break;
	case OPT_PATH:
		t->view.show_path = !t->view.show_path;
		break;
	case OPT_DELAY: {
		int k = 0, n = (int)(sizeof(delays) / sizeof(delays[0]));

		while (k < n - 1 && delays[k] < cfg->delay)
			k++;
		k += dir;
		if (k < 0)
			k = 0;
		if (k >= n)
			k = n - 1;
		cfg->delay = delays[k];
		vt_sampler_set_interval(t->sampler, cfg->delay);
		break;
	}
	case OPT_COLOR:
		cfg->color = (vt_color_t)((cfg->color + 3 + dir) % 3);
		break;
	case OPT_ASCII:
		cfg->ascii = !cfg->ascii;
		break;
	case OPT_MOUSE:
		cfg->mouse = !cfg->mouse;
		mousemask(cfg->mouse ? BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED : 0, NULL);
		break;
	case OPT_EXITED:
		cfg->exited_keep += dir;
		if (cfg->exited_keep < 1)
			cfg->exited_keep = 1;
		if (cfg->exited_keep > 100)
			cfg->exited_keep = 100;
		break;
	}
	tui_rebuild(t);
}

static void move_column(tui_t *t, int dir)
{
	int i = setup.sel[PANE_ACTIVE], j = i + dir, tmp;

	if (j < 0 || j >= t->cfg->columns_nr)
		return;
	tmp = t->cfg->columns[i];
	t->cfg->columns[i] = t->cfg->columns[j];
	t->cfg->columns[j] = tmp;
	setup.sel[PANE_ACTIVE] = j;
	tui_columns_moved(t);
}

static void remove_column(tui_t *t)
{
	int i = setup.sel[PANE_ACTIVE];

	if (t->cfg->columns_nr <= 1) {
		tui_message(t, true, "the last column stays");
		return;
	}
	memmove(t->cfg->columns + i, t->cfg->columns + i + 1, sizeof(int) * (size_t)(t->cfg->columns_nr - i - 1));
	t->cfg->columns_nr--;
	tui_apply_columns(t);
}

static void add_column(tui_t *t)
{
	int *avail = malloc(sizeof(*avail) * (size_t)vt_columns_nr), n, at;

	if (!avail)
		return;
	n = available(t, avail);
	if (n && t->cfg->columns_nr < VT_MAX_COLUMNS) {
		/* after the selected shown column, or before COMMAND if that is last */
		at = t->cfg->columns_nr ? setup.sel[PANE_ACTIVE] + 1 : 0;
		if (at > t->cfg->columns_nr)
			at = t->cfg->columns_nr;
		memmove(t->cfg->columns + at + 1, t->cfg->columns + at, sizeof(int) * (size_t)(t->cfg->columns_nr - at));
		t->cfg->columns[at] = avail[setup.sel[PANE_AVAILABLE]];
		t->cfg->columns_nr++;
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

static panel_next_t setup_key(tui_t *t, int ch)
{
	int pane = setup.pane, *sel = &setup.sel[pane];

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
	if (*sel < 0)
		*sel = 0;
	return PANEL_STAY;
}

const panel_t setup_panel = { "setup", false, NULL, setup_draw, setup_key };
