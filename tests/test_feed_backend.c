/*
 * test_feed_backend.c: the event feed on one backend, against children the
 * test spawns.  Built once per backend (FEED_BACKEND is "ebpf", "perf" or
 * "netlink"); a backend this machine or user cannot run is skipped with the
 * library's reason.
 *
 *   storm		2,000 fork+exec+exit children: each reported exactly once
 *			(new once, stale once), under the test process, with its
 *			exit status and, where the backend carries them, its name
 *			and arguments
 *   thread_exit	a thread's exit is not the process's (in the tree, and in
 *			the stream: these tests read it too)
 *   leader_first	the leader exits while another thread runs on
 *   leader_last_thread	the leader exits (pthread_exit), then the last thread
 *			by exit(2) with a code of its own: that code, as
 *			wait(2) reports it
 *   exec_thread	a thread other than the leader execs
 *   pid_reuse		a pid reused between two samples: old stale, new new
 *   exit_changed_bits,	the changed bits of the pass that applies an exit, an
 *   exec_changed_bits,	exec or a fork: what the event changed, not what the
 *   fork_changed_bits	pass before read
 *   killed		a signal ends a process: its status, where the backend has it
 *   leader_killed	the leader exits first (exit(2) of its own), then a signal
 *			ends the others: the signal's status or none, never the
 *			leader's own
 *   forced_loss	a tiny buffer and a stalled reader: the loss is counted,
 *			/proc is listed again and the tree is right after it
 *   ring_size		ebpf: the ring this process maps (/proc/self/smaps) is
 *			the size vmon_feed(7) gives as the default, and one asked
 *			for rounded up to a power of two; nothing else mapped of
 *			it (the iterator's map is not there: the /proc sampler)
 *   ring_grows_by_rate	ebpf: a storm faster than the first ring holds a
 *			quarter of a second of grows the ring for a reader that
 *			keeps up, before anything is lost; none is, every exit heard
 *   cpu_hotplug	CPU 1 offline when the feed opens, then online; and CPU 1
 *			offline and online again between two reads: a short life
 *			forked and ended on CPU 1 after the feed read again is
 *			seen, with its status (root, where CPU 1 can go offline)
 *   prompt		a child exits while the caller polls the feed's fd, after a
 *			quiet spell: the fd turns readable (the ebpf ring woke its
 *			reader only when an eighth of it was used, and this poll
 *			timed out)
 *   stream		vmon_feed_next() in a poll loop, no sample: 300 children in
 *			bursts, each one's fork, exec and exit once, in that order,
 *			the exit with the status waitpid() gave (and, where the
 *			backend has them, the arguments); vmon_feed_lookup() finds
 *			each one ended with that status; the tree sampled after
 *			agrees
 *   stream_unread	a caller that samples and never reads the stream: the
 *			stream keeps every event until it does
 *   stream_unseen	a process that began before the feed opened ends: its
 *			exit comes, with its status, and a lookup finds it
 *   aggregate		VMON_FEED_AGGREGATE: a short life is one event (fork,
 *			exec, exit); a life longer than the window comes as its
 *			fork and exec when the window ends, and its exit alone
 *   reads_not_counted	an exec read from the feed alone, no sample: its
 *			arguments come (from the program, or from /proc where
 *			the backend reads them there) and vmon_get_stats(3)'s
 *			opens and reads, the sampling's, do not move
 *   churn		two children run /bin/true in a loop, the test samples
 *			every 2 ms: every life (pid and start time, from its parent)
 *			is new once and stale once, by one node, never both at
 *			once (the records a listing or the task iterator gave
 *			before its fork event was read made a second node)
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "feedtest.h"
#include "smaps.h"

#ifndef FEED_BACKEND
#error "build with -DFEED_BACKEND=\"ebpf\" (or perf, netlink)"
#endif

/* what the backend's events carry (vmon_feed(7)) */
static bool carries_args(void)
{
	return strcmp(FEED_BACKEND, "ebpf") == 0;
}

static bool carries_exec_comm(void)
{
	return strcmp(FEED_BACKEND, "netlink") != 0;
}

/* only ebpf's exits carry the peak resident set */
static bool carries_maxrss(void)
{
	return strcmp(FEED_BACKEND, "ebpf") == 0;
}

/* perf learns a status from exit(2) and exit_group(2) only: not when a signal kills */
static bool carries_signal_status(void)
{
	return strcmp(FEED_BACKEND, "perf") != 0;
}

/* vmon with the backend's feed, flags and wants as given, or the test skipped with the reason */
static void open_flags_or_skip(vmon_t *vmon, vmon_flags_t flags, vmon_proc_wants_t wants, size_t buffer_bytes)
{
	vmon_feed_stats_t st;
	char why[600];

	if (!feedtest_open(vmon, FEED_BACKEND, flags, wants, buffer_bytes, why, sizeof(why)))
		SKIP_IF(true, "the %s backend cannot run here: %s", FEED_BACKEND, why);
	/* every backend says the size its kernel buffer has (test_ring_size checks ebpf's against its mapping) */
	assert_int_equal(vmon_feed_get_stats(vmon, &st), 0);
	assert_true(st.buffer_bytes > 0);
}

/* the common case: every process, its stat */
static void open_or_skip(vmon_t *vmon, size_t buffer_bytes)
{
	open_flags_or_skip(vmon, VMON_FLAG_PROC_ALL, VMON_WANT_PROC_STAT, buffer_bytes);
}

/*
 * What the tree lacks of a child (missing: "has no exit status"): right
 * only when the feed lost events (the kernel drops them when the reader
 * falls behind: a loaded machine, valgrind), and then it says so.
 * unchecked: what goes unchecked.
 */
static void among_lost(vmon_t *vmon, pid_t pid, const char *missing, const char *unchecked)
{
	vmon_feed_stats_t st;

	assert_int_equal(vmon_feed_get_stats(vmon, &st), 0);
	if (!st.lost)
		fail_msg("pid %d %s, and the feed lost no event", (int)pid, missing);
	print_message("the events of %d were among %llu lost: %s is not checked\n", (int)pid, st.lost, unchecked);
}

static void exit_among_lost(vmon_t *vmon, pid_t pid, const char *unchecked)
{
	among_lost(vmon, pid, "has no exit status", unchecked);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* --- the storm --- */

typedef struct kid {
	pid_t			pid;
	unsigned long long	start;
	int			code;
	int			status;		/* from waitpid() */
	bool			reaped;
	int			news, stales;
	int			reported_status;
	bool			reported_has_status;
	bool			named;		/* its stale node had its argv */
	int			ctors, dtors;
} kid_t;

static kid_t *kids;
static int kids_nr;

static kid_t *kid_find(pid_t pid, unsigned long long start)
{
	for (int i = kids_nr - 1; i >= 0; i--) {
		if (kids[i].pid == pid && start + 1 >= kids[i].start && start <= kids[i].start + 1)
			return &kids[i];
	}
	return NULL;
}

static kid_t *kid_by_pid(pid_t pid)
{
	for (int i = kids_nr - 1; i >= 0; i--) {
		if (kids[i].pid == pid)
			return &kids[i];
	}
	return NULL;
}

/*
 * A ctor may run before the node's start time is in its store (a node a
 * listing found is confirmed before its stat is parsed), so the nodes are
 * matched to our children after the sample, while every one is still there.
 */
static vmon_proc_t **ctored;
static size_t ctored_nr, ctored_cap;

static void kid_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	if (!kid_by_pid(proc->pid))
		return;
	if (ctored_nr == ctored_cap) {
		ctored_cap = ctored_cap ? ctored_cap * 2 : 256;
		ctored = realloc(ctored, ctored_cap * sizeof(*ctored));
		assert_non_null(ctored);
	}
	ctored[ctored_nr++] = proc;
}

static void kid_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_stat_t *s = feedtest_stat(proc);
	kid_t *k = s ? kid_find(proc->pid, s->start) : NULL;

	(void)vmon;
	if (k)
		k->dtors++;
	/* a node let go in the pass that made it: its ctor counts now, before its memory is another node's */
	for (size_t i = 0; i < ctored_nr; i++) {
		if (ctored[i] != proc)
			continue;
		if (k)
			k->ctors++;
		ctored[i] = ctored[--ctored_nr];
		break;
	}
}

static void ctors_match(void)
{
	for (size_t i = 0; i < ctored_nr; i++) {
		vmon_proc_stat_t *s = feedtest_stat(ctored[i]);
		kid_t *k = s ? kid_find(ctored[i]->pid, s->start) : NULL;

		if (k)
			k->ctors++;
	}
	ctored_nr = 0;
}

static void check_argv(const kid_t *k, const vmon_proc_stat_t *s)
{
	char code[16], tag[16];

	snprintf(code, sizeof(code), "%d", k->code);
	snprintf(tag, sizeof(tag), "k%d", (int)(k - kids));
	assert_int_equal(s->argc, 4);
	assert_string_equal(s->argv[0], FEED_CHILD);
	assert_string_equal(s->argv[1], "exit");
	assert_string_equal(s->argv[2], code);
	assert_string_equal(s->argv[3], tag);
}

/* after a sample: every child of ours that is new or stale in it */
static void storm_walk(vmon_t *vmon)
{
	vmon_proc_t *self = vmon_proc_lookup(vmon, getpid()), *child;

	assert_non_null(self);
	ctors_match();
	list_for_each_entry(child, &self->children, siblings) {
		vmon_proc_stat_t *s = feedtest_stat(child);
		kid_t *k;

		if (!s || !child->is_stale)
			goto check_new;
		k = kid_find(child->pid, s->start);
		if (!k)
			continue;
		k->stales++;
		/* also a life the feed alone saw: its pid is part of its last data */
		assert_true(vmon_field_present(&vmon_proc_store_descs[VMON_STORE_PROC_STAT],
					       &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_PID], s));
		assert_int_equal(s->pid, child->pid);
		k->reported_has_status = child->has_exit_status;
		k->reported_status = child->exit_status;
		if (carries_exec_comm() && strcmp(s->comm.array, "feed_child") != 0) {
			vmon_feed_stats_t st;

			vmon_feed_get_stats(vmon, &st);
			fail_msg("child %d (pid %d) stale with comm %s, not feed_child: state %c, new %d, argc %d, "
				 "exit status %s%#x; %llu events lost", (int)(k - kids), k->pid, s->comm.array, s->state,
				 child->is_new, s->argc, child->has_exit_status ? "" : "unknown ", child->exit_status, st.lost);
		}
		if (carries_args() && s->argc == 0) {
			vmon_feed_stats_t st;

			vmon_feed_get_stats(vmon, &st);
			fail_msg("child %d (pid %d) stale without its arguments: comm %s, state %c, new %d, cmdline %zu bytes, "
				 "exit status %s%#x; %llu events lost", (int)(k - kids), k->pid, s->comm.array, s->state,
				 child->is_new, s->cmdline.len, child->has_exit_status ? "" : "unknown ", child->exit_status,
				 st.lost);
		}
		if (s->argc > 0) {
			/* whoever filled them, the arguments are never wrong */
			check_argv(k, s);
			k->named = true;
		}
check_new:
		if (s && child->is_new && (k = kid_find(child->pid, s->start)))
			k->news++;
	}
}

static bool storm_done(void)
{
	for (int i = 0; i < kids_nr; i++) {
		if (!kids[i].stales)
			return false;
	}
	return true;
}

static void test_storm(void **state)
{
	int n = feedtest_scale(2000), spawned = 0, reaped = 0, alive = 0, named = 0;
	vmon_feed_stats_t st;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	vmon.proc_ctor_cb = kid_ctor;
	vmon.proc_dtor_cb = kid_dtor;
	kids = calloc((size_t)n, sizeof(*kids));
	assert_non_null(kids);
	kids_nr = 0;
	assert_true(vmon_sample(&vmon));

	while (reaped < n) {
		unsigned long long start;
		int status;
		pid_t pid;
		kid_t *k;

		while (alive < 50 && spawned < n) {
			char tag[16];

			k = &kids[spawned];
			k->code = spawned % 200;
			snprintf(tag, sizeof(tag), "k%d", spawned);
			k->pid = feedtest_spawn("exit", k->code, tag, -1, -1);
			/* alive or a zombie until we reap it: its start time is there */
			k->start = feedtest_start_of(k->pid);
			assert_true(k->start > 0);
			kids_nr = ++spawned;
			alive++;
		}
		pid = feedtest_reap_any(&start, &status);
		assert_true(pid > 0);
		k = kid_find(pid, start);
		assert_non_null(k);
		k->status = status;
		k->reaped = true;
		alive--;
		reaped++;
		if (reaped % 50 == 0)
			vmon_feed_process(&vmon);	/* as a caller's poll loop would */
		if (reaped % 500 == 0) {
			assert_true(vmon_sample(&vmon));
			storm_walk(&vmon);
		}
	}
	for (int waited = 0; waited < 20000 && !storm_done(); waited += 20) {
		assert_true(vmon_sample(&vmon));
		storm_walk(&vmon);
		if (!storm_done())
			msleep(20);
	}
	/* one more: the last stale nodes leave and their dtors run */
	assert_true(vmon_sample(&vmon));
	storm_walk(&vmon);

	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	for (int i = 0; i < n; i++) {
		kid_t *k = &kids[i];

		if (k->news != 1 || k->stales != 1 || k->ctors != 1 || k->dtors != 1)
			fail_msg("child %d (pid %d): new %d times, stale %d times, ctor %d, dtor %d (lost %llu)",
				 i, k->pid, k->news, k->stales, k->ctors, k->dtors, st.lost);
		if (!k->reported_has_status || k->reported_status != k->status)
			fail_msg("child %d (pid %d): exit status %s%#x, waitpid said %#x", i, k->pid,
				 k->reported_has_status ? "" : "unknown ", k->reported_status, k->status);
		named += k->named;
	}
	print_message("%s: %d children, all seen once with their exit status; %d named with argv; lost %llu\n",
		      FEED_BACKEND, n, named, st.lost);
	if (carries_args())
		assert_int_equal(named, n);
	free(kids);
	kids = NULL;
	kids_nr = 0;
	vmon.proc_dtor_cb = NULL;
	vmon_destroy(&vmon);
	free(ctored);
	ctored = NULL;
	ctored_nr = ctored_cap = 0;
}

/* --- threads: feed_child's thread modes --- */

typedef struct thread_kid {
	pid_t	pid;
	int	go;	/* the test closes it: the child goes on (EOF on its stdin) */
} thread_kid_t;

/* start feed_child MODE CODE and wait for its "ready" byte */
static void spawn_thread_kid(thread_kid_t *t, const char *mode, int code)
{
	int go[2], ready[2];
	char c;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	t->pid = feedtest_spawn(mode, code, NULL, go[0], ready[1]);
	close(go[0]);
	close(ready[1]);
	t->go = go[1];
	if (strcmp(mode, "exec") != 0)
		assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
}

/* sample a few times, letting the kernel's events arrive; the node must stay alive */
static vmon_proc_t *sample_alive(vmon_t *vmon, pid_t pid)
{
	vmon_proc_t *proc = NULL;

	for (int i = 0; i < 3; i++) {
		msleep(30);
		assert_true(vmon_sample(vmon));
		proc = feedtest_child_node(vmon, pid);
		assert_non_null(proc);
		assert_false(proc->is_stale);
	}
	return proc;
}

/* sample until pid's node is stale; it must be exactly once, with this status */
static void sample_exit(vmon_t *vmon, pid_t pid, int status)
{
	int stales = 0;

	for (int waited = 0; waited < 5000 && !stales; waited += 20) {
		vmon_proc_t *proc;

		assert_true(vmon_sample(vmon));
		proc = feedtest_child_node(vmon, pid);
		if (proc && proc->is_stale) {
			stales++;
			assert_true(proc->has_exit_status);
			assert_int_equal(proc->exit_status, status);
		} else {
			msleep(20);
		}
	}
	assert_int_equal(stales, 1);
	/* and never again */
	for (int i = 0; i < 3; i++) {
		vmon_proc_t *proc;

		assert_true(vmon_sample(vmon));
		proc = feedtest_child_node(vmon, pid);
		assert_true(!proc || !proc->is_stale);
		msleep(10);
	}
}

/*
 * The stream heard the same events as the tree: one exit of pid, with
 * that status (a thread's exit is not the process's there either).
 */
static void stream_exit(vmon_t *vmon, pid_t pid, int status)
{
	int exits = 0, r;
	vmon_event_t ev;

	while ((r = vmon_feed_next(vmon, &ev)) == 1) {
		if (ev.pid != pid || ev.kind != VMON_EVENT_EXIT)
			continue;
		exits++;
		assert_true(ev.has & VMON_EVENT_HAS_EXIT_STATUS);
		assert_int_equal(ev.exit_status, status);
	}
	assert_int_equal(r, 0);
	assert_int_equal(exits, 1);
}

/* the child tells the test to go on, then the test ends it and checks how it was reported */
static void end_thread_kid(vmon_t *vmon, thread_kid_t *t, int code)
{
	int status;

	close(t->go);
	status = reap(t->pid, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), code);
	sample_exit(vmon, t->pid, status);
	stream_exit(vmon, t->pid, status);
}

static void test_thread_exit(void **state)
{
	thread_kid_t t;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0), 0);
	assert_true(vmon_sample(&vmon));
	spawn_thread_kid(&t, "thread", 4);	/* a thread came and went: the process lives on */
	sample_alive(&vmon, t.pid);
	end_thread_kid(&vmon, &t, 4);
	vmon_destroy(&vmon);
}

static bool leader_is_zombie(void *arg)
{
	char name[64], buf[512], *p;
	pid_t pid = (pid_t)(intptr_t)arg;

	snprintf(name, sizeof(name), "task/%d/stat", pid);
	if (feedtest_read_proc(pid, name, buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

/*
 * A vmon on the backend, and a kid of a "leader" mode whose leader is gone while its
 * other thread runs on; sampled then, unless the test wants the leader's
 * exit and the process's to reach the library together.
 */
static void open_leader_gone(vmon_t *vmon, thread_kid_t *t, const char *mode, bool sample)
{
	open_or_skip(vmon, 0);
	assert_int_equal(vmon_feed_stream(vmon, VMON_FEED_EVENTS, 0), 0);
	assert_true(vmon_sample(vmon));
	spawn_thread_kid(t, mode, 5);
	/* the leader is gone, the other thread runs on: the process is alive */
	assert_true(wait_for(leader_is_zombie, (void *)(intptr_t)t->pid, 5000));
	if (sample)
		sample_alive(vmon, t->pid);
}

static void test_leader_first(void **state)
{
	thread_kid_t t;
	vmon_t vmon;

	(void)state;
	open_leader_gone(&vmon, &t, "leader", true);
	end_thread_kid(&vmon, &t, 5);
	vmon_destroy(&vmon);
}

/* the same, with no sample between the leader's exit and the process's: the status is the process's */
static void test_leader_first_unseen(void **state)
{
	thread_kid_t t;
	vmon_t vmon;

	(void)state;
	open_leader_gone(&vmon, &t, "leader", false);
	end_thread_kid(&vmon, &t, 5);
	vmon_destroy(&vmon);
}

/*
 * The leader leaves by pthread_exit() (exit(2), 0), the last thread by an
 * exit(2) of its own with 5: wait(2) says 5, the last thread's, and so must
 * the feed, whether the leader's exit was applied in a sample of its own
 * or with the process's.
 */
static void test_leader_last_thread(void **state)
{
	(void)state;
	for (int sample = 1; sample >= 0; sample--) {
		thread_kid_t t;
		vmon_t vmon;

		open_leader_gone(&vmon, &t, "leader-last", sample);
		end_thread_kid(&vmon, &t, 5);
		vmon_destroy(&vmon);
	}
}

/* the exec'd program runs: "feed_child wait CODE exec-from-thread" */
static bool execed_from_thread(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	char buf[256];
	ssize_t n;

	if (feedtest_read_proc(pid, "comm", buf, sizeof(buf)) <= 0 || strcmp(buf, "feed_child\n") != 0)
		return false;
	n = feedtest_read_proc(pid, "cmdline", buf, sizeof(buf));
	return n > 0 && memmem(buf, (size_t)n, "exec-from-thread", 16) != NULL;
}

static void test_exec_thread(void **state)
{
	vmon_proc_stat_t *s;
	vmon_proc_t *proc;
	thread_kid_t t;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0), 0);
	assert_true(vmon_sample(&vmon));
	spawn_thread_kid(&t, "exec", 3);
	assert_true(wait_for(execed_from_thread, (void *)(intptr_t)t.pid, 5000));
	/* the same process, a new program: alive, named and with the new arguments */
	proc = sample_alive(&vmon, t.pid);
	s = feedtest_stat(proc);
	assert_string_equal(s->comm.array, "feed_child");
	assert_int_equal(s->argc, 4);
	assert_string_equal(s->argv[1], "wait");
	assert_string_equal(s->argv[3], "exec-from-thread");
	end_thread_kid(&vmon, &t, 3);
	vmon_destroy(&vmon);
}

/* --- pid reuse --- */

static void test_pid_reuse(void **state)
{
	vmon_proc_t *self, *child, *old = NULL, *new = NULL;
	unsigned long long old_start;
	int go[2], status;
	vmon_t vmon;
	pid_t a, b;

	(void)state;
	SKIP_IF(!is_root(), "reusing a chosen pid (clone3 set_tid, or ns_last_pid) needs CAP_SYS_ADMIN");
	open_or_skip(&vmon, 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	a = feedtest_spawn("wait", 6, "reused", go[0], -1);
	close(go[0]);
	assert_true(vmon_sample(&vmon));
	assert_non_null(feedtest_child_node(&vmon, a));
	old_start = feedtest_start_of(a);
	close(go[1]);
	status = reap(a, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 6);
	msleep(50);	/* a later tick: the new process's start time differs */
	b = spawn_sleeper_at(a);
	if (b < 0 && (errno == EEXIST || errno == EAGAIN || errno == EPERM || errno == EACCES || errno == ENOENT)) {
		vmon_destroy(&vmon);
		SKIP_IF(true, "cannot create a process with pid %d again: %s", a, strerror(errno));
	}
	assert_int_equal(b, a);

	assert_true(vmon_sample(&vmon));
	self = vmon_proc_lookup(&vmon, getpid());
	assert_non_null(self);
	list_for_each_entry(child, &self->children, siblings) {
		if (child->pid != a)
			continue;
		print_message("pid %d: node start %llu (the old one's %llu)%s%s\n", a, feedtest_stat(child)->start,
			      old_start, child->is_new ? " new" : "", child->is_stale ? " stale" : "");
		if (child->is_stale)
			old = child;
		else
			new = child;
	}
	assert_non_null(old);
	assert_non_null(new);
	assert_true(old != new);
	assert_true(new->is_new);
	assert_false(old->is_new);
	if (old->has_exit_status) {
		assert_int_equal(old->exit_status, status);
	} else {
		exit_among_lost(&vmon, a, "its status");
	}
	assert_true(feedtest_stat(old)->start + 1 >= old_start && feedtest_stat(old)->start <= old_start + 1);
	assert_int_equal(feedtest_stat(new)->start, feedtest_start_of(b));
	assert_ptr_equal(vmon_proc_lookup(&vmon, a), new);
	reap(b, SIGKILL);
	vmon_destroy(&vmon);
}

/*
 * An exit writes the node's stores outside their samplers: its status and
 * state into the stat store and, on ebpf, its peak resident set into the
 * memory status store.  The sample that applies it says so in the node's
 * activity, as vmon(3) has it, while the process is a zombie (whose
 * memory no read finds: the peak is the exit's alone) and once it is
 * reaped and its node stale.  The child grew by 32 MiB after its last
 * read.
 */
static void test_exit_activity(void **state)
{
	const unsigned long long grown_kb = 32 * 1024;
	const vmon_proc_vm_status_t *st;
	vmon_proc_t *proc = NULL;
	siginfo_t info;
	thread_kid_t t;
	vmon_t vmon;
	int status;

	(void)state;
	open_flags_or_skip(&vmon, VMON_FLAG_PROC_ALL, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM_STATUS, 0);
	assert_true(vmon_sample(&vmon));
	spawn_thread_kid(&t, "grow", 6);
	proc = sample_alive(&vmon, t.pid);
	st = proc->stores[VMON_STORE_PROC_VM_STATUS];
	assert_non_null(st);
	assert_true(BITTEST(st->present, VMON_PROC_VM_STATUS_HWM_KB));
	assert_true(st->hwm_kb < grown_kb);

	/* a zombie until reaped below (WNOWAIT) */
	close(t.go);
	assert_int_equal(waitid(P_PID, (id_t)t.pid, &info, WEXITED | WNOWAIT), 0);
	for (int waited = 0; waited < 5000; waited += 20) {
		assert_true(vmon_sample(&vmon));
		proc = feedtest_child_node(&vmon, t.pid);
		assert_non_null(proc);
		assert_false(proc->is_stale);
		if (proc->has_exit_status)
			break;
		msleep(20);
	}
	if (!proc->has_exit_status) {
		exit_among_lost(&vmon, t.pid, "the zombie");
	} else {
		assert_true(proc->activity & VMON_WANT_PROC_STAT);
		if (carries_maxrss()) {
			st = proc->stores[VMON_STORE_PROC_VM_STATUS];
			assert_true(st->hwm_kb >= grown_kb);
			assert_true(proc->activity & VMON_WANT_PROC_VM_STATUS);
		}
	}

	/* reaped: its node is stale, in state X */
	status = reap(t.pid, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 6);
	for (int waited = 0; waited < 5000; waited += 20) {
		assert_true(vmon_sample(&vmon));
		proc = feedtest_child_node(&vmon, t.pid);
		if (proc && proc->is_stale)
			break;
		msleep(20);
	}
	assert_non_null(proc);
	assert_true(proc->is_stale);
	assert_int_equal(feedtest_stat(proc)->state, 'X');
	assert_true(proc->activity & VMON_WANT_PROC_STAT);
	vmon_destroy(&vmon);
}

/*
 * The changed bits of a pass the feed wrote a node in are that pass's: the
 * feed's writes, then the read after them.  The child's first read marks
 * every field changed; the pass right after it applies its exit.  That
 * pass kept the first read's bits (its parent and start changed, said the
 * stat store), and the memory status store's read cleared the exit's peak
 * (ebpf) from them.
 */
static void test_exit_changed_bits(void **state)
{
	const vmon_proc_vm_status_t *st;
	const vmon_proc_stat_t *s;
	vmon_proc_t *proc;
	siginfo_t info;
	thread_kid_t t;
	vmon_t vmon;
	int passes = 0;

	(void)state;
	open_flags_or_skip(&vmon, VMON_FLAG_PROC_ALL, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM_STATUS, 0);
	assert_true(vmon_sample(&vmon));
	spawn_thread_kid(&t, "grow", 7);
	assert_true(vmon_sample(&vmon));
	proc = feedtest_child_node(&vmon, t.pid);
	assert_non_null(proc);
	assert_true(proc->is_new);
	s = feedtest_stat(proc);
	assert_true(BITTEST(s->changed, VMON_PROC_STAT_PPID));
	assert_true(BITTEST(s->changed, VMON_PROC_STAT_START));

	/* a zombie until reaped below (WNOWAIT) */
	close(t.go);
	assert_int_equal(waitid(P_PID, (id_t)t.pid, &info, WEXITED | WNOWAIT), 0);
	for (;;) {
		assert_true(vmon_sample(&vmon));
		proc = feedtest_child_node(&vmon, t.pid);
		assert_non_null(proc);
		/* (as long as test_exit_activity waits: 5 s of 20 ms naps) */
		if (proc->has_exit_status || ++passes == 250)
			break;
		msleep(20);
	}
	if (!proc->has_exit_status) {
		exit_among_lost(&vmon, t.pid, "the zombie's changed bits");
	} else {
		/* (right after the first read, but for a slow event: then the bits before are a quiet pass's) */
		print_message("%s: the exit applied %d pass(es) after the first read\n", FEED_BACKEND, passes + 1);
		s = feedtest_stat(proc);
		assert_false(BITTEST(s->changed, VMON_PROC_STAT_PPID));
		assert_false(BITTEST(s->changed, VMON_PROC_STAT_START));
		if (carries_maxrss()) {
			st = proc->stores[VMON_STORE_PROC_VM_STATUS];
			assert_true(BITTEST(st->changed, VMON_PROC_VM_STATUS_HWM_KB));
		}
	}
	reap(t.pid, 0);
	vmon_destroy(&vmon);
}

/*
 * A child forked from the test, held on a pipe, then let exec /bin/true
 * (which exits at once) and reaped: the exec and the exit are in the
 * kernel's buffers before the reap returns, and the pass after the
 * child's first read knows of them from the feed alone (its read finds
 * the child gone: the node leaves in that pass, vmon_feed(7)).  What that
 * pass's changed bits say is the exec's (the path, and the name where the
 * event carries it), not the first read's parent and start
 * (node_store_start()).
 */
static void test_exec_changed_bits(void **state)
{
	const vmon_proc_stat_t *s;
	vmon_proc_t *proc;
	int go[2];
	pid_t pid;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 0)
			execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	assert_true(vmon_sample(&vmon));
	proc = feedtest_child_node(&vmon, pid);
	assert_non_null(proc);
	s = feedtest_stat(proc);
	assert_true(BITTEST(s->changed, VMON_PROC_STAT_PPID));
	assert_true(BITTEST(s->changed, VMON_PROC_STAT_START));
	assert_true(BITTEST(s->present, VMON_PROC_STAT_EXE));
	assert_true(strcmp(s->exe.array, "/bin/true") != 0 && strcmp(s->exe.array, "/usr/bin/true") != 0);

	close(go[1]);
	assert_int_equal(reap(pid, 0), 0);
	assert_true(vmon_sample(&vmon));
	proc = feedtest_child_node(&vmon, pid);
	assert_non_null(proc);
	assert_true(proc->is_stale);
	s = feedtest_stat(proc);
	if (!BITTEST(s->changed, VMON_PROC_STAT_EXE)) {
		among_lost(&vmon, pid, "left, and the pass did not say that its exec changed its path",
			   "the exec's changed bits");
	} else {
		assert_false(BITTEST(s->changed, VMON_PROC_STAT_PPID));
		assert_false(BITTEST(s->changed, VMON_PROC_STAT_START));
		if (carries_exec_comm()) {
			assert_true(BITTEST(s->changed, VMON_PROC_STAT_COMM));
			assert_string_equal(s->comm.array, "true");
		}
		assert_true(proc->activity & VMON_WANT_PROC_STAT);
	}
	vmon_destroy(&vmon);
}

/*
 * A child forked, exited and reaped between two passes: its node is the
 * feed's alone, made in the pass after, and everything the fork told is
 * new in it: changed (absent before), as a first read's would be.  (Its
 * exit's status, where the backend carries one, is the child's.)
 */
static void test_fork_changed_bits(void **state)
{
	const vmon_proc_stat_t *s;
	vmon_proc_t *proc = NULL;
	pid_t pid;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_true(vmon_sample(&vmon));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(3);
	assert_int_equal(reap(pid, 0), 3 << 8);
	for (int passes = 0; passes < 250; passes++) {
		assert_true(vmon_sample(&vmon));
		if ((proc = feedtest_child_node(&vmon, pid)) != NULL)
			break;
		msleep(20);
	}
	if (!proc) {
		among_lost(&vmon, pid, "got no node", "a life the feed alone saw");
	} else {
		/* new in this sample, gone (X), stale in the next (vmon_feed(7)) */
		s = feedtest_stat(proc);
		assert_true(proc->is_new);
		assert_false(proc->is_stale);
		assert_int_equal(s->state, 'X');
		assert_true(BITTEST(s->changed, VMON_PROC_STAT_PID));
		assert_true(BITTEST(s->changed, VMON_PROC_STAT_PPID));
		assert_int_equal(s->ppid, getpid());
		assert_true(BITTEST(s->changed, VMON_PROC_STAT_START));
		assert_true(proc->activity & VMON_WANT_PROC_STAT);
		if (proc->has_exit_status)
			assert_int_equal(proc->exit_status, 3 << 8);
		assert_true(vmon_sample(&vmon));
		proc = feedtest_child_node(&vmon, pid);
		assert_non_null(proc);
		assert_false(proc->is_new);
		assert_true(proc->is_stale);
	}
	vmon_destroy(&vmon);
}

/* --- a signal ends it --- */

/*
 * Sample until the killed pid's node is stale.  Its status is the signal's
 * where the backend carries one, and never another: a backend that cannot
 * tell leaves has_exit_status 0.
 */
static vmon_proc_t *sample_killed(vmon_t *vmon, pid_t pid, int status)
{
	vmon_proc_t *proc = NULL;

	for (int waited = 0; waited < 5000; waited += 20) {
		assert_true(vmon_sample(vmon));
		proc = feedtest_child_node(vmon, pid);
		if (proc && proc->is_stale)
			break;
		msleep(20);
	}
	assert_non_null(proc);
	assert_true(proc->is_stale);
	if (carries_signal_status())
		assert_true(proc->has_exit_status);
	if (proc->has_exit_status)
		assert_int_equal(proc->exit_status, status);
	return proc;
}

static void test_killed(void **state)
{
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid;
	int status;

	(void)state;
	open_or_skip(&vmon, 0);
	pid = spawn_sleeper();
	assert_true(vmon_sample(&vmon));
	assert_non_null(feedtest_child_node(&vmon, pid));
	status = reap(pid, SIGTERM);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	proc = sample_killed(&vmon, pid, status);
	if (!carries_signal_status())
		assert_false(proc->has_exit_status);
	vmon_destroy(&vmon);
}

/*
 * The leader ends with pthread_exit() (an exit(2) with status 0), the other
 * thread runs on, then SIGKILL ends the process: wait(2) says SIGKILL.  A
 * backend that learns statuses from exit(2) must not take the leader's own
 * for the process's when no thread ended it that way.
 */
static void test_leader_killed(void **state)
{
	vmon_t vmon;

	(void)state;
	/* the leader's exit applied in a sample of its own, then with the process's */
	for (int sample = 1; sample >= 0; sample--) {
		thread_kid_t t;
		int status;

		open_leader_gone(&vmon, &t, "leader", sample);
		status = reap(t.pid, SIGKILL);
		close(t.go);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		sample_killed(&vmon, t.pid, status);
		vmon_destroy(&vmon);
	}
}

/* --- loss --- */

/* the exits a callback heard of one process */
struct exits_heard {
	pid_t		pid;
	int		exits, found;
	unsigned	has;		/* the last exit's */
	bool		streamed;	/* the stream heard of it before (its fork or exec) */
};

static void on_exit_heard(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	struct exits_heard *h = arg;

	(void)vmon;
	(void)proc;
	if (ev->kind != VMON_EVENT_EXIT || ev->pid != h->pid)
		return;
	h->exits++;
	h->found += !!(ev->has & VMON_EVENT_FOUND_GONE);
	h->has = ev->has;
}

/*
 * A process the caller knew whose exit was among the events lost: found
 * gone by the pass that repairs the loss, its exit is delivered all the
 * same, once, to the callback and the stream, marked found (no status).
 * ebpf's ring and netlink's socket are one buffer, full when the child
 * ends; perf's are one a CPU, and the child's may have had room: there the
 * exit may have come through, itself.
 */
static void check_exit_found(vmon_t *vmon, const struct exits_heard *h)
{
	bool per_cpu = strcmp(FEED_BACKEND, "perf") == 0;
	vmon_event_t ev;
	int streamed = 0;

	print_message("%s: the process whose exit was lost: %d exit(s) heard, %d found gone\n", FEED_BACKEND, h->exits,
		      h->found);
	assert_int_equal(h->exits, 1);
	if (!per_cpu)
		assert_int_equal(h->found, 1);
	if (h->found)
		assert_false(h->has & VMON_EVENT_HAS_EXIT_STATUS);	/* nothing made up */
	else if (!per_cpu)
		assert_true(h->has & VMON_EVENT_HAS_EXIT_STATUS);	/* (perf has none for a process a signal killed) */
	assert_true(h->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX));
	while (vmon_feed_next(vmon, &ev) > 0) {
		if (ev.kind == VMON_EVENT_EXIT && ev.pid == h->pid) {
			streamed++;
			assert_int_equal(!!(ev.has & VMON_EVENT_FOUND_GONE), h->found);
		}
	}
	/*
	 * The stream ends only a process it heard of, by its pid and start
	 * (test_stream checks that part by hand): its fork could be lost too on
	 * a busy machine's tiny ring.  Never twice; the real exit always.
	 */
	print_message("%s: the stream %s its fork or exec: %d exit(s) streamed%s\n", FEED_BACKEND,
		      h->streamed ? "heard" : "did not hear", streamed,
		      h->found && h->streamed && !streamed ? " (NOT the found one: its start did not match?)" : "");
	assert_true(streamed <= 1);
	if (!h->found)
		assert_int_equal(streamed, 1);
}

/* has the stream heard of pid (an event of it among those waiting)? the stream is emptied */
static bool stream_heard(vmon_t *vmon, pid_t pid)
{
	vmon_event_t ev;
	bool heard = false;

	while (vmon_feed_next(vmon, &ev) > 0)
		heard |= ev.pid == pid;
	return heard;
}

static void test_forced_loss(void **state)
{
	vmon_feed_stats_t before, after;
	pid_t sleepers[5];
	int n = feedtest_scale(400);
	struct exits_heard doomed = { 0 };
	vmon_t vmon;

	(void)state;
	/* the smallest buffer there is, and nobody reading while the children come and go */
	open_or_skip(&vmon, 4096);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0), 0);
	/* a child the feed and the tree know, which ends while the buffer is full */
	doomed.pid = spawn_sleeper();
	assert_true(vmon_sample(&vmon));
	assert_non_null(feedtest_child_node(&vmon, doomed.pid));
	doomed.streamed = stream_heard(&vmon, doomed.pid);
	assert_int_equal(vmon_feed_set_callback(&vmon, on_exit_heard, &doomed), 0);
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	for (int i = 0; i < n; i++) {
		if (i % (n / 5) == 0)
			sleepers[i / (n / 5)] = spawn_sleeper();
		reap(feedtest_spawn("exit", 1, "loss", -1, -1), 0);
	}
	reap(doomed.pid, SIGKILL);
	assert_true(vmon_sample(&vmon));
	check_exit_found(&vmon, &doomed);
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	print_message("%s: lost %llu events in %llu overruns\n", FEED_BACKEND, after.lost, after.overruns);
	assert_true(after.lost > before.lost);
	assert_true(after.overruns > before.overruns);
	/* the pass that found the loss listed /proc: the tree is whole again */
	assert_true(after.reconciles > before.reconciles);
	for (int i = 0; i < 5; i++) {
		vmon_proc_t *proc = feedtest_child_node(&vmon, sleepers[i]);

		assert_non_null(proc);
		assert_false(proc->is_stale);
	}
	{
		vmon_proc_t *self = vmon_proc_lookup(&vmon, getpid()), *child;

		list_for_each_entry(child, &self->children, siblings) {
			bool sleeper = false;

			for (int i = 0; i < 5; i++)
				sleeper |= child->pid == sleepers[i];
			/* every other child is dead and reaped: nothing of them may look alive (stale, or gone: X) */
			if (!sleeper && !child->is_stale && feedtest_stat(child)->state != 'X')
				fail_msg("child %d: state %c, neither stale nor gone", child->pid, feedtest_stat(child)->state);
		}
	}
	for (int i = 0; i < 5; i++)
		reap(sleepers[i], SIGKILL);
	vmon_destroy(&vmon);
}

/* --- CPU hotplug --- */

#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"

static bool cpu1_offlined;	/* by this test: put back online whatever happens (group_teardown()) */

/* (the CPU 1 lock, testlib's cpu1_lock(), is held from the first look at CPU 1 to the teardown) */

static int cpu1_set_online(bool up)
{
	int fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, up ? "1" : "0", 1);
	err = errno;
	close(fd);
	if (n != 1) {
		errno = err;
		return -1;
	}
	cpu1_offlined = !up;
	return 0;
}

/* CPU 1 can be taken offline here, or the test skips saying why */
static void skip_without_hotplug(void)
{
	char buf[8] = "";
	int fd;

	SKIP_IF(!is_root(), "taking a CPU offline needs root");
	SKIP_IF(sysconf(_SC_NPROCESSORS_CONF) < 2, "one CPU: none to take offline");
	cpu1_lock();
	fd = open(CPU1_ONLINE, O_RDONLY | O_CLOEXEC);
	SKIP_IF(fd < 0, "%s: %s (CPU 1 cannot go offline here)", CPU1_ONLINE, strerror(errno));
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = '\0';
	close(fd);
	SKIP_IF(buf[0] != '1', "CPU 1 is not online");
	SKIP_IF(cpu1_set_online(false) < 0, "CPU 1 cannot go offline: %s", strerror(errno));
	assert_int_equal(cpu1_set_online(true), 0);
}

/* a child forked on CPU 1 that exits at once with code, there; reaped */
static pid_t short_life_on_cpu1(int code, int *status)
{
	cpu_set_t old, one;
	pid_t pid;

	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	pid = fork();
	if (pid == 0)
		_exit(code);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
	assert_true(pid > 0);
	*status = reap(pid, 0);
	return pid;
}

/*
 * A CPU's perf events die when it goes offline and do not come back with
 * it: the feed must watch CPU 1 once it is online, whether it was offline
 * when the feed opened or went offline and came back between two reads,
 * and count what it may have missed meanwhile as lost.  ebpf and netlink
 * do not depend on CPUs, and must see the same.
 */
/*
 * The BPF maps this process has mapped, from /proc/self/smaps: the bytes
 * mapped in all, the largest mapping, what is resident.  The ring is
 * mapped as a page of the consumer's (read and write) and one mapping of
 * the producer's page and the data, once (libbpf's reader mapped the data
 * twice: twice its size resident); the skeleton's .bss and .rodata are a
 * page each.
 */
struct bpf_maps {
	size_t	total, largest;	/* bytes mapped */
	long	rss_kb;
};

static void bpf_map_count(const smaps_map_t *map, void *arg)
{
	struct bpf_maps *m = arg;

	if (strcmp(map->name, "anon_inode:bpf-map"))
		return;
	m->total += map->size;
	if (map->size > m->largest)
		m->largest = map->size;
	m->rss_kb += map->rss_kb;
}

static struct bpf_maps bpf_maps_of_self(void)
{
	struct bpf_maps m = { 0 };

	assert_true(smaps_each(0, bpf_map_count, &m) > 0);
	return m;
}

static size_t bpf_maps_mapped(size_t *largest)
{
	struct bpf_maps m = bpf_maps_of_self();

	*largest = m.largest;
	return m.total;
}

/*
 * Each fd of a BPF object (map, program, link) this process has open:
 * fn(arg, its number, what it links to, its fdinfo or NULL); how many.
 */
typedef void (*bpf_fd_fn)(void *arg, const char *fd, const char *target, FILE *fdinfo);

static int bpf_fds_each(bpf_fd_fn fn, void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[300], target[128];
		ssize_t len;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, "anon_inode:bpf", 14))
			continue;
		n++;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", de->d_name);
		f = fopen(path, "re");
		fn(arg, de->d_name, target, f);
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

/* a bpf_fd_fn that does nothing: bpf_fds_each() alone counts */
static void bpf_fd_ignored(void *arg, const char *fd, const char *target, FILE *fdinfo)
{
	(void)arg;
	(void)fd;
	(void)target;
	(void)fdinfo;
}

/*
 * The BPF ring buffers (BPF_MAP_TYPE_RINGBUF) this process holds an fd of,
 * from their fdinfo: how many, and the largest's data bytes.
 */
#define MAP_TYPE_RINGBUF	27

struct rings {
	int	n;
	size_t	largest;
};

static void ring_seen(void *arg, const char *fd, const char *target, FILE *fdinfo)
{
	struct rings *r = arg;
	unsigned long type = 0, max = 0;
	char line[128];

	(void)fd;
	(void)target;
	while (fdinfo && fgets(line, sizeof(line), fdinfo)) {
		sscanf(line, "map_type: %lu", &type);
		sscanf(line, "max_entries: %lu", &max);
	}
	if (type != MAP_TYPE_RINGBUF)
		return;
	r->n++;
	if (max > r->largest)
		r->largest = max;
}

static int rings_open(size_t *largest)
{
	struct rings r = { 0, 0 };

	bpf_fds_each(ring_seen, &r);
	*largest = r.largest;
	return r.n;
}

/*
 * The feed's one ring is of bytes, and little of its data is mapped between
 * reads (util/bpf_ring.c maps what a read reads, and keeps the window of
 * a read of at most RING_KEPT, feed/feed_bpf.c's BPF_RING_KEEP: its pages
 * and one more): the BPF maps mapped
 * are the ring's two positions' pages, what it kept and the skeleton's few
 * globals, not a ring's worth.
 */
#define RING_KEPT	(32u << 10)

static void check_one_ring(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), largest, total = bpf_maps_mapped(&largest), ring;

	assert_int_equal(rings_open(&ring), 1);
	print_message("a ring of %zu bytes; BPF maps mapped %zu bytes, the largest %zu\n", ring, total, largest);
	assert_int_equal(ring, bytes);
	assert_true(total <= 9 * page + RING_KEPT);
	assert_true(largest <= RING_KEPT + page);
}

/* the ebpf ring's first size by default (vmon_feed(7)) */
#define DEFAULT_RING_FIRST	(512u << 10)

static void check_ring(size_t ask, size_t expect)
{
	size_t largest;
	vmon_feed_stats_t st;
	vmon_t vmon;

	open_or_skip(&vmon, ask);
	/* /proc, not the task iterator: its maps would be counted too */
	assert_int_equal(vmon_set_sampler(&vmon, VMON_SAMPLER_PROC), 0);
	assert_true(vmon_sample(&vmon));
	/* the stats say the size the ring has, not the size asked for */
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	if (!ask && st.buffer_bytes > expect) {
		/* sized by need: another process's storm during the sample can have grown it */
		print_message("asked 0: the ring grew to %zu bytes meanwhile: its mapping not checked\n",
			      st.buffer_bytes);
		vmon_destroy(&vmon);
		return;
	}
	assert_int_equal(st.buffer_bytes, expect);
	print_message("asked %zu: ", ask);
	check_one_ring(expect);
	vmon_destroy(&vmon);
	assert_int_equal(bpf_maps_mapped(&largest), 0);
	assert_int_equal(rings_open(&largest), 0);
}

static void test_ring_size(void **state)
{
	vmon_t vmon;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the ring's size is the ebpf backend's");
	open_or_skip(&vmon, 0);
	vmon_destroy(&vmon);
	/* before this test, nothing else of the process has a BPF map mapped */
	check_ring(0, DEFAULT_RING_FIRST);
	check_ring(100000, 131072);
	check_ring(1, (size_t)sysconf(_SC_PAGESIZE));
}

/* the exits a callback heard of the children it was given, by pid */
struct lives_heard {
	const pid_t	*pids;
	int		n;
	int		*exits;		/* exits heard, with a status, of pids[i] */
};

static void on_life_exit(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	struct lives_heard *h = arg;

	(void)vmon;
	(void)proc;
	if (ev->kind != VMON_EVENT_EXIT || !(ev->has & VMON_EVENT_HAS_EXIT_STATUS))
		return;
	for (int i = 0; i < h->n; i++)
		if (h->pids[i] == ev->pid && WEXITSTATUS(ev->exit_status) == i % 200) {
			h->exits[i]++;
			return;
		}
}

/* lives from..to - 1 of "exit" children, life i's exit code i % 200, none of them read meanwhile */
static void spawn_lives_unread(pid_t *pids, int from, int to)
{
	for (int i = from; i < to; i++) {
		pids[i] = feedtest_spawn("exit", i % 200, "grow", -1, -1);
		assert_true(pids[i] > 0);
		assert_int_equal(WEXITSTATUS(reap(pids[i], 0)), i % 200);
	}
}

/*
 * The default ring is sized by need: a burst that finds the reader away
 * fills more than a quarter of the first ring, and the drain that finds it
 * puts a ring four times larger in the programs' slot.  Every life of the
 * burst and of the next one (written to either ring around the swap) is
 * heard, or counted lost (other processes of the machine write to the same
 * ring); the ring taken out is read until it is empty, then let go (10 s).
 */
static void test_ring_grows(void **state)
{
	int n = 900, heard = 0;
	pid_t *pids;
	int *exits;
	struct lives_heard h;
	vmon_feed_stats_t before, grown, after;
	vmon_t vmon;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the ring sized by need is the ebpf backend's");
	open_or_skip(&vmon, 0);
	pids = calloc((size_t)n * 2, sizeof(*pids));
	exits = calloc((size_t)n * 2, sizeof(*exits));
	assert_non_null(pids);
	assert_non_null(exits);
	h = (struct lives_heard){ pids, n * 2, exits };
	assert_int_equal(vmon_set_sampler(&vmon, VMON_SAMPLER_PROC), 0);
	assert_int_equal(vmon_feed_set_callback(&vmon, on_life_exit, &h), 0);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	/* 900 lives of a fork, an exec and an exit: about 380 KiB, more than a quarter of the first ring */
	spawn_lives_unread(pids, 0, n);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_true(vmon_sample(&vmon));	/* the callback hears the events as a sample applies them */
	assert_int_equal(vmon_feed_get_stats(&vmon, &grown), 0);
	print_message("a burst: ring %zu bytes, then %zu, lost %llu\n", before.buffer_bytes, grown.buffer_bytes,
		      grown.lost - before.lost);
	/* other processes' events can have grown it already (a storm of theirs since the open) */
	if (before.buffer_bytes == DEFAULT_RING_FIRST)
		assert_true(grown.buffer_bytes >= 2u << 20);
	else
		print_message("the ring had grown before the burst: growth not checked\n");
	/* the next burst goes to the new ring, which holds it */
	spawn_lives_unread(pids, n, n * 2);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	for (int i = 0; i < n * 2; i++) {
		assert_true(exits[i] <= 1);
		heard += exits[i];
	}
	print_message("heard %d of %d exits, lost %llu events\n", heard, n * 2, after.lost - before.lost);
	assert_true((unsigned long long)heard + (after.lost - before.lost) >= (unsigned long long)n * 2);
	if (after.lost == grown.lost)
		for (int i = n; i < n * 2; i++)
			assert_int_equal(exits[i], 1);
	/*
	 * The ring taken out is let go once it has been out 10 s: the new one
	 * alone is open.  Other processes' storms can grow it again meanwhile
	 * (on their rate): 12 s after the last swap seen, for at most a minute.
	 */
	for (int i = 0, waited = 0; i < 24 && waited < 120; i++, waited++) {
		size_t was = after.buffer_bytes;

		msleep(500);
		(void)vmon_feed_process(&vmon);
		assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
		if (after.buffer_bytes != was)
			i = 0;
	}
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	check_one_ring(after.buffer_bytes);
	vmon_destroy(&vmon);
	free(pids);
	free(exits);
}

/*
 * A pass reads the ring while it is filling: a storm during back-to-back
 * samples, with no read of the feed between them, is not lost to a ring
 * sized for a reader that keeps up.  The sample walks a tree of sleepers
 * (a subtree, so that the storm's lives are no nodes whose end would read
 * the ring itself), while feed_child runs lives whose execs carry 4,000
 * bytes of arguments: 1,500 of them write about 6.5 MB, twelve times the first
 * ring, during samples of 3,000 sleepers through /proc, 40 lives a sample
 * (the storm is feed_child's own, unsanitized, so that a sanitized sample
 * does not slow it).  The pass reads the ring (38 to 55 times in all here),
 * nothing is lost, and every exit is heard with its code.  Without the
 * reads in the pass (mutation) it fails: no read in a pass; with a first
 * ring of 256 KiB, 33 events were also lost and 11 exits never heard.
 */
#define KEEP_UP_SLEEPERS	3000
#define KEEP_UP_LIVES		1500
#define KEEP_UP_HEARD		(KEEP_UP_LIVES * 8)

struct keep_up {
	pid_t			heard[KEEP_UP_HEARD];	/* exits heard (anyone's), by the callback */
	int			codes[KEEP_UP_HEARD];
	unsigned long long	times[KEEP_UP_HEARD];	/* the events' */
	int			heard_nr;
};

static void on_keep_up_exit(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	struct keep_up *k = arg;

	(void)vmon;
	(void)proc;
	if (ev->kind == VMON_EVENT_EXIT && (ev->has & VMON_EVENT_HAS_EXIT_STATUS) && k->heard_nr < KEEP_UP_HEARD) {
		k->heard[k->heard_nr] = ev->pid;
		k->times[k->heard_nr] = ev->time_ns;
		k->codes[k->heard_nr++] = WEXITSTATUS(ev->exit_status);
	}
}

/* a storm that ended well: its lives, by their order, from feed_child's lines on fd; their number */
static int keep_up_lives(int status, int fd, pid_t *pids)
{
	FILE *f = fdopen(fd, "r");
	char line[32];
	int n = 0;

	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && strcmp(line, "end\n") != 0)
		if (n < KEEP_UP_LIVES)
			pids[n++] = (pid_t)atoi(line);
	fclose(f);
	assert_int_equal(n, KEEP_UP_LIVES);
	return n;
}

/*
 * How many of the storm's lives the callback heard the exit of, with its
 * code (by pid and code: a machine that wraps its pids can give one pid to
 * two lives of the storm); *span_ns, if asked, the time from the first exit
 * heard to the last
 */
static int keep_up_heard(const struct keep_up *k, const pid_t *pids, int lives, unsigned long long *span_ns)
{
	unsigned long long first = 0, last = 0;
	int heard = 0;

	for (int i = 0; i < lives; i++) {
		int found = -1;

		for (int j = 0; j < k->heard_nr && found < 0; j++)
			if (k->heard[j] == pids[i] && k->codes[j] == i % 200)
				found = j;
		if (found < 0)
			continue;
		if (!heard++)
			first = k->times[found];
		last = k->times[found];
	}
	if (span_ns)
		*span_ns = last > first ? last - first : 0;
	return heard;
}

static void test_keep_up_in_pass(void **state)
{
	vmon_feed_stats_t before, st, after;
	unsigned long long reads_in_pass = 0;
	int samples = 0, heard, children = 0, lives, status, out[2], nr = KEEP_UP_SLEEPERS;
	pid_t parent, storm, *pids;
	struct keep_up *k;
	vmon_proc_t *top;
	vmon_t vmon;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "reading the kernel buffer in the pass is the ebpf backend's");
	SKIP_IF(under_valgrind(), "a pass under valgrind is too slow beside a storm to say anything");
	open_flags_or_skip(&vmon, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, 0);
	k = calloc(1, sizeof(*k));
	pids = calloc(KEEP_UP_LIVES, sizeof(*pids));
	assert_non_null(k);
	assert_non_null(pids);
	/* the sleepers: children of a parent of their own, which dies with us and takes them along */
	parent = fork();
	assert_true(parent >= 0);
	if (parent == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; i < nr; i++) {
			pid_t kid = fork();

			if (kid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				for (;;)
					pause();
			}
			if (kid < 0)
				_exit(1);
		}
		for (;;)
			pause();
	}
	/* /proc: the longer sample (the task iterator reads 1,000 idle processes in a few milliseconds) */
	assert_int_equal(vmon_set_sampler(&vmon, VMON_SAMPLER_PROC), 0);
	top = vmon_proc_monitor(&vmon, parent, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, NULL, NULL);
	assert_non_null(top);
	for (int i = 0; i < 600 && children < nr; i++) {
		list_head_t *pos;

		assert_true(vmon_sample(&vmon));
		children = 0;
		list_for_each(pos, &top->children)
			children++;
		if (children < nr)
			msleep(10);
	}
	assert_int_equal(children, nr);
	assert_int_equal(vmon_feed_set_callback(&vmon, on_keep_up_exit, k), 0);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	assert_int_equal(pipe(out), 0);
	storm = feedtest_spawn("storm", KEEP_UP_LIVES, "4000", -1, out[1]);
	close(out[1]);
	/* samples back to back, the feed never read between them */
	while (waitpid(storm, &status, WNOHANG) == 0) {
		unsigned long long drains;

		assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
		drains = st.drains;
		assert_true(vmon_sample(&vmon));
		assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
		reads_in_pass += st.drains - drains - 1;	/* the pass's first read is its own */
		samples++;
	}
	lives = keep_up_lives(status, out[0], pids);
	for (int i = 0; i < 3; i++) {
		while (vmon_feed_process(&vmon) > 0)
			;
		assert_true(vmon_sample(&vmon));
	}
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	heard = keep_up_heard(k, pids, lives, NULL);
	print_message("%d lives during %d samples of %d sleepers: %llu reads in the passes, %d exits heard, "
		      "%llu events lost, ring %zu then %zu bytes\n", lives, samples, nr, reads_in_pass, heard,
		      after.lost - before.lost, before.buffer_bytes, after.buffer_bytes);
	assert_true(k->heard_nr < KEEP_UP_HEARD);	/* (every exit heard was kept) */
	assert_true(reads_in_pass > 0);
	assert_int_equal(after.lost, before.lost);
	assert_int_equal(heard, lives);
	vmon_destroy(&vmon);
	kill(parent, SIGKILL);
	waitpid(parent, NULL, 0);
	free(pids);
	free(k);
}

/*
 * The ring grows on the rate the programs write at, before anything is lost:
 * a reader that keeps up (it polls the fd and reads at each wakeup, so no
 * read finds a quarter of the ring waiting) still gets a larger ring from a
 * storm faster than the first ring holds a quarter of a second of (1,500
 * lives with 4,000 bytes of arguments, about 6.5 MB), for a reader the
 * scheduler may keep away longer than it now keeps it.  Nothing is lost,
 * before the growth or after, and every exit is heard with its code.
 * Without the rule on the rate (mutation: growth on a quarter waiting or a
 * loss alone) the ring stays at its first size.
 */
static void test_ring_grows_by_rate(void **state)
{
	vmon_feed_stats_t before, st, after;
	size_t first, grown_to = 0;
	unsigned long long lost_at_growth = 0, span_ns, needs;
	int heard, lives, status, out[2];
	pid_t storm, *pids;
	struct keep_up *k;
	vmon_t vmon;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the ring sized by need is the ebpf backend's");
	SKIP_IF(under_valgrind(), "a reader under valgrind cannot keep up with a storm: no growth before a loss to see");
	open_or_skip(&vmon, 0);
	k = calloc(1, sizeof(*k));
	pids = calloc(KEEP_UP_LIVES, sizeof(*pids));
	assert_non_null(k);
	assert_non_null(pids);
	assert_int_equal(vmon_set_sampler(&vmon, VMON_SAMPLER_PROC), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_set_callback(&vmon, on_keep_up_exit, k), 0);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	first = before.buffer_bytes;
	assert_int_equal(pipe(out), 0);
	storm = feedtest_spawn("storm", KEEP_UP_LIVES, "4000", -1, out[1]);
	close(out[1]);
	/* a reader that keeps up: read at each wakeup, or when vmon_feed_timeout() says */
	while (waitpid(storm, &status, WNOHANG) == 0) {
		struct pollfd pfd = { .fd = vmon_feed_fd(&vmon), .events = POLLIN };
		int timeout = vmon_feed_timeout(&vmon);

		assert_true(poll(&pfd, 1, timeout < 0 || timeout > 100 ? 100 : timeout) >= 0);
		(void)vmon_feed_process(&vmon);
		assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
		if (!grown_to && st.buffer_bytes > first) {
			grown_to = st.buffer_bytes;
			lost_at_growth = st.lost - before.lost;
		}
	}
	lives = keep_up_lives(status, out[0], pids);
	while (vmon_feed_process(&vmon) > 0)
		;
	assert_true(vmon_sample(&vmon));	/* the callback hears the events as a sample applies them */
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	heard = keep_up_heard(k, pids, lives, &span_ns);
	/*
	 * What a quarter of a second of the storm's mean rate takes, its
	 * arguments alone: the rate of its fastest 100 ms, which the library
	 * measures, is no less.  A machine busy enough can slow the storm below
	 * what needs more than the first ring.
	 */
	needs = span_ns ? (unsigned long long)lives * 4000 * 250000000ull / span_ns : 0;
	print_message("%d lives in %llu ms, a quarter of a second of them at least %llu bytes: ring %zu bytes, grown to "
		      "%zu (%llu lost by then), %zu at the end; %d exits heard, %llu events lost\n", lives,
		      span_ns / 1000000, needs, first, grown_to, lost_at_growth, after.buffer_bytes, heard,
		      after.lost - before.lost);
	/* another process's storm since the open can have grown it already */
	if (first != DEFAULT_RING_FIRST)
		print_message("the ring was %zu bytes before the storm: growth not checked\n", first);
	else if (needs <= first)
		print_message("the storm was too slow here to need more than the first ring: growth not checked\n");
	else
		assert_true(grown_to > first);
	assert_true(k->heard_nr < KEEP_UP_HEARD);
	assert_int_equal(lost_at_growth, 0);
	assert_int_equal(after.lost, before.lost);
	assert_int_equal(heard, lives);
	vmon_destroy(&vmon);
	free(pids);
	free(k);
}

/* a line of /proc/self/status, in kB */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	size_t len = strlen(key);
	char line[256];
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			kb = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return kb;
}

/* the resident kB of the BPF maps this process has mapped (the ring, the iterator's held table) */
static long bpf_maps_resident_kb(void)
{
	return bpf_maps_of_self().rss_kb;
}

/*
 * Loading the feed's programs and the task iterator's reads none of the
 * kernel's BTF: they are light skeletons, which the kernel relocates
 * (CO-RE) to its own types as it loads them.  libbpf's skeletons read
 * /sys/kernel/btf/vmlinux whole and copied it, for each object, so that a
 * caller's peak resident size grew by more than the file's size (5.5 MB on
 * this machine's kernel; 9 MB of peak in all).  Run first, while the heap
 * has nothing free that a parse could have reused unseen; the maps' own
 * pages (the ring, the held table) are not counted.
 */
static void test_load_reads_no_btf(void **state)
{
	long btf_kb, before, grew, maps;
	bool iter;
	int fd;
	vmon_t vmon;
	struct stat st;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the BPF programs are the ebpf backend's");
	SKIP_IF(stat("/sys/kernel/btf/vmlinux", &st) < 0, "the kernel has no BTF: %s", strerror(errno));
	btf_kb = (long)(st.st_size / 1024);
	/* the peak resident size set back to the present one (proc(5), clear_refs) */
	fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	SKIP_IF(fd < 0, "/proc/self/clear_refs: %s", strerror(errno));
	assert_int_equal(write(fd, "5", 1), 1);
	close(fd);
	before = status_kb("VmHWM");
	open_or_skip(&vmon, 4096);
	iter = vmon_set_sampler(&vmon, VMON_SAMPLER_ITER) == 0;
	assert_true(iter || !is_root());	/* where the feed loads as root, so does the iterator */
	maps = bpf_maps_resident_kb();
	grew = status_kb("VmHWM") - before - maps;
	print_message("the kernel's BTF %ld kB; the feed%s loaded: peak grew %ld kB besides %ld kB of maps\n",
		      btf_kb, iter ? " and the task iterator" : " (not the iterator)", grew, maps);
	assert_true(grew < btf_kb / 2);
	vmon_destroy(&vmon);
}

/* a BPF fd said, with the fdinfo lines that tell its kind */
static void bpf_fd_say(void *arg, const char *fd, const char *target, FILE *fdinfo)
{
	char line[128];

	(void)arg;
	print_message("fd %s: %s", fd, target);
	while (fdinfo && fgets(line, sizeof(line), fdinfo))
		if (!strncmp(line, "map_type", 8) || !strncmp(line, "max_entries", 11) ||
		    !strncmp(line, "prog_tag", 8) || !strncmp(line, "link_type", 9))
			print_message(" %.*s", (int)strcspn(line, "\n"), line);
	print_message("\n");
}

/* the fds of BPF objects this process has open, each said if there are any */
static int bpf_fds_open(void)
{
	int n = bpf_fds_each(bpf_fd_ignored, NULL);

	if (n)
		bpf_fds_each(bpf_fd_say, NULL);	/* which: a leak is found by its kind */
	return n;
}

/*
 * A caller that closed its standard input after vmon_init(): fd 0 is the
 * lowest free fd when the task iterator loads, and the light skeleton's
 * generated code takes an fd of 0 for none, so a link given fd 0 would be
 * neither kept nor closed (the program attached after vmon_destroy()).
 * Every BPF fd is gone with the instance.
 */
static void test_stdin_closed(void **state)
{
	vmon_attr_t attr;
	vmon_t vmon;
	int saved;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the feed's backend does not matter here: run once, with ebpf's tests");
	SKIP_IF(!is_root(), "the task iterator needs root (CAP_BPF, CAP_PERFMON)");
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = VMON_WANT_PROC_STAT;
	attr.feed = "none";
	attr.sampler = VMON_SAMPLER_PROC;
	assert_true(vmon_init_attr(&vmon, &attr));
	assert_int_equal(bpf_fds_open(), 0);
	saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
	assert_true(saved >= 3);
	close(0);
	if (vmon_set_sampler(&vmon, VMON_SAMPLER_ITER) != 0) {
		assert_int_equal(dup2(saved, 0), 0);
		close(saved);
		SKIP_IF(true, "the task iterator cannot be used here: %s", vmon_sampler_reason(&vmon));
	}
	assert_true(vmon_sample(&vmon));
	assert_true(bpf_fds_each(bpf_fd_ignored, NULL) > 0);
	vmon_destroy(&vmon);
	assert_int_equal(bpf_fds_open(), 0);
	assert_true(fcntl(0, F_GETFD) < 0);	/* closed, as the caller left it */
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
}

/* the bytes the allocator has given out and not had back, mmapped blocks too (0: it does not say, as under ASan) */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * A storm grows the feed's queue, its outbox and their arenas to its size;
 * after it, a pass that uses little of them gives them back, so that the
 * heap in use returns to about where it was before the storm (vtop's
 * memory after process churn: the "returns to its steady size").
 * The pid indexes and the ended-process ring (core/ended.c), which the
 * storm's lives grew, are made small again too.  The instance watches this
 * process and its children alone, so that others' processes coming and
 * going do not change its heap.  Here: 105 kB, 3,565 with 3,000 lives'
 * events queued, 153 six samples after (685 with the queue given back
 * but not the indexes and the ring).
 * The storm's events wait in the queue (read, not applied: no sample) until
 * one sample applies them all, then quiet samples end their nodes.
 */
static void test_storm_memory(void **state)
{
	int n = feedtest_scale(3000), spawned = 0, alive = 0;
	size_t before, during, after;
	vmon_t vmon;

	(void)state;
	SKIP_IF(strcmp(FEED_BACKEND, "ebpf") != 0, "the queue is the same for every backend: run once, with ebpf's tests");
	/* this process and its children alone (explicit mode): others' processes do not change the heap */
	open_flags_or_skip(&vmon, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, 0);
	assert_non_null(vmon_proc_monitor(&vmon, getpid(), VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, NULL, NULL));
	for (int i = 0; i < 3; i++)
		assert_true(vmon_sample(&vmon));
	before = heap_in_use();
	if (!before)
		vmon_destroy(&vmon);
	SKIP_IF(!before, "the allocator does not say what it has given out (mallinfo2)");
	for (int reaped = 0; reaped < n; reaped++) {
		unsigned long long start;
		int status;

		while (alive < 50 && spawned < n) {
			assert_true(feedtest_spawn("exit", spawned % 200, "storm", -1, -1) > 0);
			spawned++;
			alive++;
		}
		assert_true(feedtest_reap_any(&start, &status) > 0);
		alive--;
		if (reaped % 50 == 0)
			vmon_feed_process(&vmon);	/* into the queue, as a caller's poll loop would */
	}
	vmon_feed_process(&vmon);
	during = heap_in_use();
	assert_true(vmon_sample(&vmon));	/* every event applied: the outbox as large */
	/* and as many again as an ended process is remembered (core/ended.c): the storm's nodes all gone */
	for (int i = 0; i < 6; i++)
		assert_true(vmon_sample(&vmon));
	after = heap_in_use();
	print_message("heap in use: %zu kB before %d lives, %zu kB with their events queued, %zu kB six samples after\n",
		      before / 1024, n, during / 1024, after / 1024);
	/* the storm's events took megabytes, and nearly all of them came back */
	assert_true(during > before + (size_t)n * 200);
	assert_true(after < before + (during - before) / 8);
	vmon_destroy(&vmon);
}

static void test_cpu_hotplug(void **state)
{
	vmon_feed_stats_t before, after;
	vmon_t vmon;
	int status;
	pid_t pid;

	(void)state;
	skip_without_hotplug();

	/* offline when the feed opens; the first read after it came online watches it */
	assert_int_equal(cpu1_set_online(false), 0);
	open_or_skip(&vmon, 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	assert_int_equal(cpu1_set_online(true), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	if (strcmp(FEED_BACKEND, "perf") == 0)
		assert_true(after.lost > before.lost);	/* what CPU 1 did before the read: not seen */
	pid = short_life_on_cpu1(23, &status);
	sample_exit(&vmon, pid, status);

	/* offline and online again between two reads; a second later the next read finds its events dead */
	assert_int_equal(vmon_feed_get_stats(&vmon, &before), 0);
	assert_int_equal(cpu1_set_online(false), 0);
	assert_int_equal(cpu1_set_online(true), 0);
	msleep(1100);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_feed_get_stats(&vmon, &after), 0);
	if (strcmp(FEED_BACKEND, "perf") == 0)
		assert_true(after.lost > before.lost);
	pid = short_life_on_cpu1(24, &status);
	sample_exit(&vmon, pid, status);
	vmon_destroy(&vmon);
}

/* --- churn --- */

typedef struct life {
	int			pid;
	unsigned long long	start;
} life_t;

/* /bin/true in a loop; each life (pid, start time, read while it is a zombie) goes to fd */
static int churn_main(void *arg)
{
	int fd = *(int *)arg;

	for (;;) {
		pid_t pid = fork();
		siginfo_t si;
		life_t l;

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
			return 1;
		l.pid = pid;
		l.start = feedtest_start_of(pid);
		waitpid(pid, NULL, 0);
		if (write(fd, &l, sizeof(l)) != sizeof(l))
			return 0;
	}
}

#define CHURN_SLOTS	(1 << 17)

static struct churn_slot {
	int			pid;
	unsigned long long	start;
	int			lives, news, stales;
} *churn;

static struct churn_slot *churn_find(int pid, unsigned long long start, bool add)
{
	unsigned i = ((unsigned)pid * 2654435761u ^ (unsigned)start) & (CHURN_SLOTS - 1);

	while (churn[i].pid && (churn[i].pid != pid || churn[i].start != start))
		i = (i + 1) & (CHURN_SLOTS - 1);
	if (!churn[i].pid && !add)
		return NULL;
	churn[i].pid = pid;
	churn[i].start = start;
	return &churn[i];
}

static struct churn_slot *churn_of(int pid, unsigned long long start)
{
	return churn_find(pid, start, true);
}

/* every node whose parent is a loop, wherever it is in the tree (the loop goes, its children stay a while) */
/* the last processes reported new or stale that are not counted as a loop's child, for churn_explain() */
#define CHURN_OTHERS	4096
static struct churn_other {
	int			pid, ppid, parent, sample;
	unsigned long long	start;
	bool			has_stat, has_ppid, has_start, is_new, is_stale;
} churn_others[CHURN_OTHERS];
static unsigned churn_others_nr;
static int churn_sample;

static void churn_other(const vmon_proc_t *proc, const vmon_proc_stat_t *s)
{
	struct churn_other *o = &churn_others[churn_others_nr++ % CHURN_OTHERS];

	*o = (struct churn_other){ .pid = proc->pid, .parent = proc->parent ? proc->parent->pid : 0,
				   .sample = churn_sample, .has_stat = s != NULL, .is_new = proc->is_new,
				   .is_stale = proc->is_stale };
	if (s) {
		o->has_ppid = BITTEST(s->present, VMON_PROC_STAT_PPID);
		o->has_start = BITTEST(s->present, VMON_PROC_STAT_START);
		o->ppid = (int)s->ppid;
		o->start = s->start;
	}
}

static void churn_walk_list(list_head_t *head, const pid_t *loops)
{
	vmon_proc_t *child;

	list_for_each_entry(child, head, siblings) {
		vmon_proc_stat_t *s = feedtest_stat(child);

		churn_walk_list(&child->children, loops);
		if (!s || (s->ppid != loops[0] && s->ppid != loops[1]) || !BITTEST(s->present, VMON_PROC_STAT_START)) {
			if (child->is_new || child->is_stale)
				churn_other(child, s);
			continue;
		}
		if (child->is_new && child->is_stale)
			fail_msg("pid %d (start %llu): new and stale in one sample", child->pid, s->start);
		churn_of(child->pid, s->start)->news += child->is_new;
		churn_of(child->pid, s->start)->stales += child->is_stale;
	}
}

static void churn_walk(vmon_t *vmon, const pid_t *loops)
{
	churn_sample++;
	churn_walk_list(&vmon->processes, loops);
}

/* a life the tree never reported: what it did report for that pid, to tell a wrong start from a miss */
static void churn_explain(const struct churn_slot *c)
{
	print_message("pid %d (start %llu): %d lives, stale %d times; the same pid:", c->pid, c->start, c->lives,
		      c->stales);
	for (size_t i = 0; i < CHURN_SLOTS; i++)
		if (churn[i].pid == c->pid && &churn[i] != c)
			print_message(" start %llu (%d lives, new %d, stale %d)", churn[i].start, churn[i].lives,
				      churn[i].news, churn[i].stales);
	print_message("\n");
	/* reported, but not as a loop's child with a start: a wrong parent, or a stat store without them? */
	for (unsigned i = 0; i < CHURN_OTHERS && i < churn_others_nr; i++) {
		const struct churn_other *o = &churn_others[i];

		if (o->pid == c->pid)
			print_message("  pid %d in sample %d: new %d stale %d, under %d, stat %d, ppid %d (%d), start %llu (%d)\n",
				      o->pid, o->sample, o->is_new, o->is_stale, o->parent, o->has_stat, o->ppid,
				      o->has_ppid, o->start, o->has_start);
	}
}

static void test_churn(void **state)
{
	double secs = under_valgrind() ? 2.0 : 8.0, elapsed;
	int fds[2], lives = 0, samples = 0, extra = 0, short_of = 0;
	struct timespec t0, now;
	vmon_feed_stats_t st;
	vmon_t vmon;
	pid_t loops[2];
	life_t l;

	(void)state;
	open_or_skip(&vmon, 0);
	churn = calloc(CHURN_SLOTS, sizeof(*churn));
	assert_non_null(churn);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_true(vmon_sample(&vmon));
	loops[0] = spawn_fn(churn_main, &fds[1]);
	loops[1] = spawn_fn(churn_main, &fds[1]);
	close(fds[1]);
	assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		msleep(2);
		assert_true(vmon_sample(&vmon));
		churn_walk(&vmon, loops);
		samples++;
		while (read(fds[0], &l, sizeof(l)) == (ssize_t)sizeof(l)) {
			churn_of(l.pid, l.start)->lives++;
			lives++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		/* (a few seconds, and enough lives: a loaded machine, or sanitizers, fork slowly) */
	} while (elapsed < secs || (lives < (under_valgrind() ? 40 : 400) && elapsed < 90.0));
	reap(loops[0], SIGKILL);
	reap(loops[1], SIGKILL);
	while (read(fds[0], &l, sizeof(l)) == (ssize_t)sizeof(l)) {
		churn_of(l.pid, l.start)->lives++;
		lives++;
	}
	close(fds[0]);
	/* the loops' last lives go stale */
	for (int i = 0; i < 3; i++) {
		assert_true(vmon_sample(&vmon));
		churn_walk(&vmon, loops);
	}
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	/*
	 * A life that only the feed saw has the start its fork event gave,
	 * which a backend may know only to a tick (netlink: from the event's
	 * time): its sightings go to the life a tick off, when there is one.
	 */
	for (size_t i = 0; i < CHURN_SLOTS; i++) {
		struct churn_slot *c = &churn[i], *near = NULL;

		if (!c->pid || c->lives)
			continue;
		for (int d = -1; d <= 1 && !near; d += 2) {
			near = churn_find(c->pid, c->start + (unsigned long long)d, false);
			if (near && !near->lives)
				near = NULL;
		}
		if (near) {
			near->news += c->news;
			near->stales += c->stales;
			c->news = c->stales = 0;
		}
	}
	for (size_t i = 0; i < CHURN_SLOTS; i++) {
		struct churn_slot *c = &churn[i];

		if (!c->pid || (!c->lives && !c->news && !c->stales))
			continue;
		/* the loop killed after a fork: a life not reported, whose parent changed before it went */
		if (!c->lives) {
			extra++;
			print_message("pid %d (start %llu): reported (new %d, stale %d), not one of the loops' lives\n",
				      c->pid, c->start, c->news, c->stales);
			if (c->news > 1 || c->stales > 1)
				fail_msg("pid %d (start %llu): unreported, new %d times, stale %d times", c->pid,
					 c->start, c->news, c->stales);
			continue;
		}
		if (c->news != c->stales || c->stales > c->lives)
			fail_msg("pid %d (start %llu): %d lives, new %d times, stale %d times (%llu events lost)",
				 c->pid, c->start, c->lives, c->news, c->stales, st.lost);
		if (c->lives > c->stales)
			churn_explain(c);
		short_of += c->lives - c->stales;
	}
	print_message("%s: %d short lives in %d samples, every one new once and stale once; %d unreported, "
		      "%d unseen, %llu events lost\n", FEED_BACKEND, lives, samples, extra, short_of, st.lost);
	assert_true(lives > 0);
	assert_true(extra <= 2);
	if (!st.lost)
		assert_int_equal(short_of, 0);
	free(churn);
	churn = NULL;
	vmon_destroy(&vmon);
}

/* --- prompt delivery --- */

/* read whatever the feed holds, and again until it stays quiet for ms */
static void feed_quiet(vmon_t *vmon, int ms)
{
	for (int i = 0; i < 50; i++) {
		while (vmon_feed_process(vmon) > 0)
			;
		msleep(ms);
		if (vmon_feed_process(vmon) == 0)
			return;
	}
}

static void test_prompt(void **state)
{
	int rounds = 5, readable = 0;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < rounds; i++) {
		int in[2], status, r;
		struct pollfd pfd;
		pid_t pid;

		assert_int_equal(pipe2(in, O_CLOEXEC), 0);
		pid = feedtest_spawn("wait", 3, "prompt", in[0], -1);
		close(in[0]);
		/* the fork and exec read, and a spell longer than the ring's wakeup interval */
		feed_quiet(&vmon, 20);
		close(in[1]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_int_equal(WEXITSTATUS(status), 3);
		/*
		 * Generous: the exit wakes the fd within a wakeup's time.  Another
		 * process's event just before ours could batch it (the bound is then
		 * vmon_feed_timeout()), but an event of another process wakes the fd
		 * in its turn.
		 */
		pfd = (struct pollfd){ .fd = vmon_feed_fd(&vmon), .events = POLLIN };
		assert_true(pfd.fd >= 0);
		r = poll(&pfd, 1, 2000);
		assert_true(r >= 0);
		readable += r > 0;
		print_message("%s: round %d: %s, timeout now %d ms\n", FEED_BACKEND, i,
			      r > 0 ? "readable" : "not readable after 2 s", vmon_feed_timeout(&vmon));
		assert_true(r > 0);
		assert_true(vmon_feed_process(&vmon) > 0);
	}
	assert_int_equal(readable, rounds);
	vmon_destroy(&vmon);
}

/* --- the stream: events for the caller's loop, no sample --- */

typedef struct skid {
	pid_t			pid;
	unsigned long long	start;
	int			status;		/* from waitpid() */
	char			tag[16];	/* its third argument */
	int			forks, execs, exits;
	int			order_bad;	/* an event before its fork, or after its exit */
	unsigned		kinds;		/* of its aggregated events, or'ed */
	int			events;
	bool			exit_status_ok, args_ok, duration;
	unsigned long long	exit_ns;
} skid_t;

static skid_t *skids;
static int skids_nr;

static skid_t *skid_of(pid_t pid)
{
	for (int i = skids_nr - 1; i >= 0; i--)
		if (skids[i].pid == pid)
			return &skids[i];
	return NULL;
}

/* do the arguments say "feed_child exit CODE TAG"? */
static bool args_are(const vmon_event_t *ev, const skid_t *k)
{
	char want[256];
	int len = snprintf(want, sizeof(want), "%s%cexit%c%d%c%s", FEED_CHILD, 0, 0, WEXITSTATUS(k->status), 0, k->tag);

	return ev->args && ev->args_len >= (size_t)len + 1 && memcmp(ev->args, want, (size_t)len + 1) == 0;
}

static void skid_event(const vmon_event_t *ev)
{
	skid_t *k = skid_of(ev->pid);

	if (!k)
		return;
	k->events++;
	k->kinds |= ev->kinds;
	if (ev->kinds & (1u << VMON_EVENT_FORK)) {
		k->order_bad += k->execs + k->exits > 0;
		k->forks++;
	}
	if (ev->kinds & (1u << VMON_EVENT_EXEC)) {
		k->order_bad += k->forks == 0 || k->exits > 0;
		k->execs++;
	}
	if (ev->kinds & (1u << VMON_EVENT_EXIT)) {
		k->order_bad += k->forks == 0;
		k->exits++;
		k->exit_ns = ev->time_ns;
		k->exit_status_ok = (ev->has & VMON_EVENT_HAS_EXIT_STATUS) && ev->exit_status == k->status;
		/* the exit says what the exec said */
		k->args_ok = args_are(ev, k);
		/* what it said instead, for a short life of skids_spawn() on a backend that carries them */
		if (!k->args_ok && carries_args() && k->tag[0] == 's') {
			char buf[512];

			vmon_escape(buf, sizeof(buf), ev->args ? ev->args : "", ev->args ? ev->args_len : 0, 0);
			print_message("pid %d: has %#x kinds %#x args [%s] status %d/%d\n", ev->pid, ev->has, ev->kinds, buf,
				      ev->exit_status, k->status);
		}
		k->duration = (ev->has & VMON_EVENT_HAS_DURATION) != 0;
	}
}

/* read the stream as a poll loop would, until pred or ms; the events read */
static int stream_loop(vmon_t *vmon, bool (*pred)(void), int ms)
{
	struct timespec t0, t;
	vmon_event_t ev;
	int n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = vmon_feed_fd(vmon), .events = POLLIN };
		int left, timeout = vmon_feed_timeout(vmon), r;

		while ((r = vmon_feed_next(vmon, &ev)) == 1) {
			skid_event(&ev);
			n++;
		}
		assert_int_equal(r, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if ((pred && pred()) || left <= 0)
			return n;
		if (timeout < 0 || timeout > left)
			timeout = left;
		assert_true(poll(&pfd, 1, timeout) >= 0);
	}
}

static bool all_exits_read(void)
{
	for (int i = 0; i < skids_nr; i++)
		if (!skids[i].exits)
			return false;
	return true;
}

/* spawn n children "exit CODE TAG" in bursts of burst, reap them as skids */
static void skids_spawn(int n, int burst)
{
	skids = calloc((size_t)n, sizeof(*skids));
	assert_non_null(skids);
	skids_nr = 0;
	while (skids_nr < n) {
		int b = n - skids_nr < burst ? n - skids_nr : burst;

		for (int i = 0; i < b; i++) {
			skid_t *k = &skids[skids_nr + i];

			snprintf(k->tag, sizeof(k->tag), "s%d", skids_nr + i);
			k->pid = feedtest_spawn("exit", (skids_nr + i) % 120, k->tag, -1, -1);
		}
		skids_nr += b;
		for (int i = 0; i < b; i++) {
			unsigned long long start;
			int status;
			pid_t pid = feedtest_reap_any(&start, &status);
			skid_t *k = skid_of(pid);

			assert_non_null(k);
			k->start = start;
			k->status = status;
		}
	}
}

static void skids_free(void)
{
	free(skids);
	skids = NULL;
	skids_nr = 0;
}

static unsigned long long boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void test_stream(void **state)
{
	int n = feedtest_scale(300), args_ok = 0, durations = 0, found = 0, recent = 0;
	vmon_feed_stats_t st;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS | VMON_FEED_EXITS, 0), 0);
	/* the first sample before the storm, none during it */
	assert_true(vmon_sample(&vmon));
	skids_spawn(n, 25);
	stream_loop(&vmon, all_exits_read, 10000);
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	for (int i = 0; i < skids_nr; i++) {
		skid_t *k = &skids[i];
		vmon_event_t ev;
		int r;

		if (st.lost || st.stream_lost) {
			assert_true(k->forks <= 1 && k->execs <= 1 && k->exits <= 1);
			continue;
		}
		if (k->forks != 1 || k->exits != 1 || k->execs != 1 || k->order_bad)
			print_message("pid %d: %d forks, %d execs, %d exits, %d out of order\n", k->pid, k->forks,
				      k->execs, k->exits, k->order_bad);
		assert_int_equal(k->forks, 1);
		assert_int_equal(k->execs, 1);
		assert_int_equal(k->exits, 1);
		assert_int_equal(k->order_bad, 0);
		assert_true(k->exit_status_ok);
		args_ok += k->args_ok;
		durations += k->duration;
		/* ended lately: the lookup knows it, by pid and start, with its status */
		r = vmon_feed_lookup(&vmon, k->pid, k->start, &ev);
		assert_true(r >= 0);
		if (boot_ns() - k->exit_ns < 4000000000ull) {
			recent++;
			assert_int_equal(r, 1);
		}
		if (r == 1) {
			found++;
			assert_int_equal(ev.pid, k->pid);
			assert_int_equal(ev.kind, VMON_EVENT_EXIT);
			assert_true(ev.has & VMON_EVENT_HAS_EXIT_STATUS);
			assert_int_equal(ev.exit_status, k->status);
			if (carries_args())
				assert_true(args_are(&ev, k));
		}
	}
	print_message("%s: stream: %d children, %d exits with their arguments, %d with a duration, %d of %d recent "
		      "found by lookup; lost %llu (stream %llu)\n", FEED_BACKEND, skids_nr, args_ok, durations, found,
		      recent, st.lost, st.stream_lost);
	if (carries_args() && !st.lost)
		assert_int_equal(args_ok, skids_nr);
	/* a pid and start that never were: not found */
	{
		vmon_event_t ev;

		assert_int_equal(vmon_feed_lookup(&vmon, skids[0].pid, skids[0].start + 1000000, &ev), 0);
	}
	/* the tree agrees: each child, sampled now, ended with that status */
	assert_true(vmon_sample(&vmon));
	for (int i = 0; i < skids_nr && !st.lost; i++) {
		vmon_proc_t *proc = feedtest_child_node(&vmon, skids[i].pid);

		assert_non_null(proc);
		assert_true(proc->has_exit_status);
		assert_int_equal(proc->exit_status, skids[i].status);
	}
	skids_free();
	vmon_destroy(&vmon);
}

static void test_reads_not_counted(void **state)
{
	vmon_stats_t before, after;
	int in[2], execs = 0, status, want_len;
	char want[256];
	vmon_t vmon;
	pid_t pid;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	want_len = snprintf(want, sizeof(want), "%s%cwait%c3%cuncounted", FEED_CHILD, 0, 0, 0);
	assert_int_equal(vmon_get_stats(&vmon, &before), 0);
	pid = feedtest_spawn("wait", 3, "uncounted", in[0], -1);
	close(in[0]);
	/* the child waits for stdin's EOF: alive while its exec is read (perf and netlink read /proc then) */
	for (int i = 0; i < 500 && !execs; i++) {
		vmon_event_t ev;
		int r;

		assert_true(vmon_feed_process(&vmon) >= 0);
		while ((r = vmon_feed_next(&vmon, &ev)) == 1) {
			if (ev.pid == pid && ev.kind == VMON_EVENT_EXEC && ev.args && ev.args_len >= (size_t)want_len + 1 &&
			    memcmp(ev.args, want, (size_t)want_len + 1) == 0)
				execs++;
		}
		assert_int_equal(r, 0);
		if (!execs)
			msleep(10);
	}
	assert_int_equal(vmon_get_stats(&vmon, &after), 0);
	close(in[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(execs, 1);
	assert_int_equal(after.opens, before.opens);
	assert_int_equal(after.reads, before.reads);
	vmon_destroy(&vmon);
}

static void test_stream_unread(void **state)
{
	int n = feedtest_scale(100);
	vmon_feed_stats_t st;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0), 0);
	assert_true(vmon_sample(&vmon));
	skids_spawn(n, 10);
	/* samples only: they apply the events to the tree, and the stream keeps them */
	for (int i = 0; i < 5; i++) {
		msleep(10);
		assert_true(vmon_sample(&vmon));
	}
	assert_int_equal(vmon_feed_get_stats(&vmon, &st), 0);
	print_message("%s: %zu events wait for the stream after 6 samples\n", FEED_BACKEND, st.stream_pending);
	assert_true(st.stream_pending >= (size_t)(2 * n));
	stream_loop(&vmon, all_exits_read, 5000);
	for (int i = 0; i < skids_nr && !st.lost; i++) {
		assert_int_equal(skids[i].forks, 1);
		assert_int_equal(skids[i].exits, 1);
		assert_true(skids[i].exit_status_ok);
	}
	skids_free();
	vmon_destroy(&vmon);
}

static void test_stream_unseen(void **state)
{
	pid_t pid;
	vmon_event_t ev;
	int status, r;
	vmon_t vmon;

	(void)state;
	/* it began before the feed opened: the stream never heard its fork */
	pid = spawn_sleeper();
	open_or_skip(&vmon, 0);
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_EVENTS | VMON_FEED_EXITS, 0), 0);
	skids = calloc(1, sizeof(*skids));
	assert_non_null(skids);
	skids_nr = 1;
	skids[0].pid = pid;
	skids[0].forks = 1;	/* as if: its fork was before */
	skids[0].start = proc_start(pid);
	status = reap(pid, SIGKILL);
	skids[0].status = status;
	stream_loop(&vmon, all_exits_read, 5000);
	assert_int_equal(skids[0].exits, 1);
	if (carries_signal_status())
		assert_true(skids[0].exit_status_ok);
	r = vmon_feed_lookup(&vmon, pid, 0, &ev);
	assert_int_equal(r, 1);
	assert_int_equal(ev.pid, pid);
	if (carries_signal_status()) {
		assert_true(ev.has & VMON_EVENT_HAS_EXIT_STATUS);
		assert_int_equal(ev.exit_status, status);
	}
	skids_free();
	vmon_destroy(&vmon);
}

static bool long_life_seen(void)
{
	return skids[skids_nr - 1].events > 0 && all_exits_read();
}

static void test_aggregate(void **state)
{
	const unsigned all = 1u << VMON_EVENT_FORK | 1u << VMON_EVENT_EXEC | 1u << VMON_EVENT_EXIT;
	int n = feedtest_scale(50), in[2], status;
	skid_t *life;
	vmon_t vmon;

	(void)state;
	open_or_skip(&vmon, 0);
	/* a window long enough for a short life under load */
	assert_int_equal(vmon_feed_stream(&vmon, VMON_FEED_AGGREGATE, 3000), 0);
	skids_spawn(n, 10);
	/* and one that outlives the window */
	skids = realloc(skids, sizeof(*skids) * (size_t)(skids_nr + 1));
	assert_non_null(skids);
	life = &skids[skids_nr++];
	memset(life, 0, sizeof(*life));
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	life->pid = feedtest_spawn("wait", 9, "long", in[0], -1);
	close(in[0]);
	life->exits = 1;	/* for all_exits_read(): its own comes later */
	stream_loop(&vmon, long_life_seen, 15000);
	for (int i = 0; i < skids_nr - 1; i++) {
		skid_t *k = &skids[i];

		if (k->events != 1 || k->kinds != all)
			print_message("pid %d: %d events, kinds %#x\n", k->pid, k->events, k->kinds);
		assert_int_equal(k->events, 1);
		assert_int_equal(k->kinds, all);
		assert_true(k->exit_status_ok);
		if (carries_args())
			assert_true(k->args_ok);
	}
	/* the window ended: what is known of the long life, without an exit */
	if (life->events != 1)
		print_message("the long life: %d events before its exit, kinds %#x (its exec came after the window?)\n",
			      life->events, life->kinds);
	assert_int_equal(life->events, 1);
	assert_int_equal(life->kinds, 1u << VMON_EVENT_FORK | 1u << VMON_EVENT_EXEC);
	/* its exit, alone */
	life->exits = 0;
	close(in[1]);
	assert_int_equal(waitpid(life->pid, &status, 0), life->pid);
	life->status = status;
	stream_loop(&vmon, all_exits_read, 10000);
	assert_int_equal(life->events, 2);
	assert_int_equal(life->exits, 1);
	assert_true(life->exit_status_ok);
	skids_free();
	vmon_destroy(&vmon);
}

/*
 * The perf backend needs tracefs for the tracepoints' ids, and libvmon
 * mounts nothing: the test does, as root, when it is missing, and takes it
 * away again afterwards.
 */
static bool mounted_tracefs;

static int group_setup(void **state)
{
	(void)state;
	if (strcmp(FEED_BACKEND, "perf") == 0)
		mounted_tracefs = tracefs_mount();
	return 0;
}

static int hotplug_teardown(void **state)
{
	if (cpu1_offlined)
		cpu1_set_online(true);
	cpu1_unlock();
	return feedtest_teardown(state);
}

static int group_teardown(void **state)
{
	(void)state;
	if (cpu1_offlined)
		cpu1_set_online(true);
	tracefs_umount(mounted_tracefs);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_reads_no_btf),
		cmocka_unit_test_teardown(test_storm, feedtest_teardown),
		cmocka_unit_test_teardown(test_thread_exit, feedtest_teardown),
		cmocka_unit_test_teardown(test_leader_first, feedtest_teardown),
		cmocka_unit_test_teardown(test_leader_first_unseen, feedtest_teardown),
		cmocka_unit_test_teardown(test_leader_last_thread, feedtest_teardown),
		cmocka_unit_test_teardown(test_exec_thread, feedtest_teardown),
		cmocka_unit_test_teardown(test_pid_reuse, feedtest_teardown),
		cmocka_unit_test_teardown(test_exit_activity, feedtest_teardown),
		cmocka_unit_test_teardown(test_exit_changed_bits, feedtest_teardown),
		cmocka_unit_test_teardown(test_exec_changed_bits, feedtest_teardown),
		cmocka_unit_test_teardown(test_fork_changed_bits, feedtest_teardown),
		cmocka_unit_test_teardown(test_killed, feedtest_teardown),
		cmocka_unit_test_teardown(test_leader_killed, feedtest_teardown),
		cmocka_unit_test_teardown(test_forced_loss, feedtest_teardown),
		cmocka_unit_test(test_ring_size),
		cmocka_unit_test(test_ring_grows),
		cmocka_unit_test_teardown(test_keep_up_in_pass, feedtest_teardown),
		cmocka_unit_test_teardown(test_ring_grows_by_rate, feedtest_teardown),
		cmocka_unit_test(test_stdin_closed),
		cmocka_unit_test_teardown(test_storm_memory, feedtest_teardown),
		cmocka_unit_test_teardown(test_cpu_hotplug, hotplug_teardown),
		cmocka_unit_test_teardown(test_prompt, feedtest_teardown),
		cmocka_unit_test_teardown(test_stream, feedtest_teardown),
		cmocka_unit_test_teardown(test_reads_not_counted, feedtest_teardown),
		cmocka_unit_test_teardown(test_stream_unread, feedtest_teardown),
		cmocka_unit_test_teardown(test_stream_unseen, feedtest_teardown),
		cmocka_unit_test_teardown(test_aggregate, feedtest_teardown),
		cmocka_unit_test_teardown(test_churn, feedtest_teardown),
	};

	/* every child dies with us, whatever happens to the test */
	setpgid(0, 0);
	/* one test (a glob) while working on it: VMON_TEST_FILTER=test_stream* */
	if (getenv("VMON_TEST_FILTER"))
		cmocka_set_test_filter(getenv("VMON_TEST_FILTER"));
	return cmocka_run_group_tests_name("feed_" FEED_BACKEND, tests, group_setup, group_teardown);
}
