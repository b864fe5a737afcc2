/*
 * replay.c: vtop -r, a log (vmon_log(5)) shown through the code that shows
 * live data.
 *
 * The source's vmon_t is not sampled from /proc but fed, one sample at a
 * time, by vmon_log_replay(3); the snapshot builder reads it as it reads a
 * live one, with the sample's recorded time for its clock.  So every
 * column, CPU%, exited row and event comes out as it did when the log was
 * written, and -b prints what the live run printed.  The feed's events and
 * drop notices go to the replay too (vmon_log_replay_record()), which hands
 * each event to a feed callback on it with the sample it came before.
 *
 * Going back: a sample owes its values to those before it, back to the last
 * keyframe (every process written whole, every 60 samples by default).  The
 * replay remembers where each sample it has read starts, and to show sample
 * k it starts over: a fresh vmon_t and builder, the reader sent back to a
 * keyframe far enough before k that the builder's history (the previous
 * sample for CPU%, the last few for exited rows) is there again, then
 * forward to k.
 *
 * Events: the replay's vmon_t hands a log's events to vtop's feed callback
 * as the live feed did (vt_feed_open_replay()), so that the event log and
 * --events show them as they were shown.  A log recorded without the feed
 * (its note says "none") gets the differences between samples, as live.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#include "data/sampler.h"

struct mark {
	vmon_log_record_t	rec;		/* where the sample is: for vmon_log_seek() */
	unsigned long long	seq;
	double			when;
	bool			keyframe;
	char			feed[96];	/* the feed note written before it */
};

struct vt_replay {
	int		fd;
	vmon_log_t	*log;
	char		path[1024];
	bool		seekable;
	struct mark	*marks;		/* every sample read so far, in order */
	long		marks_nr;
	long		marks_cap;
	long		pos;		/* the mark of the sample last shown, -1 before the first */
	bool		ended;		/* the end was met: marks_nr is all the samples (unless the log grows) */
	char		feed[96];	/* the last feed note read */
	char		error[512];

	/* the builder's settings, for a fresh one */
	int		exited_keep;
	unsigned	escape_flags;
	bool		threads;
};

static double seconds_of(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

static int fail(vt_replay_t *r, const char *what)
{
	snprintf(r->error, sizeof(r->error), "%.300s: %.200s", r->path, what);
	return -1;
}

/* a fresh vmon_t for the log, and the builder on it with no history */
static int fresh_tree(vt_source_t *src, bool again)
{
	vt_replay_t *r = src->replay;
	const vmon_log_header_t *h = vmon_log_header(r->log);

	if (again)
		vmon_destroy(&src->vmon);
	if (vmon_log_replay_init(&src->vmon, h, 0) < 0) {
		memset(&src->vmon, 0, sizeof(src->vmon));
		return fail(r, strerror(errno));
	}
	/* the feed's callback on the fresh tree (the feed object, and its ring the screen reads, stay) */
	if (again && src->feed && vt_feed_rebind(src->feed, &src->vmon) < 0)
		return fail(r, strerror(errno));
	if (again)
		vt_builder_reset(&src->builder, &src->vmon);
	else
		vt_builder_init(&src->builder, &src->vmon);
	vt_builder_hook(&src->builder);
	src->builder.threads = r->threads;
	src->builder.exited_keep = r->exited_keep;
	src->builder.escape_flags = r->escape_flags;
	return 0;
}

int vt_replay_open(vt_source_t *src, const vt_config_t *cfg, char *err, size_t err_size)
{
	vt_replay_t *r = calloc(1, sizeof(*r));
	vmon_log_record_t rec;
	struct stat st;

	if (!r) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	src->replay = r;
	r->pos = -1;
	r->threads = cfg->view.threads;
	r->exited_keep = cfg->exited_keep;
	r->escape_flags = vt_config_escape_flags(cfg);
	snprintf(r->path, sizeof(r->path), "%s", cfg->replay_path);
	r->fd = !strcmp(cfg->replay_path, "-") ? dup(STDIN_FILENO) : open(cfg->replay_path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		snprintf(err, err_size, "-r %s: %s", cfg->replay_path, strerror(errno));
		goto fail;
	}
	/* only a file can be read again from a keyframe: a pipe goes forward only */
	r->seekable = fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode);
	r->log = vmon_log_open(r->fd);
	if (!r->log) {
		snprintf(err, err_size, "-r %s: %s", cfg->replay_path, strerror(errno));
		goto fail;
	}
	if (vmon_log_read(r->log, &rec) < 0 || rec.type != VMON_LOG_HEADER) {
		snprintf(err, err_size, "-r %s: %s", cfg->replay_path,
			 rec.state == VMON_LOG_ERROR ? vmon_log_error(r->log) : "not a whole vmon log (no header)");
		goto fail;
	}
	if (fresh_tree(src, false) < 0) {
		snprintf(err, err_size, "%s", r->error);
		goto fail;
	}
	if (vt_feed_open_replay(&src->feed, &src->vmon, r->escape_flags, err, err_size) < 0)
		goto fail;
	return 0;
fail:
	vt_replay_close(src);
	return -1;
}

void vt_replay_close(vt_source_t *src)
{
	vt_replay_t *r = src->replay;

	if (!r)
		return;
	vmon_log_close(r->log);
	if (r->fd >= 0)
		close(r->fd);
	free(r->marks);
	free(r);
	src->replay = NULL;
}

long vt_replay_index(const vt_source_t *src)
{
	return src->replay ? src->replay->pos : -1;
}

const char *vt_replay_error(const vt_source_t *src)
{
	return src->replay && src->replay->error[0] ? src->replay->error : NULL;
}

static int remember(vt_replay_t *r, const vmon_log_record_t *rec)
{
	struct mark *m;

	if (r->marks_nr == r->marks_cap) {
		long cap = r->marks_cap ? r->marks_cap * 2 : 1024;

		m = realloc(r->marks, sizeof(*m) * (size_t)cap);
		if (!m)
			return fail(r, "out of memory");
		r->marks = m;
		r->marks_cap = cap;
	}
	m = &r->marks[r->marks_nr++];
	m->rec = *rec;
	m->seq = rec->u.sample->seq;
	m->when = seconds_of(&rec->u.sample->time);
	m->keyframe = rec->u.sample->flags & VMON_LOG_SAMPLE_KEYFRAME;
	snprintf(m->feed, sizeof(m->feed), "%s", r->feed);
	return 0;
}

static void status(const vt_replay_t *r, vt_snapshot_t *snap)
{
	const struct mark *m = &r->marks[r->pos];
	time_t t = (time_t)m->when;
	char when[32];
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(snap->replay, sizeof(snap->replay), "replay: %s, sample %ld of %ld%s", when, r->pos + 1, r->marks_nr,
		 r->ended ? "" : "+");
}

/* was the log recorded with the event feed?  Its note before each sample names the backend, or "none" */
static bool recorded_with_feed(const char *note)
{
	return note[0] && strcmp(note, "none") != 0;
}

/*
 * The next sample into snap (built), and the position one on.  Returns 1,
 * 0 at the end, -1 on an error.
 */
static int step(vt_source_t *src, vt_snapshot_t *snap)
{
	vt_replay_t *r = src->replay;
	vmon_log_record_t rec;
	double t0, t1;

	for (;;) {
		if (vmon_log_read(r->log, &rec) < 0) {
			if (rec.state == VMON_LOG_ERROR)
				return fail(r, vmon_log_error(r->log));
			if (r->pos + 1 == r->marks_nr)
				r->ended = true;
			return 0;	/* EOF, or a pipe with no more yet */
		}
		if (rec.type == VMON_LOG_USER && rec.u.user.len >= strlen(VT_LOG_NOTE_FEED) &&
		    !memcmp(rec.u.user.data, VT_LOG_NOTE_FEED, strlen(VT_LOG_NOTE_FEED))) {
			size_t n = rec.u.user.len - strlen(VT_LOG_NOTE_FEED);

			if (n >= sizeof(r->feed))
				n = sizeof(r->feed) - 1;
			memcpy(r->feed, (const char *)rec.u.user.data + strlen(VT_LOG_NOTE_FEED), n);
			r->feed[n] = '\0';
			src->builder.events_from_feed = recorded_with_feed(r->feed);
		}
		if (rec.type == VMON_LOG_SAMPLE)
			break;
		/* the feed's events and losses, for the replay's feed callback and counters */
		if ((rec.type == VMON_LOG_EVENT || rec.type == VMON_LOG_DROP) &&
		    vmon_log_replay_record(&src->vmon, &rec) < 0)
			return fail(r, strerror(errno));
	}
	if (r->pos + 1 == r->marks_nr && remember(r, &rec) < 0)
		return -1;
	r->pos++;
	t0 = vclock_secs(CLOCK_THREAD_CPUTIME_ID) * 1e3;
	vt_feed_replay_at(src->feed, seconds_of(&rec.u.sample->time));
	if (vmon_log_replay(&src->vmon, rec.u.sample) < 0)
		return fail(r, strerror(errno));
	t1 = vclock_secs(CLOCK_THREAD_CPUTIME_ID) * 1e3;
	src->builder.when = seconds_of(&rec.u.sample->time);
	if (vt_builder_build(&src->builder, snap, t1 - t0) < 0)
		return fail(r, strerror(errno));
	snprintf(snap->feed, sizeof(snap->feed), "%s", r->feed[0] ? r->feed : "(not recorded)");
	snap->feed_active = src->builder.events_from_feed;
	status(r, snap);
	return 1;
}

int vt_replay_next(vt_source_t *src, vt_snapshot_t *snap)
{
	return step(src, snap);
}

/*
 * Sample `index` into snap, and every one before it from the nearest
 * keyframe through the builder (into snap as well: each build starts it
 * over).  Returns 1 when snap holds a sample (the last one, if the log ends
 * before index), 0 when there was none to show, -1 on an error.
 */
int vt_replay_goto(vt_source_t *src, vt_snapshot_t *snap, long index)
{
	vt_replay_t *r = src->replay;
	int ret = 0, built = 0;

	if (index < 0)
		index = 0;
	if (index <= r->pos) {
		long from = index - (r->exited_keep > 1 ? r->exited_keep : 1);

		if (!r->seekable)
			return fail(r, "a pipe cannot be read again: replay a file to go back");
		/* back: from a keyframe far enough before for the builder's history */
		if (from < 0)
			from = 0;
		while (from > 0 && !r->marks[from].keyframe)
			from--;
		if (!r->marks[from].keyframe)
			return fail(r, "no keyframe to start from");
		if (fresh_tree(src, true) < 0 || vmon_log_seek(r->log, &r->marks[from].rec) < 0)
			return fail(r, strerror(errno));
		src->builder.seq = r->marks[from].seq - 1;
		snprintf(r->feed, sizeof(r->feed), "%s", r->marks[from].feed);
		src->builder.events_from_feed = recorded_with_feed(r->feed);
		r->pos = from - 1;
	}
	while (r->pos < index && (ret = step(src, snap)) > 0)
		built = 1;
	return ret < 0 ? -1 : built;
}

/* the last sample at or before `when` (the first if all are after it); past the end, forward as far as there is */
int vt_replay_seek(vt_source_t *src, vt_snapshot_t *snap, double when)
{
	vt_replay_t *r = src->replay;
	long lo = 0, hi = r->marks_nr;
	int ret = 0, built = 0;

	if (r->marks_nr && when <= r->marks[r->marks_nr - 1].when) {
		while (lo < hi) {
			long mid = lo + (hi - lo) / 2;

			if (r->marks[mid].when <= when)
				lo = mid + 1;
			else
				hi = mid;
		}
		return vt_replay_goto(src, snap, lo > 0 ? lo - 1 : 0);
	}
	if (r->pos + 1 < r->marks_nr) {
		if ((ret = vt_replay_goto(src, snap, r->marks_nr - 1)) < 0)
			return -1;
		built = ret;
	}
	while ((r->pos < 0 || r->marks[r->pos].when < when) && (ret = step(src, snap)) > 0)
		built = 1;
	return ret < 0 ? -1 : built;
}
