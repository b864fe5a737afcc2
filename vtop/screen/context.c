/*
 * context.c: what the panels share, as functions over the context (tui.h):
 * the message line, the selected row, the view rebuilt and the settings
 * kept in step with it, pausing, and opening a panel.  It calls no panel:
 * the panels call it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui.h"

void tui_message(tui_t *t, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_error = error;
	/* errors stay until a key; news goes after a few seconds */
	t->msg_until = error ? 0 : vclock_secs(CLOCK_MONOTONIC) + 4;
}

/* --- the model, kept in step with the settings --- */

/*
 * A user's name as the list shows it: from a row of theirs (the builder
 * resolved it), else from the user database as the builder does, else the
 * number.
 */
const char *tui_user_name(const tui_t *t, uid_t uid, char *buf, size_t size)
{
	for (int i = 0; i < t->snap->rows_nr; i++) {
		if (vt_row_uid(&t->snap->rows[i]) == uid && t->snap->rows[i].user && strcmp(t->snap->rows[i].user, "?"))
			return t->snap->rows[i].user;
	}
	vt_user_name(uid, vt_config_escape_flags(t->cfg), buf, size);
	return buf;
}

/*
 * A replay's pids are a log's: another process may have any of them now, so
 * it is neither signalled nor reniced, and its open files, which a log does
 * not record (vmon_log(5)), are not read from /proc either.
 */
bool tui_not_in_replay(tui_t *t, const char *what)
{
	if (t->replay)
		tui_message(t, true, "a replay: %s", what);
	return !t->replay;
}

const vt_row_t *tui_selected(const tui_t *t)
{
	return vt_view_row(&t->view, t->snap, vt_view_cursor(&t->view));
}

void tui_rebuild(tui_t *t)
{
	vt_view_build(&t->view, t->snap);
	vt_config_set_view(t->cfg, vt_view_settings(&t->view));
}

/* the columns or the threads toggle changed what must be sampled */
void tui_apply_columns(tui_t *t)
{
	t->wants = vt_columns_wants(t->cfg->columns, t->cfg->columns_nr);
	vt_sampler_set_wants(t->sampler, t->wants, vt_view_flag(&t->view, VT_VIEW_THREADS));
	t->columns_gen++;
}

/* the columns moved (setup): their widths are found again */
void tui_columns_moved(tui_t *t)
{
	t->columns_gen++;
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

/* push a panel (its opener has made its state); false if the stack is full */
bool tui_open(tui_t *t, const panel_t *panel)
{
	if (t->panels_nr == TUI_PANELS_MAX)
		return false;
	t->panels[t->panels_nr++] = panel;
	return true;
}

