/*
 * feed.c: the kernel event feed, as vtop sees it.
 *
 * The feed (fork, exec and exit events between samples) is being built in
 * libvmon; until this library has it, vtop says so: the header's feed
 * meter reads "feed: none", --backend accepts only "none" or "auto" (which
 * falls back to none), and --events explains why it has nothing to print.
 * Everything the feed will change is behind these few functions, so that
 * using it is one change here: open it with the library, report its
 * backend, event rate and losses, and hand events to the log view.
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
