/*
 * test_feed.c: the event feed's API, whatever the backend: choosing one
 * (attr, VMON_FEED, a fixture root), falling back with a reason when the
 * preferred ones are refused, the event callback, the pollable fd, the
 * explicit (non-PROC_ALL) mode and the listing that a healthy feed saves.
 * The backends' own behaviour is in test_feed_backend.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include "feedtest.h"
#include "vmon_log.h"

static vmon_feed_backend_t backend_of(vmon_t *vmon)
{
	vmon_feed_stats_t st;

	assert_int_equal(vmon_feed_get_stats(vmon, &st), 0);
	return st.backend;
}

static bool init_with(vmon_t *vmon, const char *feed, vmon_flags_t flags)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = flags;
	attr.proc_wants = VMON_WANT_PROC_STAT;
	attr.feed = feed;
	return vmon_init_attr(vmon, &attr);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(vmon_feed_backend_name(VMON_FEED_NONE), "none");
	assert_string_equal(vmon_feed_backend_name(VMON_FEED_EBPF), "ebpf");
	assert_string_equal(vmon_feed_backend_name(VMON_FEED_PERF), "perf");
	assert_string_equal(vmon_feed_backend_name(VMON_FEED_NETLINK), "netlink");
	errno = 0;
	assert_null(vmon_feed_backend_name(VMON_FEED_BACKEND_NR));
	assert_int_equal(errno, EINVAL);
}

static void test_none(void **state)
{
	vmon_feed_stats_t st;
	vmon_t vmon;

	(void)state;
	assert_true(init_with(&vmon, "none", VMON_FLAG_PROC_ALL));
	assert_int_equal(backend_of(&vmon), VMON_FEED_NONE);
	assert_string_equal(vmon_feed_reason(&vmon), "");
	errno = 0;
	assert_int_equal(vmon_feed_fd(&vmon), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(vmon_feed_timeout(&vmon), -1);
	assert_int_equal(vmon_feed_process(&vmon), 0);
	for (int i = 0; i < 3; i++)
		assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	assert_int_equal(st.reconciles, 0);	/* polling lists /proc every pass; that is no reconcile */
	assert_int_equal(st.events[VMON_EVENT_FORK] + st.events[VMON_EVENT_EXEC] + st.events[VMON_EVENT_EXIT], 0);
	vmon_destroy(&vmon);
}

static void test_bad_spec(void **state)
{
	vmon_t vmon;

	(void)state;
	errno = 0;
	assert_false(init_with(&vmon, "netlink,ebfp", VMON_FLAG_PROC_ALL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vmon_feed_get_stats(&vmon, &(vmon_feed_stats_t){ 0 }), -1);
}

static void test_env(void **state)
{
	vmon_t vmon;

	(void)state;
	/* a typo in the environment is the user's: say so, and carry on with the default order */
	setenv("VMON_FEED", "netlnk", 1);
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	assert_non_null(strstr(vmon_feed_reason(&vmon), "VMON_FEED: unknown backend \"netlnk\""));
	vmon_destroy(&vmon);

	setenv("VMON_FEED", "none", 1);
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	assert_int_equal(backend_of(&vmon), VMON_FEED_NONE);
	vmon_destroy(&vmon);

	setenv("VMON_FEED", "netlink", 1);
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	assert_int_equal(backend_of(&vmon), VMON_FEED_NETLINK);
	vmon_destroy(&vmon);

	/* the caller's choice wins over the environment's */
	assert_true(init_with(&vmon, "none", VMON_FLAG_PROC_ALL));
	assert_int_equal(backend_of(&vmon), VMON_FEED_NONE);
	vmon_destroy(&vmon);
	unsetenv("VMON_FEED");
}

static void test_fixture_root(void **state)
{
	static const char *const argv[] = { "/sbin/init", NULL };
	fixture_t fx;
	vmon_t vmon;

	(void)state;
	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, NULL, 'S', 5, argv);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_int_equal(backend_of(&vmon), VMON_FEED_NONE);
	assert_non_null(strstr(vmon_feed_reason(&vmon), "the proc root is not a procfs"));
	assert_true(vmon_sample(&vmon));
	assert_non_null(vmon_proc_lookup(&vmon, 1));
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* --- fallback: a forked child without the capabilities the tracepoint backends need --- */

static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	static const int drop[] = { CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
		unsigned idx = (unsigned)drop[i] / 32, bit = 1u << ((unsigned)drop[i] % 32);

		data[idx].effective &= ~bit;
		data[idx].permitted &= ~bit;
		data[idx].inheritable &= ~bit;
	}
	return (int)syscall(SYS_capset, &hdr, data);
}

/*
 * In a forked child: prepare() (a process with less than we have), then
 * vmon_init_attr() with feed.  Returns the backend the child got; the
 * reason line comes back through a pipe.
 */
static vmon_feed_backend_t backend_in_child(int (*prepare)(void), const char *feed, char *reason, size_t size)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		vmon_t vmon;
		int code;

		close(fds[0]);
		if (prepare() < 0)
			_exit(90);
		if (!init_with(&vmon, feed, VMON_FLAG_PROC_ALL))
			_exit(91);
		if (write(fds[1], vmon_feed_reason(&vmon), strlen(vmon_feed_reason(&vmon))) < 0)
			_exit(92);
		code = (int)backend_of(&vmon);
		vmon_destroy(&vmon);
		_exit(code);
	}
	close(fds[1]);
	n = read(fds[0], reason, size - 1);
	close(fds[0]);
	reason[n > 0 ? n : 0] = '\0';
	status = reap(pid, 0);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) < VMON_FEED_BACKEND_NR);
	return (vmon_feed_backend_t)WEXITSTATUS(status);
}

static void test_fallback(void **state)
{
	char reason[600];

	(void)state;
	SKIP_IF(!is_root(), "dropping CAP_BPF and CAP_PERFMON to see the fallback needs them first");
	assert_int_equal(backend_in_child(drop_caps, "ebpf,perf,netlink", reason, sizeof(reason)), VMON_FEED_NETLINK);
	print_message("without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: \"%s\"\n", reason);
	/* one line that names each refused backend and says why */
	assert_null(strchr(reason, '\n'));
	assert_non_null(strstr(reason, "ebpf: "));
	assert_non_null(strstr(reason, "perf: "));
}

/* a private copy of the mounts, without tracefs: nobody else sees the change */
static int hide_tracefs(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	umount2("/sys/kernel/tracing", MNT_DETACH);
	umount2("/sys/kernel/debug/tracing", MNT_DETACH);
	umount2("/sys/kernel/debug", MNT_DETACH);
	return access("/sys/kernel/tracing/events", F_OK) == 0 ? -1 : 0;
}

/* without tracefs there are no tracepoint ids: perf says so, and libvmon mounts nothing */
static void test_perf_without_tracefs(void **state)
{
	char reason[600];

	(void)state;
	SKIP_IF(!is_root(), "hiding tracefs in a mount namespace of our own needs CAP_SYS_ADMIN");
	assert_int_equal(backend_in_child(hide_tracefs, "perf,netlink", reason, sizeof(reason)), VMON_FEED_NETLINK);
	print_message("without tracefs: \"%s\"\n", reason);
	assert_non_null(strstr(reason, "perf: tracefs is not mounted"));
}

static int become_nobody(void)
{
	return setgid(65534) < 0 || setuid(65534) < 0 ? -1 : 0;
}

/* the default order, as a user without privileges: the proc connector takes them */
static void test_netlink_unprivileged(void **state)
{
	char reason[600];

	(void)state;
	SKIP_IF(!is_root(), "becoming another user to test the unprivileged case needs root");
	assert_int_equal(backend_in_child(become_nobody, NULL, reason, sizeof(reason)), VMON_FEED_NETLINK);
	print_message("as nobody: \"%s\"\n", reason);
}

/*
 * A process of a pid namespace of its own whose pid is the same number in
 * the first one (clone3()'s set_tid), in 2,000 groups: the proc root's
 * self is its own pid, and only NSpid says it is nested, past the first
 * 4 KiB of its status, after the long Groups line.  The feed must not be
 * used: the kernel's events would carry the first namespace's pids.
 */
static int nested_twin(void)
{
	static gid_t groups[2000];
	struct clone_args args;
	pid_t init, tid[2];
	char *status = NULL;
	size_t len = 0;
	int code;
	FILE *f;
	long r;

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		groups[i] = (gid_t)(100000 + i);
	if (setgroups(sizeof(groups) / sizeof(groups[0]), groups) < 0 || unshare(CLONE_NEWPID) < 0)
		return -1;
	init = fork();	/* the namespace's pid 1: it lives while the namespace is needed */
	if (init == 0) {
		for (;;)
			pause();
	}
	if (init < 0)
		return -1;
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uintptr_t)tid;
	args.set_tid_size = 2;
	r = -1;
	for (int n = 1000; n < 30000 && r < 0; n += 997) {
		tid[0] = tid[1] = (getpid() + n) % 30000 + 300;
		r = syscall(SYS_clone3, &args, sizeof(args));
		if (r < 0 && errno != EEXIST)
			break;
	}
	if (r == 0) {
		/* the twin: its NSpid ("N\tN") is past the first 4 KiB of its status, or the test shows nothing */
		f = fopen("/proc/self/status", "r");
		if (!f || getdelim(&status, &len, '\0', f) < 0 || !strstr(status, "\nNSpid:") ||
		    strstr(status, "\nNSpid:") - status < 4096)
			_exit(93);
		fclose(f);
		free(status);
		return 0;
	}
	code = r < 0 ? (errno == ENOSYS ? 94 : 95) : 0;
	if (r > 0) {
		int st;

		waitpid((pid_t)r, &st, 0);
		code = WIFEXITED(st) ? WEXITSTATUS(st) : 96;
	}
	kill(init, SIGKILL);
	waitpid(init, NULL, 0);
	_exit(code);
}

static void test_nested_pid_namespace(void **state)
{
	char reason[1000];
	vmon_feed_backend_t got;

	(void)state;
	SKIP_IF(!is_root(), "a pid namespace and 2,000 groups of our own need root");
	SKIP_IF(under_valgrind(), "valgrind does not know clone3(), which makes the twin pids");
	got = backend_in_child(nested_twin, NULL, reason, sizeof(reason));
	print_message("in a nested pid namespace, with the same pid in the first: \"%s\"\n", reason);
	assert_int_equal(got, VMON_FEED_NONE);
	assert_non_null(strstr(reason, "ebpf: libvmon runs in a pid namespace of its own"));
	assert_non_null(strstr(reason, "netlink: libvmon runs in a pid namespace of its own"));
}

/*
 * A container: a pid namespace of its own with its procfs mounted on /proc,
 * in a mount namespace of its own.  Its self is its pid, its NSpid one pid:
 * only the namespace itself says that the kernel's events, which carry the
 * first namespace's pids, are not about this procfs.
 */
static int container(void)
{
	pid_t init;
	int st;

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
		return -1;
	init = fork();
	if (init == 0) {
		if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 || getpid() != 1)
			_exit(93);
		return 0;	/* its own pid 1, on with vmon_init() */
	}
	if (init < 0)
		return -1;
	waitpid(init, &st, 0);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 96);
}

static void test_container(void **state)
{
	char reason[1000];
	vmon_feed_backend_t got;

	(void)state;
	SKIP_IF(!is_root(), "a pid namespace and a procfs of our own need root");
	got = backend_in_child(container, NULL, reason, sizeof(reason));
	print_message("in a container with its own procfs: \"%s\"\n", reason);
	assert_int_equal(got, VMON_FEED_NONE);
	assert_non_null(strstr(reason, "ebpf: libvmon runs in a pid namespace of its own"));
	assert_non_null(strstr(reason, "netlink: libvmon runs in a pid namespace of its own"));
}

/* --- the event callback, the fd and the timeout --- */

typedef struct seen {
	pid_t	pid;
	int	forks, execs, exits;
	int	exit_status;
	bool	exit_has_status;
	int	ppid;
	bool	exit_proc_is_child;
	int	total;
} seen_t;

static void on_event(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	seen_t *s = arg;

	(void)vmon;
	s->total++;
	if (ev->pid != s->pid)
		return;
	switch (ev->kind) {
	case VMON_EVENT_FORK:
		s->forks++;
		s->ppid = ev->has & VMON_EVENT_HAS_PPID ? ev->ppid : -1;
		break;
	case VMON_EVENT_EXEC:
		s->execs++;
		break;
	case VMON_EVENT_EXIT:
		s->exits++;
		s->exit_has_status = ev->has & VMON_EVENT_HAS_EXIT_STATUS;
		s->exit_status = ev->exit_status;
		s->exit_proc_is_child = proc && proc->pid == s->pid && proc->has_exit_status &&
					proc->parent && proc->parent->pid == getpid();
		break;
	default:
		fail_msg("event of kind %d", ev->kind);
	}
}

static void test_callback_fd(void **state)
{
	vmon_feed_stats_t st, st0;
	seen_t seen = { 0 };
	struct pollfd pfd;
	vmon_t vmon;
	int status, got = 0;

	(void)state;
	assert_true(init_with(&vmon, "netlink", VMON_FLAG_PROC_ALL));
	SKIP_IF(backend_of(&vmon) != VMON_FEED_NETLINK, "no netlink feed: %s", vmon_feed_reason(&vmon));
	assert_int_equal(vmon_feed_set_callback(&vmon, on_event, &seen), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &st0), 0);
	seen.total = 0;

	pfd.fd = vmon_feed_fd(&vmon);
	pfd.events = POLLIN;
	assert_true(pfd.fd >= 0);
	seen.pid = feedtest_spawn("exit", 7, "callback", -1, -1);
	status = reap(seen.pid, 0);
	/* the fd wakes a poll loop; vmon_feed_process() reads the events without sampling */
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	for (int i = 0; i < 100 && got < 3; i++) {
		int n = vmon_feed_process(&vmon);

		assert_true(n >= 0);
		got += n;
		if (got < 3)
			msleep(10);
	}
	assert_true(got >= 3);
	assert_int_equal(seen.total, 0);	/* applied, and so called back, only by vmon_sample() */
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	assert_true(st.pending >= 3);
	assert_true(vmon_feed_timeout(&vmon) >= -1);

	assert_true(vmon_sample(&vmon));
	assert_int_equal(seen.forks, 1);
	assert_int_equal(seen.execs, 1);
	assert_int_equal(seen.exits, 1);
	assert_int_equal(seen.ppid, getpid());
	assert_true(seen.exit_has_status);
	assert_int_equal(seen.exit_status, status);
	assert_true(seen.exit_proc_is_child);
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	assert_true(st.events[VMON_EVENT_FORK] >= 1 && st.events[VMON_EVENT_EXIT] >= 1);
	/* one call for every event applied or ignored */
	assert_int_equal(st.applied + st.ignored - st0.applied - st0.ignored, (unsigned long long)seen.total);

	assert_int_equal(vmon_feed_set_callback(&vmon, NULL, NULL), 0);
	vmon_destroy(&vmon);
}

/*
 * vmon_feed_process() from the event callback: it changes no node
 * (vmon_feed_process(3)), so the callback may call it, and it reads enough
 * events that the queue holding the event being delivered must grow; a log
 * writer that follows the feed still writes that event whole.
 */
typedef struct drainer {
	int	calls;
	int	drained;
} drainer_t;

static int exit_at_once(void *arg)
{
	(void)arg;
	return 0;
}

static void on_event_drain(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	drainer_t *d = arg;

	(void)ev;
	(void)proc;
	if (d->calls++)
		return;
	/* a fork and an exit each: more than the 64 events the queue starts with */
	for (int i = 0; i < 700; i++)
		reap(spawn_fn(exit_at_once, NULL), 0);
	d->drained = vmon_feed_process(vmon);
}

static void test_callback_drains(void **state)
{
	drainer_t d = { 0 };
	vmon_log_writer_t *w;
	vmon_t vmon;
	int fd;

	(void)state;
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	SKIP_IF(backend_of(&vmon) == VMON_FEED_NONE, "no feed: %s", vmon_feed_reason(&vmon));
	fd = memfd_create("feedlog", MFD_CLOEXEC);
	assert_true(fd >= 0);
	w = vmon_log_writer_open(fd, &vmon);
	assert_non_null(w);
	assert_int_equal(vmon_log_writer_follow_feed(w, &vmon), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_set_callback(&vmon, on_event_drain, &d), 0);
	reap(spawn_fn(exit_at_once, NULL), 0);
	assert_true(vmon_sample(&vmon));
	assert_true(d.calls > 0);
	print_message("%s: %d events read from the callback\n", vmon_feed_backend_name(backend_of(&vmon)), d.drained);
	assert_true(d.drained > 1024);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_log_writer_close(w), 0);
	close(fd);
	vmon_destroy(&vmon);
}

/*
 * The event callback runs once the pass is done with the tree: the tree is
 * whole (every live node in its place and in the index), the event's node
 * is in it, and a call that would change the tree is refused (EBUSY).
 */
typedef struct whole {
	int	calls;
	int	with_node;
	int	refused;
} whole_t;

static bool listed_in(list_head_t *head, vmon_proc_t *proc, bool thread)
{
	vmon_proc_t *p;

	if (thread) {
		list_for_each_entry(p, head, threads) {
			if (p == proc)
				return true;
		}
	} else {
		list_for_each_entry(p, head, siblings) {
			if (p == proc)
				return true;
		}
	}
	return false;
}

/* reached from the top of the tree */
static bool in_tree(vmon_t *vmon, vmon_proc_t *proc)
{
	for (; proc->parent; proc = proc->parent) {
		if (!listed_in(proc->is_thread ? &proc->parent->threads : &proc->parent->children, proc,
			       proc->is_thread))
			return false;
	}
	return listed_in(&vmon->processes, proc, false);
}

static void on_event_whole(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	whole_t *w = arg;

	(void)ev;
	w->calls++;
	assert_tree_consistent(vmon);
	if (proc) {
		w->with_node++;
		if (!in_tree(vmon, proc))
			fail_msg("the node of pid %d's %d event is not in the tree", ev->pid, (int)ev->kind);
		assert_false(proc->is_new && proc->is_stale);
	}
	errno = 0;
	assert_int_equal(vmon_sample(vmon), 0);
	assert_int_equal(errno, EBUSY);
	errno = 0;
	assert_null(vmon_proc_monitor(vmon, getpid(), VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_int_equal(errno, EBUSY);
	w->refused++;
}

static void test_callback_tree_whole(void **state)
{
	whole_t w = { 0 };
	vmon_t vmon;

	(void)state;
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	SKIP_IF(backend_of(&vmon) == VMON_FEED_NONE, "no feed: %s", vmon_feed_reason(&vmon));
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_set_callback(&vmon, on_event_whole, &w), 0);
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 20; i++)
			reap(feedtest_spawn("exit", i, "whole", -1, -1), 0);
		assert_true(vmon_sample(&vmon));
	}
	assert_true(vmon_sample(&vmon));
	print_message("%s: %d events, %d with a node\n", vmon_feed_backend_name(backend_of(&vmon)), w.calls, w.with_node);
	assert_true(w.with_node >= 100);
	assert_int_equal(w.refused, w.calls);
	vmon_destroy(&vmon);
}

/*
 * The first sample's tree is the real one: children (and a grandchild)
 * forked and reaped between vmon_init() and the first vmon_sample() are
 * under their parents, new, gone (state X) with their exit status, stale
 * in the second sample.
 */
static int fork_grandchild(void *arg)
{
	int status = reap(feedtest_spawn("exit", 9, "grandchild", -1, -1), 0);

	(void)arg;
	return WIFEXITED(status) ? 30 : 31;
}

static void test_first_sample_tree(void **state)
{
	enum { KIDS = 5 };
	pid_t kids[KIDS], middle;
	int status[KIDS], middle_status;
	vmon_proc_t *self, *child;
	vmon_feed_stats_t st;
	vmon_t vmon;

	(void)state;
	assert_true(init_with(&vmon, NULL, VMON_FLAG_PROC_ALL));
	SKIP_IF(backend_of(&vmon) == VMON_FEED_NONE, "no feed: %s", vmon_feed_reason(&vmon));
	for (int i = 0; i < KIDS; i++) {
		kids[i] = feedtest_spawn("exit", 20 + i, "early", -1, -1);
		status[i] = reap(kids[i], 0);
	}
	middle = spawn_fn(fork_grandchild, NULL);
	middle_status = reap(middle, 0);
	assert_true(WIFEXITED(middle_status) && WEXITSTATUS(middle_status) == 30);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	SKIP_IF(st.lost, "the feed lost %llu events", st.lost);
	self = vmon_proc_lookup(&vmon, getpid());
	assert_non_null(self);
	for (int i = 0; i < KIDS; i++) {
		child = feedtest_child_node(&vmon, kids[i]);
		if (!child)
			fail_msg("child %d, forked and reaped before the first sample, is not under us", kids[i]);
		assert_true(child->is_new);
		assert_false(child->is_stale);
		assert_int_equal(feedtest_stat(child)->state, 'X');
		if (child->has_exit_status)
			assert_int_equal(child->exit_status, status[i]);
	}
	child = feedtest_child_node(&vmon, middle);
	assert_non_null(child);
	/* (the grandchild's pid is the middle one's: read it from the tree) */
	assert_int_equal(count_children(child), 1);
	assert_true(list_first_entry(&child->children, vmon_proc_t, siblings)->is_new);
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < KIDS; i++) {
		child = feedtest_child_node(&vmon, kids[i]);
		assert_non_null(child);
		assert_true(child->is_stale && !child->is_new);
	}
	vmon_destroy(&vmon);
}

/* --- explicit mode: a monitored process's children, born and dead between samples --- */

static void test_explicit_children(void **state)
{
	enum { KIDS = 20 };
	pid_t kids[KIDS];
	int status[KIDS], found = 0;
	vmon_proc_t *self;
	vmon_t vmon;

	(void)state;
	assert_true(init_with(&vmon, "netlink", VMON_FLAG_NONE));
	SKIP_IF(backend_of(&vmon) != VMON_FEED_NETLINK, "no netlink feed: %s", vmon_feed_reason(&vmon));
	self = vmon_proc_monitor(&vmon, getpid(), VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, NULL, NULL);
	assert_non_null(self);
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < KIDS; i++) {
		kids[i] = feedtest_spawn("exit", 10 + i, "explicit", -1, -1);
		status[i] = reap(kids[i], 0);
	}
	for (int waited = 0; waited < 5000 && found < KIDS; waited += 20) {
		vmon_proc_t *child;

		msleep(20);
		assert_true(vmon_sample(&vmon));
		list_for_each_entry(child, &self->children, siblings) {
			for (int i = 0; i < KIDS; i++) {
				if (child->pid != kids[i] || !child->is_stale)
					continue;
				assert_true(child->has_exit_status);
				assert_int_equal(child->exit_status, status[i]);
				found++;
			}
		}
	}
	assert_int_equal(found, KIDS);
	vmon_proc_unmonitor(&vmon, self, NULL, NULL);
	vmon_destroy(&vmon);
}

/* --- a healthy feed saves the listing, and still finds every birth --- */

static void test_no_listing(void **state)
{
	struct timespec t0, t1;
	vmon_feed_stats_t st;
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid;

	(void)state;
	assert_true(init_with(&vmon, "netlink", VMON_FLAG_PROC_ALL));
	SKIP_IF(backend_of(&vmon) != VMON_FEED_NETLINK, "no netlink feed: %s", vmon_feed_reason(&vmon));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_true(vmon_sample(&vmon));
	pid = spawn_sleeper();
	msleep(20);
	assert_true(vmon_sample(&vmon));
	assert_true(vmon_sample(&vmon));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	/*
	 * Listings after the first are counted; a loss would have caused one,
	 * and so does the one every 10 seconds (vmon_feed(7)), which three
	 * samples of the whole machine reach under valgrind on a busy one.
	 */
	if (st.lost == 0 && t1.tv_sec - t0.tv_sec < 10)
		assert_int_equal(st.reconciles, 0);
	else if (st.reconciles)
		print_message("%llu listings: %llu events lost, %lld s for three samples\n", st.reconciles, st.lost,
			      (long long)(t1.tv_sec - t0.tv_sec));
	proc = feedtest_child_node(&vmon, pid);
	assert_non_null(proc);
	assert_false(proc->is_stale);
	reap(pid, SIGKILL);
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_names, feedtest_teardown),
		cmocka_unit_test_teardown(test_none, feedtest_teardown),
		cmocka_unit_test_teardown(test_bad_spec, feedtest_teardown),
		cmocka_unit_test_teardown(test_env, feedtest_teardown),
		cmocka_unit_test_teardown(test_fixture_root, feedtest_teardown),
		cmocka_unit_test_teardown(test_fallback, feedtest_teardown),
		cmocka_unit_test_teardown(test_perf_without_tracefs, feedtest_teardown),
		cmocka_unit_test_teardown(test_netlink_unprivileged, feedtest_teardown),
		cmocka_unit_test_teardown(test_nested_pid_namespace, feedtest_teardown),
		cmocka_unit_test_teardown(test_container, feedtest_teardown),
		cmocka_unit_test_teardown(test_callback_fd, feedtest_teardown),
		cmocka_unit_test_teardown(test_callback_drains, feedtest_teardown),
		cmocka_unit_test_teardown(test_callback_tree_whole, feedtest_teardown),
		cmocka_unit_test_teardown(test_first_sample_tree, feedtest_teardown),
		cmocka_unit_test_teardown(test_explicit_children, feedtest_teardown),
		cmocka_unit_test_teardown(test_no_listing, feedtest_teardown),
	};

	/* every child dies with us, whatever happens to the test */
	setpgid(0, 0);
	return cmocka_run_group_tests_name("feed", tests, NULL, NULL);
}
