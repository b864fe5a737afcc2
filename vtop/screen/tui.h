/*
 * tui.h: what the parts of the screen share (tui.c, screens.c, setup.c).
 * tui.c owns curses: the main list, its header and the key table; the
 * full-screen views and the dialogs draw through the helpers below.
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

typedef enum {
	MENU_NONE,
	MENU_KILL,	/* choose a signal */
	MENU_SORT,	/* choose a sort column */
	MENU_USER,	/* choose a user */
	MENU_RENICE,	/* choose a nice value */
	MENU_CONFIRM,	/* yes or no, then act */
	MENU_IOPRIO,	/* choose an I/O class and level (sched_dialogs.c) */
	MENU_AFFINITY,	/* choose CPUs (sched_dialogs.c) */
} tui_menu_t;

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

#define TUI_EVENTS_MAX	10000

/* what a kill or renice is for: a process (or a thread) by identity, taken when the dialog opened */
typedef struct tui_target {
	int			pid;
	unsigned long long	start;
	bool			thread;		/* a thread row: its own tid and start time */
} tui_target_t;

typedef struct tui {
	vt_config_t		*cfg;
	vt_sampler_t		*sampler;
	vt_snapshot_t		*snap;
	vt_view_t		view;
	vmon_proc_wants_t	wants;

	const panel_t		*panels[TUI_PANELS_MAX];	/* the stack: [0] the list, the top gets the keys */
	int			panels_nr;
	tui_prompt_t		prompt;
	tui_menu_t		menu;
	tui_menu_t		confirm_for;	/* what MENU_CONFIRM confirms */
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

	/* dialogs */
	int			menu_sel;
	int			menu_top;
	int			menu_typed;	/* the signal number typed so far */
	tui_target_t		*targets;	/* the processes a kill or renice is for, taken when it opened */
	int			targets_nr;
	int			signal;
	int			nice_value;
	uid_t			*users;		/* the user menu's entries */
	int			users_nr;
	/* the I/O priority and affinity dialogs: the row's task, what is chosen, why it failed */
	vt_key_t		sched_target;
	bool			sched_target_thread;
	int			io_class;
	int			io_level;
	unsigned char		*cpus_on;	/* per CPU, 1 if chosen */
	int			cpus_nr;
	char			sched_error[200];

	/* full-screen views */
	vt_key_t		detail;
	bool			detail_asked;	/* the environment was asked of the sampler */

	/* the files view (files_view.c): the process, and the first sample that read its fds */
	vt_key_t		files;
	unsigned long long	files_first_seq;

	vt_event_t		*events;	/* a ring of the last TUI_EVENTS_MAX */
	int			events_nr;
	int			events_head;
	unsigned long long	events_dropped;	/* the feed's that the sampler's ring could not hold */
	/*
	 * What the list's filter matches, kept as it arrives (screens.c): a
	 * storm of other events pushes it out of the ring above, not out of
	 * this one.  For the filter matches_filter (and _regex); rebuilt from
	 * the ring above when the filter changes.
	 */
	vt_event_t		*matches;	/* a ring of TUI_EVENTS_MAX, allocated with the first filter */
	int			matches_nr;
	int			matches_head;
	unsigned long long	matches_dropped;	/* matches the ring could not hold */
	char			matches_filter[256];
	bool			matches_regex;
	unsigned char		*matched_pids;	/* a bit per pid: this life of it has matched */

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

	/* the setup screen */
	int			setup_pane;
	int			setup_sel[3];
	int			setup_top[3];
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

/* screens.c: a scrollable page of lines, the base of the full-screen views */
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

/* screens.c: full-screen views and dialogs */
void screens_open_help(tui_t *t);
void screens_open_details(tui_t *t);
void screens_open_events(tui_t *t);
void screens_add_events(tui_t *t, const vt_snapshot_t *snap);
void screens_clear_events(tui_t *t);
void screens_open_kill(tui_t *t);
void screens_open_renice(tui_t *t, int delta);
void screens_open_sort(tui_t *t);
void screens_open_user(tui_t *t);

/* sched_dialogs.c: i (I/O priority) and a (CPU affinity) */
void sched_open_ioprio(tui_t *t);
void sched_open_affinity(tui_t *t);

/* files_view.c: the open files of the selected process, and who else holds its pipes and sockets */
void files_view_open(tui_t *t);

/* setup.c */
void setup_open(tui_t *t);

/* the key table, for the help screen: entries without keys continue the one before */
int tui_key_help_nr(void);
const char *tui_key_help_keys(int i);
const char *tui_key_help_text(int i);

#endif
