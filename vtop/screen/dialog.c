/*
 * dialog.c: what the dialogs over the list share.
 *
 * A dialog acts on what was selected (or tagged) when it opened,
 * identified by pid and start time.  The snapshot it was seen in may be
 * minutes old (paused), and the pid another process's by now: each target
 * is opened with vmon_pidfd_open(), which gives a pidfd only for the
 * process of that identity.  A call with no pidfd form (setpriority(),
 * ioprio_set(), sched_setaffinity()) is made right after that check, and
 * the pidfd asked after it whether the process is still there (a pid is
 * not reused before its process is reaped); if it went in between, that is
 * said, since the pid could have been another's by then.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "data/columns.h"
#include "screen/dialog.h"

/* linux/pidfd.h of Linux 6.9, newer than the headers this may be built with */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

/* tg's nr targets from keys(k), each a thread or not as the newest snapshot shows it; false, said why, if none */
static bool targets_fill(tui_t *t, dialog_targets_t *tg, int nr, vt_key_t (*keys)(const tui_t *t, int k, const void *arg),
			 const void *arg)
{
	tg->v = calloc((size_t)nr, sizeof(*tg->v));
	if (!tg->v) {
		tui_message(t, true, "out of memory");
		return false;
	}
	for (int k = 0; k < nr; k++) {
		vt_key_t key = keys(t, k, arg);
		int i = vt_snapshot_find(t->snap, key.pid, key.start);

		tg->v[k].pid = key.pid;
		tg->v[k].start = key.start;
		tg->v[k].thread = i >= 0 && (t->snap->rows[i].flags & VT_ROW_THREAD);
	}
	tg->nr = nr;
	return true;
}

static vt_key_t tagged_key(const tui_t *t, int k, const void *arg)
{
	(void)arg;
	return vt_view_tagged_at(&t->view, k);
}

static vt_key_t given_key(const tui_t *t, int k, const void *arg)
{
	(void)t;
	(void)k;
	return *(const vt_key_t *)arg;
}

bool dialog_targets_take(tui_t *t, dialog_targets_t *tg, bool tagged)
{
	const vt_row_t *sel = tui_selected(t);
	int tagged_nr = tagged ? vt_view_tagged_nr(&t->view) : 0;
	vt_key_t key;

	dialog_targets_free(tg);
	if (tagged_nr)
		return targets_fill(t, tg, tagged_nr, tagged_key, NULL);
	if (!sel) {
		tui_message(t, true, "no process selected");
		return false;
	}
	key = (vt_key_t){ sel->pid, sel->start };
	return dialog_targets_take_process(t, tg, key);
}

bool dialog_targets_take_process(tui_t *t, dialog_targets_t *tg, vt_key_t key)
{
	int i = vt_snapshot_find(t->snap, key.pid, key.start);

	dialog_targets_free(tg);
	if (!t->snap->seq) {
		tui_message(t, true, "no sample to act on: none taken yet, or the last one failed");
		return false;
	}
	/* (a row gone from the snapshot went with its exit: its pid may be another process's now) */
	if (i < 0 || (t->snap->rows[i].flags & VT_ROW_EXITED)) {
		tui_message(t, true, "%d has exited: there is nothing to change", key.pid);
		return false;
	}
	return targets_fill(t, tg, 1, given_key, &key);
}

void dialog_targets_free(dialog_targets_t *tg)
{
	free(tg->v);
	tg->v = NULL;
	tg->nr = 0;
}

int dialog_target_pidfd(const dialog_target_t *target)
{
	return vmon_pidfd_open(target->pid, target->start, target->thread ? PIDFD_THREAD : 0);
}

/*
 * Has the target gone?  The newest snapshot says so for any number; for a
 * few, the process itself is asked too, so that a dialog open on a paused
 * screen still says it.  Without a sample in hand (the last one failed),
 * only the process is asked.
 */
static bool target_gone(const tui_t *t, const dialog_targets_t *tg, int k)
{
	int i, fd;

	if (t->snap->seq) {
		i = vt_snapshot_find(t->snap, tg->v[k].pid, tg->v[k].start);
		if (i < 0 || (t->snap->rows[i].flags & VT_ROW_EXITED))
			return true;
	}
	if (tg->nr > 32)
		return false;
	fd = dialog_target_pidfd(&tg->v[k]);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == ESRCH;
}

void dialog_targets_text(const tui_t *t, const dialog_targets_t *tg, char *buf, size_t size)
{
	char command[41];
	int i, gone = 0;

	if (tg->nr != 1) {
		for (int k = 0; k < tg->nr; k++)
			gone += target_gone(t, tg, k);
		snprintf(buf, size, "%d tagged processes", tg->nr);
		if (gone)
			snprintf(buf + strlen(buf), size - strlen(buf), ", %d of them exited", gone);
		return;
	}
	i = vt_snapshot_find(t->snap, tg->v[0].pid, tg->v[0].start);
	/* the command cut between whole characters, never inside one or inside an escape ("..." says so) */
	if (i >= 0)
		vt_text_fit(command, sizeof(command), t->snap->rows[i].command, strlen(t->snap->rows[i].command));
	snprintf(buf, size, "%d (%s)%s", tg->v[0].pid, i >= 0 ? command : "?",
		 target_gone(t, tg, 0) ? ", which has exited" : "");
}

int dialog_act(const dialog_target_t *target, int (*call)(pid_t pid, const void *arg), const void *arg)
{
	int fd = dialog_target_pidfd(target), err = 0;

	if (fd < 0)
		return errno;
	if (call(target->pid, arg) < 0)
		err = errno;
	/* reaped meanwhile: the pid could have been another's when the call was made */
	if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH && err != ESRCH)
		err = DIALOG_RACED;
	close(fd);
	return err;
}

void dialog_error_text(int err, char *buf, size_t size)
{
	if (err == ESRCH)
		snprintf(buf, size, "it has exited");
	else if (err == ENOSYS)
		snprintf(buf, size, "this kernel has no pidfd_open() (Linux 5.3): it cannot be reached for sure, so it was not");
	else if (err == DIALOG_RACED)
		snprintf(buf, size, "it exited meanwhile (the pid may have been another process's by then)");
	else
		snprintf(buf, size, "%s", strerror(err));
}

int dialog_each_target(tui_t *t, const dialog_targets_t *tg, int (*act)(const dialog_target_t *target, const void *arg),
		       const void *arg, char *errors, size_t size)
{
	int done = 0;

	errors[0] = '\0';
	for (int k = 0; k < tg->nr; k++) {
		int err = act(&tg->v[k], arg);
		size_t len = strlen(errors);
		char why[128];

		if (!err) {
			done++;
			continue;
		}
		dialog_error_text(err, why, sizeof(why));
		snprintf(errors + len, size - len, "%s%d: %s", len ? "; " : "", tg->v[k].pid, why);
	}
	/* the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	return done;
}

void dialog_box(tui_t *t, const char *title, int width, const char *const *lines, int nr, int sel, bool error_last)
{
	int h = LINES, w = COLS, bw = tui_text_width(title) + 4, bh, by, bx, attr = t->attrs[C_DIALOG];

	if (bw < width)
		bw = width;
	for (int i = 0; i < nr && !width; i++) {
		if (tui_text_width(lines[i]) + 4 > bw)
			bw = tui_text_width(lines[i]) + 4;
	}
	if (bw > w)
		bw = w;
	bh = nr + 2 < h ? nr + 2 : h;
	by = (h - bh) / 2;
	bx = (w - bw) / 2;
	tui_box(by, bx, bh, bw, title, attr);
	for (int i = 0; i < bh - 2 && i < nr; i++) {
		int a = i == sel ? t->attrs[C_SELECTED] : i == nr - 1 && error_last ? t->attrs[C_ERROR] : attr;

		tui_fill(by + 1 + i, bx + 1, bw - 2, a);
		attron(a);
		tui_text(by + 1 + i, bx + 2, bw - 4, lines[i], 0);
		attroff(a);
	}
}

bool dialog_list_key(dialog_list_t *l, int ch)
{
	switch (ch) {
	case KEY_UP:
		l->sel--;
		break;
	case KEY_DOWN:
		l->sel++;
		break;
	case KEY_PPAGE:
		l->sel -= 10;
		break;
	case KEY_NPAGE:
		l->sel += 10;
		break;
	case KEY_HOME:
		l->sel = 0;
		break;
	case KEY_END:
		l->sel = l->nr - 1;
		break;
	default:
		return false;
	}
	if (l->sel >= l->nr)
		l->sel = l->nr - 1;
	if (l->sel < 0)
		l->sel = 0;
	return true;
}

void dialog_list_draw(tui_t *t, const char *title, int width, dialog_list_t *l, int room,
		      void (*entry)(const tui_t *t, int i, char *buf, size_t size), const char *const *extra, int extra_nr,
		      bool error_last)
{
	char (*text)[128];
	const char **lines;
	int nr = 0;

	if (room < 1)
		room = 1;
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + room)
		l->top = l->sel - room + 1;
	if (l->top < 0)
		l->top = 0;
	text = malloc((size_t)room * sizeof(*text));
	lines = malloc((size_t)(room + extra_nr) * sizeof(*lines));
	if (text && lines) {
		for (int i = l->top; i < l->nr && nr < room; i++, nr++) {
			entry(t, i, text[nr], sizeof(text[nr]));
			lines[nr] = text[nr];
		}
		for (int i = 0; i < extra_nr; i++)
			lines[nr++] = extra[i];
		dialog_box(t, title, width, lines, nr, l->sel - l->top, error_last);
	}
	free(text);
	free(lines);
}
