/*
 * dialog.h: what the dialogs over the list share (screen/dialog_*.c): the
 * processes they act on, identified when they opened, and the boxes they
 * are drawn in.  Each dialog is a panel of its own file with its own state.
 */
#ifndef VTOP_DIALOG_H
#define VTOP_DIALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tui.h"

/* a process (or a thread) by identity, taken when the dialog opened */
typedef struct dialog_target {
	int			pid;
	unsigned long long	start;
	bool			thread;		/* a thread row: its own tid and start time */
} dialog_target_t;

typedef struct dialog_targets {
	dialog_target_t	*v;
	int		nr;
} dialog_targets_t;

/* the tagged processes (if tagged and there are any), else the selected one; false, said why, if none */
bool dialog_targets_take(tui_t *t, dialog_targets_t *tg, bool tagged);
/* the process of that identity alone; false, said why, if the newest snapshot shows it exited or gone */
bool dialog_targets_take_process(tui_t *t, dialog_targets_t *tg, vt_key_t key);
void dialog_targets_free(dialog_targets_t *tg);
int dialog_target_pidfd(const dialog_target_t *target);
/* "1234 (sleep)", "1234 (sleep), which has exited" or "3 tagged processes, 1 of them exited" */
void dialog_targets_text(const tui_t *t, const dialog_targets_t *tg, char *buf, size_t size);

/*
 * call(pid, arg) for a call with no pidfd form: the identity checked right
 * before it, the process asked right after whether it is still there.
 * Returns 0, an errno, or DIALOG_RACED: it was reaped meanwhile, so the
 * pid may have been another's when the call was made.
 */
#define DIALOG_RACED	(-1)
int dialog_act(const dialog_target_t *target, int (*call)(pid_t pid, const void *arg), const void *arg);
/* why an action failed: err is an errno or DIALOG_RACED */
void dialog_error_text(int err, char *buf, size_t size);
/*
 * act(target, arg) on each target, then a sample at once (to show the
 * result); the failures, "PID: why" each, into errors ("" if none).
 * Returns how many succeeded.
 */
int dialog_each_target(tui_t *t, const dialog_targets_t *tg, int (*act)(const dialog_target_t *target, const void *arg),
		       const void *arg, char *errors, size_t size);

/*
 * A box in the middle of the screen: lines, the one of index sel
 * highlighted, the last in the error colour if error_last.  width: that
 * wide (longer lines are cut), 0: as wide as the lines.
 */
void dialog_box(tui_t *t, const char *title, int width, const char *const *lines, int nr, int sel, bool error_last);

/* a list of entries to choose from, scrolled to keep the selected one in its box */
typedef struct dialog_list {
	int	nr;
	int	sel;
	int	top;
} dialog_list_t;

/* Up, Down, Page Up and Down, Home, End; false if ch is none of them */
bool dialog_list_key(dialog_list_t *l, int ch);
/* the entries from l->top that fit in room lines, l->top moved to show l->sel, then the extra lines */
void dialog_list_draw(tui_t *t, const char *title, int width, dialog_list_t *l, int room,
		      void (*entry)(const tui_t *t, int i, char *buf, size_t size), const char *const *extra, int extra_nr,
		      bool error_last);

#endif
