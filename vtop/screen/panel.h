/*
 * panel.h: what the screen is made of.  The loop (tui.c) keeps a stack of
 * panels: the process list at the bottom, a full-screen view (help,
 * details, event log, open files, setup) or a dialog (signal, renice, sort,
 * user, I/O priority, affinity: screen/dialog_*.c) above it.  Keys go to the top panel; a
 * frame is drawn from the topmost full-screen panel up, each dialog over
 * what is below it.  A panel keeps its own state in its own file and
 * reaches the rest through the context (tui.h).
 */
#ifndef VTOP_PANEL_H
#define VTOP_PANEL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tui tui_t;

/* what a key asks of the loop; every key is followed by a frame */
typedef enum {
	PANEL_STAY,	/* the panel goes on (it may have opened another above itself) */
	PANEL_CLOSE,	/* this panel is done: the one below it shows again */
	PANEL_QUIT,	/* vtop ends */
} panel_next_t;

typedef struct panel {
	const char	*name;
	bool		dialog;		/* drawn over the panel below, not instead of it */
	/* the title line of a full-screen panel, which the loop draws; NULL: none */
	void		(*title)(tui_t *t, char *buf, size_t size);
	void		(*draw)(tui_t *t);
	panel_next_t	(*key)(tui_t *t, int ch);
	/* what the panel holds let go, when it leaves the stack or vtop ends; NULL: nothing */
	void		(*close)(tui_t *t);
} panel_t;

#define TUI_PANELS_MAX	8

/* push a panel (its opener has made its state); false if the stack is full */
bool tui_open(tui_t *t, const panel_t *panel);

extern const panel_t list_panel;
extern const panel_t help_panel;
extern const panel_t details_panel;
extern const panel_t events_panel;
extern const panel_t setup_panel;
extern const panel_t files_panel;
extern const panel_t kill_panel;
extern const panel_t renice_panel;
extern const panel_t sort_panel;
extern const panel_t user_panel;
extern const panel_t ioprio_panel;
extern const panel_t affinity_panel;

#endif
