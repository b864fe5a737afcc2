/*
 * feed.c: the kernel event feed, as vtop sees it.
 *
 * The feed (fork, exec and exit events between samples, on the feed branch
 * of libvmon) is not in this library yet, and vtop says so: the header's
 * feed meter reads "feed: none", --backend accepts only "none" or "auto"
 * (which falls back to none), and --events and the event log (e) say that
 * their events come from comparing samples.
 *
 * Everything the feed changes for vtop is behind these few functions, so
 * that using it is one change here and in vt_source_init():
 *   - vt_feed_open(): the backend list goes to vmon_attr_t.feed (before
 *     vmon_init_attr(), which opens the feed before its first /proc scan),
 *     and vmon_feed_set_callback() collects fork/exec/exit events for the
 *     snapshot's event list (snapshot.c's add_event());
 *   - vt_feed_status(): "feed: BACKEND, N ev/s, lost M" from
 *     vmon_feed_get_stats() (or vmon_feed_reason() when it fell back);
 *   - the sampling thread also waits on vmon_feed_fd() and calls
 *     vmon_feed_process() when it is readable, so the kernel's buffer is
 *     drained between refreshes;
 *   - exited rows take proc->exit_status when proc->has_exit_status;
 *   - with -w, the same event callback hands each event to the log
 *     (vmon_log_write_event(), whose vmon_log_event_t has the members of
 *     vmon_event_t), and a growth of the feed's lost counter is written as
 *     a drop notice (vmon_log_write_drop()) before the next sample.
 * Processes that lived between two samples then arrive as nodes new and
 * stale in the same sample, and the builder shows them as exited rows with
 * no other change.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vtop.h"

struct vt_feed {
	char	backend[32];
};

const char *const vt_feed_backends[] = { "auto", "none", NULL };

bool vt_feed_available(void)
{
	return false;
}

int vt_feed_open(vt_feed_t **feed, vmon_t *vmon, const char *backend, char *err, size_t err_size)
{
	vt_feed_t *f;

	(void)vmon;
	*feed = NULL;
	if (backend[0] && strcmp(backend, "auto") != 0 && strcmp(backend, "none") != 0) {
		snprintf(err, err_size, "--backend %s: this libvmon has no event feed (only \"none\" or \"auto\")",
			 backend);
		errno = ENOTSUP;
		return -1;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	snprintf(f->backend, sizeof(f->backend), "none");
	*feed = f;
	return 0;
}

void vt_feed_close(vt_feed_t *feed)
{
	free(feed);
}

void vt_feed_status(const vt_feed_t *feed, char *buf, size_t size)
{
	snprintf(buf, size, "feed: %s", feed ? feed->backend : "none");
}
