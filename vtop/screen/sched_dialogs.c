/*
 * sched_dialogs.c: the dialogs that set where and how soon a process runs:
 * its I/O priority (i: ioprio_set(2), a class and a level, as ionice) and
 * its CPU affinity (a: sched_setaffinity(2), a menu of the online CPUs).
 *
 * Both act on the selected row's task (a process's main thread, or the
 * thread of a thread row: both calls set one task, as ionice -p and
 * taskset -p do), identified by pid and start time when the dialog opened.
 * Neither call has a pidfd form, so they go as renice does: the identity is
 * checked by vmon_pidfd_open() right before the call, and the pidfd asked
 * after it whether the process is still there (a pid is not reused before
 * its process is reaped); if it went in between, that is said.  A failure
 * (EPERM: realtime I/O needs CAP_SYS_ADMIN, another user's process
 * CAP_SYS_NICE) is shown in the dialog, which stays open.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tui.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* linux/pidfd.h of Linux 6.9 */
#endif

/* linux/ioprio.h */
#define IOPRIO_WHO_PROCESS_	1
#define IOPRIO_CLASS_SHIFT_	13

/* the classes in the order Left and Right step through them */
static const int io_classes[] = { 1, 2, 3, 0 };
static const char *const io_class_long[] = { "none (by nice)", "realtime", "best-effort", "idle" };

#define IO_CLASSES_NR	((int)(sizeof(io_classes) / sizeof(io_classes[0])))

/* the dialog open, the task it is for, what is chosen, why it failed */
static struct {
	enum { SCHED_NONE, SCHED_IOPRIO, SCHED_AFFINITY } menu;
	vt_key_t	sched_target;
	bool		sched_target_thread;
	int		io_class;
	int		io_level;
	unsigned char	*cpus_on;	/* per CPU, 1 if chosen */
	int		cpus_nr;
	int		menu_sel;	/* the affinity menu's */
	int		menu_top;
	char		sched_error[200];
} sd;

void sched_free(void)
{
	free(sd.cpus_on);
	memset(&sd, 0, sizeof(sd));
}

/* the selected row as the dialog's target; false if there is none */
static bool take_target(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);

	sd.sched_error[0] = '\0';
	if (!row || (row->flags & VT_ROW_EXITED)) {
		tui_message(t, true, "%s", row ? "that process has exited" : "no process selected");
		return false;
	}
	sd.sched_target.pid = row->pid;
	sd.sched_target.start = row->start;
	sd.sched_target_thread = (row->flags & VT_ROW_THREAD) != 0;
	return true;
}

static int target_pidfd(void)
{
	return vmon_pidfd_open(sd.sched_target.pid, sd.sched_target.start, sd.sched_target_thread ? PIDFD_THREAD : 0);
}

/*
 * call(pid, arg) on the target, its identity checked before and its life
 * after (see the top): 0, or -1 with the reason in sd.sched_error.
 */
static int act_on_target(tui_t *t, int (*call)(pid_t, const void *), const void *arg, const char *what)
{
	int fd = target_pidfd(), err = 0;
	bool raced = false;

	if (fd < 0) {
		err = errno;
	} else {
		if (call(sd.sched_target.pid, arg) < 0)
			err = errno;
		if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH)
			raced = err != ESRCH;
		close(fd);
	}
	/* show the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	if (raced)
		snprintf(sd.sched_error, sizeof(sd.sched_error), "%s: it exited meanwhile (the pid may have been "
			 "another process's by then)", what);
	else if (err == ESRCH)
		snprintf(sd.sched_error, sizeof(sd.sched_error), "%s: it has exited", what);
	else if (err == EPERM)
		snprintf(sd.sched_error, sizeof(sd.sched_error), "%s: %s (%s)", what, strerror(err),
			 sd.menu == SCHED_IOPRIO ? "realtime needs root; another user's process too" :
			 "another user's process needs root");
	else if (err)
		snprintf(sd.sched_error, sizeof(sd.sched_error), "%s: %s", what, strerror(err));
	return err || raced ? -1 : 0;
}

/* "1234 (sleep)" */
static void target_text(const tui_t *t, char *buf, size_t size)
{
	int i = vt_snapshot_find(t->snap, sd.sched_target.pid, sd.sched_target.start);

	snprintf(buf, size, "%d (%.40s)%s", sd.sched_target.pid, i >= 0 ? t->snap->rows[i].command : "?",
		 i < 0 || (t->snap->rows[i].flags & VT_ROW_EXITED) ? ", which has exited" : "");
}

/* --- I/O priority --- */

void sched_open_ioprio(tui_t *t)
{
	const vt_row_t *row;
	const vmon_proc_sched_t *s;
	long prio;
	int fd;

	if (!take_target(t))
		return;
	/* the class and level it has now: asked of the task itself, its identity checked */
	sd.io_class = 2;
	sd.io_level = 4;
	row = tui_selected(t);
	s = row->stores[VMON_STORE_PROC_SCHED];
	fd = target_pidfd();
	if (fd >= 0) {
		prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, sd.sched_target.pid);
		if (prio >= 0) {
			sd.io_class = (int)(prio >> IOPRIO_CLASS_SHIFT_);
			sd.io_level = (int)(prio & 7);
		}
		close(fd);
	} else if (s) {
		sd.io_class = s->io_class;
		sd.io_level = s->io_level;
	}
	if (sd.io_class < 0 || sd.io_class > 3)
		sd.io_class = 2;
	/* class none is best-effort at the level nice gives: where the level starts if one is chosen */
	if (sd.io_class == 0 && row->stores[VMON_STORE_PROC_STAT]) {
		long long nice = ((const vmon_proc_stat_t *)row->stores[VMON_STORE_PROC_STAT])->nice;

		sd.io_level = nice < -20 || nice > 19 ? 4 : (int)(nice + 20) / 5;
	}
	sd.menu = SCHED_IOPRIO;
	tui_open(t, &sched_panel);
}

static int call_ioprio_set(pid_t pid, const void *arg)
{
	return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, pid, *(const int *)arg);
}

static void set_ioprio(tui_t *t)
{
	int value = sd.io_class << IOPRIO_CLASS_SHIFT_ | ((sd.io_class == 1 || sd.io_class == 2) ? sd.io_level : 0);
	char what[64];

	if (sd.io_class == 1 || sd.io_class == 2)
		snprintf(what, sizeof(what), "I/O priority %s/%d", vt_io_class_name(sd.io_class), sd.io_level);
	else
		snprintf(what, sizeof(what), "I/O priority %s", vt_io_class_name(sd.io_class));
	if (act_on_target(t, call_ioprio_set, &value, what) == 0) {
		tui_message(t, false, "%d: %s", sd.sched_target.pid, what);
		sd.menu = SCHED_NONE;
	}
}

static void step_class(tui_t *t, int dir)
{
	int k = 0;

	while (k < IO_CLASSES_NR && io_classes[k] != sd.io_class)
		k++;
	k = (k + dir + IO_CLASSES_NR) % IO_CLASSES_NR;
	sd.io_class = io_classes[k];
}

/* --- CPU affinity --- */

void sched_open_affinity(tui_t *t)
{
	cpu_set_t *set;
	size_t size;
	int fd, n = t->snap->cpus_nr > 0 ? t->snap->cpus_nr : 1;

	if (!take_target(t))
		return;
	free(sd.cpus_on);
	sd.cpus_on = calloc((size_t)n, sizeof(*sd.cpus_on));
	if (!sd.cpus_on) {
		tui_message(t, true, "out of memory");
		return;
	}
	sd.cpus_nr = n;
	/* the CPUs it may use now, asked of the task itself, its identity checked */
	set = CPU_ALLOC((size_t)n);
	size = CPU_ALLOC_SIZE((size_t)n);
	fd = target_pidfd();
	if (set && fd >= 0 && sched_getaffinity(sd.sched_target.pid, size, set) == 0) {
		for (int c = 0; c < n; c++)
			sd.cpus_on[c] = CPU_ISSET_S((size_t)c, size, set) != 0;
	} else {
		for (int c = 0; c < n; c++)
			sd.cpus_on[c] = 1;
		snprintf(sd.sched_error, sizeof(sd.sched_error), "its CPUs now: %s",
			 fd < 0 && errno == ESRCH ? "it has exited" : strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	CPU_FREE(set);
	sd.menu = SCHED_AFFINITY;
	sd.menu_sel = 0;
	sd.menu_top = 0;
	tui_open(t, &sched_panel);
}

/* the menu's entries: the online CPUs' numbers (malloc'd, *n of them), or NULL */
static int *online_cpus(const tui_t *t, int *n)
{
	int *cpus = malloc((size_t)sd.cpus_nr * sizeof(*cpus));

	*n = 0;
	if (!cpus)
		return NULL;
	for (int c = 0; c < sd.cpus_nr; c++) {
		if (c < t->snap->cpus_nr && !t->snap->cpus[c].online)
			continue;
		cpus[(*n)++] = c;
	}
	return cpus;
}

/* arg: the CPUs chosen, one byte each (sd.cpus_on) */
static int call_setaffinity(pid_t pid, const void *arg)
{
	const unsigned char *on = arg;
	cpu_set_t *set = CPU_ALLOC((size_t)sd.cpus_nr);
	size_t size = CPU_ALLOC_SIZE((size_t)sd.cpus_nr);
	int r, err;

	if (!set)
		return -1;
	CPU_ZERO_S(size, set);
	for (int c = 0; c < sd.cpus_nr; c++) {
		if (on[c])
			CPU_SET_S((size_t)c, size, set);
	}
	r = sched_setaffinity(pid, size, set);
	err = errno;
	CPU_FREE(set);
	errno = err;
	return r;
}

static void set_affinity(tui_t *t)
{
	char list[256];
	size_t len = 0;

	list[0] = '\0';
	for (int c = 0; c < sd.cpus_nr && len < sizeof(list) - 16; c++) {
		if (sd.cpus_on[c])
			len += (size_t)snprintf(list + len, sizeof(list) - len, len ? ",%d" : "%d", c);
	}
	if (!len) {
		snprintf(sd.sched_error, sizeof(sd.sched_error), "choose at least one CPU (Space)");
		return;
	}
	if (act_on_target(t, call_setaffinity, sd.cpus_on, "CPU affinity") == 0) {
		tui_message(t, false, "%d: CPUs %s", sd.sched_target.pid, list);
		sd.menu = SCHED_NONE;
	}
}

/* --- drawing and keys --- */

/* a box in the middle of the screen: lines, the one of index sel highlighted, an error last */
static void draw_box(tui_t *t, const char *title, const char *const *lines, int nr, int sel)
{
	int h = LINES, w = COLS, bw = tui_text_width(title) + 4, bh, by, bx, attr = t->attrs[C_DIALOG];

	for (int i = 0; i < nr; i++) {
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
		int a = i == sel ? t->attrs[C_SELECTED] : i == nr - 1 && sd.sched_error[0] ? t->attrs[C_ERROR] : attr;

		tui_fill(by + 1 + i, bx + 1, bw - 2, a);
		attron(a);
		tui_text(by + 1 + i, bx + 2, bw - 4, lines[i], 0);
		attroff(a);
	}
}

static void draw_ioprio(tui_t *t, const char *what)
{
	char title[128], line[2][128];
	const char *lines[4];
	int nr = 0;

	snprintf(title, sizeof(title), " I/O priority of %s ", what);
	snprintf(line[0], sizeof(line[0]), "class  < %s >   Left Right", io_class_long[sd.io_class]);
	if (sd.io_class == 1 || sd.io_class == 2)
		snprintf(line[1], sizeof(line[1]), "level  %d (0 first, 7 last)   Up Down - + 0-7", sd.io_level);
	else
		snprintf(line[1], sizeof(line[1]), "level  none in this class");
	lines[nr++] = line[0];
	lines[nr++] = line[1];
	lines[nr++] = "Enter: set   Esc: cancel";
	if (sd.sched_error[0])
		lines[nr++] = sd.sched_error;
	draw_box(t, title, lines, nr, -1);
}

/* one line per online CPU, scrolled to keep the selected one in the box */
static void draw_affinity(tui_t *t, const char *what)
{
	char title[128], (*entries)[32] = NULL;
	const char **lines = NULL;
	int n, room = LINES - 4 - (sd.sched_error[0] != '\0'), nr = 0;
	int *cpus = online_cpus(t, &n);

	if (room < 1)
		room = 1;
	if (sd.menu_sel >= n)
		sd.menu_sel = n ? n - 1 : 0;
	if (sd.menu_sel < sd.menu_top)
		sd.menu_top = sd.menu_sel;
	if (sd.menu_sel >= sd.menu_top + room)
		sd.menu_top = sd.menu_sel - room + 1;
	entries = malloc((size_t)room * sizeof(*entries));
	lines = malloc((size_t)(room + 2) * sizeof(*lines));
	if (cpus && entries && lines) {
		snprintf(title, sizeof(title), " CPUs for %s ", what);
		for (int i = sd.menu_top; i < n && nr < room; i++, nr++) {
			snprintf(entries[nr], sizeof(entries[nr]), "[%c] CPU %d", sd.cpus_on[cpus[i]] ? 'x' : ' ', cpus[i]);
			lines[nr] = entries[nr];
		}
		lines[nr++] = "Space: toggle  Enter: set  Esc: cancel";
		if (sd.sched_error[0])
			lines[nr++] = sd.sched_error;
		draw_box(t, title, lines, nr, sd.menu_sel - sd.menu_top);
	}
	free(cpus);
	free(entries);
	free(lines);
}

static void sched_draw(tui_t *t)
{
	char what[80];

	target_text(t, what, sizeof(what));
	if (sd.menu == SCHED_IOPRIO)
		draw_ioprio(t, what);
	else
		draw_affinity(t, what);
}

static void ioprio_key(tui_t *t, int ch)
{
	switch (ch) {
	case KEY_LEFT:
		step_class(t, -1);
		break;
	case KEY_RIGHT: case '\t':
		step_class(t, 1);
		break;
	case KEY_UP: case '-':
		if (sd.io_level > 0)
			sd.io_level--;
		break;
	case KEY_DOWN: case '+':
		if (sd.io_level < 7)
			sd.io_level++;
		break;
	case '\n': case '\r': case KEY_ENTER:
		set_ioprio(t);
		return;
	case 27: case 'q':
		sd.menu = SCHED_NONE;
		return;
	default:
		if (ch >= '0' && ch <= '7')
			sd.io_level = ch - '0';
		break;
	}
	sd.sched_error[0] = '\0';
}

static void affinity_key(tui_t *t, int ch)
{
	int n, *cpus;

	switch (ch) {
	case '\n': case '\r': case KEY_ENTER:
		set_affinity(t);
		return;
	case 27: case 'q':
		sd.menu = SCHED_NONE;
		return;
	}
	cpus = online_cpus(t, &n);
	if (!cpus)
		return;
	switch (ch) {
	case KEY_UP:
		if (sd.menu_sel > 0)
			sd.menu_sel--;
		break;
	case KEY_DOWN:
		if (sd.menu_sel + 1 < n)
			sd.menu_sel++;
		break;
	case KEY_HOME:
		sd.menu_sel = 0;
		break;
	case KEY_END:
		sd.menu_sel = n ? n - 1 : 0;
		break;
	case ' ':
		if (sd.menu_sel < n)
			sd.cpus_on[cpus[sd.menu_sel]] ^= 1;
		break;
	}
	free(cpus);
	sd.sched_error[0] = '\0';
}

static panel_next_t sched_key(tui_t *t, int ch)
{
	if (sd.menu == SCHED_IOPRIO)
		ioprio_key(t, ch);
	else
		affinity_key(t, ch);
	return sd.menu == SCHED_NONE ? PANEL_CLOSE : PANEL_STAY;
}

const panel_t sched_panel = { "sched", true, NULL, sched_draw, sched_key };
