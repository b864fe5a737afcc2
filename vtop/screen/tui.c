/*
 * tui.c: the screen.  This file owns curses and the panel stack (panel.h):
 * the loop, the colours, the message line, and what the panels share
 * (tui.h's context: the snapshot in hand, the view, the settings).
 *
 * The loop polls two fds: the terminal and the sampler's eventfd.  Keys are
 * read until none is left, each handled at once against the snapshot in
 * hand (moving, sorting, filtering and searching never wait for a sample),
 * and the screen is drawn once when they are all done: a burst of keys is
 * all handled, and costs one frame.  A new snapshot is taken when the
 * sampler says so; the view is rebuilt from it and drawn.
 *
 * Nothing is ever refused for size: the header shrinks (meters.c), the
 * list cuts columns (process_list.c), every dialog fits itself into what
 * there is.  Without colour the same distinctions are made with
 * attributes.
 */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tui.h"

/* --- colours --- */

static void init_colors(tui_t *t)
{
	static const struct { short fg, bg; int mono; } pairs[C_NR] = {
		[C_NORMAL] = { -1, -1, A_NORMAL },
		[C_METER_LABEL] = { COLOR_CYAN, -1, A_BOLD },
		[C_BAR_USER] = { COLOR_GREEN, -1, A_BOLD },
		[C_BAR_NICE] = { COLOR_BLUE, -1, A_NORMAL },
		[C_BAR_SYSTEM] = { COLOR_RED, -1, A_BOLD },
		[C_BAR_OTHER] = { COLOR_MAGENTA, -1, A_NORMAL },
		[C_BAR_MEM] = { COLOR_GREEN, -1, A_BOLD },
		[C_BAR_CACHE] = { COLOR_YELLOW, -1, A_NORMAL },
		[C_HEADER] = { COLOR_BLACK, COLOR_GREEN, A_REVERSE },
		[C_SELECTED] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
		[C_EXITED] = { COLOR_RED, -1, A_BOLD },
		[C_NEW] = { COLOR_GREEN, -1, A_BOLD },
		[C_KTHREAD] = { COLOR_BLUE, -1, A_DIM },
		[C_CONTEXT] = { COLOR_WHITE, -1, A_DIM },
		[C_THREAD] = { COLOR_GREEN, -1, A_NORMAL },
		[C_TREE] = { COLOR_CYAN, -1, A_NORMAL },
		[C_FKEY] = { COLOR_WHITE, -1, A_BOLD },
		[C_FKEY_LABEL] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
		[C_ERROR] = { COLOR_WHITE, COLOR_RED, A_REVERSE | A_BOLD },
		[C_DIALOG] = { COLOR_BLACK, COLOR_WHITE, A_REVERSE },
		[C_TAGGED] = { COLOR_YELLOW, -1, A_BOLD },
	};

	for (int i = 1; i < C_NR; i++)
		t->attrs[i] = pairs[i].mono;
	if (!t->color)
		return;
	start_color();
	use_default_colors();
	for (int i = 1; i < C_NR; i++) {
		short fg = pairs[i].fg, bg = pairs[i].bg;

		/* with 256 colours the dim text is a grey, not a faint white */
		if (COLORS >= 256 && i == C_CONTEXT)
			fg = 244;
		if (COLORS >= 256 && i == C_KTHREAD)
			fg = 67;
		init_pair((short)i, fg, bg);
		t->attrs[i] = COLOR_PAIR(i) | ((i == C_FKEY || i == C_EXITED || i == C_NEW) ? A_BOLD : 0);
	}
}

/* --- the panel stack --- */

/* the panel at `at` leaves the stack (the list, at 0, never does) */
static void close_panel(tui_t *t, int at)
{
	if (at <= 0)
		return;
	if (t->panels[at]->close)
		t->panels[at]->close(t);
	memmove(&t->panels[at], &t->panels[at + 1], sizeof(t->panels[0]) * (size_t)(t->panels_nr - at - 1));
	t->panels_nr--;
}

/* from the topmost full-screen panel up: each dialog over what is below it */
static void draw(tui_t *t)
{
	int from = t->panels_nr - 1;

	erase();
	while (from > 0 && t->panels[from]->dialog)
		from--;
	for (int i = from; i < t->panels_nr; i++) {
		const panel_t *p = t->panels[i];

		if (p->title && !p->dialog && LINES >= 1) {
			char title[512];

			p->title(t, title, sizeof(title));
			tui_fill(0, 0, COLS, t->attrs[C_HEADER]);
			attron(t->attrs[C_HEADER]);
			tui_text(0, 0, COLS, title, 0);
			attroff(t->attrs[C_HEADER]);
		}
		p->draw(t);
	}
	curs_set(list_prompting() && t->panels_nr == 1 ? 1 : 0);
	/* written out by the loop's doupdate(), the sampler let go: a terminal that stalls stops no sample */
	wnoutrefresh(stdscr);
}

/* a key for the top panel */
static void handle_key(tui_t *t, int ch)
{
	int top = t->panels_nr - 1;

	if (ch == KEY_RESIZE)
		return;
	/* an error stays until the next key, which also does its own work */
	if (t->msg[0] && t->msg_until == 0)
		t->msg[0] = '\0';
	switch (t->panels[top]->key(t, ch)) {
	case PANEL_STAY:
		break;
	case PANEL_CLOSE:
		/* the panel may have opened another above itself, which stays */
		close_panel(t, top);
		break;
	case PANEL_QUIT:
		t->quit = true;
		break;
	}
}

static void new_snapshot(tui_t *t)
{
	const char *err;

	vt_view_build(&t->view, t->snap);
	/* a replay that jumped: the event log is what happened up to the sample it jumped to */
	if (t->replay && t->snap->seq != t->last_seq + 1)
		event_log_clear(t);
	t->last_seq = t->snap->seq;
	event_log_add(t, t->snap);
	list_new_snapshot(t);
	/* once: the header's "(proc)" says which source, this says why it is not the one asked for */
	if (t->snap->source_why[0] && !t->source_told) {
		tui_message(t, true, "no task iterator (%s): sampling /proc", t->snap->source_why);
		t->source_told = true;
	}
	err = vt_sampler_error(t->sampler);
	if (err)
		tui_message(t, true, "%s", err);
}

static bool use_color(const vt_config_t *cfg)
{
	const char *no_color = getenv("NO_COLOR");

	if (cfg->color == VT_COLOR_NEVER)
		return false;
	/* https://no-color.org: set and not empty means no colour, unless asked for on the command line */
	if (cfg->color == VT_COLOR_AUTO && no_color && no_color[0])
		return false;
	return has_colors();
}

int vt_tui_run(vt_config_t *cfg)
{
	tui_t *t = calloc(1, sizeof(*t));
	char err[256];
	int status = 0;

	if (!t) {
		fprintf(stderr, "vtop: out of memory\n");
		return 1;
	}
	if (event_log_init() < 0) {
		free(t);
		fprintf(stderr, "vtop: out of memory\n");
		return 1;
	}
	t->cfg = cfg;
	t->panels[t->panels_nr++] = &list_panel;
	t->replay = cfg->replay_path[0] != '\0';
	t->speed = 1;
	t->wants = vt_columns_wants(cfg->columns, cfg->columns_nr);
	if (vt_sampler_start(&t->sampler, cfg, t->wants, err, sizeof(err)) < 0) {
		fprintf(stderr, "vtop: %s\n", err);
		event_log_free();
		free(t);
		return 1;
	}
	vt_view_init(&t->view);
	vt_view_configure(&t->view, cfg);
	bool changed;

	/* held but while waiting for keys: the rows borrow the library's stores (sampler.c) */
	vt_sampler_hold(t->sampler);
	t->snap = vt_sampler_take(t->sampler, &changed);
	t->utf8 = !cfg->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");

	if (!initscr()) {
		fprintf(stderr, "vtop: cannot start curses on this terminal\n");
		status = 1;
		goto out;
	}
	t->color = use_color(cfg);
	init_colors(t);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	t->mouse = cfg->mouse;
	if (t->mouse) {
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
		mouseinterval(0);
	}
	if (cfg->warnings[0])
		tui_message(t, true, "settings: %s", cfg->warnings);

	/* a sample taken before the screen's first hold: its view and events now, not at the next */
	if (changed)
		new_snapshot(t);
	draw(t);
	while (!t->quit) {
		struct pollfd fds[2] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = vt_sampler_fd(t->sampler), .events = POLLIN },
		};
		int timeout = t->msg[0] && t->msg_until ? 250 : -1, ch, polled, poll_err;
		bool dirty = false;

		vt_sampler_release(t->sampler);
		doupdate();
		polled = poll(fds, 2, timeout);
		poll_err = errno;
		vt_sampler_hold(t->sampler);
		if (polled < 0 && poll_err != EINTR) {
			status = 1;
			break;
		}
		/* the newest first, whatever woke us: the one in hand is out of date if the sampler sampled */
		t->snap = vt_sampler_take(t->sampler, &changed);
		if (changed)
			new_snapshot(t);
		/* a replay's wake-up without a sample may be its end, which the header says */
		dirty = changed || (t->replay && (fds[1].revents & POLLIN));
		/* every key that is there, each handled before the one drawing */
		while ((ch = getch()) != ERR) {
			handle_key(t, ch);
			dirty = true;
			if (t->quit)
				break;
		}
		if (t->msg[0] && t->msg_until && vclock_secs(CLOCK_MONOTONIC) > t->msg_until) {
			t->msg[0] = '\0';
			dirty = true;
		}
		if (dirty && !t->quit)
			draw(t);
	}
	endwin();
out:
	vt_sampler_release(t->sampler);
	vt_sampler_stop(t->sampler);
	vt_view_free(&t->view);
	while (t->panels_nr > 1)
		close_panel(t, t->panels_nr - 1);
	event_log_free();
	free(t);
	return status;
}
