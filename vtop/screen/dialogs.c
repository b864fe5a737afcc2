/*
 * dialogs.c: the dialogs over the list: signal, confirmation, renice, sort
 * column, user.
 *
 * Kill and renice act on what was selected or tagged when the dialog
 * opened, identified by pid and start time.  The snapshot they were seen in
 * may be minutes old (paused), and the pid another process's by now: each
 * target is opened with vmon_pidfd_open(), which gives a pidfd only for the
 * process of that identity, and signalled through it.  setpriority() has no
 * pidfd form: the identity is checked before it, and the pidfd asked after
 * it whether the process is still there (a pid is not reused before its
 * process is reaped); if it went in between, that is said, since the pid
 * could have been reniced as another's.  The dialogs say when a target has
 * exited while they are open; each failure is shown with the pid and the
 * reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tui.h"

/* linux/pidfd.h of Linux 6.9, newer than the headers this may be built with */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD			O_EXCL
#endif
#ifndef PIDFD_SIGNAL_THREAD_GROUP
#define PIDFD_SIGNAL_THREAD_GROUP	(1U << 1)
#endif

/* what a kill or renice is for: a process (or a thread) by identity, taken when the dialog opened */
typedef struct target {
	int			pid;
	unsigned long long	start;
	bool			thread;		/* a thread row: its own tid and start time */
} target_t;

/* the menus over the list (signal, confirm, renice, sort, user) */
typedef enum {
	MENU_NONE,
	MENU_KILL,	/* choose a signal */
	MENU_SORT,	/* choose a sort column */
	MENU_USER,	/* choose a user */
	MENU_RENICE,	/* choose a nice value */
	MENU_CONFIRM,	/* yes or no, then act */
} menu_t;

/* the dialog open: which, its selection, and what it acts on */
static struct {
	menu_t		menu;
	int		menu_sel;
	int		menu_top;
	int		menu_typed;	/* the signal number typed so far */
	target_t	*targets;	/* the processes a kill or renice is for, taken when it opened */
	int		targets_nr;
	int		signal;
	int		nice_value;
	uid_t		*users;		/* the user menu's entries */
	int		users_nr;
} dlg;

void dialogs_free(void)
{
	free(dlg.targets);
	free(dlg.users);
	memset(&dlg, 0, sizeof(dlg));
}

/* the processes a kill or renice is for: the tagged ones, else the selected one */
static bool take_targets(tui_t *t)
{
	const vt_row_t *sel = tui_selected(t);
	int nr = vt_view_tagged_nr(&t->view) ? vt_view_tagged_nr(&t->view) : sel ? 1 : 0;

	free(dlg.targets);
	dlg.targets = NULL;
	dlg.targets_nr = 0;
	if (!nr)
		return false;
	if (!vt_view_tagged_nr(&t->view) && (sel->flags & VT_ROW_EXITED)) {
		tui_message(t, true, "%d has exited: there is nothing to signal or renice", sel->pid);
		return false;
	}
	dlg.targets = calloc((size_t)nr, sizeof(*dlg.targets));
	if (!dlg.targets)
		return false;
	for (int k = 0; k < nr; k++) {
		vt_key_t key = vt_view_tagged_nr(&t->view) ? vt_view_tagged_at(&t->view, k) : (vt_key_t){ sel->pid, sel->start };
		int i = vt_snapshot_find(t->snap, key.pid, key.start);

		dlg.targets[k].pid = key.pid;
		dlg.targets[k].start = key.start;
		dlg.targets[k].thread = i >= 0 && (t->snap->rows[i].flags & VT_ROW_THREAD);
	}
	dlg.targets_nr = nr;
	return true;
}

static int target_pidfd(const target_t *target)
{
	return vmon_pidfd_open(target->pid, target->start, target->thread ? PIDFD_THREAD : 0);
}

/*
 * Has the target gone?  The newest snapshot says so for any number; for a
 * few, the process itself is asked too, so that a dialog open on a paused
 * screen still says it.
 */
static bool target_gone(const tui_t *t, int k)
{
	int i = vt_snapshot_find(t->snap, dlg.targets[k].pid, dlg.targets[k].start), fd;

	if (i < 0 || (t->snap->rows[i].flags & VT_ROW_EXITED))
		return true;
	if (dlg.targets_nr > 32)
		return false;
	fd = target_pidfd(&dlg.targets[k]);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == ESRCH;
}

/* "1234 (sleep)", "1234 (sleep), which has exited" or "3 tagged processes, 1 of them exited" */
static void targets_text(const tui_t *t, char *buf, size_t size)
{
	int i, gone = 0;

	if (dlg.targets_nr != 1) {
		for (int k = 0; k < dlg.targets_nr; k++)
			gone += target_gone(t, k);
		snprintf(buf, size, "%d tagged processes", dlg.targets_nr);
		if (gone)
			snprintf(buf + strlen(buf), size - strlen(buf), ", %d of them exited", gone);
		return;
	}
	i = vt_snapshot_find(t->snap, dlg.targets[0].pid, dlg.targets[0].start);
	snprintf(buf, size, "%d (%.40s)%s", dlg.targets[0].pid, i >= 0 ? t->snap->rows[i].command : "?",
		 target_gone(t, 0) ? ", which has exited" : "");
}

#define SIGNALS_NR 31

void dialog_open_kill(tui_t *t)
{
	if (!take_targets(t))
		return;
	dlg.menu = MENU_KILL;
	dlg.menu_sel = SIGTERM - 1;
	dlg.menu_top = 0;
	dlg.menu_typed = 0;
	tui_open(t, &menu_panel);
}

void dialog_open_renice(tui_t *t, int delta)
{
	int i;

	if (!take_targets(t))
		return;
	i = vt_snapshot_find(t->snap, dlg.targets[0].pid, dlg.targets[0].start);
	dlg.nice_value = i >= 0 && t->snap->rows[i].stores[VMON_STORE_PROC_STAT] ?
			(int)((vmon_proc_stat_t *)t->snap->rows[i].stores[VMON_STORE_PROC_STAT])->nice : 0;
	dlg.nice_value += delta;
	if (dlg.nice_value < -20)
		dlg.nice_value = -20;
	if (dlg.nice_value > 19)
		dlg.nice_value = 19;
	dlg.menu = MENU_RENICE;
	tui_open(t, &menu_panel);
}

void dialog_open_sort(tui_t *t)
{
	dlg.menu = MENU_SORT;
	dlg.menu_sel = vt_view_sort_col(&t->view);
	dlg.menu_top = 0;
	tui_open(t, &menu_panel);
}

static int uid_cmp(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return (x > y) - (x < y);
}

void dialog_open_user(tui_t *t)
{
	uid_t *u = malloc(sizeof(*u) * (size_t)(t->snap->rows_nr + 1));
	int nr = 0;

	if (!u)
		return;
	for (int i = 0; i < t->snap->rows_nr; i++)
		u[nr++] = t->snap->rows[i].uid;
	qsort(u, (size_t)nr, sizeof(*u), uid_cmp);
	free(dlg.users);
	dlg.users = u;
	dlg.users_nr = 0;
	for (int i = 0; i < nr; i++) {
		if (dlg.users_nr == 0 || u[dlg.users_nr - 1] != u[i])
			u[dlg.users_nr++] = u[i];
	}
	dlg.menu = MENU_USER;
	dlg.menu_sel = 0;
	dlg.menu_top = 0;
	tui_open(t, &menu_panel);
}

/* the entries of a list dialog */
static int menu_count(const tui_t *t)
{
	switch (dlg.menu) {
	case MENU_KILL:
		return SIGNALS_NR;
	case MENU_SORT:
		return vt_columns_nr;
	case MENU_USER:
		return dlg.users_nr + 1;
	default:
		return 0;
	}
}

static void menu_entry(const tui_t *t, int i, char *buf, size_t size)
{
	switch (dlg.menu) {
	case MENU_KILL:
		snprintf(buf, size, "%2d SIG%s", i + 1, vt_signal_name(i + 1));
		break;
	case MENU_SORT:
		snprintf(buf, size, "%-10s %s", vt_columns[i].label, vt_columns[i].desc);
		break;
	case MENU_USER: {
		char name[64];

		if (i == 0)
			snprintf(buf, size, "all users");
		else
			snprintf(buf, size, "%s (%u)", tui_user_name(t, dlg.users[i - 1], name, sizeof(name)),
				 (unsigned)dlg.users[i - 1]);
		break;
	}
	default:
		buf[0] = '\0';
	}
}

static void menu_draw(tui_t *t)
{
	int h = LINES, w = COLS, bw, bh, by, bx, n = menu_count(t);
	char title[160], what[80], line[256];
	int attr = t->attrs[C_DIALOG];

	targets_text(t, what, sizeof(what));
	if (dlg.menu == MENU_CONFIRM || dlg.menu == MENU_RENICE) {
		if (dlg.menu == MENU_CONFIRM)
			snprintf(line, sizeof(line), "Send SIG%s to %s?  y: yes  n Esc: no", vt_signal_name(dlg.signal), what);
		else
			snprintf(line, sizeof(line), "Renice %s to %d?  F7 -: lower  F8 +: higher  Enter: yes  Esc: no",
				 what, dlg.nice_value);
		bw = tui_text_width(line) + 4;
		if (bw > w)
			bw = w;
		bh = h >= 3 ? 3 : h;
		by = (h - bh) / 2;
		bx = (w - bw) / 2;
		tui_box(by, bx, bh, bw, dlg.menu == MENU_CONFIRM ? " Confirm " : " Renice ", attr);
		attron(attr);
		tui_text(by + (bh > 1), bx + (bw > 2 ? 2 : 0), bw - (bw > 4 ? 4 : 0), line, 0);
		attroff(attr);
		return;
	}
	if (dlg.menu == MENU_KILL)
		snprintf(title, sizeof(title), " Send a signal to %s ", what);
	else if (dlg.menu == MENU_SORT)
		snprintf(title, sizeof(title), " Sort by ");
	else
		snprintf(title, sizeof(title), " Show the processes of ");
	bw = dlg.menu == MENU_SORT ? 60 : 40;
	if (bw < tui_text_width(title) + 4)
		bw = tui_text_width(title) + 4;
	if (bw > w)
		bw = w;
	bh = n + 2 < h - 2 ? n + 2 : h - 2;
	if (bh < 3)
		bh = h < 3 ? h : 3;
	by = (h - bh) / 2;
	bx = (w - bw) / 2;
	tui_box(by, bx, bh, bw, title, attr);
	if (dlg.menu_sel < dlg.menu_top)
		dlg.menu_top = dlg.menu_sel;
	if (dlg.menu_sel >= dlg.menu_top + bh - 2)
		dlg.menu_top = dlg.menu_sel - (bh - 2) + 1;
	for (int i = 0; i < bh - 2 && dlg.menu_top + i < n; i++) {
		int e = dlg.menu_top + i, a = e == dlg.menu_sel ? t->attrs[C_SELECTED] : attr;

		menu_entry(t, e, line, sizeof(line));
		tui_fill(by + 1 + i, bx + 1, bw - 2, a);
		attron(a);
		tui_text(by + 1 + i, bx + 2, bw - 4, line, 0);
		attroff(a);
	}
}

/* the ways an action on a target can end, besides an errno */
enum { ACT_DONE = 0, ACT_RENICE_RACED = -1 };

/* a signal through the process's pidfd: never to another process that took its pid */
static int do_kill(const target_t *target, int sig)
{
	int fd = target_pidfd(target), err = 0;

	if (fd < 0)
		return errno;
	/* a thread row's signal is for its process, as kill(2) of a thread id is */
	if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, target->thread ? PIDFD_SIGNAL_THREAD_GROUP : 0) < 0)
		err = errno;
	close(fd);
	return err;
}

/* setpriority() takes a pid: the identity checked before, and the process asked after whether it is still there */
static int do_renice(const target_t *target, int nice_value)
{
	int fd = target_pidfd(target), err = ACT_DONE;

	if (fd < 0)
		return errno;
	if (setpriority(PRIO_PROCESS, (id_t)target->pid, nice_value) < 0)
		err = errno;
	/* reaped meanwhile: the pid could have been another's when it was reniced */
	if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH)
		err = err == ESRCH ? ESRCH : ACT_RENICE_RACED;
	close(fd);
	return err;
}

/*
 * act(target, arg) on each target; the failures, each with its pid and
 * reason, into errors.  Returns how many succeeded.
 */
static int each_target(tui_t *t, int (*act)(const target_t *, int), int arg, char *errors, size_t size)
{
	int done = 0;

	errors[0] = '\0';
	for (int k = 0; k < dlg.targets_nr; k++) {
		int err = act(&dlg.targets[k], arg), pid = dlg.targets[k].pid;
		size_t len = strlen(errors);
		const char *sep = len ? "; " : "";

		if (err == ACT_DONE)
			done++;
		else if (err == ESRCH)
			snprintf(errors + len, size - len, "%s%d: it has exited", sep, pid);
		else if (err == ENOSYS)
			snprintf(errors + len, size - len, "%s%d: this kernel has no pidfd_open() (Linux 5.3): it "
				 "cannot be reached for sure, so it was not", sep, pid);
		else if (err == ACT_RENICE_RACED)
			snprintf(errors + len, size - len, "%s%d: it exited while being reniced (the pid may have "
				 "been another process's by then)", sep, pid);
		else
			snprintf(errors + len, size - len, "%s%d: %s", sep, pid, strerror(err));
	}
	/* show the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	return done;
}

static void send_signal(tui_t *t)
{
	char errors[400];
	int sent = each_target(t, do_kill, dlg.signal, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "kill SIG%s: %s%s", vt_signal_name(dlg.signal), errors,
			    sent ? " (sent to the others)" : "");
	else
		tui_message(t, false, "sent SIG%s to %d process%s", vt_signal_name(dlg.signal), sent, sent == 1 ? "" : "es");
}

static void renice(tui_t *t)
{
	char errors[400];
	int done = each_target(t, do_renice, dlg.nice_value, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "renice to %d: %s%s", dlg.nice_value, errors, done ? " (the others reniced)" : "");
	else
		tui_message(t, false, "reniced %d process%s to %d", done, done == 1 ? "" : "es", dlg.nice_value);
}

static void menu_choose(tui_t *t)
{
	switch (dlg.menu) {
	case MENU_KILL:
		dlg.signal = dlg.menu_sel + 1;
		dlg.menu = MENU_CONFIRM;
		return;
	case MENU_SORT:
		vt_view_set_sort(&t->view, dlg.menu_sel, vt_columns[dlg.menu_sel].kind == VT_VALUE_NUMBER);
		tui_rebuild(t);
		break;
	case MENU_USER:
		t->view.user_set = dlg.menu_sel > 0;
		if (dlg.menu_sel > 0)
			t->view.user_uid = dlg.users[dlg.menu_sel - 1];
		tui_rebuild(t);
		break;
	default:
		break;
	}
	dlg.menu = MENU_NONE;
}

static void menu_key_typed(tui_t *t, int ch)
{
	int n = menu_count(t);

	if (dlg.menu == MENU_CONFIRM) {
		if (ch == 'y' || ch == 'Y')
			send_signal(t);
		else
			tui_message(t, false, "no signal sent");
		dlg.menu = MENU_NONE;
		return;
	}
	if (dlg.menu == MENU_RENICE) {
		switch (ch) {
		case KEY_F(7): case ']': case '-': case KEY_LEFT:
			if (dlg.nice_value > -20)
				dlg.nice_value--;
			break;
		case KEY_F(8): case '[': case '+': case KEY_RIGHT:
			if (dlg.nice_value < 19)
				dlg.nice_value++;
			break;
		case '\n': case '\r': case KEY_ENTER: case 'y':
			renice(t);
			dlg.menu = MENU_NONE;
			break;
		case 27: case 'n': case 'q':
			dlg.menu = MENU_NONE;
			break;
		}
		return;
	}
	switch (ch) {
	case KEY_UP:
		dlg.menu_sel--;
		break;
	case KEY_DOWN:
		dlg.menu_sel++;
		break;
	case KEY_PPAGE:
		dlg.menu_sel -= 10;
		break;
	case KEY_NPAGE:
		dlg.menu_sel += 10;
		break;
	case KEY_HOME:
		dlg.menu_sel = 0;
		break;
	case KEY_END:
		dlg.menu_sel = n - 1;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		menu_choose(t);
		return;
	case 27:
	case 'q':
	case KEY_F(10):
		dlg.menu = MENU_NONE;
		return;
	default:
		/* the signal menu takes a number typed: 9 for KILL, 1 then 5 for TERM */
		if (dlg.menu == MENU_KILL && ch >= '0' && ch <= '9') {
			int v = dlg.menu_typed * 10 + (ch - '0');

			dlg.menu_typed = v <= SIGNALS_NR ? v : ch - '0';
			if (dlg.menu_typed >= 1)
				dlg.menu_sel = dlg.menu_typed - 1;
			return;
		}
		break;
	}
	dlg.menu_typed = 0;
	if (dlg.menu_sel < 0)
		dlg.menu_sel = 0;
	if (dlg.menu_sel >= n)
		dlg.menu_sel = n - 1;
}

static panel_next_t menu_key(tui_t *t, int ch)
{
	menu_key_typed(t, ch);
	return dlg.menu == MENU_NONE ? PANEL_CLOSE : PANEL_STAY;
}

const panel_t menu_panel = { "menu", true, NULL, menu_draw, menu_key };
