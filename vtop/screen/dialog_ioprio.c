/*
 * dialog_ioprio.c: i, the selected task's I/O priority (ioprio_set(2), a
 * class and a level, as ionice -p: one task, a process's main thread or
 * the thread of a thread row).  The call goes through dialog_act(), which
 * checks the identity before and the process's life after.  A failure
 * (EPERM: realtime needs CAP_SYS_ADMIN, another user's process
 * CAP_SYS_NICE) is shown in the dialog, which stays open.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "screen/dialog.h"

/* linux/ioprio.h */
#define IOPRIO_WHO_PROCESS_	1
#define IOPRIO_CLASS_SHIFT_	13

/* the classes in the order Left and Right step through them */
static const int io_classes[] = { 1, 2, 3, 0 };
static const char *const io_class_long[] = { "none (by nice)", "realtime", "best-effort", "idle" };

#define IO_CLASSES_NR	((int)(sizeof(io_classes) / sizeof(io_classes[0])))

static struct {
	dialog_targets_t	target;		/* the selected task alone */
	int			io_class;
	int			io_level;
	char			error[256];
} io;

static void ioprio_close(tui_t *t)
{
	(void)t;
	dialog_targets_free(&io.target);
}

void dialog_open_ioprio(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);
	const vmon_proc_sched_t *s;
	long prio;
	int fd;

	if (!dialog_targets_take(t, &io.target, false))
		return;
	io.error[0] = '\0';
	/* the class and level it has now: asked of the task itself, its identity checked */
	io.io_class = 2;
	io.io_level = 4;
	s = row->stores[VMON_STORE_PROC_SCHED];
	fd = dialog_target_pidfd(&io.target.v[0]);
	if (fd >= 0) {
		prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, io.target.v[0].pid);
		if (prio >= 0) {
			io.io_class = (int)(prio >> IOPRIO_CLASS_SHIFT_);
			io.io_level = (int)(prio & 7);
		}
		close(fd);
	} else if (s) {
		io.io_class = s->io_class;
		io.io_level = s->io_level;
	}
	if (io.io_class < 0 || io.io_class > 3)
		io.io_class = 2;
	/* class none is best-effort at the level nice gives: where the level starts if one is chosen */
	if (io.io_class == 0 && row->stores[VMON_STORE_PROC_STAT]) {
		long long nice = ((const vmon_proc_stat_t *)row->stores[VMON_STORE_PROC_STAT])->nice;

		io.io_level = nice < -20 || nice > 19 ? 4 : (int)(nice + 20) / 5;
	}
	tui_open(t, &ioprio_panel);
}

static int call_ioprio_set(pid_t pid, const void *arg)
{
	return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, pid, *(const int *)arg);
}

/* true if set (and said), false with the reason in io.error */
static bool set_ioprio(tui_t *t)
{
	bool leveled = io.io_class == 1 || io.io_class == 2;
	int value = io.io_class << IOPRIO_CLASS_SHIFT_ | (leveled ? io.io_level : 0);
	char what[64], why[128];
	int err;

	if (leveled)
		snprintf(what, sizeof(what), "I/O priority %s/%d", vt_io_class_name(io.io_class), io.io_level);
	else
		snprintf(what, sizeof(what), "I/O priority %s", vt_io_class_name(io.io_class));
	err = dialog_act(&io.target.v[0], call_ioprio_set, &value);
	/* the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	if (!err) {
		tui_message(t, false, "%d: %s", io.target.v[0].pid, what);
		return true;
	}
	dialog_error_text(err, why, sizeof(why));
	snprintf(io.error, sizeof(io.error), "%s: %s%s", what, why,
		 err == EPERM ? " (realtime needs root; another user's process too)" : "");
	return false;
}

static void ioprio_draw(tui_t *t)
{
	char what[80], title[128], line[2][128];
	const char *lines[4];
	int nr = 0;

	dialog_targets_text(t, &io.target, what, sizeof(what));
	snprintf(title, sizeof(title), " I/O priority of %s ", what);
	snprintf(line[0], sizeof(line[0]), "class  < %s >   Left Right", io_class_long[io.io_class]);
	if (io.io_class == 1 || io.io_class == 2)
		snprintf(line[1], sizeof(line[1]), "level  %d (0 first, 7 last)   Up Down - + 0-7", io.io_level);
	else
		snprintf(line[1], sizeof(line[1]), "level  none in this class");
	lines[nr++] = line[0];
	lines[nr++] = line[1];
	lines[nr++] = "Enter: set   Esc: cancel";
	if (io.error[0])
		lines[nr++] = io.error;
	dialog_box(t, title, 0, lines, nr, -1, io.error[0] != '\0');
}

static void step_class(int dir)
{
	int k = 0;

	while (k < IO_CLASSES_NR && io_classes[k] != io.io_class)
		k++;
	k = (k + dir + IO_CLASSES_NR) % IO_CLASSES_NR;
	io.io_class = io_classes[k];
}

static panel_next_t ioprio_key(tui_t *t, int ch)
{
	switch (ch) {
	case KEY_LEFT:
		step_class(-1);
		break;
	case KEY_RIGHT: case '\t':
		step_class(1);
		break;
	case KEY_UP: case '-':
		if (io.io_level > 0)
			io.io_level--;
		break;
	case KEY_DOWN: case '+':
		if (io.io_level < 7)
			io.io_level++;
		break;
	case '\n': case '\r': case KEY_ENTER:
		return set_ioprio(t) ? PANEL_CLOSE : PANEL_STAY;
	case 27: case 'q':
		return PANEL_CLOSE;
	default:
		if (ch >= '0' && ch <= '7')
			io.io_level = ch - '0';
		break;
	}
	io.error[0] = '\0';
	return PANEL_STAY;
}

const panel_t ioprio_panel = { "ioprio", true, NULL, ioprio_draw, ioprio_key, ioprio_close };
