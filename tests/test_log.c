/*
 * test_log.c: the log stream (vmon_log(5)): a live run with children that
 * fork, exec, start threads, exit and are reaped, recorded and replayed
 * sample by sample, the replayed tree compared with the live one node by
 * node and field by field; the same log read one byte at a time; cut at
 * every offset; with every byte flipped; of a newer version; with a kind
 * this reader does not know; with field tables unlike this library's;
 * events; seeking back to keyframes; open files wanted but not recorded;
 * a live run's feed events recorded and delivered again by the replay; a
 * writer whose reader went away (EPIPE, and the process lives on).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "puppet.h"
#include "testlib.h"
#include "vmon_log.h"

extern char **environ;

static int teardown(void **state)
{
	(void)state;
	puppets_cleanup();
	return 0;
}

/* --- files in memory --- */

static int memfile(const void *data, size_t len)
{
	int fd = memfd_create("vmon-log", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* a second open file description of fd: its own offset */
static int reopen(int fd)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(r >= 0);
	return r;
}

static unsigned char *slurp(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *buf = malloc((size_t)end + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)end, 0), end);
	*len = (size_t)end;
	return buf;
}

/* --- comparing trees --- */

static const vmon_proc_t *next_node(const vmon_t *vmon, const vmon_proc_t *p)
{
	/* pre-order, threads before children, as the library walks */
	if (!p->is_thread && !list_empty(&p->threads))
		return list_first_entry(&p->threads, vmon_proc_t, threads);
	if (!list_empty(&p->children))
		return list_first_entry(&p->children, vmon_proc_t, siblings);
	for (; p; p = p->parent) {
		if (p->is_thread) {
			if (p->threads.next != &p->parent->threads)
				return list_entry(p->threads.next, vmon_proc_t, threads);
			if (!list_empty(&p->parent->children))
				return list_first_entry(&p->parent->children, vmon_proc_t, siblings);
			p = p->parent;
		}
		const list_head_t *head = p->parent ? &p->parent->children : &vmon->processes;

		if (p->siblings.next != head)
			return list_entry(p->siblings.next, vmon_proc_t, siblings);
	}
	return NULL;
}

static const vmon_proc_t *first_node(const vmon_t *vmon)
{
	return list_empty(&vmon->processes) ? NULL : list_first_entry(&vmon->processes, vmon_proc_t, siblings);
}

static void assert_same_store(const vmon_store_desc_t *desc, const void *a, const void *b, int pid, const char *what)
{
	char ta[4096], tb[4096];

	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];

		if (vmon_field_present(desc, f, a) != vmon_field_present(desc, f, b))
			fail_msg("pid %d %s.%s: present %d, replayed %d", pid, what, f->name,
				 vmon_field_present(desc, f, a), vmon_field_present(desc, f, b));
		if (vmon_field_compare(f, a, b)) {
			vmon_field_format(f, a, ta, sizeof(ta), 0);
			vmon_field_format(f, b, tb, sizeof(tb), 0);
			fail_msg("pid %d %s.%s: \"%s\", replayed \"%s\"", pid, what, f->name, ta, tb);
		}
	}
}

static void assert_same_sys(const vmon_t *live, const vmon_t *replay)
{
	for (int i = 0; i < VMON_STORE_SYS_NR; i++) {
		const void *a = live->stores[i], *b = replay->stores[i];

		assert_int_equal(live->sys_errors[i], replay->sys_errors[i]);
		if (!(live->sys_wants & (1L << i)))
			a = NULL;
		assert_int_equal(!a, !b);
		if (a)
			assert_same_store(&vmon_sys_store_descs[i], a, b, 0, vmon_sys_store_descs[i].name);
	}
	if (live->stores[VMON_STORE_SYS_STAT]) {
		const vmon_sys_stat_t *a = live->stores[VMON_STORE_SYS_STAT], *b = replay->stores[VMON_STORE_SYS_STAT];

		assert_int_equal(a->cpus_nr, b->cpus_nr);
		for (int c = 0; c < a->cpus_nr; c++) {
			assert_int_equal(a->cpus[c].online, b->cpus[c].online);
			assert_int_equal(a->cpus[c].user, b->cpus[c].user);
			assert_int_equal(a->cpus[c].idle, b->cpus[c].idle);
			assert_int_equal(a->cpus[c].system, b->cpus[c].system);
			assert_int_equal(a->cpus[c].guest_nice, b->cpus[c].guest_nice);
		}
	}
}

/* the replayed tree is the live one: the same nodes in the same order, with the same flags and values */
static int assert_same_tree(const vmon_t *live, const vmon_t *replay)
{
	const vmon_proc_t *a = first_node(live), *b = first_node(replay);
	int n = 0;

	assert_same_sys(live, replay);
	for (; a && b; a = next_node(live, a), b = next_node(replay, b), n++) {
		if (a->pid != b->pid || a->is_thread != b->is_thread)
			fail_msg("node %d: pid %d%s, replayed %d%s", n, a->pid, a->is_thread ? " (thread)" : "", b->pid,
				 b->is_thread ? " (thread)" : "");
		if (a->is_new != b->is_new || a->is_stale != b->is_stale)
			fail_msg("pid %d: new %d stale %d, replayed new %d stale %d", a->pid, a->is_new, a->is_stale,
				 b->is_new, b->is_stale);
		assert_int_equal(a->parent ? a->parent->pid : 0, b->parent ? b->parent->pid : 0);
		assert_int_equal(a->wants & ~VMON_WANT_PROC_FILES, b->wants);
		for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
			const void *sa = (a->wants & (1L << i)) ? a->stores[i] : NULL, *sb = b->stores[i];

			if (i == VMON_STORE_PROC_FILES)
				continue;
			assert_int_equal(a->errors[i], b->errors[i]);
			if (!sa != !sb)
				fail_msg("pid %d: store %s %s, replayed %s", a->pid, vmon_proc_store_descs[i].name,
					 sa ? "there" : "missing", sb ? "there" : "missing");
			if (sa)
				assert_same_store(&vmon_proc_store_descs[i], sa, sb, a->pid, vmon_proc_store_descs[i].name);
		}
	}
	if (a || b)
		fail_msg("the trees differ in length after %d nodes (%s ends first)", n, a ? "the replay" : "the live one");
	return n;
}

static const vmon_proc_t *find_node(const vmon_t *vmon, int pid)
{
	for (const vmon_proc_t *p = first_node(vmon); p; p = next_node(vmon, p)) {
		if (p->pid == pid && !p->is_thread)
			return p;
	}
	return NULL;
}

/* --- a recorder and a replayer side by side --- */

struct rig {
	vmon_t			live, replay;
	int			fd, rfd;
	vmon_log_writer_t	*w;
	vmon_log_t		*log;
	vmon_log_gone_t		*gone;		/* every GONE record read: the whole system's */
	int			gone_nr;
	int			ctors, dtors;
	int			samples;
};

static struct rig *the_rig;

static void rig_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	(void)proc;
	the_rig->ctors++;
}

static void rig_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	(void)proc;
	the_rig->dtors++;
}

static void rig_init(struct rig *r, const char *root, vmon_sys_wants_t sys_wants, vmon_proc_wants_t wants,
		     unsigned keyframes)
{
	vmon_log_record_t rec;
	vmon_attr_t attr;

	memset(r, 0, sizeof(*r));
	the_rig = r;
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.sys_wants = sys_wants;
	attr.proc_wants = wants;
	/*
	 * The samples alone: the feed's events have a test of their own
	 * (test_events_live), and under valgrind a feed slows every puppet this
	 * process forks (each one a copy of it under valgrind) past the waits.
	 */
	attr.feed = "none";
	attr.proc_root = root;
	if (!vmon_init_attr(&r->live, &attr))
		fail_msg("vmon_init_attr: %s", strerror(errno));
	r->fd = memfd_create("vmon-log", MFD_CLOEXEC);
	assert_true(r->fd >= 0);
	r->w = vmon_log_writer_open(r->fd, &r->live);
	assert_non_null(r->w);
	assert_int_equal(vmon_log_writer_set_keyframe_interval(r->w, keyframes), 0);
	r->rfd = reopen(r->fd);
	r->log = vmon_log_open(r->rfd);
	assert_non_null(r->log);
	assert_int_equal(vmon_log_read(r->log, &rec), 0);
	assert_int_equal(rec.type, VMON_LOG_HEADER);
	assert_int_equal(rec.offset, 12);
	assert_int_equal(rec.serial, 0);
	assert_int_equal(rec.u.header->version_major, VMON_LOG_VERSION_MAJOR);
	assert_int_equal(rec.u.header->ticks_per_sec, r->live.ticks_per_sec);
	assert_int_equal(rec.u.header->fields_unknown, 0);
	/* PROC_FILES describes each fd, not its store: the only fields a log does not carry */
	assert_int_equal(rec.u.header->fields_missing, vmon_proc_store_descs[VMON_STORE_PROC_FILES].fields_nr);
	assert_int_equal(rec.u.header->proc_wants, r->live.proc_wants & ~VMON_WANT_PROC_FILES);
	assert_int_equal(rec.u.header->sys_wants, r->live.sys_wants);
	assert_int_equal(vmon_log_replay_init(&r->replay, rec.u.header, 0), 0);
	r->replay.proc_ctor_cb = rig_ctor;
	r->replay.proc_dtor_cb = rig_dtor;
	/* a replay is not sampled, and monitors nothing */
	assert_int_equal(vmon_sample(&r->replay), 0);
	assert_int_equal(errno, EINVAL);
	assert_null(vmon_proc_monitor(&r->replay, 1, VMON_WANT_PROC_INHERIT, NULL, NULL));
}

/* sample, record, read back, replay, compare */
static int rig_step(struct rig *r)
{
	vmon_log_record_t rec;
	int nodes;

	assert_true(vmon_sample(&r->live));
	assert_int_equal(vmon_log_write_sample(r->w, &r->live, NULL), 0);
	r->samples++;
	for (;;) {
		if (vmon_log_read(r->log, &rec) < 0)
			fail_msg("reading sample %d: state %d: %s", r->samples, rec.state,
				 vmon_log_error(r->log) ? vmon_log_error(r->log) : "");
		if (rec.type == VMON_LOG_SAMPLE)
			break;
		fail_msg("a record of kind %d before sample %d", rec.type, r->samples);
	}
	assert_int_equal(rec.u.sample->seq, (unsigned long long)r->samples);
	assert_int_equal(vmon_log_replay(&r->replay, rec.u.sample), 0);
	nodes = assert_same_tree(&r->live, &r->replay);
	/* the notices of what this sample found gone follow it */
	for (;;) {
		if (vmon_log_read(r->log, &rec) < 0) {
			assert_int_equal(rec.state, VMON_LOG_EOF);
			break;
		}
		assert_int_equal(rec.type, VMON_LOG_GONE);
		r->gone = realloc(r->gone, sizeof(*r->gone) * (size_t)(r->gone_nr + 1));
		assert_non_null(r->gone);
		r->gone[r->gone_nr++] = rec.u.gone;
	}
	return nodes;
}

static void rig_fini(struct rig *r)
{
	vmon_log_record_t rec;
	vmon_log_writer_stats_t st;

	assert_int_equal(vmon_log_writer_get_stats(r->w, &st), 0);
	assert_int_equal(st.samples, (unsigned long long)r->samples);
	assert_int_equal(vmon_log_writer_close(r->w), 0);
	assert_int_equal(vmon_log_read(r->log, &rec), 0);
	assert_int_equal(rec.type, VMON_LOG_CLOSE);
	assert_int_equal(vmon_log_read(r->log, &rec), -1);
	assert_int_equal(rec.state, VMON_LOG_EOF);
	vmon_log_close(r->log);
	vmon_destroy(&r->replay);
	assert_int_equal(r->ctors, r->dtors);
	vmon_destroy(&r->live);
	close(r->rfd);
	close(r->fd);
	free(r->gone);
}

static const vmon_log_gone_t *find_gone(const struct rig *r, int pid)
{
	for (int i = 0; i < r->gone_nr; i++) {
		if (r->gone[i].pid == pid)
			return &r->gone[i];
	}
	return NULL;
}

static void wait_zombie(pid_t pid)
{
	for (int i = 0; i < 500 && proc_state(pid) != 'Z'; i++)
		usleep(10000);
	assert_int_equal(proc_state(pid), 'Z');
}

/*
 * The whole system, recorded and replayed at every sample, with children of
 * ours that fork, start threads, exec, exit and are reaped.
 */
static void test_round_trip_live(void **state)
{
	static struct rig r;
	puppet_t a, b, c;
	const vmon_proc_t *p;
	const vmon_log_gone_t *g;
	pid_t t1;
	int status;

	(void)state;
	rig_init(&r, "/proc", VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM | VMON_WANT_SYS_LOADAVG,
		 VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO | VMON_WANT_PROC_FOLLOW_THREADS, 3);
	assert_true(rig_step(&r) > 1);

	puppet_spawn(&a);
	rig_step(&r);
	p = find_node(&r.replay, a.pid);
	assert_non_null(p);
	assert_int_equal(p->parent ? p->parent->pid : 0, getpid());
	assert_true(p->is_new);

	puppet_fork(&a, &b, true);
	t1 = puppet_thread(&a, "worker-1");
	rig_step(&r);
	p = find_node(&r.replay, b.pid);
	assert_non_null(p);
	assert_int_equal(p->parent->pid, a.pid);
	p = find_node(&r.replay, a.pid);
	assert_non_null(find_thread((vmon_proc_t *)p, t1));

	puppet_exec(&b, (const char *const[]){ "/bin/sleep", "300", NULL }, 0);
	for (int i = 0; i < 500; i++) {
		rig_step(&r);
		p = find_node(&r.replay, b.pid);
		if (p && pstat((vmon_proc_t *)p)->argc == 2)
			break;
		usleep(10000);
	}
	assert_string_equal(pstat((vmon_proc_t *)p)->argv[0], "/bin/sleep");
	assert_string_equal(pstat((vmon_proc_t *)p)->argv[1], "300");

	puppet_fork(&a, &c, true);
	rig_step(&r);
	puppet_exit(&c, 7);
	wait_zombie(c.pid);
	rig_step(&r);
	p = find_node(&r.replay, c.pid);
	assert_non_null(p);
	assert_int_equal(pstat((vmon_proc_t *)p)->state, 'Z');
	assert_int_equal(pstat((vmon_proc_t *)p)->exit_code, 7 << 8);
	status = puppet_reap(&a, c.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	rig_step(&r);
	p = find_node(&r.replay, c.pid);
	assert_non_null(p);
	assert_true(p->is_stale);
	g = find_gone(&r, c.pid);
	assert_non_null(g);
	assert_int_equal(g->exit_status, 7 << 8);
	assert_int_equal(g->start, pstat((vmon_proc_t *)p)->start);
	rig_step(&r);
	assert_null(find_node(&r.replay, c.pid));

	puppet_thread_end(&a, t1);
	kill(b.pid, SIGKILL);
	status = puppet_reap(&a, b.pid);
	assert_true(WIFSIGNALED(status));
	for (int i = 0; i < 3; i++)
		rig_step(&r);
	assert_null(find_node(&r.replay, b.pid));
	assert_non_null(find_gone(&r, b.pid));
	p = find_node(&r.replay, a.pid);
	assert_null(find_thread((vmon_proc_t *)p, t1));
	rig_fini(&r);
}

/*
 * Open files are not recorded (vmon_log(5)), and wanting them breaks
 * nothing: the tree and every store the log has replay as they were, the
 * socket counts of SYS_SOCKETS among them, also when the system wants change
 * after the header was written.
 */
static void test_open_files_not_recorded(void **state)
{
	static struct rig r;
	const vmon_proc_t *live, *replayed;
	const vmon_proc_files_t *files;
	const vmon_sys_sockets_t *a, *b;
	int sv[2], more[2], pipefd[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	rig_init(&r, "/proc", VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FILES, 2);
	rig_step(&r);
	/* ours has its fds live, none replayed */
	live = find_node(&r.live, getpid());
	replayed = find_node(&r.replay, getpid());
	assert_non_null(live);
	assert_non_null(replayed);
	files = live->stores[VMON_STORE_PROC_FILES];
	assert_non_null(files);
	assert_true(files->fds_nr >= 4);
	assert_null(replayed->stores[VMON_STORE_PROC_FILES]);
	assert_false(replayed->wants & VMON_WANT_PROC_FILES);

	/* the socket tables taken after the header: their counts are in the samples from then on */
	assert_int_equal(vmon_set_sys_wants(&r.live, VMON_WANT_SYS_STAT | VMON_WANT_SYS_SOCKETS), 0);
	rig_step(&r);
	a = r.live.stores[VMON_STORE_SYS_SOCKETS];
	b = r.replay.stores[VMON_STORE_SYS_SOCKETS];
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a->unix_nr >= 2);
	assert_int_equal(b->unix_nr, a->unix_nr);
	/* a replayed store holds no fd (freeing it would close one of ours) */
	assert_int_equal(b->unix_fd, -1);
	assert_int_equal(b->tcp_fd, -1);
	assert_int_equal(b->udp6_fd, -1);

	/* two more unix sockets: a delta, then a keyframe */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, more), 0);
	for (int i = 0; i < 3; i++) {
		rig_step(&r);
		a = r.live.stores[VMON_STORE_SYS_SOCKETS];
		b = r.replay.stores[VMON_STORE_SYS_SOCKETS];
		assert_true(a->unix_nr >= 4);
		assert_int_equal(b->unix_nr, a->unix_nr);
	}

	/* dropped: gone from the replay too */
	assert_int_equal(vmon_set_sys_wants(&r.live, VMON_WANT_SYS_STAT), 0);
	rig_step(&r);
	assert_null(r.replay.stores[VMON_STORE_SYS_SOCKETS]);
	rig_fini(&r);
	close(sv[0]);
	close(sv[1]);
	close(more[0]);
	close(more[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* --- a reader that goes away --- */

static int sigpipe_handled;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_handled++;
}

static bool sigpipe_pending(void)
{
	sigset_t set;

	assert_int_equal(sigpending(&set), 0);
	return sigismember(&set, SIGPIPE);
}

/*
 * How the program treats SIGPIPE: as it starts (the default, which ends
 * the process), ignored, handled, or blocked with one of its own pending.
 */
enum pipe_program { PROGRAM_DEFAULT, PROGRAM_IGNORES, PROGRAM_HANDLES, PROGRAM_BLOCKS, PROGRAM_NR };
static const char *const program_names[PROGRAM_NR] = { "default", "ignores", "handles", "blocks" };

/* a pipe, a FIFO and a socket whose reader is gone, for the writer's open and for a sample */
enum pipe_kind { KIND_PIPE, KIND_FIFO, KIND_SOCKET, KIND_NR };
static const char *const kind_names[KIND_NR] = { "pipe", "FIFO", "socket" };

/* the ends of a pipe-like channel of the kind: [0] read, [1] write */
static void channel(enum pipe_kind kind, int fds[2], const char *dir)
{
	char path[256];

	if (kind == KIND_PIPE) {
		assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	} else if (kind == KIND_SOCKET) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	} else {
		snprintf(path, sizeof(path), "%s/fifo", dir);
		unlink(path);
		assert_int_equal(mkfifo(path, 0600), 0);
		fds[0] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		assert_true(fds[0] >= 0);
		fds[1] = open(path, O_WRONLY | O_CLOEXEC);
		assert_true(fds[1] >= 0);
		unlink(path);
	}
}

/*
 * vmon_log_writer_open(3) promises EPIPE when the reader is gone, and the
 * library never ends the process: a writer on a pipe, a FIFO or a socket
 * whose read end is closed fails with EPIPE, at its open and at a sample,
 * and this process lives on, whatever it does with SIGPIPE, which the
 * library leaves as it was: its disposition and mask the same, its handler
 * not called, and no SIGPIPE left pending but the program's own.
 */
static void test_reader_gone(void **state)
{
	char dir[] = "/tmp/vmon-log-pipe-XXXXXX";
	struct sigaction before, after, act;
	sigset_t mask_before, mask_after, pipe_set;
	fixture_t fx;
	vmon_t vmon;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 10, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);

	for (int program = 0; program < PROGRAM_NR; program++) {
		for (int kind = 0; kind < KIND_NR; kind++) {
			const struct timespec now = { 0, 0 };
			vmon_log_writer_t *w;
			int fds[2];

			memset(&act, 0, sizeof(act));
			act.sa_handler = program == PROGRAM_IGNORES ? SIG_IGN :
					 program == PROGRAM_HANDLES ? on_sigpipe : SIG_DFL;
			assert_int_equal(sigaction(SIGPIPE, &act, NULL), 0);
			if (program == PROGRAM_BLOCKS) {
				assert_int_equal(sigprocmask(SIG_BLOCK, &pipe_set, NULL), 0);
				assert_int_equal(raise(SIGPIPE), 0);
			}
			assert_int_equal(sigaction(SIGPIPE, NULL, &before), 0);
			assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &mask_before), 0);
			sigpipe_handled = 0;

			/* the header cannot be written */
			channel(kind, fds, dir);
			close(fds[0]);
			errno = 0;
			assert_null(vmon_log_writer_open(fds[1], &vmon));
			if (errno != EPIPE)
				fail_msg("%s, program %s: open: %s", kind_names[kind], program_names[program], strerror(errno));
			close(fds[1]);

			/* the reader leaves after the header: the next sample fails, and every write after it */
			channel(kind, fds, dir);
			w = vmon_log_writer_open(fds[1], &vmon);
			assert_non_null(w);
			close(fds[0]);
			assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), -1);
			assert_int_equal(errno, EPIPE);
			assert_int_equal(vmon_log_write_user(w, "x", 1), -1);
			assert_int_equal(errno, EPIPE);
			assert_int_equal(vmon_log_writer_close(w), -1);
			assert_int_equal(errno, EPIPE);
			close(fds[1]);

			/* nothing of the program's changed, nor was anything raised at it */
			assert_int_equal(sigaction(SIGPIPE, NULL, &after), 0);
			assert_ptr_equal(after.sa_handler, before.sa_handler);
			assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &mask_after), 0);
			assert_int_equal(sigismember(&mask_after, SIGPIPE), sigismember(&mask_before, SIGPIPE));
			assert_int_equal(sigpipe_handled, 0);
			if (program == PROGRAM_BLOCKS) {
				/* its own SIGPIPE is still there, and only it */
				assert_true(sigpipe_pending());
				assert_int_equal(sigtimedwait(&pipe_set, NULL, &now), SIGPIPE);
				assert_int_equal(sigprocmask(SIG_UNBLOCK, &pipe_set, NULL), 0);
			}
			assert_false(sigpipe_pending());
		}
	}
	signal(SIGPIPE, SIG_DFL);
	vmon_destroy(&vmon);
	fixture_free(&fx);
	rmdir(dir);
}

/* --- a small log of fixtures, for the byte-level tests --- */

static unsigned char *small_log(size_t *len)
{
	static const char *const argv1[] = { "/usr/bin/daemon", "--flag", NULL };
	static const char *const argv2[] = { "worker", "a b", NULL };
	vmon_event_t ev;
	vmon_log_writer_t *w;
	unsigned char *bytes;
	fixture_stat_t st;
	fixture_t fx;
	vmon_t vmon;
	int fd;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, NULL, 'S', 10, argv1);
	fixture_proc(&fx, 20, 1, NULL, 'R', 200, argv2);
	fixture_thread(&fx, 20, 21, "worker-t", 'S', 201);
	fixture_stat_init(&st, 20, 1, "worker", 'R', 200);
	fixture_stat_set(&st, 20, "2");
	fixture_stat_write(&fx, "20/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_stat_write(&fx, "20/task/20/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_proc(&fx, 30, 20, "kid", 'S', 300, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM,
				 VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_FOLLOW_THREADS));
	fd = memfd_create("vmon-log", MFD_CLOEXEC);
	w = vmon_log_writer_open(fd, &vmon);
	assert_non_null(w);
	assert_int_equal(vmon_log_writer_set_keyframe_interval(w, 2), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), 0);

	memset(&ev, 0, sizeof(ev));
	ev.kind = VMON_EVENT_EXEC;
	ev.has = VMON_EVENT_HAS_PPID | VMON_EVENT_HAS_COMM | VMON_EVENT_HAS_FILENAME | VMON_EVENT_HAS_ARGS;
	ev.time_ns = 123456789;
	ev.pid = ev.tid = 40;
	ev.ppid = 30;
	snprintf(ev.comm, sizeof(ev.comm), "sh");
	ev.filename = "/bin/sh";
	ev.args = "sh\0-c\0true";
	ev.args_len = 11;
	assert_int_equal(vmon_log_write_event(w, &ev), 0);

	fixture_ran(&fx, 20);
	fixture_remove(&fx, "30");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), 0);
	assert_int_equal(vmon_log_write_drop(w, 3), 0);
	assert_int_equal(vmon_log_write_user(w, "note", 4), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), 0);
	assert_int_equal(vmon_log_writer_close(w), 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);
	bytes = slurp(fd, len);
	close(fd);
	return bytes;
}

/* a record as numbers: what two readers of the same bytes must agree on */
static unsigned long long hash(unsigned long long h, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

static unsigned long long hash_store(unsigned long long h, const vmon_store_desc_t *desc, const void *store)
{
	char buf[4096];

	if (!store)
		return hash(h, "-", 1);
	for (int i = 0; i < desc->fields_nr; i++) {
		int present = vmon_field_present(desc, &desc->fields[i], store);
		int n = vmon_field_format(&desc->fields[i], store, buf, sizeof(buf), 0);

		h = hash(h, &present, sizeof(present));
		if (n > 0)
			h = hash(h, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	}
	return h;
}

static unsigned long long digest(const vmon_log_record_t *rec)
{
	unsigned long long h = 1469598103934665603ULL;

	h = hash(h, &rec->type, sizeof(rec->type));
	h = hash(h, &rec->offset, sizeof(rec->offset));
	h = hash(h, &rec->serial, sizeof(rec->serial));
	switch (rec->type) {
	case VMON_LOG_HEADER:
		h = hash(h, rec->u.header->hostname, strlen(rec->u.header->hostname));
		h = hash(h, &rec->u.header->proc_stores_nr, sizeof(int));
		break;
	case VMON_LOG_SAMPLE: {
		const vmon_log_sample_t *s = rec->u.sample;

		h = hash(h, &s->seq, sizeof(s->seq));
		h = hash(h, &s->time, sizeof(s->time));
		h = hash(h, &s->flags, sizeof(s->flags));
		for (int i = 0; i < VMON_STORE_SYS_NR; i++)
			h = hash_store(h, &vmon_sys_store_descs[i], s->sys_stores[i]);
		for (int i = 0; i < s->procs_nr; i++) {
			const vmon_log_proc_t *p = &s->procs[i];

			h = hash(h, &p->pid, sizeof(p->pid));
			h = hash(h, &p->parent, sizeof(p->parent));
			h = hash(h, &p->flags, sizeof(p->flags));
			h = hash(h, &p->wants, sizeof(p->wants));
			h = hash(h, p->errors, sizeof(p->errors));
			for (int k = 0; k < VMON_STORE_PROC_NR; k++) {
				if (k != VMON_STORE_PROC_FILES)
					h = hash_store(h, &vmon_proc_store_descs[k], p->stores[k]);
			}
		}
		break;
	}
	case VMON_LOG_EVENT:
		h = hash(h, &rec->u.event.kind, sizeof(int));
		h = hash(h, &rec->u.event.pid, sizeof(int));
		h = hash(h, rec->u.event.comm, sizeof(rec->u.event.comm));
		if (rec->u.event.filename)
			h = hash(h, rec->u.event.filename, strlen(rec->u.event.filename));
		h = hash(h, rec->u.event.args, rec->u.event.args_len);
		break;
	case VMON_LOG_DROP:
		h = hash(h, &rec->u.lost, sizeof(rec->u.lost));
		break;
	case VMON_LOG_GONE:
		h = hash(h, &rec->u.gone, sizeof(rec->u.gone));
		break;
	case VMON_LOG_USER:
		h = hash(h, rec->u.user.data, rec->u.user.len);
		break;
	case VMON_LOG_CLOSE:
		break;
	}
	return h;
}

#define RECORDS_MAX 64

struct reading {
	unsigned long long	digests[RECORDS_MAX];
	off_t			ends[RECORDS_MAX];	/* where each record ends: the next one's offset */
	int			nr;
	vmon_log_state_t	end;
	char			error[256];
};

/* every record of a file */
static void read_fd(int fd, struct reading *out)
{
	vmon_log_t *log = vmon_log_open(fd);
	vmon_log_record_t rec;

	assert_non_null(log);
	memset(out, 0, sizeof(*out));
	while (vmon_log_read(log, &rec) == 0) {
		assert_int_equal(rec.state, VMON_LOG_OK);
		assert_true(out->nr < RECORDS_MAX);
		assert_int_equal(rec.serial, (unsigned long long)out->nr);
		out->digests[out->nr++] = digest(&rec);
	}
	out->end = rec.state;
	if (vmon_log_error(log))
		snprintf(out->error, sizeof(out->error), "%s", vmon_log_error(log));
	vmon_log_close(log);
}

/* every record of bytes fed step bytes at a time */
static void read_mem(const unsigned char *bytes, size_t len, size_t step, struct reading *out)
{
	vmon_log_t *log = vmon_log_open(VMON_LOG_FD_NONE);
	vmon_log_record_t rec;
	size_t fed = 0;

	assert_non_null(log);
	memset(out, 0, sizeof(*out));
	for (;;) {
		if (vmon_log_read(log, &rec) == 0) {
			assert_true(out->nr < RECORDS_MAX);
			out->digests[out->nr++] = digest(&rec);
			continue;
		}
		if (rec.state != VMON_LOG_REQUIRE_DATA || fed == len)
			break;
		assert_int_equal(vmon_log_feed(log, bytes + fed, len - fed < step ? len - fed : step), 0);
		fed += len - fed < step ? len - fed : step;
	}
	out->end = rec.state;
	if (vmon_log_error(log))
		snprintf(out->error, sizeof(out->error), "%s", vmon_log_error(log));
	vmon_log_close(log);
}

static void test_small_log_reads(void **state)
{
	struct reading all, mem;
	unsigned char *bytes;
	vmon_log_record_t rec;
	vmon_log_t *log;
	size_t len;
	int fd, types[RECORDS_MAX], nr = 0;

	(void)state;
	bytes = small_log(&len);
	fd = memfile(bytes, len);
	log = vmon_log_open(fd);
	while (vmon_log_read(log, &rec) == 0) {
		types[nr++] = rec.type;
		if (rec.type == VMON_LOG_EVENT) {
			assert_int_equal(rec.u.event.kind, VMON_EVENT_EXEC);
			assert_int_equal(rec.u.event.pid, 40);
			assert_int_equal(rec.u.event.ppid, 30);
			assert_string_equal(rec.u.event.comm, "sh");
			assert_string_equal(rec.u.event.filename, "/bin/sh");
			assert_int_equal(rec.u.event.args_len, 11);
			assert_memory_equal(rec.u.event.args, "sh\0-c\0true", 11);
			assert_int_equal(rec.u.event.exit_status, -1);
			/* written by vmon_log_write_event(): whether it had a node is not known */
			assert_int_equal(rec.event_node, -1);
		} else if (rec.type == VMON_LOG_SAMPLE && rec.u.sample->seq == 2) {
			/* pid 30 went: stale in the second sample, then gone */
			const vmon_log_sample_t *s = rec.u.sample;
			int found = 0;

			assert_false(s->flags & VMON_LOG_SAMPLE_KEYFRAME);
			for (int i = 0; i < s->procs_nr; i++) {
				if (s->procs[i].pid == 30) {
					assert_true(s->procs[i].flags & VMON_LOG_PROC_STALE);
					found++;
				}
				if (s->procs[i].pid == 21) {
					assert_true(s->procs[i].flags & VMON_LOG_PROC_THREAD);
					assert_int_equal(s->procs[s->procs[i].parent].pid, 20);
					found++;
				}
			}
			assert_int_equal(found, 2);
		} else if (rec.type == VMON_LOG_GONE) {
			assert_int_equal(rec.u.gone.pid, 30);
			assert_int_equal(rec.u.gone.start, 300);
		} else if (rec.type == VMON_LOG_DROP) {
			assert_int_equal(rec.u.lost, 3);
		} else if (rec.type == VMON_LOG_USER) {
			assert_int_equal(rec.u.user.len, 4);
			assert_memory_equal(rec.u.user.data, "note", 4);
		}
	}
	assert_int_equal(rec.state, VMON_LOG_EOF);
	vmon_log_close(log);
	{
		static const int want[] = {
			VMON_LOG_HEADER, VMON_LOG_SAMPLE, VMON_LOG_EVENT, VMON_LOG_SAMPLE, VMON_LOG_GONE,
			VMON_LOG_DROP, VMON_LOG_USER, VMON_LOG_SAMPLE, VMON_LOG_CLOSE,
		};

		assert_int_equal(nr, sizeof(want) / sizeof(want[0]));
		assert_memory_equal(types, want, sizeof(want));
	}

	/* the same records from the file, from memory whole, and from memory one byte at a time */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	read_fd(fd, &all);
	assert_int_equal(all.end, VMON_LOG_EOF);
	assert_int_equal(all.nr, nr);
	read_mem(bytes, len, len, &mem);
	assert_int_equal(mem.end, VMON_LOG_REQUIRE_DATA);
	assert_int_equal(mem.nr, all.nr);
	assert_memory_equal(mem.digests, all.digests, sizeof(all.digests[0]) * (size_t)all.nr);
	read_mem(bytes, len, 1, &mem);
	assert_int_equal(mem.end, VMON_LOG_REQUIRE_DATA);
	assert_int_equal(mem.nr, all.nr);
	assert_memory_equal(mem.digests, all.digests, sizeof(all.digests[0]) * (size_t)all.nr);
	close(fd);
	free(bytes);
}

/* cut at every offset: the whole records before the cut, then EOF (file) or REQUIRE_DATA (memory) */
static void test_truncation(void **state)
{
	struct reading all, cut;
	off_t ends[RECORDS_MAX];
	unsigned char *bytes;
	vmon_log_record_t rec;
	vmon_log_t *log;
	size_t len;
	int fd, nr = 0;

	(void)state;
	bytes = small_log(&len);
	fd = memfile(bytes, len);
	read_fd(fd, &all);
	/* where each record ends: the next's offset, or the end of the file */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	log = vmon_log_open(fd);
	while (vmon_log_read(log, &rec) == 0) {
		if (nr)
			ends[nr - 1] = rec.offset;
		nr++;
	}
	ends[nr - 1] = (off_t)len;
	vmon_log_close(log);
	close(fd);

	/* under valgrind, every 13th cut: each one reads the log twice */
	for (size_t at = 0; at <= len; at += under_valgrind() ? 13 : 1) {
		int whole = 0;

		while (whole < nr && ends[whole] <= (off_t)at)
			whole++;
		fd = memfile(bytes, at);
		read_fd(fd, &cut);
		close(fd);
		if (cut.end != VMON_LOG_EOF || cut.nr != whole)
			fail_msg("cut at %zu: %d records and state %d (%s); want %d and EOF", at, cut.nr, cut.end,
				 cut.error, whole);
		assert_memory_equal(cut.digests, all.digests, sizeof(all.digests[0]) * (size_t)whole);
		read_mem(bytes, at, at ? at : 1, &cut);
		if (cut.end != VMON_LOG_REQUIRE_DATA || cut.nr != whole)
			fail_msg("memory cut at %zu: %d records and state %d (%s); want %d and REQUIRE_DATA", at,
				 cut.nr, cut.end, cut.error, whole);
	}
	free(bytes);
}

/* any byte changed: an error that says where, never a crash or a wrong record */
static void test_corruption(void **state)
{
	struct reading all, bad;
	unsigned char *bytes;
	size_t len;

	(void)state;
	bytes = small_log(&len);
	read_mem(bytes, len, len, &all);
	for (size_t at = 0; at < len; at += under_valgrind() ? 13 : 1) {
		/* the minor version: a later minor is readable by design */
		if (at == 10 || at == 11)
			continue;
		for (int bit = 0; bit < 8; bit += 3) {
			bytes[at] ^= (unsigned char)(1 << bit);
			read_mem(bytes, len, len, &bad);
			bytes[at] ^= (unsigned char)(1 << bit);
			if (bad.end != VMON_LOG_ERROR || !strstr(bad.error, "offset "))
				fail_msg("bit %d of byte %zu flipped: state %d after %d records (%s)", bit, at, bad.end,
					 bad.nr, bad.error);
			/* what came before the bad record is what it was */
			assert_memory_equal(bad.digests, all.digests, sizeof(all.digests[0]) * (size_t)bad.nr);
		}
	}
	free(bytes);
}

static void test_versions(void **state)
{
	struct reading r;
	unsigned char *bytes;
	size_t len;

	(void)state;
	bytes = small_log(&len);
	assert_memory_equal(bytes, "VMON-LOG", 8);
	assert_int_equal(bytes[8], VMON_LOG_VERSION_MAJOR);

	/* a later minor version: read as it is */
	bytes[10] = 7;
	read_mem(bytes, len, len, &r);
	assert_int_equal(r.end, VMON_LOG_REQUIRE_DATA);
	assert_true(r.nr > 5);

	/* a later major version: refused at once, saying why */
	bytes[8] = VMON_LOG_VERSION_MAJOR + 1;
	read_mem(bytes, len, len, &r);
	assert_int_equal(r.end, VMON_LOG_ERROR);
	assert_int_equal(r.nr, 0);
	assert_non_null(strstr(r.error, "is newer than this reader's"));
	{
		int fd = memfile(bytes, len);
		vmon_log_t *log = vmon_log_open(fd);
		vmon_log_record_t rec;

		assert_int_equal(vmon_log_read(log, &rec), -1);
		assert_int_equal(rec.state, VMON_LOG_ERROR);
		assert_int_equal(errno, EPROTONOSUPPORT);
		assert_null(vmon_log_header(log));
		/* and it stays so */
		assert_int_equal(vmon_log_read(log, &rec), -1);
		assert_int_equal(rec.state, VMON_LOG_ERROR);
		vmon_log_close(log);
		close(fd);
	}

	/* not a log at all */
	read_mem((const unsigned char *)"#!/bin/sh\necho hello\n", 21, 21, &r);
	assert_int_equal(r.end, VMON_LOG_ERROR);
	assert_non_null(strstr(r.error, "not a vmon log"));
	/* nothing at all: an empty log */
	{
		int fd = memfile("", 0);

		read_fd(fd, &r);
		assert_int_equal(r.end, VMON_LOG_EOF);
		assert_int_equal(r.nr, 0);
		close(fd);
	}
	free(bytes);
}

/* --- an independent writer of the format, for what this library never writes --- */

struct enc {
	unsigned char	buf[8192];
	size_t		len;
};

static void enc_u8(struct enc *e, unsigned v)
{
	assert_true(e->len < sizeof(e->buf));
	e->buf[e->len++] = (unsigned char)v;
}

static void enc_varint(struct enc *e, unsigned long long v)
{
	while (v >= 0x80) {
		enc_u8(e, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	enc_u8(e, (unsigned)v);
}

static void enc_svarint(struct enc *e, long long v)
{
	enc_varint(e, ((unsigned long long)v << 1) ^ (unsigned long long)(v >> 63));
}

static void enc_string(struct enc *e, const char *s)
{
	enc_varint(e, strlen(s));
	for (; *s; s++)
		enc_u8(e, (unsigned char)*s);
}

/* the CRC-32 of zlib, written out here so that the test does not share the library's */
static unsigned crc32_of(const unsigned char *p, size_t len)
{
	unsigned crc = 0xffffffffu;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	return ~crc;
}

static unsigned crc8_of(const unsigned char *p, size_t len)
{
	unsigned crc = 0;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1) & 0xff;
	}
	return crc;
}

static void enc_record(struct enc *out, unsigned kind, const struct enc *body)
{
	size_t start = out->len;
	unsigned crc;

	enc_u8(out, kind);
	enc_varint(out, body->len);
	enc_u8(out, crc8_of(out->buf + start, out->len - start));
	assert_true(out->len + body->len + 4 <= sizeof(out->buf));
	memcpy(out->buf + out->len, body->buf, body->len);
	out->len += body->len;
	crc = crc32_of(out->buf + start, out->len - start);
	for (int i = 0; i < 4; i++)
		enc_u8(out, (crc >> (8 * i)) & 0xff);
}

static void enc_field(struct enc *e, const char *name, unsigned wire)
{
	enc_string(e, name);
	enc_u8(e, wire);
	enc_u8(e, 0);
	enc_string(e, name);
	enc_string(e, "a field");
}

/*
 * A log whose tables are not this library's: proc_stat with a field this
 * library lacks, utime stored as an int, most fields missing; a store this
 * library does not have; a record kind it does not know.
 */
static void test_other_tables(void **state)
{
	struct enc log = { .len = 0 }, body;
	vmon_log_record_t rec;
	vmon_log_t *r;
	const vmon_log_header_t *h;
	const vmon_log_sample_t *s;
	const vmon_proc_stat_t *st;
	vmon_t replay;

	(void)state;
	memcpy(log.buf, "VMON-LOG\1\0\3\0", 12);
	log.len = 12;

	body.len = 0;
	enc_string(&body, "elsewhere");
	enc_string(&body, "9.9.9");
	enc_string(&body, "00000000-0000-0000-0000-000000000000");
	enc_string(&body, "libvmon 9");
	enc_varint(&body, 100);		/* ticks */
	enc_varint(&body, 4096);
	enc_varint(&body, 2);
	enc_varint(&body, 1700000000000000000ULL);
	enc_varint(&body, VMON_FLAG_PROC_ALL);
	enc_varint(&body, 0);		/* sys wants */
	enc_varint(&body, 1 | 2);	/* proc wants: proc_stat, proc_future */
	enc_varint(&body, 0);		/* no sys stores */
	enc_varint(&body, 2);
	enc_string(&body, "proc_stat");
	enc_u8(&body, 0);
	enc_varint(&body, 4);
	enc_field(&body, "pid", 2);		/* int */
	enc_field(&body, "future", 7);		/* ulonglong, not this library's */
	enc_field(&body, "utime", 2);		/* int here, ulonglong in this library */
	enc_field(&body, "comm", 8);		/* char_array */
	enc_string(&body, "proc_future");
	enc_u8(&body, 0);
	enc_varint(&body, 1);
	enc_field(&body, "x", 7);
	enc_record(&log, VMON_LOG_HEADER, &body);

	/* a kind of a later version, skipped */
	body.len = 0;
	enc_string(&body, "whatever it is");
	enc_record(&log, 77, &body);

	/* a sample: one process, pid 42, with its stores */
	body.len = 0;
	enc_varint(&body, 1);		/* seq */
	enc_varint(&body, 1);		/* keyframe */
	enc_varint(&body, 1700000001000000000ULL);
	enc_varint(&body, 0);		/* sys mask */
	enc_varint(&body, 0);		/* sys errors */
	enc_varint(&body, 0);		/* sys changed */
	enc_varint(&body, 1);		/* entries */
	enc_varint(&body, 42);
	enc_u8(&body, 0x08 | 0x10 | 0x20 | 0x40 | 0x80 | 0x02);	/* fresh, parent, wants, errors, data, new */
	enc_varint(&body, 0);		/* top */
	enc_varint(&body, 3);		/* wants */
	enc_varint(&body, 3);		/* stores */
	enc_varint(&body, 1);		/* errors: 1 */
	enc_varint(&body, 0);		/* proc_stat's */
	enc_varint(&body, 300);		/* an errno above a byte (a kernel-internal code that leaked, say) */
	enc_varint(&body, 3);		/* changed */
	enc_varint(&body, 4);		/* proc_stat: 4 changes */
	enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, 42);
	enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, 1000);
	enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, -5);
	enc_varint(&body, 0 << 2 | 3);	enc_varint(&body, 4); enc_u8(&body, 'a'); enc_u8(&body, 'b'); enc_u8(&body, 'c');
	enc_varint(&body, 1);		/* proc_future: 1 change */
	enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, 9);
	enc_record(&log, VMON_LOG_SAMPLE, &body);

	r = vmon_log_open(VMON_LOG_FD_NONE);
	assert_int_equal(vmon_log_feed(r, log.buf, log.len), 0);
	assert_int_equal(vmon_log_read(r, &rec), 0);
	h = rec.u.header;
	assert_string_equal(h->hostname, "elsewhere");
	assert_int_equal(h->version_minor, 3);
	assert_int_equal(h->proc_stores_nr, 2);
	assert_int_equal(h->proc_stores[0].id, VMON_STORE_PROC_STAT);
	assert_int_equal(h->proc_stores[1].id, -1);
	assert_int_equal(h->proc_stores[0].fields[1].sym, -1);
	assert_int_equal(h->proc_stores[0].fields[2].sym, VMON_PROC_STAT_UTIME);
	assert_int_equal(h->fields_unknown, 2);	/* future, x */
	{
		int fields = 0;

		for (int i = 0; i < VMON_STORE_SYS_NR; i++)
			fields += vmon_sys_store_descs[i].fields_nr;
		for (int i = 0; i < VMON_STORE_PROC_NR; i++)
			fields += vmon_proc_store_descs[i].fields_nr;
		assert_int_equal(h->fields_missing, fields - 3);
	}
	assert_int_equal(h->proc_wants, VMON_WANT_PROC_STAT);

	assert_int_equal(vmon_log_read(r, &rec), 0);
	assert_int_equal(rec.type, VMON_LOG_SAMPLE);
	assert_int_equal(rec.serial, 2);	/* the skipped record counted */
	s = rec.u.sample;
	assert_int_equal(s->procs_nr, 1);
	assert_int_equal(s->procs[0].pid, 42);
	st = s->procs[0].stores[VMON_STORE_PROC_STAT];
	assert_non_null(st);
	assert_int_equal(st->pid, 42);
	assert_int_equal(st->utime, (unsigned long long)(long long)-5);
	assert_int_equal(st->comm.len, 3);
	assert_string_equal(st->comm.array, "abc");
	assert_true(BITTEST(st->present, VMON_PROC_STAT_COMM));
	assert_false(BITTEST(st->present, VMON_PROC_STAT_STIME));
	assert_true(BITTEST(st->changed, VMON_PROC_STAT_UTIME));
	assert_int_equal(s->procs[0].errors[VMON_STORE_PROC_STAT], 300);

	assert_int_equal(vmon_log_replay_init(&replay, h, VMON_FLAG_PROC_ARRAY), 0);
	assert_int_equal(vmon_log_replay(&replay, s), 0);
	assert_int_equal(replay.array_active_nr, 1);
	assert_int_equal(vmon_proc_lookup(&replay, 42)->pid, 42);
	/* a node's errors are a byte each (vmon.h): one that does not fit is EOVERFLOW, not 300 & 0xff */
	assert_int_equal(vmon_proc_lookup(&replay, 42)->errors[VMON_STORE_PROC_STAT], EOVERFLOW);
	assert_int_equal(replay.ticks_per_sec, 100);
	vmon_destroy(&replay);

	assert_int_equal(vmon_log_read(r, &rec), -1);
	assert_int_equal(rec.state, VMON_LOG_REQUIRE_DATA);
	vmon_log_close(r);
}

/* a header's start with a page of page_size bytes: preamble, host texts, ticks and sizes, wants proc_stat only */
static void enc_header_page(struct enc *log, struct enc *body, unsigned long long page_size)
{
	memcpy(log->buf, "VMON-LOG\1\0\0\0", 12);
	log->len = 12;
	body->len = 0;
	enc_string(body, "h");
	enc_string(body, "r");
	enc_string(body, "b");
	enc_string(body, "w");
	enc_varint(body, 100);
	enc_varint(body, page_size);
	enc_varint(body, 1);
	enc_varint(body, 0);
	enc_varint(body, 0);
	enc_varint(body, 0);
	enc_varint(body, 1);
	enc_varint(body, 0);
}

/* ... of 4 KiB pages */
static void enc_header_start(struct enc *log, struct enc *body)
{
	enc_header_page(log, body, 4096);
}

/* a whole header record whose one store is proc_stat with its pid */
static void enc_pid_header(struct enc *log, struct enc *body, unsigned long long page_size)
{
	enc_header_page(log, body, page_size);
	enc_varint(body, 1);
	enc_string(body, "proc_stat");
	enc_u8(body, 0);
	enc_varint(body, 1);
	enc_field(body, "pid", 2);
	enc_record(log, VMON_LOG_HEADER, body);
}

/* a sample's start: seq, flags, time, no system store; then the entry count */
static void enc_sample_start(struct enc *body, unsigned seq, bool keyframe, unsigned entries)
{
	body->len = 0;
	enc_varint(body, seq);
	enc_varint(body, keyframe);
	enc_varint(body, 0);
	enc_varint(body, 0);
	enc_varint(body, 0);
	enc_varint(body, 0);
	enc_varint(body, entries);
}

/* the number of strings in a NULL-terminated vector */
static int strv_len(char *const *v)
{
	int n = 0;

	while (v && v[n])
		n++;
	return n;
}

/*
 * argc counts the entries of argv (vmon.h): a log that says otherwise, in
 * a split argv's count or in an argv of its own, must not make a reader's
 * argc run past the vector.
 */
static void test_split_count(void **state)
{
	(void)state;
	for (int split = 0; split < 2; split++) {
		struct enc log, body;
		vmon_log_record_t rec;
		const vmon_proc_stat_t *st;
		vmon_log_t *r;

		enc_header_start(&log, &body);
		enc_varint(&body, 1);
		enc_string(&body, "proc_stat");
		enc_u8(&body, 0);
		enc_varint(&body, 4);
		enc_field(&body, "pid", 2);
		enc_field(&body, "cmdline", 8);
		enc_field(&body, "argc", 2);
		enc_string(&body, "argv");
		enc_u8(&body, 9);
		enc_u8(&body, split ? 0x2 : 0);
		if (split) {
			enc_varint(&body, 1);	/* its text: cmdline */
			enc_varint(&body, 2);	/* its count: argc */
		}
		enc_string(&body, "ARGV");
		enc_string(&body, "the arguments");
		enc_record(&log, VMON_LOG_HEADER, &body);

		/* pid 42, "a", and an argc of 5 */
		enc_sample_start(&body, 1, true, 1);
		enc_varint(&body, 42);
		enc_u8(&body, 0x08 | 0x10 | 0x20 | 0x80 | 0x02);
		enc_varint(&body, 0);
		enc_varint(&body, 1);
		enc_varint(&body, 1);
		enc_varint(&body, 1);
		enc_varint(&body, split ? 3 : 4);
		enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, 42);
		enc_varint(&body, 0 << 2 | 3);	enc_varint(&body, 3); enc_u8(&body, 'a'); enc_u8(&body, 0);
		enc_varint(&body, 0 << 2 | 3);	enc_svarint(&body, 5);
		if (!split) {
			/* a vector of one string of its own */
			enc_varint(&body, 0 << 2 | 3);	enc_varint(&body, 2); enc_string(&body, "a");
		}
		enc_record(&log, VMON_LOG_SAMPLE, &body);

		/* then argc alone grows by 3 */
		enc_sample_start(&body, 2, false, 1);
		enc_varint(&body, 42);
		enc_u8(&body, 0x80);
		enc_varint(&body, 1);
		enc_varint(&body, 1);
		enc_varint(&body, 2 << 2 | 3);	enc_svarint(&body, 3);
		enc_record(&log, VMON_LOG_SAMPLE, &body);

		r = vmon_log_open(VMON_LOG_FD_NONE);
		assert_int_equal(vmon_log_feed(r, log.buf, log.len), 0);
		assert_int_equal(vmon_log_read(r, &rec), 0);
		for (int i = 0; i < 2; i++) {
			if (vmon_log_read(r, &rec) < 0) {
				/* refused: as good, if it says where */
				assert_int_equal(rec.state, VMON_LOG_ERROR);
				assert_non_null(strstr(vmon_log_error(r), "offset "));
				break;
			}
			assert_int_equal(rec.type, VMON_LOG_SAMPLE);
			st = rec.u.sample->procs[0].stores[VMON_STORE_PROC_STAT];
			assert_non_null(st);
			assert_int_equal(st->argc, strv_len(st->argv));
			assert_int_equal(st->argc, 1);
			assert_string_equal(st->argv[0], "a");
			/* pointers into cmdline, as the sampler's */
			assert_ptr_equal(st->argv[0], st->cmdline.array);
		}
		vmon_log_close(r);
	}
}

/* samples referring to state they do not have, and counts beyond the record: errors */
static void test_bad_samples(void **state)
{
	static const struct {
		const char	*what;
		unsigned char	entry[16];
		size_t		len;
	} cases[] = {
		{ "a delta without a base", { 42, 0x00 }, 2 },
		{ "a fresh entry without wants", { 42, 0x08 | 0x10, 0 }, 3 },
		{ "a parent after itself", { 42, 0x08 | 0x10 | 0x20, 5, 1, 1 }, 6 },
		{ "a thread at the top", { 42, 0x08 | 0x10 | 0x20 | 0x01, 0, 1, 1 }, 6 },
		{ "a store beyond the table", { 42, 0x08 | 0x10 | 0x20, 0, 1, 2 }, 6 },
		{ "a change beyond the fields", { 42, 0x08 | 0x10 | 0x20 | 0x80, 0, 1, 1, 1, 1, 0x7f, 1 }, 9 },
		{ "pid 0", { 0, 0x08 | 0x10 | 0x20, 0, 1, 1 }, 5 },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct enc log = { .len = 0 }, body = { .len = 0 };
		vmon_log_record_t rec;
		vmon_log_t *r;

		enc_pid_header(&log, &body, 4096);
		enc_sample_start(&body, 1, false, 1);
		for (size_t i = 0; i < cases[c].len; i++)
			enc_u8(&body, cases[c].entry[i]);
		enc_record(&log, VMON_LOG_SAMPLE, &body);

		r = vmon_log_open(VMON_LOG_FD_NONE);
		assert_int_equal(vmon_log_feed(r, log.buf, log.len), 0);
		assert_int_equal(vmon_log_read(r, &rec), 0);
		if (vmon_log_read(r, &rec) == 0 || rec.state != VMON_LOG_ERROR)
			fail_msg("%s: read as state %d", cases[c].what, rec.state);
		assert_non_null(strstr(vmon_log_error(r), "offset "));
		vmon_log_close(r);
	}
}

/*
 * The pages a log's stores count are the recorded machine's: a replay says
 * its size (vmon_page_size()), which a program multiplies the pages by,
 * and a header whose page size is not a power of two is refused.
 */
static void test_page_size(void **state)
{
	static const unsigned long long sizes[] = { 65536, 4096, 0, 3000, 1ULL << 41 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct enc log, body;
		vmon_log_record_t rec;
		vmon_log_t *r;
		vmon_t replay;

		enc_pid_header(&log, &body, sizes[i]);
		r = vmon_log_open(VMON_LOG_FD_NONE);
		assert_int_equal(vmon_log_feed(r, log.buf, log.len), 0);
		if (i >= 2) {
			assert_int_equal(vmon_log_read(r, &rec), -1);
			assert_int_equal(rec.state, VMON_LOG_ERROR);
			assert_non_null(strstr(vmon_log_error(r), "page size"));
			vmon_log_close(r);
			continue;
		}
		assert_int_equal(vmon_log_read(r, &rec), 0);
		assert_int_equal(rec.u.header->page_size, (long)sizes[i]);
		assert_int_equal(vmon_log_replay_init(&replay, rec.u.header, 0), 0);
		assert_int_equal(vmon_page_size(&replay), (long)sizes[i]);
		vmon_destroy(&replay);
		vmon_log_close(r);
	}
	/* a live instance's is this machine's */
	{
		vmon_t vmon;

		assert_true(vmon_init(&vmon, VMON_FLAG_NONE, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT));
		assert_int_equal(vmon_page_size(&vmon), sysconf(_SC_PAGESIZE));
		vmon_destroy(&vmon);
	}
}

/* back to a keyframe: the records from there are those read the first time */
static void test_seek(void **state)
{
	unsigned long long digests[40];
	vmon_log_record_t keyframes[8], rec;
	vmon_log_writer_t *w;
	vmon_log_t *log;
	fixture_t fx;
	vmon_t vmon;
	int fd, n = 0, k = 0;

	(void)state;
	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 10, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT));
	fd = memfd_create("vmon-log", MFD_CLOEXEC);
	w = vmon_log_writer_open(fd, &vmon);
	assert_int_equal(vmon_log_writer_set_keyframe_interval(w, 5), 0);
	for (int i = 0; i < 20; i++) {
		fixture_proc(&fx, 100 + i, 1, "child", 'S', 1000 + (unsigned long long)i, NULL);
		if (i % 3 == 0)
			fixture_remove(&fx, "101");
		assert_true(vmon_sample(&vmon));
		assert_int_equal(vmon_log_write_sample(w, &vmon, NULL), 0);
	}
	assert_int_equal(vmon_log_writer_close(w), 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	log = vmon_log_open(fd);
	while (vmon_log_read(log, &rec) == 0) {
		assert_true(n < 40);
		digests[n++] = digest(&rec);
		if (rec.type == VMON_LOG_SAMPLE && (rec.u.sample->flags & VMON_LOG_SAMPLE_KEYFRAME))
			keyframes[k++] = rec;
	}
	assert_int_equal(rec.state, VMON_LOG_EOF);
	assert_int_equal(k, 4);
	for (int i = k - 1; i >= 0; i--) {
		int m = (int)keyframes[i].serial;

		assert_int_equal(vmon_log_seek(log, &keyframes[i]), 0);
		while (vmon_log_read(log, &rec) == 0)
			assert_true(digest(&rec) == digests[m++]);
		assert_int_equal(rec.state, VMON_LOG_EOF);
		assert_int_equal(m, n);
	}
	/* a sample that is not a keyframe owes its values to the one before: refused */
	{
		vmon_log_record_t not_key = keyframes[1];

		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		vmon_log_close(log);
		log = vmon_log_open(fd);
		while (vmon_log_read(log, &rec) == 0) {
			if (rec.type == VMON_LOG_SAMPLE && rec.u.sample->seq == 7)
				not_key = rec;
		}
		assert_int_equal(vmon_log_seek(log, &not_key), 0);
		assert_int_equal(vmon_log_read(log, &rec), -1);
		assert_int_equal(rec.state, VMON_LOG_ERROR);
		assert_non_null(strstr(vmon_log_error(log), "not a keyframe"));
	}
	vmon_log_close(log);
	/* a memory parser cannot seek */
	log = vmon_log_open(VMON_LOG_FD_NONE);
	assert_int_equal(vmon_log_seek(log, &keyframes[0]), -1);
	assert_int_equal(errno, EINVAL);
	vmon_log_close(log);
	close(fd);
}

/* read a whole file, replaying its samples; returns the final state */
static void check_event(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	(void)vmon;
	(*(int *)arg)++;
	if (proc)
		assert_int_equal(proc->pid, ev->pid);
	/* read whole: ASan and valgrind watch */
	if (ev->filename)
		(void)strlen(ev->filename);
	if (ev->args_len)
		(void)memchr(ev->args, 1, ev->args_len);
}

static vmon_log_state_t read_and_replay(const char *path, int *records)
{
	int events = 0;	/* handed over by the replay */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	vmon_log_t *log;
	vmon_log_record_t rec;
	bool replaying = false;
	vmon_t vmon;

	assert_true(fd >= 0);
	log = vmon_log_open(fd);
	*records = 0;
	while (vmon_log_read(log, &rec) == 0) {
		(*records)++;
		if (rec.type == VMON_LOG_HEADER) {
			replaying = vmon_log_replay_init(&vmon, rec.u.header, VMON_FLAG_PROC_ARRAY) == 0;
			if (replaying)
				assert_int_equal(vmon_feed_set_callback(&vmon, check_event, &events), 0);
		} else if (replaying && vmon_log_replay_record(&vmon, &rec) == 0 && rec.type == VMON_LOG_SAMPLE) {
			assert_int_equal(assert_tree_consistent(&vmon), vmon.array_active_nr);
		}
	}
	if (replaying)
		vmon_destroy(&vmon);
	vmon_log_close(log);
	close(fd);
	return rec.state;
}

/* the fuzzer's seeds read whole; what once crashed it is read and replayed without harm */
static void test_fuzz_corpus(void **state)
{
	static const char *const dirs[] = { "corpus", "crashes" };
	int seeds = 0;

	(void)state;
	for (size_t d = 0; d < 2; d++) {
		char path[1024];
		struct dirent *de;
		DIR *dir;

		snprintf(path, sizeof(path), "%s/%s", FUZZ_DIR, dirs[d]);
		dir = opendir(path);
		assert_non_null(dir);
		while ((de = readdir(dir))) {
			vmon_log_state_t end;
			int records;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s", FUZZ_DIR, dirs[d], de->d_name);
			end = read_and_replay(path, &records);
			if (d == 0) {
				if (end != VMON_LOG_EOF || records < 3)
					fail_msg("seed %s: state %d after %d records", de->d_name, end, records);
				seeds++;
			}
		}
		closedir(dir);
	}
	assert_true(seeds >= 3);
}

/* --- events: recorded as the feed delivered them, delivered again by the replay --- */


struct seen {
	int		kind, pid, ppid, exit_status, proc_pid;	/* proc_pid: the node handed with it, 0 none */
};

/* every event a callback got: the whole machine's, which a busy one makes many */
struct seen_list {
	struct seen	*e;
	int		nr, cap;
};

static void seen_list_free(struct seen_list *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static void on_event(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	struct seen_list *l = arg;

	(void)vmon;
	if (proc)
		assert_int_equal(proc->pid, ev->pid);
	if (l->nr == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->e = realloc(l->e, sizeof(*l->e) * (size_t)l->cap);
		assert_non_null(l->e);
	}
	l->e[l->nr++] = (struct seen){ ev->kind, ev->pid, ev->ppid,
				       (ev->has & VMON_EVENT_HAS_EXIT_STATUS) ? ev->exit_status : -1, proc ? proc->pid : 0 };
}

/*
 * The event of our child's life with that pid: its fork (from this
 * process), or the first exit after it.  A busy machine with a small
 * pid_max reuses pids within the test: another life of the same pid, before
 * or after ours, is not our child's.
 */
static const struct seen *find_seen(const struct seen_list *l, int kind, int pid)
{
	int from = 0;

	for (int i = 0; i < l->nr; i++) {
		if (l->e[i].kind == VMON_EVENT_FORK && l->e[i].pid == pid && l->e[i].ppid == getpid()) {
			if (kind == VMON_EVENT_FORK)
				return &l->e[i];
			from = i;
			break;
		}
	}
	for (int i = from; i < l->nr; i++) {
		if (l->e[i].kind == kind && l->e[i].pid == pid)
			return &l->e[i];
	}
	return NULL;
}

/*
 * A shell that exits with code, after a grandchild (/bin/true) of its own,
 * or that execs /bin/true; reaped here.  Spawned, not forked: under
 * valgrind a forked copy of this process would be slow to exit.
 */
static pid_t short_life(int code, bool grandchild, bool exec, int *status)
{
	char script[64];
	char *argv[] = { "sh", "-c", script, NULL };
	pid_t pid;

	if (exec)
		snprintf(script, sizeof(script), "exec /bin/true");
	else
		snprintf(script, sizeof(script), "%sexit %d", grandchild ? "/bin/true; " : "", code);
	assert_int_equal(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return pid;
}

static bool all_exited(const struct seen_list *l, const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		if (!find_seen(l, VMON_EVENT_EXIT, pids[i]))
			return false;
	}
	return true;
}

/*
 * A live run with the feed, the log following it: children of ours that
 * fork a grandchild, exec or just exit between samples.  The log has a fork and an exit for
 * each, with the exit status waitpid() gave; replayed, the feed callback
 * on the replay gets the events the live callback got, in their order,
 * with a node where the live one had one.
 */
static void test_events_live(void **state)
{
	static struct seen_list live_seen, replay_seen;
	vmon_feed_stats_t st;
	vmon_log_writer_t *w, *other;
	vmon_log_record_t rec;
	vmon_log_t *log;
	vmon_attr_t attr;
	vmon_t live, replay;
	pid_t pids[6];
	int status[6], fd, records[VMON_EVENT_KIND_NR] = { 0 };

	(void)state;
	memset(&live_seen, 0, sizeof(live_seen));
	memset(&replay_seen, 0, sizeof(replay_seen));
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = VMON_WANT_PROC_STAT;
	if (!vmon_init_attr(&live, &attr))
		fail_msg("vmon_init_attr: %s", strerror(errno));
	assert_int_equal(vmon_feed_get_stats(&live, &st), 0);
	if (st.backend == VMON_FEED_NONE) {
		const char *why = vmon_feed_reason(&live);

		vmon_destroy(&live);
		SKIP_IF(true, "no event feed here (%s)", why ? why : "none");
	}
	assert_int_equal(vmon_feed_set_callback(&live, on_event, &live_seen), 0);
	fd = memfd_create("vmon-log", MFD_CLOEXEC);
	assert_true(fd >= 0);
	w = vmon_log_writer_open(fd, &live);
	assert_non_null(w);
	assert_int_equal(vmon_log_writer_follow_feed(w, &live), 0);
	/* one writer follows an instance */
	other = vmon_log_writer_open(fd, &live);
	assert_non_null(other);
	assert_int_equal(vmon_log_writer_follow_feed(other, &live), -1);
	assert_int_equal(errno, EBUSY);
	vmon_log_writer_close(other);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	vmon_log_writer_close(w);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	w = vmon_log_writer_open(fd, &live);
	assert_non_null(w);
	assert_int_equal(vmon_log_writer_follow_feed(w, &live), 0);

	assert_true(vmon_sample(&live));
	assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
	for (int i = 0; i < 6; i++) {
		pids[i] = short_life(20 + i, i % 2, i == 4, &status[i]);
		/* two lives between samples, some samples with none */
		if (i % 2) {
			assert_true(vmon_sample(&live));
			assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
		}
	}
	/* the last exits reach the feed: a few more samples */
	for (int i = 0; i < 250 && !all_exited(&live_seen, pids, 6); i++) {
		usleep(20000);
		assert_true(vmon_sample(&live));
		assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
	}
	assert_true(vmon_sample(&live));
	assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
	for (int i = 0; i < 6; i++) {
		const struct seen *fork_ev = find_seen(&live_seen, VMON_EVENT_FORK, pids[i]);
		const struct seen *exit_ev = find_seen(&live_seen, VMON_EVENT_EXIT, pids[i]);

		if (!fork_ev || !exit_ev) {
			/*
			 * The kernel drops events when the reader falls behind (valgrind on a
			 * loaded machine); the feed must then say so.  What the log holds is
			 * still checked below against what the callback got.
			 */
			assert_int_equal(vmon_feed_get_stats(&live, &st), 0);
			if (st.lost == 0)
				fail_msg("child %d (pid %d): the live feed gave %s%s, and reports no loss", i, pids[i],
					 fork_ev ? "" : "no fork ", exit_ev ? "" : "no exit");
			print_message("child %d (pid %d): events lost (%llu), not checked\n", i, pids[i], st.lost);
			continue;
		}
		if (exit_ev->exit_status != -1)
			assert_int_equal(exit_ev->exit_status, status[i]);
	}
	/* the instance goes first: the writer it followed closes on its own */
	vmon_destroy(&live);
	assert_int_equal(vmon_log_writer_close(w), 0);

	/* the log: every event the live callback got, in order, with its exit status */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	log = vmon_log_open(fd);
	assert_non_null(log);
	assert_int_equal(vmon_log_read(log, &rec), 0);
	assert_int_equal(rec.type, VMON_LOG_HEADER);
	assert_int_equal(vmon_log_replay_init(&replay, rec.u.header, 0), 0);
	assert_int_equal(vmon_feed_set_callback(&replay, on_event, &replay_seen), 0);
	{
		int n = 0;

		while (vmon_log_read(log, &rec) == 0) {
			if (rec.type == VMON_LOG_EVENT) {
				const struct seen *l;

				assert_true(n < live_seen.nr);
				l = &live_seen.e[n];
				assert_int_equal(rec.u.event.kind, l->kind);
				assert_int_equal(rec.u.event.pid, l->pid);
				assert_int_equal((rec.u.event.has & VMON_EVENT_HAS_EXIT_STATUS) ? rec.u.event.exit_status : -1,
						 l->exit_status);
				/* the log says whether the live feed handed it with a node */
				assert_int_equal(rec.event_node, l->proc_pid ? 1 : 0);
				records[rec.u.event.kind]++;
				n++;
			}
			assert_int_equal(vmon_log_replay_record(&replay, &rec), 0);
		}
		assert_int_equal(rec.state, VMON_LOG_EOF);
		assert_int_equal(n, live_seen.nr);
	}
	/* the replay handed them over as the live feed did, a node with each where live had one */
	assert_int_equal(replay_seen.nr, live_seen.nr);
	for (int i = 0; i < live_seen.nr; i++) {
		const struct seen *a = &live_seen.e[i], *b = &replay_seen.e[i];

		if (a->kind != b->kind || a->pid != b->pid || a->exit_status != b->exit_status ||
		    a->proc_pid != b->proc_pid)
			fail_msg("event %d: live %d pid %d status %d node %d, replayed %d pid %d status %d node %d", i,
				 a->kind, a->pid, a->exit_status, a->proc_pid, b->kind, b->pid, b->exit_status, b->proc_pid);
	}
	for (int i = 0; i < 6; i++)
		assert_int_equal(find_seen(&replay_seen, VMON_EVENT_FORK, pids[i])->proc_pid, pids[i]);
	assert_int_equal(vmon_feed_get_stats(&replay, &st), 0);
	assert_int_equal(st.backend, VMON_FEED_NONE);
	for (int k = 0; k < VMON_EVENT_KIND_NR; k++)
		assert_int_equal(st.events[k], (unsigned long long)records[k]);
	vmon_destroy(&replay);
	vmon_log_close(log);
	close(fd);
	seen_list_free(&live_seen);
	seen_list_free(&replay_seen);
}

/*
 * The small log's records through vmon_log_replay_record(): its exec event
 * is held until the sample after it, then handed over (pid 40 is not in
 * the tree: no node); its drop notice is the replay's feed's lost count.
 */
static void test_replay_records(void **state)
{
	static struct seen_list seen;
	vmon_feed_stats_t st;
	vmon_log_record_t rec;
	unsigned char *bytes;
	vmon_log_t *log;
	vmon_t replay;
	size_t len;
	int fd, samples = 0;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	bytes = small_log(&len);
	fd = memfile(bytes, len);
	log = vmon_log_open(fd);
	assert_int_equal(vmon_log_read(log, &rec), 0);
	assert_int_equal(vmon_log_replay_init(&replay, rec.u.header, 0), 0);
	assert_int_equal(vmon_feed_set_callback(&replay, on_event, &seen), 0);
	while (vmon_log_read(log, &rec) == 0) {
		assert_int_equal(vmon_log_replay_record(&replay, &rec), 0);
		if (rec.type == VMON_LOG_EVENT)
			assert_int_equal(seen.nr, 0);
		if (rec.type == VMON_LOG_SAMPLE && ++samples == 2) {
			assert_int_equal(seen.nr, 1);
			assert_int_equal(seen.e[0].kind, VMON_EVENT_EXEC);
			assert_int_equal(seen.e[0].pid, 40);
			assert_int_equal(seen.e[0].proc_pid, 0);
		}
	}
	assert_int_equal(samples, 3);
	assert_int_equal(seen.nr, 1);
	assert_int_equal(vmon_feed_get_stats(&replay, &st), 0);
	assert_int_equal(st.lost, 3);
	assert_int_equal(st.events[VMON_EVENT_EXEC], 1);
	assert_int_equal(st.ignored, 1);
	seen_list_free(&seen);
	/* not a replay, no record: refused */
	assert_int_equal(vmon_log_replay_record(&replay, NULL), -1);
	assert_int_equal(errno, EINVAL);
	vmon_destroy(&replay);
	vmon_log_close(log);
	close(fd);
	free(bytes);
}

/* entries of a hand-made sample: pid, parent index, flags, id */
struct entry {
	int			pid, parent;
	unsigned		flags;
	unsigned long long	id;
};

/* a replay of a machine of one CPU, its processes' stat alone, fed by the test's own samples */
static void replay_start(vmon_t *replay, vmon_flags_t flags)
{
	vmon_log_header_t h;

	memset(&h, 0, sizeof(h));
	h.ticks_per_sec = 100;
	h.page_size = 4096;
	h.num_cpus = 1;
	h.flags = flags;
	h.proc_wants = VMON_WANT_PROC_STAT;
	assert_int_equal(vmon_log_replay_init(replay, &h, 0), 0);
}

static int replay_entries(vmon_t *replay, const struct entry *e, int nr)
{
	vmon_log_proc_t procs[8];
	vmon_log_sample_t s;

	assert_true(nr <= 8);
	memset(&s, 0, sizeof(s));
	memset(procs, 0, sizeof(procs));
	for (int i = 0; i < nr; i++) {
		procs[i].pid = e[i].pid;
		procs[i].parent = e[i].parent;
		procs[i].flags = e[i].flags;
		procs[i].id = e[i].id;
	}
	s.procs = procs;
	s.procs_nr = nr;
	return vmon_log_replay(replay, &s);
}

/* the nodes of the replay's tree as "pid(parent pid)" in pre-order, threads with a 't' */
static void tree_text(vmon_t *vmon, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const vmon_proc_t *p = first_node(vmon); p; p = next_node(vmon, p))
		len += (size_t)snprintf(buf + len, size - len, "%s%d(%d)%s", len ? " " : "", p->pid,
					p->parent ? p->parent->pid : 0, p->is_thread ? "t" : "");
}

static int dtors;

static void count_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	(void)proc;
	dtors++;
}

/*
 * vmon_log_replay() takes samples from its caller, not only from the
 * reader: ids that do not name one node each (0, the same id twice, an
 * id that named another pid or a thread) are refused with EINVAL and leave
 * the replay as it was, and the next good sample goes on from it.  Two
 * entries with one id once made two nodes share a slot, and the forget
 * loop freed one of them twice; an id of 0 made a node every pass that
 * never left.
 */
static void test_replay_ids(void **state)
{
	static const struct entry good[] = {
		{ 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 11, 1, VMON_LOG_PROC_THREAD, 3 }, { 12, 0, 0, 4 },
	};
	static const struct {
		const char	*what;
		struct entry	e[4];
		int		nr;
	} bad[] = {
		{ "two entries with one id", { { 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 12, 0, 0, 2 } }, 3 },
		{ "an id of 0", { { 10, -1, 0, 1 }, { 13, 0, 0, 0 } }, 2 },
		{ "ids of 0, twice", { { 10, -1, 0, 1 }, { 13, 0, 0, 0 }, { 14, 0, 0, 0 } }, 3 },
		{ "an id that named another pid", { { 10, -1, 0, 1 }, { 13, 0, 0, 2 } }, 2 },
		{ "a thread's id for a process", { { 10, -1, 0, 1 }, { 11, 0, 0, 3 } }, 2 },
	};
	char before[256], after[256];
	vmon_t replay;

	(void)state;
	replay_start(&replay, VMON_FLAG_PROC_ALL);
	replay.proc_dtor_cb = count_dtor;
	dtors = 0;
	assert_int_equal(replay_entries(&replay, good, 4), 0);
	tree_text(&replay, before, sizeof(before));
	assert_string_equal(before, "10(0) 11(10) 11(11)t 12(10)");

	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		int generation = replay.generation;

		errno = 0;
		if (replay_entries(&replay, bad[c].e, bad[c].nr) != -1 || errno != EINVAL)
			fail_msg("%s: accepted (errno %s)", bad[c].what, strerror(errno));
		/* nothing changed: the same tree, no pass counted, no node gone */
		tree_text(&replay, after, sizeof(after));
		assert_string_equal(after, before);
		assert_int_equal(replay.generation, generation);
		assert_int_equal(dtors, 0);
		assert_int_equal(assert_tree_consistent(&replay), 4);
	}

	/* the next good sample goes on from the last one: 12 leaves, 13 comes */
	{
		static const struct entry next[] = {
			{ 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 11, 1, VMON_LOG_PROC_THREAD, 3 }, { 13, 0, VMON_LOG_PROC_NEW, 6 },
		};

		assert_int_equal(replay_entries(&replay, next, 4), 0);
		tree_text(&replay, after, sizeof(after));
		assert_string_equal(after, "10(0) 11(10) 11(11)t 13(10)");
		assert_int_equal(dtors, 1);
		assert_int_equal(assert_tree_consistent(&replay), 4);
		assert_non_null(vmon_proc_lookup(&replay, 13));
		assert_null(vmon_proc_lookup(&replay, 12));
	}

	/*
	 * Two nodes of one pid in one sample, neither stale, are a writer's:
	 * 13 ended (new in one sample, stale in the next) while its pid went
	 * to another process.  Refused once (EINVAL): vtop -r then failed on
	 * logs of busy machines.
	 */
	{
		static const struct entry reused[] = {
			{ 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 11, 1, VMON_LOG_PROC_THREAD, 3 }, { 13, 0, 0, 6 },
			{ 13, 0, VMON_LOG_PROC_NEW, 7 },
		}, after_stale[] = {
			{ 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 11, 1, VMON_LOG_PROC_THREAD, 3 },
			{ 13, 0, VMON_LOG_PROC_STALE, 6 }, { 13, 0, 0, 7 },
		}, gone[] = {
			{ 10, -1, 0, 1 }, { 11, 0, 0, 2 }, { 11, 1, VMON_LOG_PROC_THREAD, 3 }, { 13, 0, 0, 7 },
		};

		assert_int_equal(replay_entries(&replay, reused, 5), 0);
		tree_text(&replay, after, sizeof(after));
		assert_string_equal(after, "10(0) 11(10) 11(11)t 13(10) 13(10)");
		assert_int_equal(assert_tree_consistent(&replay), 5);
		assert_int_equal(replay_entries(&replay, after_stale, 5), 0);
		assert_int_equal(replay_entries(&replay, gone, 4), 0);
		tree_text(&replay, after, sizeof(after));
		assert_string_equal(after, "10(0) 11(10) 11(11)t 13(10)");
		assert_int_equal(dtors, 2);
		assert_non_null(vmon_proc_lookup(&replay, 13));
		vmon_destroy(&replay);
		assert_int_equal(dtors, 6);

		/* an instance that goes while a pid has two nodes frees both (the fuzzer found one leaked) */
		replay_start(&replay, VMON_FLAG_PROC_ALL);
		replay.proc_dtor_cb = count_dtor;
		dtors = 0;
		assert_int_equal(replay_entries(&replay, reused, 5), 0);
	}
	vmon_destroy(&replay);
	assert_int_equal(dtors, 5);

	/*
	 * The node that lost the index to the other of its pid (id 6, the
	 * ended one, listed first) is named again when the other goes stale,
	 * and is no longer taken as gone: freed once, by the sample that no
	 * longer lists it, and not found after (a double free and a dangling
	 * lookup once, under valgrind).
	 */
	{
		static const struct entry reused[] = {
			{ 10, -1, 0, 1 }, { 13, 0, 0, 6 }, { 13, 0, VMON_LOG_PROC_NEW, 7 },
		}, other_stale[] = {
			{ 10, -1, 0, 1 }, { 13, 0, 0, 6 }, { 13, 0, VMON_LOG_PROC_STALE, 7 },
		}, alone[] = {
			{ 10, -1, 0, 1 }, { 13, 0, 0, 6 },
		}, gone[] = {
			{ 10, -1, 0, 1 },
		};

		for (int keep = 0; keep < 2; keep++) {
			replay_start(&replay, VMON_FLAG_PROC_ALL);
			replay.proc_dtor_cb = count_dtor;
			dtors = 0;
			assert_int_equal(replay_entries(&replay, reused, 3), 0);
			assert_int_equal(replay_entries(&replay, other_stale, 3), 0);
			assert_int_equal(assert_tree_consistent(&replay), 3);
			assert_non_null(vmon_proc_lookup(&replay, 13));
			assert_false(vmon_proc_lookup(&replay, 13)->is_stale);
			assert_int_equal(replay_entries(&replay, alone, 2), 0);
			assert_int_equal(assert_tree_consistent(&replay), 2);
			assert_non_null(vmon_proc_lookup(&replay, 13));
			assert_int_equal(dtors, 1);
			if (!keep) {
				assert_int_equal(replay_entries(&replay, gone, 1), 0);
				assert_null(vmon_proc_lookup(&replay, 13));
				assert_int_equal(dtors, 2);
			}
			vmon_destroy(&replay);
			assert_int_equal(dtors, 3);
		}
	}

	/*
	 * A stale entry whose node is made in this sample (at a keyframe every
	 * entry has a new id), beside a live one of its pid, before or after
	 * it, processes and threads: the live node keeps the index, and
	 * everything is freed once (the stale node took the index and gave it
	 * to nobody: a leak the fuzzer found, tests/fuzz/crashes/).
	 */
	{
		static const struct entry stale_after[] = {
			{ 10, -1, 0, 1 }, { 13, 0, 0, 2 }, { 13, 0, VMON_LOG_PROC_STALE, 3 },
			{ 14, 1, VMON_LOG_PROC_THREAD, 4 }, { 14, 1, VMON_LOG_PROC_THREAD | VMON_LOG_PROC_STALE, 5 },
		}, stale_before[] = {
			{ 10, -1, 0, 1 }, { 13, 0, VMON_LOG_PROC_STALE, 3 }, { 13, 0, 0, 2 },
			{ 14, 2, VMON_LOG_PROC_THREAD | VMON_LOG_PROC_STALE, 5 }, { 14, 2, VMON_LOG_PROC_THREAD, 4 },
		}, both_stale[] = {
			{ 10, -1, 0, 1 }, { 13, 0, VMON_LOG_PROC_STALE, 2 }, { 13, 0, VMON_LOG_PROC_STALE, 3 },
		};
		static const struct {
			const struct entry	*e;
			int			nr;
			bool			live_13;	/* a live 13 to find */
		} cases[] = { { stale_after, 5, true }, { stale_before, 5, true }, { both_stale, 3, false } };

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			vmon_proc_t *p;

			replay_start(&replay, VMON_FLAG_PROC_ALL);
			replay.proc_dtor_cb = count_dtor;
			dtors = 0;
			assert_int_equal(replay_entries(&replay, cases[c].e, cases[c].nr), 0);
			assert_int_equal(assert_tree_consistent(&replay), cases[c].nr);
			p = vmon_proc_lookup(&replay, 13);
			if (cases[c].live_13) {
				assert_non_null(p);
				assert_false(p->is_stale);
			} else {
				assert_null(p);
			}
			vmon_destroy(&replay);
			assert_int_equal(dtors, cases[c].nr);
		}
	}

	/*
	 * A replay monitors nothing, so vmon_proc_unmonitor() leaves its nodes
	 * alone, even the top ones of a log without PROC_ALL (they were freed
	 * with their subtree once, while the replay still held them).
	 */
	{
		static const struct entry top[] = { { 10, -1, 0, 1 }, { 11, 0, 0, 2 } };

		replay_start(&replay, 0);
		replay.proc_dtor_cb = count_dtor;
		dtors = 0;
		assert_int_equal(replay_entries(&replay, top, 2), 0);
		assert_non_null(vmon_proc_lookup(&replay, 10));
		vmon_proc_unmonitor(&replay, vmon_proc_lookup(&replay, 10), NULL, NULL);
		assert_int_equal(dtors, 0);
		assert_int_equal(replay_entries(&replay, top, 2), 0);
		tree_text(&replay, after, sizeof(after));
		assert_string_equal(after, "10(0) 11(10)");
		vmon_destroy(&replay);
		assert_int_equal(dtors, 2);
	}
}

/*
 * A store a sample says did not change (no activity bit) is as it was, and
 * none of its fields changed in that sample: its changed bits are clear,
 * not those of the copy that last changed it.  They stayed set, so that a
 * replayed idle process looked changed in every sample (a chart's redraw,
 * vtop -b's kept lines: vtop/data/snapshot.c).
 */
static void test_replay_unchanged_store(void **state)
{
	vmon_log_proc_t proc;
	vmon_log_sample_t s;
	vmon_proc_stat_t st;
	const vmon_proc_stat_t *got;
	vmon_t replay;

	(void)state;
	replay_start(&replay, VMON_FLAG_PROC_ALL);
	memset(&st, 0, sizeof(st));
	st.cmdline_fd = st.comm_fd = st.wchan_fd = st.stat_fd = -1;
	st.utime = 7;
	BITSET(st.present, VMON_PROC_STAT_UTIME);
	BITSET(st.changed, VMON_PROC_STAT_UTIME);
	memset(&proc, 0, sizeof(proc));
	proc.pid = 10;
	proc.parent = -1;
	proc.id = 1;
	proc.wants = VMON_WANT_PROC_STAT;
	proc.activity = VMON_WANT_PROC_STAT;
	proc.stores[VMON_STORE_PROC_STAT] = &st;
	memset(&s, 0, sizeof(s));
	s.procs = &proc;
	s.procs_nr = 1;
	assert_int_equal(vmon_log_replay(&replay, &s), 0);
	got = vmon_proc_lookup(&replay, 10)->stores[VMON_STORE_PROC_STAT];
	assert_int_equal(got->utime, 7);
	assert_true(BITTEST(got->changed, VMON_PROC_STAT_UTIME));

	/* the next sample: the same store, unchanged */
	proc.activity = 0;
	assert_int_equal(vmon_log_replay(&replay, &s), 0);
	got = vmon_proc_lookup(&replay, 10)->stores[VMON_STORE_PROC_STAT];
	assert_int_equal(got->utime, 7);
	assert_false(BITTEST(got->changed, VMON_PROC_STAT_UTIME));
	assert_true(BITTEST(got->present, VMON_PROC_STAT_UTIME));
	assert_int_equal(vmon_proc_lookup(&replay, 10)->activity, 0);
	vmon_destroy(&replay);
}

static int ctors;

static void count_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	(void)proc;
	ctors++;
}

/* a hand-made sample whose entries have a stat store with a start time each (starts[i]) */
static int replay_lives(vmon_t *replay, const struct entry *e, const unsigned long long *starts, int nr)
{
	vmon_proc_stat_t st[8];
	vmon_log_proc_t procs[8];
	vmon_log_sample_t s;

	assert_true(nr <= 8);
	memset(&s, 0, sizeof(s));
	memset(procs, 0, sizeof(procs));
	memset(st, 0, sizeof(st));
	for (int i = 0; i < nr; i++) {
		st[i].cmdline_fd = st[i].comm_fd = st[i].wchan_fd = st[i].stat_fd = -1;
		st[i].start = starts[i];
		BITSET(st[i].present, VMON_PROC_STAT_START);
		procs[i].pid = e[i].pid;
		procs[i].parent = e[i].parent;
		procs[i].flags = e[i].flags;
		procs[i].id = e[i].id;
		procs[i].wants = VMON_WANT_PROC_STAT;
		procs[i].activity = VMON_WANT_PROC_STAT;
		procs[i].stores[VMON_STORE_PROC_STAT] = &st[i];
	}
	s.procs = procs;
	s.procs_nr = nr;
	return vmon_log_replay(replay, &s);
}

/* the node of pid that started at start, or NULL */
static const vmon_proc_t *life_of(vmon_t *vmon, int pid, unsigned long long start)
{
	for (const vmon_proc_t *p = first_node(vmon); p; p = next_node(vmon, p)) {
		const vmon_proc_stat_t *st = p->stores[VMON_STORE_PROC_STAT];

		if (p->pid == pid && st && st->start == start)
			return p;
	}
	return NULL;
}

/*
 * An entry under a new id that is not new is the node of the last sample
 * with its pid and start time: the older of two lives of one pid, whose
 * next entry the writer starts afresh (the pid's base is the newer
 * life's), and every entry of a keyframe.  Each was made anew: its ctor
 * ran again and whatever the caller kept on it was lost (vtop showed the
 * older life exited once more than the live run had).
 */
static void test_replay_identity(void **state)
{
	/* 13 ended (new and dead in one sample) and its pid went to another process at once; 11 is a thread of 10 */
	static const struct entry born[] = {
		{ 10, -1, 0, 1 }, { 11, 0, VMON_LOG_PROC_THREAD, 5 }, { 13, 0, VMON_LOG_PROC_NEW, 2 },
		{ 13, 0, VMON_LOG_PROC_NEW, 3 },
	}, older_afresh[] = {
		{ 10, -1, 0, 1 }, { 11, 0, VMON_LOG_PROC_THREAD, 5 }, { 13, 0, VMON_LOG_PROC_STALE, 4 }, { 13, 0, 0, 3 },
	}, keyframe[] = {
		{ 10, -1, 0, 7 }, { 11, 0, VMON_LOG_PROC_THREAD, 10 }, { 13, 0, 0, 8 },
	}, another_life[] = {
		{ 10, -1, 0, 7 }, { 11, 0, VMON_LOG_PROC_THREAD, 10 }, { 13, 0, 0, 9 },
	}, twins[] = {
		{ 10, -1, 0, 7 }, { 11, 0, VMON_LOG_PROC_THREAD, 10 }, { 13, 0, 0, 9 }, { 13, 0, VMON_LOG_PROC_NEW, 11 },
	}, twins_keyframe[] = {
		{ 10, -1, 0, 12 }, { 11, 0, VMON_LOG_PROC_THREAD, 13 }, { 13, 0, 0, 14 }, { 13, 0, 0, 15 },
	};
	static const unsigned long long starts[] = { 5, 6, 100, 101 }, starts_kept[] = { 5, 6, 101 },
					starts_other[] = { 5, 6, 300 }, starts_twins[] = { 5, 6, 300, 300 };
	const vmon_proc_t *older, *newer, *top, *thread;
	vmon_t replay;

	(void)state;
	replay_start(&replay, VMON_FLAG_PROC_ALL);
	replay.proc_ctor_cb = count_ctor;
	replay.proc_dtor_cb = count_dtor;
	ctors = dtors = 0;
	assert_int_equal(replay_lives(&replay, born, starts, 4), 0);
	assert_int_equal(ctors, 4);
	top = life_of(&replay, 10, 5);
	thread = life_of(&replay, 11, 6);
	older = life_of(&replay, 13, 100);
	newer = life_of(&replay, 13, 101);
	assert_non_null(thread);
	assert_true(thread->is_thread);
	assert_non_null(older);
	assert_non_null(newer);

	/* the older life under a new id, stale: the same node, no ctor */
	assert_int_equal(replay_lives(&replay, older_afresh, starts, 4), 0);
	assert_int_equal(ctors, 4);
	assert_int_equal(dtors, 0);
	assert_ptr_equal(life_of(&replay, 13, 100), older);
	assert_true(older->is_stale);
	assert_false(older->is_new);
	assert_ptr_equal(life_of(&replay, 13, 101), newer);
	assert_ptr_equal(vmon_proc_lookup(&replay, 13), newer);

	/* a keyframe: every id new, every node the same, the thread too; the stale one has gone */
	assert_int_equal(replay_lives(&replay, keyframe, starts_kept, 3), 0);
	assert_int_equal(ctors, 4);
	assert_int_equal(dtors, 1);
	assert_ptr_equal(life_of(&replay, 10, 5), top);
	assert_ptr_equal(life_of(&replay, 11, 6), thread);
	assert_ptr_equal(life_of(&replay, 13, 101), newer);
	assert_ptr_equal(vmon_proc_lookup(&replay, 13), newer);
	assert_int_equal(assert_tree_consistent(&replay), 3);

	/* a new id with another start is another life: a node of its own */
	assert_int_equal(replay_lives(&replay, another_life, starts_other, 3), 0);
	assert_int_equal(ctors, 5);
	assert_int_equal(dtors, 2);
	assert_null(life_of(&replay, 13, 101));
	assert_non_null(life_of(&replay, 13, 300));

	/* two lives of 13 begun in the same tick, then a keyframe: not told apart, both made anew */
	assert_int_equal(replay_lives(&replay, twins, starts_twins, 4), 0);
	assert_int_equal(ctors, 6);
	assert_int_equal(replay_lives(&replay, twins_keyframe, starts_twins, 4), 0);
	assert_int_equal(ctors, 8);
	assert_int_equal(dtors, 4);
	assert_ptr_equal(life_of(&replay, 11, 6), thread);
	assert_int_equal(assert_tree_consistent(&replay), 4);
	vmon_destroy(&replay);
	assert_int_equal(ctors, dtors);
}

/* bad arguments are refused, never crash */
static void test_arguments(void **state)
{
	vmon_event_t ev = { .kind = VMON_EVENT_KIND_NR };
	vmon_log_t *log = vmon_log_open(VMON_LOG_FD_NONE);
	vmon_log_record_t rec;

	(void)state;
	assert_null(vmon_log_open(-5));
	assert_null(vmon_log_writer_open(-1, NULL));
	assert_int_equal(vmon_log_write_event(NULL, &ev), -1);
	assert_int_equal(vmon_log_read(NULL, &rec), -1);
	assert_int_equal(vmon_log_feed(log, NULL, 3), -1);
	assert_null(vmon_log_header(log));
	assert_null(vmon_log_error(log));
	assert_int_equal(vmon_log_read(log, &rec), -1);
	assert_int_equal(rec.state, VMON_LOG_REQUIRE_DATA);
	assert_int_equal(vmon_log_writer_close(NULL), 0);
	vmon_log_close(log);
	vmon_log_close(NULL);
	{
		int fd = memfd_create("x", MFD_CLOEXEC);

		log = vmon_log_open(fd);
		assert_int_equal(vmon_log_feed(log, "x", 1), -1);
		assert_int_equal(errno, EINVAL);
		vmon_log_close(log);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_round_trip_live, teardown),
		cmocka_unit_test(test_open_files_not_recorded),
		cmocka_unit_test(test_reader_gone),
		cmocka_unit_test(test_small_log_reads),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_corruption),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_other_tables),
		cmocka_unit_test(test_bad_samples),
		cmocka_unit_test(test_split_count),
		cmocka_unit_test(test_page_size),
		cmocka_unit_test(test_seek),
		cmocka_unit_test(test_events_live),
		cmocka_unit_test(test_replay_records),
		cmocka_unit_test(test_replay_ids),
		cmocka_unit_test(test_replay_unchanged_store),
		cmocka_unit_test(test_replay_identity),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_fuzz_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
