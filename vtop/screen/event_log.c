/*
 * event_log.c: the event log panel (e): processes that started, exec'd
 * and exited, from the event feed or from comparing samples, newest first,
 * narrowed by the list's filter.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tui.h"

/*
 * Two rings (vt_event_ring_t: each event's text kept at its length): every
 * event (the last TUI_EVENTS_MAX), and, while the list is
 * filtered, what the filter matches, kept as it arrives.  The log was the
 * first ring filtered when shown: in a fork storm, fifty matching runs were
 * "nothing that matches the filter yet" while their exited rows were on the
 * list, the storm having pushed them out.  A match is the whole story of a
 * process: its fork (which carries its parent's name) and the execs before
 * the one that matched, found back in the first ring, then every event of
 * that life of its pid until its exit.
 */

/* Linux's highest pid (PID_MAX_LIMIT on 64-bit): a bit each, for the lives that matched */
#define PID_LIMIT	(4 * 1024 * 1024)
/* how far back in the whole log the fork of a match is looked for */
#define FORK_LOOKBACK	1024

/* the rings above, what the filter matched, and how far down the page is */
static struct {
	vt_event_ring_t		events;		/* the last TUI_EVENTS_MAX */
	unsigned long long	events_dropped;	/* the feed's that the sampler's ring could not hold */
	vt_event_ring_t		matches;	/* TUI_EVENTS_MAX, its slots allocated with the first filter */
	unsigned long long	matches_dropped;	/* matches the ring could not hold */
	char			matches_filter[256];	/* the filter they are matches of */
	bool			matches_regex;
	unsigned char		*matched_pids;	/* a bit per pid: this life of it has matched */
	int			scroll;
} elog;

int event_log_init(void)
{
	return vt_event_ring_init(&elog.events, TUI_EVENTS_MAX);
}

void event_log_free(void)
{
	vt_event_ring_free(&elog.events);
	vt_event_ring_free(&elog.matches);
	free(elog.matched_pids);
	memset(&elog, 0, sizeof(elog));
}

static bool filtering(const tui_t *t)
{
	return vt_view_filter(&t->view, NULL)[0] && !vt_view_filter_error(&t->view);
}

static bool event_matches(const tui_t *t, const vt_event_t *e)
{
	char text[sizeof(e->comm) + sizeof(e->file) + sizeof(e->args) + 3];

	snprintf(text, sizeof(text), "%s %s %s", e->comm, e->args, e->file);
	return vt_view_text_matches(&t->view, text);
}

static bool pid_matched(const tui_t *t, int pid)
{
	return pid > 0 && pid < PID_LIMIT && (elog.matched_pids[pid / 8] & (1 << (pid % 8)));
}

static void set_pid_matched(tui_t *t, int pid, bool on)
{
	if (pid <= 0 || pid >= PID_LIMIT)
		return;
	if (on)
		elog.matched_pids[pid / 8] |= (unsigned char)(1 << (pid % 8));
	else
		elog.matched_pids[pid / 8] &= (unsigned char)~(1 << (pid % 8));
}

static void keep_match(tui_t *t, const vt_event_t *e)
{
	if (elog.matches.nr == elog.matches.max)
		elog.matches_dropped++;
	if (vt_event_ring_push(&elog.matches, e) < 0)
		elog.matches_dropped++;
}

/* e, the k-th newest of the whole log, against the filter */
static void match_event(tui_t *t, const vt_event_t *e, int k)
{
	bool text = event_matches(t, e);

	if (e->kind == 'N')
		set_pid_matched(t, e->pid, false);	/* a new life of the pid */
	if (text && e->kind == 'E' && !pid_matched(t, e->pid)) {
		int before[8], nr = 0;

		/* the fork and the execs of this life before this one, oldest first */
		for (int j = k + 1; j < elog.events.nr && j <= k + FORK_LOOKBACK; j++) {
			int pid;
			char kind;
			double when;

			vt_event_ring_peek(&elog.events, j, &pid, &kind, &when);
			if (pid != e->pid)
				continue;
			if (kind == 'X')
				break;
			if (nr < 8)
				before[nr++] = j;
			if (kind == 'N')
				break;
		}
		while (nr > 0) {
			vt_event_t f;

			vt_event_ring_get(&elog.events, before[--nr], &f);
			keep_match(t, &f);
		}
	}
	if (text || pid_matched(t, e->pid)) {
		keep_match(t, e);
		set_pid_matched(t, e->pid, true);
	}
	if (e->kind == 'X')
		set_pid_matched(t, e->pid, false);
}

/*
 * The ring of matches, for the list's filter as it is now: started again
 * from the whole log when the filter changed.  False without a filter (or
 * without the memory for the ring).
 */
static bool matches_sync(tui_t *t)
{
	bool regex;
	const char *filter = vt_view_filter(&t->view, &regex);

	if (!filtering(t)) {
		elog.matches_filter[0] = '\0';	/* events arrive unmatched: stale for any filter */
		return false;
	}
	if (elog.matches.slots && !strcmp(elog.matches_filter, filter) && elog.matches_regex == regex)
		return true;
	if (!elog.matches.slots && vt_event_ring_init(&elog.matches, TUI_EVENTS_MAX) < 0)
		return false;
	if (!elog.matched_pids)
		elog.matched_pids = calloc(PID_LIMIT / 8, 1);
	if (!elog.matched_pids)
		return false;
	memset(elog.matched_pids, 0, PID_LIMIT / 8);
	vt_event_ring_clear(&elog.matches);
	elog.matches_dropped = 0;
	snprintf(elog.matches_filter, sizeof(elog.matches_filter), "%s", filter);
	elog.matches_regex = regex;
	for (int k = elog.events.nr - 1; k >= 0; k--) {
		vt_event_t e;

		vt_event_ring_get(&elog.events, k, &e);
		match_event(t, &e, k);
	}
	return true;
}

static void log_event(tui_t *t, const vt_event_t *e, bool filtered)
{
	if (vt_event_ring_push(&elog.events, e) < 0) {
		elog.events_dropped++;
		return;
	}
	if (filtered)
		match_event(t, e, 0);
}

/*
 * After each snapshot: without the feed, the differences it found; with it,
 * the feed's events, taken from the sampler's ring (they do not travel in
 * snapshots, so a snapshot the screen skipped loses none of them).
 */
void event_log_add(tui_t *t, const vt_snapshot_t *snap)
{
	bool filtered = matches_sync(t);
	vt_event_t batch[128];
	unsigned long long dropped;
	int n;

	for (int i = 0; i < snap->events_nr; i++)
		log_event(t, &snap->events[i], filtered);
	do {
		n = vt_sampler_take_events(t->sampler, batch, 128, &dropped);
		elog.events_dropped += dropped;
		for (int i = 0; i < n; i++)
			log_event(t, &batch[i], filtered);
	} while (n == 128);
}

void event_log_clear(tui_t *t)
{
	vt_event_ring_clear(&elog.events);
	elog.events_dropped = 0;
	vt_event_ring_clear(&elog.matches);
	elog.matches_dropped = 0;
	if (elog.matched_pids)
		memset(elog.matched_pids, 0, PID_LIMIT / 8);
}

static void event_line(page_t *p, const vt_event_t *e)
{
	time_t when = (time_t)e->when;
	char ts[16], status[48] = "";
	struct tm tm;

	localtime_r(&when, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	if (e->kind == 'X' && e->exit_code >= 0 && WIFSIGNALED(e->exit_code))
		snprintf(status, sizeof(status), "  killed by SIG%s", vt_signal_name(WTERMSIG(e->exit_code)));
	else if (e->kind == 'X' && e->exit_code >= 0)
		snprintf(status, sizeof(status), "  exit code %d", WEXITSTATUS(e->exit_code));
	if (e->kind == 'E')
		page_add(p, "%s.%03d exec  %7d ppid %-7d %s  %s  [%s]", ts, (int)((e->when - (double)when) * 1000),
			 e->pid, e->ppid, e->comm, e->args, e->file);
	else
		page_add(p, "%s.%03d %-5s %7d ppid %-7d %s%s", ts, (int)((e->when - (double)when) * 1000),
			 e->kind == 'X' ? "exit" : e->from_feed ? "fork" : "new", e->pid, e->ppid, e->comm, status);
}

/* the matches newest first: a fork found back when its exec matched came into the ring after later events */
static int newer_first(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b, pid;
	double wx, wy;
	char kind;

	vt_event_ring_peek(&elog.matches, x, &pid, &kind, &wx);
	vt_event_ring_peek(&elog.matches, y, &pid, &kind, &wy);
	if (wx != wy)
		return wx < wy ? 1 : -1;
	return (x > y) - (x < y);
}


void event_log_open(tui_t *t)
{
	elog.scroll = 0;
	tui_open(t, &events_panel);
}

static void events_title(tui_t *t, char *buf, size_t size)
{
	bool filtered = matches_sync(t);

	snprintf(buf, size, " Event log (feed: %s): newest first%s%s%s", t->snap->feed[0] ? t->snap->feed : "none",
		 filtered ? "; filter: " : "", filtered ? vt_view_filter(&t->view, NULL) : "", t->paused ? "; PAUSED" : "");
}

static void events_draw(tui_t *t)
{
	bool filtered = matches_sync(t);
	page_t p = { 0 };
	int *order = NULL;
	vt_event_t e;

	if (!t->snap->feed_active) {
		if (t->snap->feed_why[0])
			page_add(&p, "No event feed: %s.", t->snap->feed_why);
		page_add(&p, "Without the event feed these are the processes found new or gone by comparing samples");
		page_add(&p, "(every %g s); a process that lived between two samples is not seen.", t->cfg->delay);
		page_add(&p, "%s", "");
	}
	if (elog.events_dropped)
		page_add(&p, "%llu events came faster than the screen took them: not shown", elog.events_dropped);
	if (filtering(t) && !filtered)
		page_add(&p, "no memory to keep what the filter matches: every event is shown");
	if (filtered && elog.matches_dropped)
		page_add(&p, "%llu older matching events dropped: more than %d matched", elog.matches_dropped, TUI_EVENTS_MAX);
	if (filtered && (order = malloc(sizeof(*order) * (size_t)(elog.matches.nr + 1)))) {
		for (int k = 0; k < elog.matches.nr; k++)
			order[k] = k;
		qsort(order, (size_t)elog.matches.nr, sizeof(*order), newer_first);
		for (int k = 0; k < elog.matches.nr; k++) {
			vt_event_ring_get(&elog.matches, order[k], &e);
			event_line(&p, &e);
		}
		free(order);
	} else if (!filtered) {
		for (int k = 0; k < elog.events.nr; k++) {
			vt_event_ring_get(&elog.events, k, &e);
			event_line(&p, &e);
		}
	}
	if (filtered ? !elog.matches.nr : !elog.events.nr)
		page_add(&p, filtered ? "nothing that matches the filter yet" : "nothing yet");
	page_draw(t, &elog.scroll, &p, " Esc q e: back   c: clear   Z: pause   Up Down PgUp PgDn: scroll");
	page_free(&p);
}

static panel_next_t events_key(tui_t *t, int ch)
{
	if (ch == 'Z' || ch == 'z')
		tui_toggle_pause(t);
	else if (ch == 'c')
		event_log_clear(t);
	else if (page_key(&elog.scroll, ch) || ch == 'e')
		return PANEL_CLOSE;
	return PANEL_STAY;
}

const panel_t events_panel = { "events", false, events_title, events_draw, events_key };
