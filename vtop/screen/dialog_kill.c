/*
 * dialog_kill.c: k and F9, a signal for the selected or tagged processes:
 * a menu of the signals (a number may be typed), then a confirmation.  The
 * signal goes through each target's pidfd (dialog.c), never to another
 * process that took its pid; the menu says when a target exits while it is
 * open, and each failure is shown with the pid and the reason.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "screen/dialog.h"

/* linux/pidfd.h of Linux 6.9, newer than the headers this may be built with */
#ifndef PIDFD_SIGNAL_THREAD_GROUP
#define PIDFD_SIGNAL_THREAD_GROUP	(1U << 1)
#endif

#define SIGNALS_NR 31

static struct {
	dialog_targets_t	targets;
	dialog_list_t		list;		/* the signals, SIGHUP first */
	int			typed;		/* the signal number typed so far */
	int			signal;		/* chosen: the confirmation is asked */
} kd;

static void kill_close(tui_t *t)
{
	(void)t;
	dialog_targets_free(&kd.targets);
	memset(&kd, 0, sizeof(kd));
}

static void kill_open(tui_t *t)
{
	kd.list = (dialog_list_t){ .nr = SIGNALS_NR, .sel = SIGTERM - 1 };
	kd.typed = 0;
	kd.signal = 0;
	tui_open(t, &kill_panel);
}

void dialog_open_kill(tui_t *t)
{
	if (dialog_targets_take(t, &kd.targets, true))
		kill_open(t);
}

void dialog_open_kill_process(tui_t *t, vt_key_t key)
{
	if (dialog_targets_take_process(t, &kd.targets, key))
		kill_open(t);
}

static void signal_entry(const tui_t *t, int i, char *buf, size_t size)
{
	(void)t;
	snprintf(buf, size, "%2d SIG%s", i + 1, vt_signal_name(i + 1));
}

static void kill_draw(tui_t *t)
{
	char what[80], title[160], line[256];
	const char *lines[1] = { line };

	dialog_targets_text(t, &kd.targets, what, sizeof(what));
	if (kd.signal) {
		snprintf(line, sizeof(line), "Send SIG%s to %s?  y: yes  n Esc: no", vt_signal_name(kd.signal), what);
		dialog_box(t, " Confirm ", 0, lines, 1, -1, false);
		return;
	}
	snprintf(title, sizeof(title), " Send a signal to %s ", what);
	dialog_list_draw(t, title, 40, &kd.list, LINES - 4, signal_entry, NULL, 0, false);
}

/* a signal through the process's pidfd: never to another process that took its pid */
static int do_kill(const dialog_target_t *target, const void *arg)
{
	int fd = dialog_target_pidfd(target), err = 0, sig = *(const int *)arg;

	if (fd < 0)
		return errno;
	/* a thread row's signal is for its process, as kill(2) of a thread id is */
	if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, target->thread ? PIDFD_SIGNAL_THREAD_GROUP : 0) < 0)
		err = errno;
	close(fd);
	return err;
}

static void send_signal(tui_t *t)
{
	char errors[400];
	int sent = dialog_each_target(t, &kd.targets, do_kill, &kd.signal, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "kill SIG%s: %s%s", vt_signal_name(kd.signal), errors,
			    sent ? " (sent to the others)" : "");
	else
		tui_message(t, false, "sent SIG%s to %d process%s", vt_signal_name(kd.signal), sent, sent == 1 ? "" : "es");
}

static panel_next_t kill_key(tui_t *t, int ch)
{
	if (kd.signal) {
		if (ch == 'y' || ch == 'Y')
			send_signal(t);
		else
			tui_message(t, false, "no signal sent");
		return PANEL_CLOSE;
	}
	switch (ch) {
	case '\n': case '\r': case KEY_ENTER:
		kd.signal = kd.list.sel + 1;
		return PANEL_STAY;
	case 27: case 'q': case KEY_F(10):
		return PANEL_CLOSE;
	}
	/* a number typed: 9 for KILL, 1 then 5 for TERM */
	if (ch >= '0' && ch <= '9') {
		int v = kd.typed * 10 + (ch - '0');

		kd.typed = v <= SIGNALS_NR ? v : ch - '0';
		if (kd.typed >= 1)
			kd.list.sel = kd.typed - 1;
		return PANEL_STAY;
	}
	dialog_list_key(&kd.list, ch);
	kd.typed = 0;
	return PANEL_STAY;
}

const panel_t kill_panel = { "kill", true, NULL, kill_draw, kill_key, kill_close };
