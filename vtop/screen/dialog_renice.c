/*
 * dialog_renice.c: F7 and F8, a nice value for the selected or tagged
 * processes, one step from the first one's, changed with - and + before
 * Enter.  setpriority() has no pidfd form: it goes through dialog_act(),
 * which checks the identity before and the process's life after.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "screen/dialog.h"

static struct {
	dialog_targets_t	targets;
	int			nice_value;
} rd;

static void renice_close(tui_t *t)
{
	(void)t;
	dialog_targets_free(&rd.targets);
}

void dialog_open_renice(tui_t *t, int delta)
{
	const vmon_proc_stat_t *stat;
	int i;

	if (!dialog_targets_take(t, &rd.targets, true))
		return;
	i = vt_snapshot_find(t->snap, rd.targets.v[0].pid, rd.targets.v[0].start);
	stat = i >= 0 ? t->snap->rows[i].stores[VMON_STORE_PROC_STAT] : NULL;
	rd.nice_value = (stat ? (int)stat->nice : 0) + delta;
	if (rd.nice_value < -20)
		rd.nice_value = -20;
	if (rd.nice_value > 19)
		rd.nice_value = 19;
	tui_open(t, &renice_panel);
}

static void renice_draw(tui_t *t)
{
	char what[80], line[256];
	const char *lines[1] = { line };

	dialog_targets_text(t, &rd.targets, what, sizeof(what));
	snprintf(line, sizeof(line), "Renice %s to %d?  F7 -: lower  F8 +: higher  Enter: yes  Esc: no", what,
		 rd.nice_value);
	dialog_box(t, " Renice ", 0, lines, 1, -1, false);
}

static int call_setpriority(pid_t pid, const void *arg)
{
	return setpriority(PRIO_PROCESS, (id_t)pid, *(const int *)arg);
}

static int do_renice(const dialog_target_t *target, const void *arg)
{
	return dialog_act(target, call_setpriority, arg);
}

static void renice(tui_t *t)
{
	char errors[400];
	int done = dialog_each_target(t, &rd.targets, do_renice, &rd.nice_value, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "renice to %d: %s%s", rd.nice_value, errors, done ? " (the others reniced)" : "");
	else
		tui_message(t, false, "reniced %d process%s to %d", done, done == 1 ? "" : "es", rd.nice_value);
}

static panel_next_t renice_key(tui_t *t, int ch)
{
	switch (ch) {
	case KEY_F(7): case ']': case '-': case KEY_LEFT:
		if (rd.nice_value > -20)
			rd.nice_value--;
		break;
	case KEY_F(8): case '[': case '+': case KEY_RIGHT:
		if (rd.nice_value < 19)
			rd.nice_value++;
		break;
	case '\n': case '\r': case KEY_ENTER: case 'y':
		renice(t);
		return PANEL_CLOSE;
	case 27: case 'n': case 'q':
		return PANEL_CLOSE;
	}
	return PANEL_STAY;
}

const panel_t renice_panel = { "renice", true, NULL, renice_draw, renice_key, renice_close };
