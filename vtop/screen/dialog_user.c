/*
 * dialog_user.c: u, whose processes are listed: all users, or one of those
 * that own a process in the newest sample, by uid.
 */
#include "config.h"

#include <stdlib.h>

#include "screen/dialog.h"

static struct {
	uid_t		*uids;		/* the owners of the rows, each once, in order */
	dialog_list_t	list;		/* [0] all users, then uids */
} ud;

static void user_close(tui_t *t)
{
	(void)t;
	free(ud.uids);
	ud.uids = NULL;
}

static int uid_cmp(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return (x > y) - (x < y);
}

void dialog_open_user(tui_t *t)
{
	uid_t *u = malloc(sizeof(*u) * (size_t)(t->snap->rows_nr + 1));
	int nr = 0, uniq = 0;

	if (!u) {
		tui_message(t, true, "out of memory");
		return;
	}
	for (int i = 0; i < t->snap->rows_nr; i++)
		u[nr++] = vt_row_uid(&t->snap->rows[i]);
	qsort(u, (size_t)nr, sizeof(*u), uid_cmp);
	for (int i = 0; i < nr; i++) {
		if (uniq == 0 || u[uniq - 1] != u[i])
			u[uniq++] = u[i];
	}
	free(ud.uids);
	ud.uids = u;
	ud.list = (dialog_list_t){ .nr = uniq + 1 };
	tui_open(t, &user_panel);
}

static void user_entry(const tui_t *t, int i, char *buf, size_t size)
{
	char name[64];

	if (i == 0)
		snprintf(buf, size, "all users");
	else
		snprintf(buf, size, "%s (%u)", tui_user_name(t, ud.uids[i - 1], name, sizeof(name)), (unsigned)ud.uids[i - 1]);
}

static void user_draw(tui_t *t)
{
	dialog_list_draw(t, " Show the processes of ", 40, &ud.list, LINES - 4, user_entry, NULL, 0, false);
}

static panel_next_t user_key(tui_t *t, int ch)
{
	switch (ch) {
	case '\n': case '\r': case KEY_ENTER:
		vt_view_set_user(&t->view, ud.list.sel > 0, ud.list.sel > 0 ? ud.uids[ud.list.sel - 1] : 0);
		tui_rebuild(t);
		return PANEL_CLOSE;
	case 27: case 'q': case KEY_F(10):
		return PANEL_CLOSE;
	}
	dialog_list_key(&ud.list, ch);
	return PANEL_STAY;
}

const panel_t user_panel = { "user", true, NULL, user_draw, user_key, user_close };
