/*
 * tui.h: what the screen's files share.  tui.c owns curses: the loop that
 * runs the panel stack (panel.h), the list panel, its header and the key
 * table; every other panel is a file of its own, with its own state, and
 * draws through the helpers below.
 */
#ifndef VTOP_TUI_H
#define VTOP_TUI_H

#include <curses.h>

#include "vtop.h"
#include "data/columns.h"
#include "data/model.h"
#include "data/sampler.h"
#include "data/snapshot.h"
#include "screen/panel.h"

typedef enum {
	PROMPT_NONE,
	PROMPT_SEARCH,
	PROMPT_FILTER,
	PROMPT_TIME,	/* -r: the time to go to */
} tui_prompt_t;

/* the colour pairs (or, without colour, attributes) of each kind of text */
enum {
	C_NORMAL = 1,
	C_METER_LABEL,
	C_BAR_USER,
	C_BAR_NICE,
	C_BAR_SYSTEM,
	C_BAR_OTHER,
	C_BAR_MEM,
	C_BAR_CACHE,
	C_HEADER,
	C_SELECTED,
	C_EXITED,
	C_NEW,
	C_KTHREAD,
	C_CONTEXT,
	C_THREAD,
	C_TREE,
	C_FKEY,
	C_FKEY_LABEL,
	C_ERROR,
	C_DIALOG,
	C_TAGGED,
	C_NR
};

typedef struct tui {
	vt_config_t		*cfg;
	vt_sampler_t		*sampler;
	vt_snapshot_t		*snap;
	vt_view_t		view;
	vmon_proc_wants_t	wants;

	const panel_t		*panels[TUI_PANELS_MAX];	/* the stack: [0] the list, the top gets the keys */
	int			panels_nr;
	tui_prompt_t		prompt;
	bool			quit;
	bool			paused;
	bool			replay;		/* -r: a log, not this machine now */
	double			speed;		/* -r: 1 at the pace recorded */
	unsigned long long	last_seq;	/* -r: the sample shown before */

	/* the prompt's text as typed */
	char			input[256];
	size_t			input_len;
	bool			input_regex;
	char			search[256];	/* the last search, for n and N */
	int			search_origin;	/* the line the search started from */
	bool			search_failed;	/* the search as typed finds nothing: the prompt says so, in red */

	/* the message line */
	char			msg[512];
	bool			msg_error;
	bool			source_told;	/* the message on why the task iterator asked for is not used was shown */
	double			msg_until;	/* CLOCK_MONOTONIC seconds; 0: until a key */

	/* typing a pid jumps to it */
	char			pid_typed[12];
	double			pid_typed_at;

	/* the layout of the last frame, for the mouse */
	int			list_y;
	int			list_h;
	int			header_y;
	int			col_x[VT_MAX_COLUMNS];	/* where each column's header starts, -1 if not shown */
	int			col_x_end[VT_MAX_COLUMNS];
	int			widths[VT_MAX_COLUMNS];
	int			widths_for[VT_MAX_COLUMNS];	/* the column each width is for */
	bool			shown[VT_MAX_COLUMNS];	/* it fits on this terminal */
	int			hscroll;

	bool			utf8;
	bool			color;
	bool			mouse;
	int			attrs[C_NR];
} tui_t;

/* tui.c */
void tui_message(tui_t *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tui_apply_columns(tui_t *t);
void tui_rebuild(tui_t *t);
void tui_toggle_pause(tui_t *t);
int tui_text(int y, int x, int width, const char *s, int skip);
void tui_fill(int y, int x, int width, int attr);
int tui_text_width(const char *s);
const vt_row_t *tui_selected(const tui_t *t);
const char *tui_user_name(const tui_t *t, uid_t uid, char *buf, size_t size);
void tui_box(int y, int x, int h, int w, const char *title, int attr);

/* page.c: a scrollable page of lines, the base of the full-screen panels */
typedef struct page {
	char	**lines;
	int	nr;
	int	cap;
} page_t;

void page_add(page_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void page_free(page_t *p);
/* the lines from *scroll below the title line, and a key hint at the bottom */
void page_draw(tui_t *t, int *scroll, const page_t *p, const char *hint);
/* the keys every page shares; true if the page should close */
bool page_key(int *scroll, int ch);

/* the panels' openers: each takes what it shows from the list's selection */
void help_open(tui_t *t);
void details_open(tui_t *t);
void event_log_open(tui_t *t);
void files_view_open(tui_t *t);
void setup_open(tui_t *t);
void dialog_open_kill(tui_t *t);
void dialog_open_renice(tui_t *t, int delta);
void dialog_open_sort(tui_t *t);
void dialog_open_user(tui_t *t);
void sched_open_ioprio(tui_t *t);
void sched_open_affinity(tui_t *t);

/* event_log.c: the log is kept from the start, shown or not */
#define TUI_EVENTS_MAX	10000
int event_log_init(void);
void event_log_add(tui_t *t, const vt_snapshot_t *snap);
void event_log_clear(tui_t *t);
void event_log_free(void);
/* what the dialogs hold when vtop ends */
void dialogs_free(void);
void sched_free(void);

/* the key table, for the help screen: entries without keys continue the one before */
int tui_key_help_nr(void);
const char *tui_key_help_keys(int i);
const char *tui_key_help_text(int i);

#endif
