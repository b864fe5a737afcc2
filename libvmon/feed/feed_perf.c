/*
 * feed_perf.c: the perf backend: the process tracepoints through
 * perf_event_open(2), one ring per CPU, merged by time; no BPF.
 *
 *   task:task_newtask		a new task; its clone flags tell a process
 *				from a thread (sched_process_fork does not)
 *   sched:sched_process_exec	the new program's path
 *   sched:sched_process_exit	a thread's exit, and group_dead (Linux 6.11)
 *				for the process's; without it, the leader's
 *				exit is checked against /proc as netlink's are
 *   syscalls:sys_enter_exit_group, sys_enter_exit
 *				the exit status, when the process ends
 *				through a system call (not when a signal
 *				kills it: then the status is unknown)
 *
 * Reach: every process of the system.  It needs the tracepoints' ids, which
 * only tracefs shows (/sys/kernel/tracing, or debugfs's tracing/): libvmon
 * never mounts anything, so without tracefs this backend says so and the
 * next one is tried.  perf_event_open() on tracepoints needs CAP_PERFMON
 * (or kernel.perf_event_paranoid of -1).
 *
 * CPU hotplug: a CPU's events die with it when it goes offline, silently,
 * and do not come back with it.  So each read looks at the CPUs online
 * (/sys/devices/system/cpu/online, held open) and watches a CPU that came
 * online, and once a second asks each CPU's first event whether its enabled
 * time still runs: a CPU that went offline and came back between two reads
 * (a suspend and resume does that to every CPU but the first) has a frozen
 * one, and is watched again.  What happened on a CPU before it was watched
 * is counted lost, which makes the next pass list /proc.
 *
 * What it fills: pid, tid, ppid (the forking process; unknown after
 * CLONE_PARENT), comm, the path of an exec (and its name, the path's last
 * component, as the kernel names it), the exit status as above.  The start
 * time is derived from the fork's time (a tick off at most, until /proc
 * is read); an exec's arguments are read from /proc when the ring is read,
 * as netlink's are; no CPU times, faults or peak RSS.
 *
 * Each read takes what every ring holds and sorts it by time (the samples
 * are stamped with CLOCK_MONOTONIC, made CLOCK_BOOTTIME); feed.c copes with an event that another
 * CPU's ring had not yet received.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "feed/feed.h"
#include "util/clock.h"

#define PERF_DEFAULT_BUFFER	(8u << 20)	/* over all CPUs */
#define PERF_BYTES_PER_EVENT	96

static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

enum perf_tp {
	TP_NEWTASK,
	TP_EXEC,
	TP_EXIT,
	TP_EXIT_GROUP,
	TP_EXIT_THREAD,
	TP_NR
};

/* where a field of a tracepoint's raw record is, from its format file */
typedef struct perf_field {
	int	offset;		/* -1: the kernel has no such field */
	int	size;
} perf_field_t;

static const struct perf_tp_desc {
	const char	*path;		/* under events/ */
	bool		required;
	const char	*fields[3];
} tp_descs[TP_NR] = {
	[TP_NEWTASK]	= { "task/task_newtask", true, { "pid", "comm", "clone_flags" } },
	[TP_EXEC]	= { "sched/sched_process_exec", true, { "filename", "old_pid", NULL } },
	[TP_EXIT]	= { "sched/sched_process_exit", true, { "comm", "group_dead", NULL } },
	[TP_EXIT_GROUP]	= { "syscalls/sys_enter_exit_group", false, { "error_code", NULL, NULL } },
	[TP_EXIT_THREAD] = { "syscalls/sys_enter_exit", false, { "error_code", NULL, NULL } },
};

/* an event of a CPU; the CPU's first one maps the ring its others write to as well */
typedef struct perf_ring {
	int				fd;	/* -1: not open */
	struct perf_event_mmap_page	*meta;	/* the first's: the ring, NULL for the others */
	char				*data;
	size_t				size;	/* of data: a power of two */
	unsigned long long		lost_seen;	/* the event's lost samples counted so far */
} perf_ring_t;

/* one sample, parsed, until the merge */
typedef struct perf_item {
	unsigned long long	time;
	size_t			seq;
	int			tp;
	int			pid, tid;	/* the sample's: the current task's tgid and tid */
	int			child;		/* newtask: the new task's id */
	int			old_pid;	/* exec */
	int			group_dead;	/* exit: 1, 0, -1 when the kernel does not say */
	unsigned long long	clone_flags;
	long long		code;		/* exit syscalls */
	char			comm[16];
	size_t			path_off, path_len;	/* exec: in perf->paths */
} perf_item_t;

/*
 * An exit status seen at exit(2) or exit_group(2), until the process's exit.
 * Without exit_group(2), wait(2) reports the status of the thread that
 * ended the process last: the leader's own exit(2) (a pthread_exit()) is
 * the process's only if no thread ran on, and each later thread's exit(2)
 * takes over.  When a signal kills the threads that ran on, wait(2)
 * reports the signal, which no tracepoint here carries: the last exit(2)
 * is then not the last thread's, and no status is given.
 */
typedef struct perf_status {
	int	status;
	bool	group;	/* exit_group(2): the whole process's, whoever exits last */
	int	ender;	/* the thread whose exit(2) came last */
} perf_status_t;

typedef struct perf_feed {
	int		tp_id[TP_NR];		/* -1: not available */
	perf_field_t	field[TP_NR][3];
	perf_ring_t	*rings;			/* [cpus * TP_NR]: CPU c's events from c * TP_NR */
	int		cpus;			/* the CPUs the machine can have */
	size_t		ring_size;		/* of each CPU's ring's data */
	int		epoll_fd;
	long		page_size;
	perf_item_t	*items;
	size_t		items_nr, items_cap;
	buf_t	paths;
	bool		lost_count;		/* read() says how many samples a full ring lost (Linux 6.0) */
	char		record[65536];		/* a record that wraps around its ring, made whole */
	pidmap_t	statuses;		/* tgid -> perf_status_t */

	/* CPU hotplug (see the top of this file) */
	int		online_fd;		/* /sys/devices/system/cpu/online, -1 if it cannot be read */
	char		online[256];		/* its text at the last look */
	double		alive_checked;		/* CLOCK_MONOTONIC seconds of the last check */
	struct perf_alive {
		unsigned long long	enabled_ns;	/* the CPU's first event's enabled time */
		double			at;		/* ... read at this CLOCK_MONOTONIC time, 0: not known */
	}		*alive;			/* [cpus] */
} perf_feed_t;

/* --- tracefs --- */

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* "\tfield:unsigned long clone_flags;\toffset:32;\tsize:8;\tsigned:0;" */
static void parse_format(const char *text, const char *const names[3], perf_field_t fields[3])
{
	for (int i = 0; i < 3; i++)
		fields[i].offset = -1;
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *f = strstr(line, "field:"), *semi, *name, *off, *size, *eol = strchr(line, '\n');

		if (!f || (eol && f > eol))
			continue;
		semi = strchr(f, ';');
		off = strstr(f, "offset:");
		size = strstr(f, "size:");
		if (!semi || !off || !size || (eol && size > eol))
			continue;
		/* the name is the last word before the ';', without an array's [n] */
		name = semi;
		while (name > f && name[-1] != ' ' && name[-1] != '\t')
			name--;
		for (int i = 0; i < 3; i++) {
			size_t len = strcspn(name, "[;");

			if (names[i] && strlen(names[i]) == len && strncmp(name, names[i], len) == 0) {
				fields[i].offset = atoi(off + 7);
				fields[i].size = atoi(size + 5);
			}
		}
	}
}

/* the tracepoints' ids and field offsets, or why not */
static int find_tracepoints(perf_feed_t *p, char *why, size_t why_size)
{
	char path[256], text[8192];
	const char *root = NULL, *denied = NULL;

	for (size_t r = 0; r < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]) && !root; r++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", tracefs_roots[r], tp_descs[TP_EXEC].path);
		if (access(path, R_OK) == 0)
			root = tracefs_roots[r];
		else if (errno == EACCES && !denied)
			denied = tracefs_roots[r];
	}
	if (!root && denied) {
		snprintf(why, why_size, "the tracepoint ids under %s are for root only", denied);
		return -1;
	}
	if (!root) {
		snprintf(why, why_size, "tracefs is not mounted (no %s/events), and only it gives the tracepoint ids; "
			 "libvmon mounts nothing (mount -t tracefs nodev %s)", tracefs_roots[0], tracefs_roots[0]);
		return -1;
	}
	for (int t = 0; t < TP_NR; t++) {
		p->tp_id[t] = -1;
		snprintf(path, sizeof(path), "%s/events/%s/id", root, tp_descs[t].path);
		if (read_small(path, text, sizeof(text)) > 0)
			p->tp_id[t] = atoi(text);
		snprintf(path, sizeof(path), "%s/events/%s/format", root, tp_descs[t].path);
		if (p->tp_id[t] >= 0 && read_small(path, text, sizeof(text)) > 0) {
			parse_format(text, tp_descs[t].fields, p->field[t]);
		} else if (tp_descs[t].required) {
			snprintf(why, why_size, "cannot read the tracepoint %s under %s: %s", tp_descs[t].path, root,
				 errno == EACCES ? "permission denied (tracefs is for root)" : strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* --- rings --- */

/*
 * Every sample wakes a reader that waits: like the proc connector, perf
 * carries no arguments, and they can only be read from /proc while the new
 * program runs.  A reader that is busy anyway pays little for it.
 */
static int perf_open_event(int id, int cpu, bool lost_count)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (unsigned long long)id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	/* CLOCK_BOOTTIME is refused (not NMI-safe); perf_drain() adds the time spent suspended */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	/*
	 * Every record wakes the reader: perf has no time-based wakeup, and
	 * wakeup_events or a watermark fixed at open would hold the last
	 * records of a burst until more came (the kernel cannot change them
	 * later).  The perf and netlink paths read exec names from /proc at
	 * once in any case, which wants the reader prompt.
	 */
	attr.wakeup_events = 1;
	/* read(): the count, the enabled time (frozen once the CPU went offline), the samples lost */
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | (lost_count ? PERF_FORMAT_LOST : 0);
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* what read() of an event gives: its enabled time and lost samples (0 without PERF_FORMAT_LOST); -1 on failure */
static int event_read(const perf_feed_t *p, int fd, unsigned long long *enabled_ns, unsigned long long *lost)
{
	unsigned long long v[3] = { 0, 0, 0 };
	size_t size = p->lost_count ? sizeof(v) : 2 * sizeof(v[0]);

	if (read(fd, v, size) != (ssize_t)size)
		return -1;
	*enabled_ns = v[1];
	*lost = v[2];
	return 0;
}

/* the CPU's ring (its first event), or NULL when it is not watched */
static perf_ring_t *cpu_ring(const perf_feed_t *p, int cpu)
{
	for (int t = 0; t < TP_NR; t++) {
		if (p->rings[cpu * TP_NR + t].meta)
			return &p->rings[cpu * TP_NR + t];
	}
	return NULL;
}

/*
 * Is the CPU's first event enabled as long as the clock ran since the last
 * look (with 50 ms of slack for the two clocks and the reads)?  Its
 * enabled time stops when the CPU goes offline, and the event does not
 * come back with the CPU.  The first look only notes where it is.
 */
static bool cpu_alive(perf_feed_t *p, int cpu, double now)
{
	struct perf_alive *a = &p->alive[cpu];
	perf_ring_t *ring = cpu_ring(p, cpu);
	unsigned long long enabled, lost;
	bool alive;

	if (!ring || event_read(p, ring->fd, &enabled, &lost) < 0)
		return true;	/* (cannot tell) */
	alive = !a->at || (double)(enabled - a->enabled_ns) + 50e6 >= (now - a->at) * 1e9;
	a->enabled_ns = enabled;
	a->at = now;
	return alive;
}

/* stop watching a CPU: its events closed, its ring unmapped (what it held must have been read) */
static void cpu_unwatch(perf_feed_t *p, int cpu)
{
	for (int t = 0; t < TP_NR; t++) {
		perf_ring_t *r = &p->rings[cpu * TP_NR + t];

		if (r->meta) {
			epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, r->fd, NULL);
			munmap(r->meta, r->size + (size_t)p->page_size);
		}
		if (r->fd >= 0)
			close(r->fd);
		memset(r, 0, sizeof(*r));
		r->fd = -1;
	}
	p->alive[cpu].at = 0;
}

/*
 * Watch a CPU: an event per tracepoint, all writing into the first one's
 * ring.  0; 1 when the CPU is offline (nothing is left open); -1 with why.
 */
static int cpu_watch(perf_feed_t *p, int cpu, char *why, size_t why_size)
{
	perf_ring_t *ring = NULL;

	for (int t = 0; t < TP_NR; t++) {
		perf_ring_t *slot = &p->rings[cpu * TP_NR + t];
		int fd;

		if (p->tp_id[t] < 0)
			continue;
		fd = perf_open_event(p->tp_id[t], cpu, p->lost_count);
		if (fd < 0 && errno == EINVAL && p->lost_count) {
			/* an older kernel: PERF_RECORD_LOST records, which come late, will do */
			p->lost_count = false;
			fd = perf_open_event(p->tp_id[t], cpu, false);
		}
		if (fd < 0) {
			int err = errno;

			cpu_unwatch(p, cpu);
			if (err == ENODEV)
				return 1;	/* offline */
			if (err == EACCES || err == EPERM)
				snprintf(why, why_size, "perf_event_open() on tracepoints was refused (%s): it needs CAP_PERFMON, "
					 "or kernel.perf_event_paranoid -1", strerror(err));
			else
				snprintf(why, why_size, "perf_event_open(%s) failed: %s", tp_descs[t].path, strerror(err));
			errno = err;
			return -1;
		}
		slot->fd = fd;
		if (!ring) {
			struct epoll_event ev = { .events = EPOLLIN };
			void *base = mmap(NULL, p->ring_size + (size_t)p->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

			if (base == MAP_FAILED) {
				snprintf(why, why_size, "cannot map a perf ring of %zu bytes: %s", p->ring_size, strerror(errno));
				goto fail;
			}
			ring = slot;
			ring->meta = base;
			ring->data = (char *)base + p->page_size;
			ring->size = p->ring_size;
			ev.data.ptr = ring;
			if (epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
				snprintf(why, why_size, "epoll: %s", strerror(errno));
				goto fail;
			}
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0) {
			snprintf(why, why_size, "cannot share a perf ring between events: %s", strerror(errno));
			goto fail;
		}
	}
	cpu_alive(p, cpu, vclock_secs(CLOCK_MONOTONIC));	/* where its enabled time starts */
	return 0;
fail:
	{
		int err = errno;

		cpu_unwatch(p, cpu);
		errno = err;
	}
	return -1;
}



static void perf_close(feed_t *feed)
{
	perf_feed_t *p = feed_priv(feed);
	size_t pos;

	if (!p)
		return;
	for (int cpu = 0; p->rings && p->alive && cpu < p->cpus; cpu++)
		cpu_unwatch(p, cpu);
	if (p->epoll_fd >= 0)
		close(p->epoll_fd);
	if (p->online_fd >= 0)
		close(p->online_fd);
	free(p->rings);
	free(p->alive);
	pidmap_for_each(&p->statuses, pos)
		free(pidmap_node_at(&p->statuses, pos));
	pidmap_fini(&p->statuses);
	free(p->items);
	buf_free(&p->paths);
	free(p);
	feed_set_priv(feed, NULL);
}

static int perf_open(vmon_t *vmon, feed_t *feed, size_t *buffer_bytes, size_t *capacity, char *why, size_t why_size)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	size_t per_cpu, size;
	perf_feed_t *p;
	bool watching = false;

	(void)vmon;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	feed_set_priv(feed, p);
	p->epoll_fd = -1;
	p->online_fd = -1;
	p->page_size = sysconf(_SC_PAGESIZE);
	p->lost_count = true;
	if (pidmap_init(&p->statuses) < 0 || find_tracepoints(p, why, why_size) < 0)
		goto fail;
	if (cpus < 1)
		cpus = 1;
	per_cpu = (*buffer_bytes ? *buffer_bytes : PERF_DEFAULT_BUFFER) / (size_t)cpus;
	for (size = (size_t)p->page_size; size < per_cpu && size < ((size_t)1 << 28); size <<= 1)
		;
	p->ring_size = size;
	*buffer_bytes = size * (size_t)cpus;	/* one ring a CPU, its tracepoints' events all in it */
	p->cpus = (int)cpus;
	p->rings = calloc((size_t)cpus * TP_NR, sizeof(*p->rings));
	p->alive = calloc((size_t)cpus, sizeof(*p->alive));
	for (int i = 0; p->rings && i < p->cpus * TP_NR; i++)
		p->rings[i].fd = -1;
	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!p->rings || !p->alive || p->epoll_fd < 0) {
		snprintf(why, why_size, "%s", strerror(errno));
		goto fail;
	}
	/* the CPUs online now, as hotplug_check() will compare them (read before the events open) */
	p->online_fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (p->online_fd >= 0) {
		ssize_t n = pread(p->online_fd, p->online, sizeof(p->online) - 1, 0);

		p->online[n > 0 ? n : 0] = '\0';
	}
	for (int cpu = 0; cpu < p->cpus; cpu++) {
		int r = cpu_watch(p, cpu, why, why_size);

		if (r < 0)
			goto fail;
		watching |= r == 0;
	}
	if (!watching) {
		snprintf(why, why_size, "no CPU to watch");
		goto fail;
	}
	*capacity = size / PERF_BYTES_PER_EVENT;
	return 0;

fail:
	perf_close(feed);
	return -1;
}

static int perf_fd(const feed_t *feed)
{
	const perf_feed_t *p = feed_priv(feed);

	return p->epoll_fd;
}

/* --- reading --- */

static unsigned long long raw_uint(const char *raw, size_t raw_size, perf_field_t f)
{
	unsigned long long v = 0;

	if (f.offset < 0 || f.size <= 0 || f.size > 8 || (size_t)f.offset + (size_t)f.size > raw_size)
		return 0;
	/* little or big endian: copy into the low bytes the way the host lays a number out */
	switch (f.size) {
	case 1: { unsigned char x; memcpy(&x, raw + f.offset, 1); v = x; break; }
	case 2: { unsigned short x; memcpy(&x, raw + f.offset, 2); v = x; break; }
	case 4: { unsigned int x; memcpy(&x, raw + f.offset, 4); v = x; break; }
	case 8: memcpy(&v, raw + f.offset, 8); break;
	default: break;
	}
	return v;
}

static perf_item_t *new_item(perf_feed_t *p)
{
	if (p->items_nr == p->items_cap) {
		size_t cap = p->items_cap ? p->items_cap * 2 : 1024;
		perf_item_t *v = realloc(p->items, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->items = v;
		p->items_cap = cap;
	}
	memset(&p->items[p->items_nr], 0, sizeof(p->items[0]));
	p->items[p->items_nr].seq = p->items_nr;
	return &p->items[p->items_nr++];
}

/* one PERF_RECORD_SAMPLE: pid, tid, time, raw */
static void parse_sample(feed_t *feed, perf_feed_t *p, const char *rec, size_t len)
{
	const char *raw;
	unsigned int pid_tid[2], raw_size;
	unsigned long long time;
	unsigned short type;
	perf_item_t *it;
	int tp = -1;

	if (len < sizeof(struct perf_event_header) + 8 + 8 + 4)
		return;
	rec += sizeof(struct perf_event_header);
	memcpy(pid_tid, rec, 8);
	memcpy(&time, rec + 8, 8);
	memcpy(&raw_size, rec + 16, 4);
	raw = rec + 20;
	if (20 + sizeof(struct perf_event_header) + (size_t)raw_size > len || raw_size < 8)
		return;
	memcpy(&type, raw, 2);	/* common_type: the tracepoint's id */
	for (int t = 0; t < TP_NR; t++) {
		if (p->tp_id[t] == (int)type)
			tp = t;
	}
	if (tp < 0)
		return;
	it = new_item(p);
	if (!it) {
		feed_lost(feed, 1);
		return;
	}
	it->time = time;
	it->tp = tp;
	it->pid = (int)pid_tid[0];
	it->tid = (int)pid_tid[1];
	switch (tp) {
	case TP_NEWTASK: {
		perf_field_t comm = p->field[tp][1];

		it->child = (int)raw_uint(raw, raw_size, p->field[tp][0]);
		it->clone_flags = raw_uint(raw, raw_size, p->field[tp][2]);
		if (comm.offset >= 0 && (size_t)comm.offset + sizeof(it->comm) <= raw_size)
			memcpy(it->comm, raw + comm.offset, sizeof(it->comm) - 1);
		break;
	}
	case TP_EXEC: {
		/* __data_loc: the string's offset in the low 16 bits, its length in the high 16 */
		unsigned long long loc = raw_uint(raw, raw_size, p->field[tp][0]);
		size_t off = loc & 0xffff, slen = (loc >> 16) & 0xffff;

		it->old_pid = (int)raw_uint(raw, raw_size, p->field[tp][1]);
		if (off + slen <= raw_size && buf_reserve(&p->paths, p->paths.len + slen + 1) == 0) {
			it->path_off = p->paths.len;
			it->path_len = strnlen(raw + off, slen);
			memcpy(p->paths.data + p->paths.len, raw + off, it->path_len);
			p->paths.len += it->path_len;
			p->paths.data[p->paths.len++] = '\0';
		}
		break;
	}
	case TP_EXIT: {
		perf_field_t comm = p->field[tp][0], dead = p->field[tp][1];

		if (comm.offset >= 0 && (size_t)comm.offset + sizeof(it->comm) <= raw_size)
			memcpy(it->comm, raw + comm.offset, sizeof(it->comm) - 1);
		it->group_dead = dead.offset >= 0 ? raw_uint(raw, raw_size, dead) != 0 : -1;
		break;
	}
	default:
		it->code = (long long)raw_uint(raw, raw_size, p->field[tp][0]);
		break;
	}
}

/* read one CPU's ring; true if it was full enough to have lost samples */
static bool read_ring(feed_t *feed, perf_feed_t *p, perf_ring_t *ring)
{
	unsigned long long head = __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
	unsigned long long tail = ring->meta->data_tail;
	/* a sample is dropped only when it does not fit: the ring was then within a record of full */
	bool near_full = head - tail + sizeof(p->record) >= ring->size;

	while (tail < head) {
		struct perf_event_header h;
		size_t at = (size_t)(tail & (ring->size - 1));
		const char *rec;

		if (at + sizeof(h) <= ring->size) {
			memcpy(&h, ring->data + at, sizeof(h));
		} else {
			size_t first = ring->size - at;

			memcpy(&h, ring->data + at, first);
			memcpy((char *)&h + first, ring->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (at + h.size <= ring->size) {
			rec = ring->data + at;
		} else {
			size_t first = ring->size - at;

			memcpy(p->record, ring->data + at, first);
			memcpy(p->record + first, ring->data, h.size - first);
			rec = p->record;
		}
		if (h.type == PERF_RECORD_SAMPLE) {
			parse_sample(feed, p, rec, h.size);
		} else if (h.type == PERF_RECORD_LOST && !p->lost_count && h.size >= sizeof(h) + 16) {
			unsigned long long lost;

			memcpy(&lost, rec + sizeof(h) + 8, 8);
			feed_lost(feed, lost);
		}
		tail += h.size;
	}
	__atomic_store_n(&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
	return near_full;
}

static int item_cmp(const void *a, const void *b)
{
	const perf_item_t *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void status_set(perf_feed_t *p, int tgid, int tid, int status, bool group)
{
	perf_status_t *s = pidmap_get(&p->statuses, tgid);

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || pidmap_put(&p->statuses, tgid, s) < 0) {
			free(s);
			return;
		}
	} else if (s->group && !group) {
		return;	/* the group's status stands */
	}
	s->status = status;
	s->group = group;
	s->ender = tid;
}

static void status_drop(perf_feed_t *p, int tgid)
{
	perf_status_t *s = pidmap_get(&p->statuses, tgid);

	if (s) {
		pidmap_del(&p->statuses, tgid, s);
		free(s);
	}
}

/* one merged sample into the feed's queue; 1 if it made an event */
static int push_item(vmon_t *vmon, feed_t *feed, perf_feed_t *p, const perf_item_t *it)
{
	feed_event_t *e;
	perf_status_t *s;

	switch (it->tp) {
	case TP_NEWTASK:
		if (it->clone_flags & CLONE_THREAD)
			return 0;
		status_drop(p, it->child);	/* a pid reused: nothing of the old process applies */
		e = feed_push(feed, VMON_EVENT_FORK);
		if (!e)
			return 0;
		e->ev.pid = e->ev.tid = it->child;
		e->ev.start = feed_ns_to_ticks(feed, it->time);
		e->ev.has = VMON_EVENT_HAS_START_APPROX | VMON_EVENT_HAS_COMM;
		if (!(it->clone_flags & CLONE_PARENT)) {
			e->ev.ppid = it->pid;
			e->ev.has |= VMON_EVENT_HAS_PPID;
		}
		memcpy(e->ev.comm, it->comm, sizeof(e->ev.comm));
		break;
	case TP_EXEC: {
		const char *path = p->paths.data ? p->paths.data + it->path_off : "";
		const char *base = strrchr(path, '/');

		e = feed_push(feed, VMON_EVENT_EXEC);
		if (!e)
			return 0;
		e->ev.pid = it->pid;
		e->ev.tid = it->old_pid;
		feed_read_exec(vmon, feed, e, path, it->path_len);
		if (!(e->ev.has & VMON_EVENT_HAS_COMM)) {
			/* gone already: the kernel named it after its path's last component */
			snprintf(e->ev.comm, sizeof(e->ev.comm), "%s", base ? base + 1 : path);
			e->ev.has |= VMON_EVENT_HAS_COMM;
		}
		break;
	}
	case TP_EXIT:
		if (it->group_dead == 0 || (it->group_dead < 0 && it->tid != it->pid))
			return 0;	/* a thread's exit */
		e = feed_push(feed, VMON_EVENT_EXIT);
		if (!e)
			return 0;
		e->ev.pid = it->pid;
		e->ev.tid = it->tid;
		/* without group_dead, a leader's exit may leave threads behind: feed.c asks /proc */
		e->check_alive = it->group_dead < 0;
		s = pidmap_get(&p->statuses, it->pid);
		if (s && (s->group || s->ender == it->tid)) {
			e->ev.exit_status = s->status;
			e->ev.has |= VMON_EVENT_HAS_EXIT_STATUS;
		}
		status_drop(p, it->pid);
		break;
	case TP_EXIT_GROUP:
		status_set(p, it->pid, it->tid, (int)((it->code & 0xff) << 8), true);
		return 0;
	case TP_EXIT_THREAD:
		/*
		 * The leader's exit(2), or another thread's after it (before it,
		 * the leader still runs and will end last): the process's status
		 * if this thread is the last, unless the group's is set.
		 */
		if (it->tid == it->pid || pidmap_get(&p->statuses, it->pid))
			status_set(p, it->pid, it->tid, (int)((it->code & 0xff) << 8), false);
		return 0;
	default:
		return 0;
	}
	e->ev.time_ns = it->time;
	return 1;
}

/* is the CPU in a list of ranges as the kernel writes them ("0-3,5,7-8")? */
static bool cpu_listed(const char *list, int cpu)
{
	const char *p = list, *end = list + strlen(list);

	while (p < end) {
		unsigned long long lo, hi;

		if (!parse_ull(&p, end, &lo))
			return false;
		hi = lo;
		if (*p == '-' && (p++, !parse_ull(&p, end, &hi)))
			return false;
		if ((unsigned long long)cpu >= lo && (unsigned long long)cpu <= hi)
			return true;
		if (*p != ',')
			return false;
		p++;
	}
	return false;
}

/* watch the CPU again (or for the first time): what it did meanwhile is lost */
static void cpu_rewatch(feed_t *feed, perf_feed_t *p, int cpu)
{
	char why[256];

	if (cpu_ring(p, cpu)) {
		read_ring(feed, p, cpu_ring(p, cpu));
		cpu_unwatch(p, cpu);
	}
	if (cpu_watch(p, cpu, why, sizeof(why)) < 0)
		p->online[0] = '\0';	/* (out of fds, say) the next read tries again */
	feed_lost(feed, 0);
}

/*
 * CPUs that came online are watched, and those that went offline let go
 * (what their rings hold read first).  Once a second, a CPU whose events
 * were not enabled all the while (cpu_alive()) went offline and came back
 * since the last look, or the list of CPUs would have said so: it is
 * watched again.
 */
static void hotplug_check(feed_t *feed, perf_feed_t *p)
{
	char online[sizeof(p->online)];
	double now;
	ssize_t n;

	if (p->online_fd < 0)
		return;
	n = pread(p->online_fd, online, sizeof(online) - 1, 0);
	if (n <= 0)
		return;
	online[n] = '\0';
	if (strcmp(online, p->online) != 0) {
		memcpy(p->online, online, sizeof(online));
		for (int cpu = 0; cpu < p->cpus; cpu++) {
			perf_ring_t *ring = cpu_ring(p, cpu);
			bool up = cpu_listed(online, cpu);

			if (up && !ring) {
				cpu_rewatch(feed, p, cpu);
			} else if (!up && ring) {
				read_ring(feed, p, ring);
				cpu_unwatch(p, cpu);
			}
		}
	}
	now = vclock_secs(CLOCK_MONOTONIC);
	if (now - p->alive_checked < 1.0)
		return;
	p->alive_checked = now;
	for (int cpu = 0; cpu < p->cpus; cpu++) {
		if (!cpu_alive(p, cpu, now))
			cpu_rewatch(feed, p, cpu);
	}
}

static int perf_drain(vmon_t *vmon, feed_t *feed)
{
	perf_feed_t *p = feed_priv(feed);
	unsigned long long offset_ns = feed_boottime_offset_ns();
	bool near_full = false;
	int n = 0;

	p->items_nr = 0;
	p->paths.len = 0;
	hotplug_check(feed, p);
	for (int i = 0; i < p->cpus * TP_NR; i++) {
		if (p->rings[i].meta)
			near_full |= read_ring(feed, p, &p->rings[i]);
	}
	if (p->lost_count && near_full) {
		/*
		 * A full ring writes its PERF_RECORD_LOST only once there is room
		 * again, after we read; the events' own counters know at once.
		 * They cost a read() each, so only when a ring came near full.
		 */
		for (int i = 0; i < p->cpus * TP_NR; i++) {
			perf_ring_t *r = &p->rings[i];
			unsigned long long enabled, lost;

			if (r->fd < 0 || event_read(p, r->fd, &enabled, &lost) < 0)
				continue;
			if (lost > r->lost_seen)
				feed_lost(feed, lost - r->lost_seen);
			r->lost_seen = lost;
		}
	}
	if (p->items_nr > 1)
		qsort(p->items, p->items_nr, sizeof(*p->items), item_cmp);
	for (size_t i = 0; i < p->items_nr; i++) {
		p->items[i].time += offset_ns;
		n += push_item(vmon, feed, p, &p->items[i]);
	}
	return n;
}

const feed_backend_t feed_perf_backend = {
	.name	= "perf",
	.id	= VMON_FEED_PERF,
	.open	= perf_open,
	.drain	= perf_drain,
	.fd	= perf_fd,
	.close	= perf_close,
};
