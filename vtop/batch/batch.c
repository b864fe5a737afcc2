/*
 * batch.c: vtop -b, refreshes written to stdout for a log, a script or a
 * fleet collector: the loop and --events; what the formats share is plan.c.
 * Each format is a file of its own (text.c, json_csv.c, metrics.c), written
 * over the column table, so every column is in every format, and each is
 * read back by its real parser in the tests (json, csv, promtool,
 * prometheus_client):
 *
 *   text         top -b's layout: a summary, then one line per process,
 *                text escaped for a terminal (vmon_escape())
 *   json         one object per refresh, on one line; numbers are numbers,
 *                a missing value null, strings the process's real text
 *   csv          RFC 4180: one header, then a row per process per refresh
 *   prometheus   the Prometheus text format 0.0.4, one exposition per
 *                refresh (a blank line after each)
 *   openmetrics  OpenMetrics 1.0, one exposition per refresh, each ending
 *                with "# EOF"
 *
 * The machine formats (all but text) carry text as it is: what
 * vmon_escape() made of it is turned back into the bytes, and a byte that
 * is not UTF-8 becomes U+FFFD (vt_text_real()).  The metrics are in base
 * units, converted with the unit each defs/ row declares.
 *
 * The first refresh is printed after two samples, so its CPU% is real.
 * --events writes one line per process event instead (events.c).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vtop.h"
#include "batch/formats.h"
#include "data/columns.h"
#include "data/model.h"
#include "batch/batch.h"
#include "data/sampler.h"

void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first)
{
	struct batch_plan *p = malloc(sizeof(*p));

	if (!p)
		return;
	batch_plan_make(p, cfg);
	switch (format) {
	case VT_FORMAT_TEXT:
		batch_write_text(out, cfg, view, snap, !cfg->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8"));
		break;
	case VT_FORMAT_JSON:
		batch_write_json(out, p, view, snap);
		break;
	case VT_FORMAT_CSV:
		batch_write_csv(out, p, view, snap, first);
		break;
	case VT_FORMAT_PROMETHEUS:
	case VT_FORMAT_OPENMETRICS:
		batch_write_exposition(out, format == VT_FORMAT_OPENMETRICS, p, view, snap);
		break;
	}
	free(p);
}

/*
 * --events with the feed (or a replay of its log): each event written as
 * the library applies it (no ring; into the output's queue, which drops
 * and counts only what a reader far behind leaves no room for)
 */
static void print_event(const vmon_event_t *ev, double realtime_offset, void *arg)
{
	vt_event_write_feed(arg, ev, realtime_offset);
}

/*
 * --events with the feed: the events the kernel could not deliver (or a
 * replay's log says it could not), since the last look; *seen is the
 * library's count then.  Called after each sample, whose drains found them,
 * with the sample's time (the recording's, in a replay).
 */
static void print_lost(vt_event_writer_t *events, const vmon_t *vmon, double when, unsigned long long *seen)
{
	vmon_feed_stats_t st;
	unsigned long long lost = *seen;

	if (vmon_feed_get_stats(vmon, &st) == 0 && st.lost + st.stream_lost > *seen)
		lost = st.lost + st.stream_lost;
	/* (with none new, those the output's queue had no room for, if any) */
	vt_event_write_lost(events, lost - *seen, when);
	*seen = lost;
}

/*
 * --events ended by SIGTERM, SIGINT or SIGHUP (those not ignored when vtop
 * started, as nohup ignores SIGHUP): the loop takes one last sample, whose
 * events are written, and stops; what waits for the reader is written
 * (close_events()) before vtop ends by the signal, as it would have.  A
 * reader that takes nothing for STOP_PATIENCE_SECS, or STOP_MOST_SECS in
 * all, is not waited for (what it missed is said); a second signal ends
 * vtop at once.  The handler wakes the loop's wait through a pipe; the
 * writer's thread does not take these signals.
 */
#define STOP_PATIENCE_SECS	2.0
#define STOP_MOST_SECS		10.0

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };
static volatile sig_atomic_t stop_signal;
static int stop_pipe[2] = { -1, -1 };

static void on_stop(int sig)
{
	int saved = errno;

	stop_signal = sig;
	if (write(stop_pipe[1], "", 1) < 0) {
		/* (full: a wakeup is already there) */
	}
	errno = saved;
}

static void stop_signals_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(set, stop_signals[i]);
}

/* the wait's wake fd, or -1 (the signals then end vtop as before) */
static int stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESETHAND }, was;

	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		if (sigaction(stop_signals[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
	return stop_pipe[0];
}

/* the events' queue and its thread, which does not take the stop signals: 0, or -1 with errno */
static int events_queue(vt_event_writer_t *events)
{
	sigset_t stops, was;
	int r, err;

	stop_signals_set(&stops);
	pthread_sigmask(SIG_BLOCK, &stops, &was);
	r = vt_event_writer_queue(events, STDOUT_FILENO);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	errno = err;
	return r;
}

/* after the loop: vtop ends by the signal that stopped it, if one did */
static void stop_by_signal(void)
{
	int sig = stop_signal;

	if (!sig)
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * --events' last records written (the reader may still be reading: this
 * waits for it, as a FILE's flush at exit would, but after a stop signal
 * only while the reader takes something); 0, or -1 said on standard error
 * unless said is set (a failed write already was).
 */
static int close_events(vt_event_writer_t *events, int said)
{
	int err = vt_event_writer_close(events, &stop_signal, STOP_PATIENCE_SECS, STOP_MOST_SECS);

	if (!err)
		return 0;
	if (!said)
		fprintf(stderr, "vtop: cannot write the output: %s\n", strerror(err));
	return -1;
}

int vt_batch_run(const vt_config_t *cfg)
{
	vmon_proc_wants_t wants = vt_columns_wants(cfg->columns, cfg->columns_nr);
	vt_snapshot_t snap;
	vt_source_t src;
	vt_view_t view;
	vt_event_writer_t events;
	char err[256];
	unsigned long long lost_seen = 0;
	long n = 0;
	bool replay = cfg->replay_path[0] != '\0', printed = false;
	int status = 0, err_no, wake_fd = -1;

	/* what the screen shows on its bottom line, once, goes to stderr here */
	if (cfg->warnings[0])
		fprintf(stderr, "vtop: settings: %s\n", cfg->warnings);
	if (vt_source_init(&src, cfg, wants, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "vtop: %s\n", err);
		return 1;
	}
	/* each snapshot is printed before the next sample (or the next record of a replay): it may point into the tree */
	vt_source_set_borrow(&src, true);
	if (src.source_why[0])
		fprintf(stderr, "vtop: the task iterator was asked for but cannot be used (%s): processes are sampled "
			"from /proc\n", src.source_why);
	vt_snapshot_init(&snap);
	vt_view_init(&view);
	vt_view_configure(&view, cfg);
	vt_event_writer_init(&events, stdout, cfg);
	/*
	 * A reader that falls behind must not stop the sampling, which drains
	 * the kernel's buffer (output_queue.c).  Not a replay's: it has no
	 * buffer to overflow, and waits for the reader as a file is read.
	 */
	if (cfg->events && !replay) {
		if (events_queue(&events) < 0)
			fprintf(stderr, "vtop: --events: no thread to write the events (%s): they are written as they "
				"come, and a reader that falls behind loses some\n", strerror(errno));
		else
			wake_fd = stop_on_signals();
	}
	if (cfg->events && vt_feed_delivers(src.feed)) {
		vt_feed_set_sink(src.feed, print_event, &events);
	} else if (cfg->events && !replay) {
		const char *why = vt_feed_fallback(src.feed);

		fprintf(stderr, "vtop: no event feed%s%s%s: events are found by comparing samples %g s apart; "
			"processes that live shorter are missed\n", why ? " (" : "", why ? why : "", why ? ")" : "",
			cfg->delay);
	} else if (!replay && vt_feed_fallback(src.feed)) {
		fprintf(stderr, "vtop: no event feed (%s): processes that live shorter than a refresh (%g s) are not "
			"listed\n", vt_feed_fallback(src.feed), cfg->delay);
	}

	/* two samples before the first output: CPU% needs an interval (a replay reads them as they were) */
	if (vt_source_sample(&src, &snap) < 0)
		goto fail;
	if (!replay)
		vt_source_wait(&src, cfg->delay < 0.5 ? cfg->delay : 0.5, wake_fd);
	for (;;) {
		/* (after a stop signal, one sample more: the events read from the kernel meanwhile are written) */
		bool stopping = stop_signal != 0;

		if (vt_source_sample(&src, &snap) < 0)
			goto fail;
		if (src.log_error[0])
			goto fail;
		if (cfg->events) {
			for (int i = 0; i < snap.events_nr; i++)
				vt_event_write_found(&events, &snap.events[i]);
			if (vt_feed_delivers(src.feed))
				print_lost(&events, &src.vmon, snap.when, &lost_seen);
			else
				vt_event_write_lost(&events, 0, snap.when);	/* the queue's, once there is room */
		} else {
			vt_view_build(&view, &snap);
			vt_batch_write(stdout, cfg, &view, &snap, cfg->format, n == 0);
		}
		printed = true;
		/* vtop(1) promises 1 when the output cannot be written (a full disk; a closed pipe if SIGPIPE is ignored) */
		if ((err_no = cfg->events ? vt_event_writer_error(&events) :
			      fflush(stdout) != 0 || ferror(stdout) ? errno : 0) != 0) {
			fprintf(stderr, "vtop: cannot write the output: %s\n", strerror(err_no));
			status = 1;
			break;
		}
		if (stopping || (cfg->iterations && ++n >= cfg->iterations))
			break;
		if (!cfg->iterations)
			n++;
		if (!replay && !stop_signal)
			vt_source_wait(&src, cfg->delay, wake_fd);
	}
	vt_view_free(&view);
	vt_snapshot_free(&snap);
	vt_source_fini(&src);
	if (close_events(&events, status) != 0)
		status = 1;
	stop_by_signal();
	if (src.log_error[0]) {
		fprintf(stderr, "vtop: -w %s: %s\n", cfg->write_path, src.log_error);
		return 1;
	}
	return status;
fail:
	err_no = errno;
	status = close_events(&events, 0) != 0;
	stop_by_signal();
	errno = err_no;
	if (src.log_error[0]) {
		fprintf(stderr, "vtop: -w %s: %s\n", cfg->write_path, src.log_error);
	} else if (replay && errno == ENODATA && !vt_replay_error(&src)) {
		/* the end of the log: everything recorded was printed */
		vt_view_free(&view);
		vt_snapshot_free(&snap);
		vt_source_fini(&src);
		if (printed)
			return status;
		fprintf(stderr, "vtop: -r %s: no sample to print (the first output is a log's second sample)\n",
			cfg->replay_path);
		return 1;
	} else if (replay) {
		fprintf(stderr, "vtop: -r %s\n", vt_replay_error(&src) ? vt_replay_error(&src) : strerror(errno));
	} else {
		fprintf(stderr, "vtop: sampling failed: %s\n", strerror(errno));
	}
	vt_view_free(&view);
	vt_snapshot_free(&snap);
	vt_source_fini(&src);
	return 1;
}
