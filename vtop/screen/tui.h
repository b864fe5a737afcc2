/*
 * tui.h: what the screen's files share.  tui.c owns curses: the loop that
 * runs the panel stack (panel.h), the list panel, its header and the key
 * table; every other panel is a file of its own, with its own state, and
 * draws through the helpers below.
 */
#ifndef VTOP_TUI_H
#define VTOP_TUI_H

#include <curses.h>

#include "util/clock.h"

#include "vtop.h"
#include "data/columns.h"
#include "data/model.h"
#include "data/sampler.h"
#include "data/snapshot.h"
#include "screen/panel.h"

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

/*
 * The context: what the panels share, and nothing that is one panel's (a
 * panel's own state is static in its file).  The loop owns it; a panel
 * reads it, and changes the view, the settings and the message line
 * through it.
 */
typedef struct tui {
	vt_config_t		*cfg;		/* the settings: setup changes them, saved to vtoprc */
	vt_sampler_t		*sampler;	/* asked for samples, detail, files, pace: never read directly */
	vt_snapshot_t		*snap;		/* the newest sample taken: read only, and only while the sampler is held */
	vt_view_t		view;		/* the model of snap: filter, sort, tree, selection, tags */
	vmon_proc_wants_t	wants;		/* what the shown columns need sampled */
	unsigned		columns_gen;	/* +1 when the columns change: their widths are found again */

	const panel_t		*panels[TUI_PANELS_MAX];	/* the stack: [0] the list, the top gets the keys */
	int			panels_nr;
	bool			quit;
	bool			paused;		/* Z: no new samples (in -r: no playing) */
	bool			replay;		/* -r: a log, not this machine now */
	double			speed;		/* -r: 1 at the pace recorded */
	unsigned long long	last_seq;	/* -r: the sample shown before */

	/* the message line, at the bottom of the list */
	char			msg[512];
	bool			msg_error;
	bool			source_told;	/* the message on why the task iterator asked for is not used was shown */
	double			msg_until;	/* CLOCK_MONOTONIC seconds; 0: until a key */

	/* how to draw: UTF-8 line drawing, colour, mouse, and each kind of text's attributes */
	bool			utf8;
	bool			color;
	bool			mouse;
	int			attrs[C_NR];
} tui_t;


/* context.c: what the panels share */
void tui_message(tui_t *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tui_apply_columns(tui_t *t);
void tui_columns_moved(tui_t *t);
void tui_rebuild(tui_t *t);
void tui_toggle_pause(tui_t *t);
const vt_row_t *tui_selected(const tui_t *t);
const char *tui_user_name(const tui_t *t, uid_t uid, char *buf, size_t size);
/* false, with what on the message line, in a replay (-r), whose processes are not acted on */
bool tui_not_in_replay(tui_t *t, const char *what);

/* draw.c */
int tui_text(int y, int x, int width, const char *s, int skip);
void tui_fill(int y, int x, int width, int attr);
int tui_text_width(const char *s);
void tui_box(int y, int x, int h, int w, const char *title, int attr);

/* meters.c: the header over the list; returns the lines it took */
int meters_draw(tui_t *t, int h, int w);

/* process_list.c: the list panel, what the loop asks of it */
bool list_prompting(void);
void list_new_snapshot(tui_t *t);

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
/* help.c: the help panel lists a key table given by the panel that opens it */
typedef struct help_keys {
	int		nr;
	const char	*(*names)(int i);	/* NULL: the entry goes on with the one before */
	const char	*(*text)(int i);
} help_keys_t;
void help_open(tui_t *t, const help_keys_t *keys);
void details_open(tui_t *t);
void event_log_open(tui_t *t);
void files_view_open(tui_t *t);
void setup_open(tui_t *t);
void dialog_open_kill(tui_t *t);
/* the kill dialog for one process, by its identity (the details page's), whatever is selected or tagged */
void dialog_open_kill_process(tui_t *t, vt_key_t key);
void dialog_open_renice(tui_t *t, int delta);
void dialog_open_sort(tui_t *t);
void dialog_open_user(tui_t *t);
void dialog_open_ioprio(tui_t *t);
void dialog_open_affinity(tui_t *t);

/* event_log.c: the log is kept from the start, shown or not */
#define TUI_EVENTS_MAX	10000
int event_log_init(void);
void event_log_add(tui_t *t, const vt_snapshot_t *snap);
void event_log_clear(tui_t *t);
void event_log_free(void);


#endif
