/*
 * dialog_sort.c: F6, the column to sort by: a menu of every column, the
 * one sorted by now selected.  A number column sorts largest first.
 */
#include "config.h"

#include "screen/dialog.h"

static dialog_list_t sorts;

void dialog_open_sort(tui_t *t)
{
	sorts = (dialog_list_t){ .nr = vt_columns_nr, .sel = vt_view_sort_col(&t->view) };
	tui_open(t, &sort_panel);
}

static void column_entry(const tui_t *t, int i, char *buf, size_t size)
{
	(void)t;
	snprintf(buf, size, "%-10s %s", vt_columns[i].label, vt_columns[i].desc);
}

static void sort_draw(tui_t *t)
{
	dialog_list_draw(t, " Sort by ", 60, &sorts, LINES - 4, column_entry, NULL, 0, false);
}

static panel_next_t sort_key(tui_t *t, int ch)
{
	switch (ch) {
	case '\n': case '\r': case KEY_ENTER:
		vt_view_set_sort(&t->view, sorts.sel, vt_columns[sorts.sel].kind == VT_VALUE_NUMBER);
		tui_rebuild(t);
		return PANEL_CLOSE;
	case 27: case 'q': case KEY_F(10):
		return PANEL_CLOSE;
	}
	dialog_list_key(&sorts, ch);
	return PANEL_STAY;
}

const panel_t sort_panel = { "sort", true, NULL, sort_draw, sort_key, NULL };
