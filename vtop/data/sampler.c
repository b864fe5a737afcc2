/*
 * sampler.c: sampling, apart from drawing.
 *
 * A vmon_sample() of every process takes tens of milliseconds at a few
 * thousand processes.  If the screen waited for it, a key pressed meanwhile
 * would wait too.  libvmon starts no threads of its own, so vtop runs the
 * sampling in one thread of its own (vt_sampler_*), and that thread is the
 * only one that ever touches the vmon_t: no lock is held while sampling.
 *
 * The rows borrow the library's stores and the nodes' command texts
 * instead of copying them (issue 14: the copies were about 1 KB a
 * process), so the library must not change while the screen reads: the
 * screen holds snap_lock from when it wakes until it waits again
 * (vt_sampler_hold()), the sampler while it changes the library and builds.
 * The two never read and build at once, so live there is one snapshot: the
 * sampler builds it again in place and marks it fresh; the screen, when
 * told (an eventfd it polls with the keyboard), takes it and makes its view
 * of it again (a second snapshot was 80 bytes a process more, issue 14).
 * A key pressed while a sample runs waits for it, tens of milliseconds at
 * ten thousand processes; the screen still sorts, searches and draws at
 * once against the snapshot in hand, and a paused screen's stands still, as
 * the library does.  A replay's rows are copies (snapshot.c's shared
 * copies), built into `back` and swapped with `front`: a move that fails
 * leaves the one on screen as it was.
 *
 * The screen's requests (interval, pause, wants, the process to detail, a
 * sample now) are a few fields under the same lock, and a write to the
 * sampler's wake eventfd; the sampler applies them between samples, where
 * the library allows changing wants.  Between samples it waits in poll(2)
 * on that eventfd and on the event feed's fd, reading the kernel's buffer
 * as it fills (vt_source_wait()); the feed's events reach the screen through
 * a ring of their own (event_feed.c).
 *
 * vt_source_* is the sampling itself, without a thread: batch mode and the
 * tests use it directly.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#include "data/columns.h"
#include "data/sampler.h"

#define VT_SYS_WANTS	(VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM | VMON_WANT_SYS_LOADAVG)

/* --- sampling without a thread --- */

static vmon_proc_wants_t full_wants(const vt_source_t *src, vmon_proc_wants_t wants, bool threads)
{
	/* PSS costs the kernel a page-table walk: never for every process (vt_source_set_rollup()) */
	wants &= ~(VMON_WANT_PROC_ROLLUP | VT_WANT_WCHAN);
	wants |= VMON_WANT_PROC_STAT;
	if (threads)
		wants |= VMON_WANT_PROC_FOLLOW_THREADS;
	/*
	 * A log's replay may show any column: the stat line's other fields too
	 * (no read of their own) and status's memory lines (read when the
	 * memory can have moved, proc_vm_status.c), as before they had stores
	 * of their own.
	 */
	if (src->recording)
		wants |= VMON_WANT_PROC_STAT_EXTRA | VMON_WANT_PROC_VM_STATUS;
	/* the files view: every process's fds, to say who else holds a pipe or a socket */
	if (src->files_pid > 0)
		wants |= VMON_WANT_PROC_FILES;
	if (src->monitored_nr)
		wants |= VMON_WANT_PROC_FOLLOW_CHILDREN;
	return wants;
}

/*
 * wchan, read only while a column shows it, the details page (which says
 * where its process sleeps) is open, or a log is written (its replay may
 * show any column): for every process that ran, it is a walk of its kernel
 * stack or a read of /proc/PID/wchan.
 */
static void set_wchan_wanted(vt_source_t *src)
{
	if ((src->wants & VT_WANT_WCHAN) || src->detail_pid > 0 || src->writer)
		src->vmon.flags &= ~VMON_FLAG_NO_WCHAN;
	else
		src->vmon.flags |= VMON_FLAG_NO_WCHAN;
}

/*
 * The files libvmon may keep open between samples.  Its default is half the
 * soft RLIMIT_NOFILE, leaving the rest to a program that has its own files;
 * vtop has a handful (the terminal, an eventfd, vtoprc while it is saved), so
 * it raises the soft limit to the hard one and gives the library all but a
 * margin: past the budget each file is opened, read and closed every
 * sample, which at thousands of processes costs more than the reads.
 */
static int fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
		return 1 << 20;
	return rl.rlim_cur > 256 ? (int)rl.rlim_cur - 128 : -1;
}

static void record_close(vt_source_t *src)
{
	if (src->writer && vmon_log_writer_close(src->writer) < 0 && !src->log_error[0])
		snprintf(src->log_error, sizeof(src->log_error), "recording: %s", strerror(errno));
	src->writer = NULL;
	if (src->writer_fd >= 0)
		close(src->writer_fd);
	src->writer_fd = -1;
}

/* -w: a log of every sample from the first, and of every event the feed delivers and loses */
static int record_open(vt_source_t *src, const char *path, char *err, size_t err_size)
{
	src->writer_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (src->writer_fd < 0) {
		snprintf(err, err_size, "-w %s: %s", path, strerror(errno));
		return -1;
	}
	src->writer = vmon_log_writer_open(src->writer_fd, &src->vmon);
	if (!src->writer) {
		snprintf(err, err_size, "-w %s: %s", path, strerror(errno));
		close(src->writer_fd);
		src->writer_fd = -1;
		return -1;
	}
	if (vmon_log_writer_follow_feed(src->writer, &src->vmon) < 0) {
		snprintf(err, err_size, "-w %s: the feed's events: %s", path, strerror(errno));
		record_close(src);
		return -1;
	}
	return 0;
}

/* the sample just taken, with the feed meter's text before it (vtop -r shows it again); off after a failure */
static void record(vt_source_t *src, const struct timespec *when, const char *feed)
{
	char note[sizeof(VT_LOG_NOTE_FEED) + 96];
	int n = snprintf(note, sizeof(note), "%s%s", VT_LOG_NOTE_FEED, feed);

	if (vmon_log_write_user(src->writer, note, (size_t)n < sizeof(note) ? (size_t)n : sizeof(note) - 1) < 0 ||
	    vmon_log_write_sample(src->writer, &src->vmon, when) < 0) {
		snprintf(src->log_error, sizeof(src->log_error), "recording stopped: %s", strerror(errno));
		record_close(src);
	}
}

/*
 * Why the task iterator is not in use when it was asked for (--source iter,
 * "source = iter", or VMON_SAMPLER=iter under the default auto, which the
 * library reads the same way), escaped: the library falls back to /proc and
 * says why, and the reason quotes libbpf, the kernel and the environment.
 * "" when the iterator is in use or was not asked for: auto choosing /proc
 * is no news.
 */
static void sampler_why(vt_source_t *src, const vt_config_t *cfg)
{
	const char *env = secure_getenv("VMON_SAMPLER"), *why;
	bool asked = cfg->source == VMON_SAMPLER_ITER ||
		     (cfg->source == VMON_SAMPLER_AUTO && env && !strcmp(env, vmon_sampler_name(VMON_SAMPLER_ITER)));
	char escaped[1024];
	size_t len;

	src->source_why[0] = '\0';
	if (!asked || vmon_get_sampler(&src->vmon) == VMON_SAMPLER_ITER)
		return;
	why = vmon_sampler_reason(&src->vmon);
	if (!why || !*why)
		why = "no reason given";
	len = vmon_escape(escaped, sizeof(escaped), why, strlen(why), src->builder.escape_flags);
	vt_text_fit(src->source_why, sizeof(src->source_why), escaped, len < sizeof(escaped) ? len : strlen(escaped));
}

int vt_source_init(vt_source_t *src, const vt_config_t *cfg, vmon_proc_wants_t wants, const char *proc_root,
		   char *err, size_t err_size)
{
	vmon_attr_t attr;

	memset(src, 0, sizeof(*src));
	src->writer_fd = -1;
	src->monitored_nr = cfg->pids_nr;
	src->threads = cfg->view.threads;
	src->wants = wants;
	src->recording = cfg->write_path[0] != '\0';
	if (cfg->replay_path[0])
		return vt_replay_open(src, cfg, err, err_size);
	vmon_attr_default(&attr);
	/* -p: the window-manager mode: the given processes and what they fork, nothing else */
	attr.flags = cfg->pids_nr ? VMON_FLAG_NONE : VMON_FLAG_PROC_ALL;
	attr.sys_wants = VT_SYS_WANTS;
	attr.proc_wants = full_wants(src, wants, cfg->view.threads);
	attr.proc_root = proc_root;
	attr.sampler = cfg->source;
	if (!proc_root)
		attr.fd_budget = fd_budget();
	/* the event feed is the library's, opened before its first look at /proc */
	if (vt_feed_check_backend(cfg->backend, err, err_size) < 0)
		return -1;
	vt_feed_attr(cfg->backend, &attr);
	if (!vmon_init_attr(&src->vmon, &attr)) {
		snprintf(err, err_size, "cannot start libvmon: %s", strerror(errno));
		return -1;
	}
	vt_builder_init(&src->builder, &src->vmon);
	vt_builder_hook(&src->builder);
	src->builder.live = true;
	src->builder.threads = cfg->view.threads;
	src->builder.exited_keep = cfg->exited_keep;
	src->builder.escape_flags = vt_config_escape_flags(cfg);
	sampler_why(src, cfg);
	if (vt_feed_open(&src->feed, &src->vmon, cfg->backend, cfg->pids_nr > 0, src->builder.escape_flags,
			 err, err_size) < 0)
		goto fail;
	/* with the feed, the event log is its events, not the differences between samples */
	src->builder.events_from_feed = vt_feed_active(src->feed);
	if (cfg->write_path[0] && record_open(src, cfg->write_path, err, err_size) < 0)
		goto fail;
	set_wchan_wanted(src);
	if (cfg->pids_nr) {
		src->monitored_procs = calloc((size_t)cfg->pids_nr, sizeof(*src->monitored_procs));
		if (!src->monitored_procs) {
			snprintf(err, err_size, "out of memory");
			goto fail;
		}
		for (int i = 0; i < cfg->pids_nr; i++) {
			/* -p names the few processes to watch: they (and their children) are read for PSS */
			src->monitored_procs[i] = vmon_proc_monitor(&src->vmon, cfg->pids[i],
								    attr.proc_wants | (wants & VMON_WANT_PROC_ROLLUP),
								    NULL, NULL);
			if (!src->monitored_procs[i]) {
				snprintf(err, err_size, "-p %d: %s", cfg->pids[i],
					 errno == ESRCH ? "no such process" : strerror(errno));
				goto fail;
			}
		}
	}
	return 0;
fail:
	vt_source_fini(src);
	return -1;
}

void vt_source_fini(vt_source_t *src)
{
	record_close(src);
	vt_replay_close(src);
	for (int i = 0; i < src->monitored_nr && src->monitored_procs; i++) {
		if (src->monitored_procs[i])
			vmon_proc_unmonitor(&src->vmon, src->monitored_procs[i], NULL, NULL);
	}
	free(src->monitored_procs);
	src->monitored_procs = NULL;
	free(src->rollup_pids);
	src->rollup_pids = NULL;
	src->rollup_nr = 0;
	if (src->vmon.internal)
		vmon_destroy(&src->vmon);
	vt_builder_fini(&src->builder);
	/* after the library, which calls back into it until it is gone */
	vt_feed_close(src->feed);
	src->feed = NULL;
}

/*
 * A storm of short lives leaves the heap with what their nodes, rows and
 * exited rows took, free but resident: glibc gives back only the top of a
 * heap by itself.  So the heap is trimmed (malloc_trim(): every whole free
 * page in it given back) once its resident pages not in use grew by
 * HEAP_SLACK over their least since the last trim: RSS comes back down a
 * refresh or two after a storm, and a steady system never pays for the
 * walk.  Those pages are the anonymous RSS (/proc/self/statm) less the
 * bytes malloc has handed out (mallinfo2()).  Counting the free bytes
 * instead missed the pages a trim had given back that later samples
 * touched again: a storm leaves its free room spread across the heap,
 * malloc hands it out to each sample's passing needs, and RSS crept back
 * by 2 MB between 30 and 60 s after the storm at 10,000 processes, with
 * no more free bytes than right after the trim.  Counting is itself a
 * walk of every free chunk (mallinfo2()) and a read of statm, so it is
 * done when the rows fell by HEAP_ROWS_FELL from their most since the last
 * count (what a storm's end looks like), and else every HEAP_EVERY samples.
 */
#define HEAP_SLACK	(1u << 20)
#define HEAP_ROWS_FELL	16
#define HEAP_EVERY	16

#if defined(HAVE_MALLINFO2) && defined(HAVE_MALLOC_TRIM)
/* the anonymous pages resident (RSS less the file-backed and shared ones) less what malloc handed out; 0 unknown */
static size_t heap_idle_bytes(void)
{
	static long page;
	struct mallinfo2 mi = mallinfo2();
	unsigned long resident, shared;
	size_t anon, used = mi.uordblks + mi.hblkhd;
	char buf[128];
	ssize_t n;
	int fd;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%*s %lu %lu", &resident, &shared) != 2 || resident < shared)
		return 0;
	anon = (size_t)(resident - shared) * (size_t)page;
	return anon > used ? anon - used : 0;
}
#endif

void vt_heap_settle(vt_heap_t *heap, int rows)
{
#if defined(HAVE_MALLINFO2) && defined(HAVE_MALLOC_TRIM)
	size_t idle;

	if (rows > heap->rows_most)
		heap->rows_most = rows;
	if (heap->counted && rows + HEAP_ROWS_FELL > heap->rows_most && ++heap->samples < HEAP_EVERY)
		return;
	heap->rows_most = rows;
	heap->samples = 0;
	idle = heap_idle_bytes();
	if (!heap->counted || idle < heap->idle_low)
		heap->idle_low = idle;
	heap->counted = true;
	if (idle - heap->idle_low < HEAP_SLACK)
		return;
	malloc_trim(0);
	heap->trims++;
	heap->idle_low = heap_idle_bytes();
#else
	(void)heap;
	(void)rows;
#endif
}

int vt_source_sample(vt_source_t *src, vt_snapshot_t *snap)
{
	double t0 = vclock_secs(CLOCK_THREAD_CPUTIME_ID) * 1e3, t1;
	struct timespec now;
	int err;

	if (src->replay) {
		int r = vt_replay_next(src, snap);

		if (r == 0)
			errno = ENODATA;	/* the end of the log */
		return r > 0 ? 0 : -1;
	}
	if (!vmon_sample(&src->vmon)) {
		err = errno;
		vt_snapshot_clear(snap);
		errno = err;
		return -1;
	}
	t1 = vclock_secs(CLOCK_THREAD_CPUTIME_ID) * 1e3;
	/* one clock reading for the snapshot and the log, so that a replay shows the same time */
	clock_gettime(CLOCK_REALTIME, &now);
	src->builder.when = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	if (vt_builder_build(&src->builder, snap, t1 - t0) < 0)
		return -1;
	if (src->files_pid > 0 && vt_files_build(&src->vmon, src->files_pid, src->builder.escape_flags, snap) < 0)
		return -1;
	vt_feed_status(src->feed, snap->feed, sizeof(snap->feed), snap->feed_why, sizeof(snap->feed_why));
	snap->feed_active = vt_feed_active(src->feed);
	memcpy(snap->source_why, src->source_why, sizeof(snap->source_why));
	if (src->writer)
		record(src, &now, snap->feed);
	/* a monitored process that exited (the library keeps it, state X) is shown once, then let go */
	for (int i = 0; i < src->monitored_nr; i++) {
		vmon_proc_t *proc = src->monitored_procs[i];

		if (proc && vt_proc_gone(proc)) {
			vmon_proc_unmonitor(&src->vmon, proc, NULL, NULL);
			src->monitored_procs[i] = NULL;
		}
	}
	vt_heap_settle(&src->heap, snap->rows_nr);
	return 0;
}

int vt_source_set_wants(vt_source_t *src, vmon_proc_wants_t wants, bool threads)
{
	vmon_proc_t *detail;

	/* a replay shows what was recorded: the builder takes thread rows or leaves them */
	if (src->replay) {
		src->threads = threads;
		src->builder.threads = threads;
		return 0;
	}
	detail = src->detail_pid > 0 ? vmon_proc_lookup(&src->vmon, src->detail_pid) : NULL;

	src->wants = wants;
	src->threads = threads;
	src->builder.threads = threads;
	if (vmon_set_proc_wants(&src->vmon, full_wants(src, wants, threads)) < 0)
		return -1;
	set_wchan_wanted(src);
	/* the detailed process keeps its environment: it is beyond the default */
	if (detail && !(detail->wants & VMON_WANT_PROC_ENV))
		vmon_proc_set_wants(&src->vmon, detail, detail->wants | VMON_WANT_PROC_ENV);
	return 0;
}

/* the environment is read for the one process whose details are shown, and only while they are */
void vt_source_set_borrow(vt_source_t *src, bool borrow)
{
	src->builder.borrow = borrow;
}

void vt_source_set_detail(vt_source_t *src, int pid)
{
	vmon_proc_t *proc;

	if (pid == src->detail_pid || src->replay)
		return;
	if (src->detail_pid > 0 && (proc = vmon_proc_lookup(&src->vmon, src->detail_pid)) && !vt_proc_gone(proc) &&
	    !(full_wants(src, src->wants, src->threads) & VMON_WANT_PROC_ENV))
		vmon_proc_set_wants(&src->vmon, proc, proc->wants & ~VMON_WANT_PROC_ENV);
	src->detail_pid = pid;
	set_wchan_wanted(src);
	if (pid > 0 && (proc = vmon_proc_lookup(&src->vmon, pid)) && !vt_proc_gone(proc))
		vmon_proc_set_wants(&src->vmon, proc, proc->wants | VMON_WANT_PROC_ENV);
}

static bool has_pid(const int *pids, int nr, int pid)
{
	for (int i = 0; i < nr; i++) {
		if (pids[i] == pid)
			return true;
	}
	return false;
}

/* one node's PSS want on or off, if it is there and live */
static void rollup_want(vt_source_t *src, int pid, bool on)
{
	vmon_proc_t *proc = vmon_proc_lookup(&src->vmon, pid);

	if (!proc || proc->is_stale || !(proc->wants & VMON_WANT_PROC_ROLLUP) == !on)
		return;
	vmon_proc_set_wants(&src->vmon, proc, on ? proc->wants | VMON_WANT_PROC_ROLLUP :
				  proc->wants & ~VMON_WANT_PROC_ROLLUP);
}

/*
 * PSS (smaps_rollup) is read for the processes whose rows are on screen,
 * pids[] (none when no PSS column is shown): each gets the want, and each
 * that left the screen loses it.  Called before every sample, so that a
 * process found at a pid since (or a reused one) gets it too.
 */
int vt_source_set_rollup(vt_source_t *src, const int *pids, int nr)
{
	int *keep;

	if (src->replay)
		return 0;
	for (int i = 0; i < src->rollup_nr; i++) {
		if (!has_pid(pids, nr, src->rollup_pids[i]))
			rollup_want(src, src->rollup_pids[i], false);
	}
	for (int i = 0; i < nr; i++)
		rollup_want(src, pids[i], true);
	if (nr == src->rollup_nr && (!nr || !memcmp(pids, src->rollup_pids, (size_t)nr * sizeof(*pids))))
		return 0;
	keep = nr ? realloc(src->rollup_pids, (size_t)nr * sizeof(*keep)) : NULL;
	if (nr && !keep)
		return -1;
	if (!nr)
		free(src->rollup_pids);
	if (nr)
		memcpy(keep, pids, (size_t)nr * sizeof(*keep));
	src->rollup_pids = keep;
	src->rollup_nr = nr;
	return 0;
}

/*
 * The open files are read while the files view is open, and then for every
 * process (who else holds a pipe or a socket is known only among processes
 * whose fds are read), with the socket tables for the addresses; when it
 * closes, both are dropped and their memory and files given back.
 */
int vt_source_set_files(vt_source_t *src, int pid)
{
	bool was = src->files_pid > 0, now = pid > 0;
	vmon_sys_wants_t sys = src->vmon.sys_wants;

	src->files_pid = pid;
	if (was == now)
		return 0;
	if (vmon_set_sys_wants(&src->vmon, now ? sys | VMON_WANT_SYS_SOCKETS : sys & ~VMON_WANT_SYS_SOCKETS) < 0)
		return -1;
	return vt_source_set_wants(src, src->wants, src->threads);
}

/* after a read of the feed, its fd rests this long: perf and netlink signal every event, and a flood is read in batches */
#define FEED_REST_SECS	0.01

static int ms_until(double secs)
{
	return secs <= 0 ? 0 : (int)(secs * 1000.0) + 1;
}

/*
 * Between two samples: wait secs (< 0: without end) or until wake_fd (-1:
 * none) is readable, and meanwhile read the feed's kernel buffer whenever it
 * has events or its timeout says it would fill before the next sample.  The
 * events then wait in the library for vmon_sample() to apply them.  Returns
 * true when woken.
 */
bool vt_source_wait(vt_source_t *src, double secs, int wake_fd)
{
	double end = vclock_secs(CLOCK_MONOTONIC) + (secs > 0 ? secs : 0), rest_until = 0;
	int feed_fd = vt_feed_fd(src->feed);

	for (;;) {
		struct pollfd fds[2];
		double now = vclock_secs(CLOCK_MONOTONIC);
		bool resting = now < rest_until;
		int nfds = 0, timeout = -1, feed_ms, wake_i = -1, feed_i = -1, r;

		if (secs >= 0) {
			if (now >= end)
				return false;
			timeout = ms_until(end - now);
		}
		if (feed_fd >= 0) {
			feed_ms = resting ? ms_until(rest_until - now) : vt_feed_timeout(src->feed);
			if (feed_ms >= 0 && (timeout < 0 || feed_ms < timeout))
				timeout = feed_ms;
		}
		if (wake_fd >= 0) {
			wake_i = nfds;
			fds[nfds].fd = wake_fd;
			fds[nfds++].events = POLLIN;
		}
		if (feed_fd >= 0 && !resting) {
			feed_i = nfds;
			fds[nfds].fd = feed_fd;
			fds[nfds++].events = POLLIN;
		}
		r = poll(fds, (nfds_t)nfds, timeout);
		if (r < 0 && errno != EINTR)
			return false;	/* cannot wait: the caller samples now */
		if (r > 0 && wake_i >= 0 && (fds[wake_i].revents & POLLIN))
			return true;
		if (feed_i >= 0 && (r == 0 || (fds[feed_i].revents & POLLIN))) {
			vt_feed_process(src->feed);
			rest_until = vclock_secs(CLOCK_MONOTONIC) + FEED_REST_SECS;
		}
	}
}

/* --- the sampling thread --- */

struct vt_sampler {
	pthread_t		thread;
	bool			started;
	pthread_mutex_t		lock;
	/*
	 * Held by the sampling thread while it changes the library (wants,
	 * a sample, the snapshot built from it and handed over), and by the
	 * screen while it reads a snapshot (vt_sampler_hold()): the rows
	 * borrow the library's stores and the nodes' command texts.
	 */
	pthread_mutex_t		snap_lock;
	bool			borrow;		/* live: rows borrow; a replay's are copies */
	int			efd;		/* the screen's: a snapshot is ready */
	int			wake;		/* the sampler's: a request is waiting (the lock's fields changed) */

	vt_snapshot_t		bufs[2];	/* live, only the first */
	vt_snapshot_t		*back, *front;	/* the one being built, the newest (the screen's): live, the same */
	bool			fresh;		/* front is one the screen has not taken */

	/* requests, under lock */
	double			interval;
	bool			paused;
	bool			now;
	bool			quit;
	vmon_proc_wants_t	wants;
	bool			threads;
	bool			wants_changed;
	int			detail_pid;
	int			files_pid;
	int			*visible;	/* the pids on screen, for PSS (vt_sampler_set_visible()) */
	int			visible_nr;
	bool			visible_changed;
	char			error[256];
	/* -r */
	int			step;		/* samples to move by, then pause */
	bool			seek;		/* go to seek_when */
	double			seek_when;
	long			go_index;	/* go to this sample, -1 none */
	double			speed;		/* 1: at the pace recorded */
	bool			ended;		/* the log has no more (for now) */

	vt_source_t		src;
};

static void wake_up(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wake-up is pending anyway */
	}
}

/*
 * A replay's move: the next sample, or a step, a time, a sample asked for.
 * Returns 1 with a snapshot in back, 0 without one (the end), -1 on an error.
 */
static int replay_move(vt_sampler_t *s, vt_snapshot_t *back, int step, bool seek, double when, long index)
{
	vt_source_t *src = &s->src;
	long pos = vt_replay_index(src);
	int r;

	if (seek)
		r = vt_replay_seek(src, back, when);
	else if (index >= 0)
		r = vt_replay_goto(src, back, index);
	else if (step < 0)
		r = pos > 0 ? vt_replay_goto(src, back, pos + step < 0 ? 0 : pos + step) : 0;
	else if (step > 1)
		r = vt_replay_goto(src, back, pos + step);
	else
		r = vt_replay_next(src, back);
	if (r < 0) {
		pthread_mutex_lock(&s->lock);
		snprintf(s->error, sizeof(s->error), "%s", vt_replay_error(src) ? vt_replay_error(src) : strerror(errno));
		pthread_mutex_unlock(&s->lock);
	}
	return r;
}

static void *sampler_main(void *arg)
{
	vt_sampler_t *s = arg;
	double due = 0, started;
	unsigned long long n = 0;
	bool replay = s->src.replay != NULL;
	int *visible = NULL, visible_nr = 0;	/* the sampling thread's copy of s->visible */

	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		/*
		 * The requests are read under the lock; the wait, on the wake fd
		 * and the feed, without it.  A replay at its end waits for a
		 * request, and looks again now and then: the log may grow.
		 */
		while (!s->quit && !s->now && !s->step && !s->seek && s->go_index < 0 &&
		       (s->paused || vclock_secs(CLOCK_MONOTONIC) < due)) {
			double wait = s->paused ? -1 : due - vclock_secs(CLOCK_MONOTONIC);

			pthread_mutex_unlock(&s->lock);
			if (vt_source_wait(&s->src, wait, s->wake)) {
				uint64_t count;

				if (read(s->wake, &count, sizeof(count)) < 0) {
					/* EAGAIN: another read took it */
				}
			}
			pthread_mutex_lock(&s->lock);
		}
		if (s->quit)
			break;
		s->now = false;
		bool wants_changed = s->wants_changed;
		vmon_proc_wants_t wants = s->wants;
		bool threads = s->threads;
		int detail = s->detail_pid, step = s->step;
		int files = s->files_pid;
		bool seek = s->seek;
		double seek_when = s->seek_when;
		long go_index = s->go_index;
		vt_snapshot_t *back = s->back;
		bool visible_failed = false;

		if (s->visible_changed) {
			int *copy = s->visible_nr ? malloc((size_t)s->visible_nr * sizeof(*copy)) : NULL;

			if (copy || !s->visible_nr) {
				if (s->visible_nr)
					memcpy(copy, s->visible, (size_t)s->visible_nr * sizeof(*copy));
				free(visible);
				visible = copy;
				visible_nr = s->visible_nr;
				s->visible_changed = false;
			}
		}
		s->wants_changed = false;
		s->step = 0;
		s->seek = false;
		s->go_index = -1;
		pthread_mutex_unlock(&s->lock);

		/* after s->lock is let go: the screen takes snap_lock first, then s->lock */
		pthread_mutex_lock(&s->snap_lock);
		started = vclock_secs(CLOCK_MONOTONIC);
		if (wants_changed && vt_source_set_wants(&s->src, wants, threads) < 0) {
			pthread_mutex_lock(&s->lock);
			snprintf(s->error, sizeof(s->error), "cannot change what is sampled: %s", strerror(errno));
			pthread_mutex_unlock(&s->lock);
		}
		vt_source_set_detail(&s->src, detail);
		if (vt_source_set_rollup(&s->src, visible, visible_nr) < 0)
			visible_failed = true;
		if (vt_source_set_files(&s->src, files) < 0) {
			pthread_mutex_lock(&s->lock);
			snprintf(s->error, sizeof(s->error), "cannot read open files: %s", strerror(errno));
			pthread_mutex_unlock(&s->lock);
		}
		int r, err;

		if (replay) {
			/* thread rows on or off: the same sample again, built the other way */
			if (wants_changed && !step && !seek && go_index < 0 && vt_replay_index(&s->src) >= 0)
				go_index = vt_replay_index(&s->src);
			r = replay_move(s, back, step, seek, seek_when, go_index) > 0 ? 0 : 1;
			err = 0;
		} else {
			r = vt_source_sample(&s->src, back);
			err = errno;
		}

		pthread_mutex_lock(&s->lock);
		if (visible_failed && !s->error[0])
			snprintf(s->error, sizeof(s->error), "cannot read PSS for the rows shown: %s", strerror(ENOMEM));
		if (s->src.log_error[0] && !s->error[0]) {
			snprintf(s->error, sizeof(s->error), "%s", s->src.log_error);
			s->src.log_error[0] = '\0';
		}
		if (replay) {
			s->ended = r != 0 && !step && !seek && go_index < 0;
			if (r == 0) {
				back->paused = s->paused;
				s->back = s->front;
				s->front = back;
				s->fresh = true;
			}
			/* at the pace it was recorded, or faster; at the end, a look every second */
			due = started + (s->ended ? 1.0 : r == 0 && back->interval > 0 ? back->interval / s->speed : 0);
		} else {
			if (r < 0) {
				snprintf(s->error, sizeof(s->error), "sampling failed: %s", strerror(err));
				/* what a failed build made, or what the library changed under: no rows until the next */
				vt_snapshot_clear(back);
			}
			back->paused = s->paused;
			s->fresh = true;
			/* the second sample soon, so that CPU% means something on the first screen */
			due = started + (++n == 1 && s->interval > 0.5 ? 0.5 : s->interval);
		}
		pthread_mutex_unlock(&s->lock);
		pthread_mutex_unlock(&s->snap_lock);
		wake_up(s->efd);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	free(visible);
	return NULL;
}

int vt_sampler_start(vt_sampler_t **out, const vt_config_t *cfg, vmon_proc_wants_t wants, char *err, size_t err_size)
{
	vt_sampler_t *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	for (int i = 0; i < 2; i++)
		vt_snapshot_init(&s->bufs[i]);
	s->interval = cfg->delay;
	s->speed = 1;
	s->go_index = -1;
	s->wants = wants;
	s->threads = cfg->view.threads;
	s->now = true;
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0 || s->wake < 0) {
		snprintf(err, err_size, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (vt_source_init(&s->src, cfg, wants, NULL, err, err_size) < 0)
		goto fail;
	s->borrow = !s->src.replay;
	vt_source_set_borrow(&s->src, s->borrow);
	s->back = &s->bufs[0];
	s->front = s->borrow ? s->back : &s->bufs[1];
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->snap_lock, NULL);
	if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
		snprintf(err, err_size, "cannot start the sampling thread: %s", strerror(errno));
		vt_sampler_stop(s);
		return -1;
	}
	s->started = true;
	*out = s;
	return 0;
fail:
	if (s->efd >= 0)
		close(s->efd);
	if (s->wake >= 0)
		close(s->wake);
	free(s);
	return -1;
}

void vt_sampler_stop(vt_sampler_t *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->quit = true;
		pthread_mutex_unlock(&s->lock);
		wake_up(s->wake);
		pthread_join(s->thread, NULL);
	}
	vt_source_fini(&s->src);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->snap_lock);
	for (int i = 0; i < 2; i++)
		vt_snapshot_free(&s->bufs[i]);
	close(s->efd);
	close(s->wake);
	free(s->visible);
	free(s);
}

int vt_sampler_fd(const vt_sampler_t *s)
{
	return s->efd;
}

/*
 * The screen holds the sampler while it reads snapshots, from before it
 * takes the newest until it waits for keys again: meanwhile the sampling
 * thread does not change the library that the rows borrow from, and waits
 * (a key pressed while it samples waits for that sample: the header's "ms
 * per sample", about 10 at 10,000 idle processes).  Once it has sampled
 * again, the snapshot in hand may be another, or (live) the same one built
 * again: take it after each hold, before reading, and make the view of it
 * again when it says it changed.
 */
void vt_sampler_hold(vt_sampler_t *s)
{
	pthread_mutex_lock(&s->snap_lock);
}

void vt_sampler_release(vt_sampler_t *s)
{
	pthread_mutex_unlock(&s->snap_lock);
}

/* the newest snapshot, for the screen (held); *changed says whether it is another one than last time */
vt_snapshot_t *vt_sampler_take(vt_sampler_t *s, bool *changed)
{
	uint64_t count;
	vt_snapshot_t *snap;

	if (read(s->efd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing was signalled; the fresh flag decides */
	}
	pthread_mutex_lock(&s->lock);
	*changed = s->fresh;
	s->fresh = false;
	snap = s->front;
	pthread_mutex_unlock(&s->lock);
	return snap;
}

static void request(vt_sampler_t *s)
{
	pthread_mutex_unlock(&s->lock);
	wake_up(s->wake);
}

void vt_sampler_set_interval(vt_sampler_t *s, double secs)
{
	pthread_mutex_lock(&s->lock);
	s->interval = secs;
	request(s);
}

void vt_sampler_set_paused(vt_sampler_t *s, bool paused)
{
	pthread_mutex_lock(&s->lock);
	s->paused = paused;
	request(s);
}

void vt_sampler_set_wants(vt_sampler_t *s, vmon_proc_wants_t wants, bool threads)
{
	pthread_mutex_lock(&s->lock);
	if (wants != s->wants || threads != s->threads) {
		s->wants = wants;
		s->threads = threads;
		s->wants_changed = true;
		s->now = true;
	}
	request(s);
}

/* the process a view asks more of (its environment, its open files): sampled for it at once */
static void request_pid(vt_sampler_t *s, int *field, int pid)
{
	pthread_mutex_lock(&s->lock);
	if (pid != *field) {
		*field = pid;
		s->now = pid > 0;
	}
	request(s);
}

void vt_sampler_set_detail(vt_sampler_t *s, int pid)
{
	request_pid(s, &s->detail_pid, pid);
}

void vt_sampler_set_files(vt_sampler_t *s, int pid)
{
	request_pid(s, &s->files_pid, pid);
}

/* the pids whose rows are on screen, for PSS; the same list again costs a comparison */
void vt_sampler_set_visible(vt_sampler_t *s, const int *pids, int nr)
{
	int *copy;

	pthread_mutex_lock(&s->lock);
	if (nr == s->visible_nr && (!nr || !memcmp(pids, s->visible, (size_t)nr * sizeof(*pids)))) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	copy = nr ? realloc(s->visible, (size_t)nr * sizeof(*copy)) : s->visible;
	if (nr && !copy) {
		snprintf(s->error, sizeof(s->error), "cannot read PSS for the rows shown: %s", strerror(ENOMEM));
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (nr)
		memcpy(copy, pids, (size_t)nr * sizeof(*copy));
	s->visible = copy;
	s->visible_nr = nr;
	s->visible_changed = true;
	/*
	 * No sample now: rows that came on screen get their PSS at the next
	 * refresh (a sample per scrolled line would make CPU% a rate over a
	 * few milliseconds); nor a wake-up, which would only apply it early.
	 */
	pthread_mutex_unlock(&s->lock);
}

void vt_sampler_sample_now(vt_sampler_t *s)
{
	pthread_mutex_lock(&s->lock);
	s->now = true;
	request(s);
}

void vt_sampler_replay_step(vt_sampler_t *s, int delta)
{
	pthread_mutex_lock(&s->lock);
	s->step += delta;
	s->paused = true;
	request(s);
}

void vt_sampler_replay_seek(vt_sampler_t *s, double when)
{
	pthread_mutex_lock(&s->lock);
	s->seek = true;
	s->seek_when = when;
	request(s);
}

void vt_sampler_replay_goto(vt_sampler_t *s, long index)
{
	pthread_mutex_lock(&s->lock);
	s->go_index = index < 0 ? 0 : index;
	request(s);
}

void vt_sampler_set_speed(vt_sampler_t *s, double speed)
{
	pthread_mutex_lock(&s->lock);
	s->speed = speed > 0 ? speed : 1;
	request(s);
}

bool vt_sampler_replay_ended(vt_sampler_t *s)
{
	bool ended;

	pthread_mutex_lock(&s->lock);
	ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	return ended;
}

/*
 * The feed's events since the last call (the event log): the ring has a lock
 * of its own, so the screen takes them while the sampling thread samples.
 */
int vt_sampler_take_events(vt_sampler_t *s, vt_event_t *out, int max, unsigned long long *dropped)
{
	return vt_feed_take(s->src.feed, out, max, dropped);
}

/* the last error, once; NULL if none */
const char *vt_sampler_error(vt_sampler_t *s)
{
	static __thread char msg[256];

	pthread_mutex_lock(&s->lock);
	if (!s->error[0]) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	snprintf(msg, sizeof(msg), "%s", s->error);
	s->error[0] = '\0';
	pthread_mutex_unlock(&s->lock);
	return msg;
}
