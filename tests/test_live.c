/*
 * test_live.c: libvmon on the real /proc, against children the test spawns
 * and drives (puppet.h): fork trees in explicit mode (PROC_FOLLOW_CHILDREN)
 * and in PROC_ALL, exec, threads coming and going (PROC_FOLLOW_THREADS),
 * exit and zombies, a read that finds a live process gone, re-parenting to a subreaper and to init, PID and thread
 * id reuse in a PID namespace of our own (root), callbacks and 2PASS,
 * monitor and unmonitor from a callback, a grandchild listed by a parent
 * that dies before its own reads end, another user's io (EACCES) and exe,
 * and escaping in the dump.  What the library reports is checked against what
 * the children were told to do and against /proc read directly.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "puppet.h"
#include "testlib.h"

/*
 * openat() as libvmon calls it, through this definition (the executable's
 * symbol comes first): a process's /proc directory can be made to fail with
 * EIO, the way a process that is there but cannot be read looks; and one
 * file of a process, opened by its name in the process's directory, can
 * fail once with ESRCH, the way a read in the moment a thread's exec moves
 * the pid looks (test_gone_read_of_live_process()).
 */
static int unreadable_pid;
static int gone_once_pid, gone_once_done;
static bool gone_once_reap;	/* ... and is gone for real first: killed and reaped */
static const char *gone_once_name;

/* is dir_fd the /proc directory of pid? */
static int dir_is_pid(int dir_fd, int pid)
{
	char link[32], want[32], target[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	snprintf(want, sizeof(want), "/proc/%d", pid);
	len = readlink(link, target, sizeof(target) - 1);
	if (len < 0)
		return 0;
	target[len] = '\0';
	return !strcmp(target, want);
}

int openat(int dir_fd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;
	char dir[16];

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	snprintf(dir, sizeof(dir), "%d", unreadable_pid);
	if (unreadable_pid && (!strcmp(path, dir) || (!strncmp(path, dir, strlen(dir)) && path[strlen(dir)] == '/'))) {
		errno = EIO;
		return -1;
	}
	if (gone_once_pid && !strcmp(path, gone_once_name) && dir_is_pid(dir_fd, gone_once_pid)) {
		if (gone_once_reap) {
			kill(gone_once_pid, SIGKILL);
			waitpid(gone_once_pid, NULL, 0);
		}
		gone_once_pid = 0;
		gone_once_done++;
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_openat, dir_fd, path, flags, mode);
}

/* ctor and dtor counts by pid (an open-addressing table: PROC_ALL sees every process) */
#define LIFE_SLOTS 65536
static struct life_slot {
	int	pid, ctor, dtor;
} life_slots[LIFE_SLOTS];

static struct life_slot *life_of(int pid)
{
	unsigned i = ((unsigned)pid * 2654435761u) % LIFE_SLOTS;

	while (life_slots[i].pid && life_slots[i].pid != pid)
		i = (i + 1) % LIFE_SLOTS;
	life_slots[i].pid = pid;
	return &life_slots[i];
}

static int ctors(int pid)
{
	return life_of(pid)->ctor;
}

static int dtors(int pid)
{
	return life_of(pid)->dtor;
}

static void count_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	life_of(proc->pid)->ctor++;
}

static void count_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	struct life_slot *l = life_of(proc->pid);

	l->dtor++;
	if (l->dtor > l->ctor)
		fail_msg("pid %d: dtor without ctor", proc->pid);
}

static void live_init(vmon_t *vmon, const char *root, vmon_flags_t flags, vmon_proc_wants_t wants, int fd_budget)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = flags;
	attr.sys_wants = VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM;
	attr.proc_wants = wants;
	attr.proc_root = root ? root : "/proc";
	attr.fd_budget = fd_budget;
	memset(life_slots, 0, sizeof(life_slots));
	if (!vmon_init_attr(vmon, &attr))
		fail_msg("vmon_init_attr(%s): %s", attr.proc_root, strerror(errno));
	vmon->proc_ctor_cb = count_ctor;
	vmon->proc_dtor_cb = count_dtor;
}

static void sample(vmon_t *vmon)
{
	assert_true(vmon_sample(vmon));
	assert_int_equal(vmon->sys_errors[VMON_STORE_SYS_STAT], 0);
	assert_int_equal(vmon->sys_errors[VMON_STORE_SYS_VM], 0);
	assert_tree_consistent(vmon);
}

/* the mount point of test_pid_reuse's namespace, removed whatever happens */
static char pidns_dir[64];

static int teardown(void **state)
{
	gone_once_pid = 0;
	gone_once_done = 0;
	gone_once_reap = false;
	puppets_cleanup();
	if (pidns_dir[0])
		rmdir(pidns_dir);
	pidns_dir[0] = '\0';
	return 0;
}

/* --- ground truth from /proc --- */

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* field (3 and up, numbered as in proc(5)) of the stat line, testlib's readers: the state a char, -1 when gone */
static int stat_field(pid_t pid, int field)
{
	unsigned long long v;
	char state;

	if (field == 3) {
		state = proc_state(pid);
		return state == '?' ? -1 : state;
	}
	v = proc_stat_field(pid, field);
	return v == ULLONG_MAX ? -1 : (int)v;
}

struct wait_arg {
	pid_t	pid;
	int	field;
	int	value;
	const char *path;
};

static bool field_is(void *arg)
{
	struct wait_arg *w = arg;

	return stat_field(w->pid, w->field) == w->value;
}

static void wait_field(pid_t pid, int field, int value)
{
	struct wait_arg w = { pid, field, value, NULL };

	if (!wait_for(field_is, &w, 10000))
		fail_msg("pid %d: stat field %d is %d, not %d", pid, field, stat_field(pid, field), value);
}

static bool path_gone(void *arg)
{
	struct wait_arg *w = arg;

	return access(w->path, F_OK) < 0;
}

static void wait_gone(const char *path)
{
	struct wait_arg w = { 0, 0, 0, path };

	if (!wait_for(path_gone, &w, 10000))
		fail_msg("%s is still there", path);
}

static vmon_proc_t *must_child(vmon_t *vmon, vmon_proc_t *parent, pid_t pid)
{
	vmon_proc_t *c = find_child(vmon, parent, pid);

	if (!c)
		fail_msg("pid %d is not a child of %d in the tree", pid, parent ? parent->pid : 0);
	return c;
}

/*
 *	a ─┬─ b ── d
 *	   └─ c
 * a child of the test; checks the tree libvmon built under a's node
 */
static void fork_tree(puppet_t *a, puppet_t *b, puppet_t *c, puppet_t *d)
{
	puppet_spawn(a);
	puppet_fork(a, b, true);
	puppet_fork(a, c, true);
	puppet_fork(b, d, true);
}

static void check_fork_tree(vmon_t *vmon, vmon_proc_t *na, const puppet_t *a, const puppet_t *b,
			    const puppet_t *c, const puppet_t *d, bool fresh)
{
	char comm[64];
	vmon_proc_t *nb = must_child(vmon, na, b->pid), *nc = must_child(vmon, na, c->pid), *nd;

	nd = must_child(vmon, nb, d->pid);
	assert_int_equal(count_children(na), 2);
	assert_int_equal(count_children(nb), 1);
	assert_int_equal(count_children(nc), 0);
	assert_int_equal(count_children(nd), 0);
	assert_int_equal(pstat(nb)->ppid, a->pid);
	assert_int_equal(pstat(nd)->ppid, b->pid);
	assert_int_equal(pstat(nd)->pid, d->pid);
	assert_true(read_file("/proc/self/comm", comm, sizeof(comm)) > 0);
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(pstat(nd)->comm.array, comm);
	for (vmon_proc_t *n = nb; n; n = n == nb ? nc : n == nc ? nd : NULL) {
		assert_int_equal(n->is_new, fresh);
		assert_false(n->is_stale);
		assert_int_equal(ctors(n->pid), 1);
		for (int i = 0; i < VMON_STORE_PROC_NR; i++)
			assert_int_equal(n->errors[i], 0);
		assert_int_equal(pstat(n)->start, proc_start(n->pid));
	}
}

static void test_fork_tree_explicit(void **state)
{
	puppet_t a, b, c, d;
	vmon_t vmon;
	vmon_proc_t *na, *nc, *nd;

	fork_tree(&a, &b, &c, &d);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	check_fork_tree(&vmon, na, &a, &b, &c, &d, true);
	sample(&vmon);
	check_fork_tree(&vmon, na, &a, &b, &c, &d, false);
	assert_false(na->children_changed);

	/* c exits: a zombie until a reaps it, then stale for one sample, then gone */
	nc = must_child(&vmon, na, c.pid);
	puppet_exit(&c, 5);
	wait_field(c.pid, 3, 'Z');
	for (int i = 0; i < 2; i++) {
		sample(&vmon);
		assert_ptr_equal(must_child(&vmon, na, c.pid), nc);
		assert_int_equal(pstat(nc)->state, 'Z');
		assert_int_equal(pstat(nc)->exit_code, 5 << 8);
		assert_false(nc->is_stale);
	}
	assert_int_equal(WEXITSTATUS(puppet_reap(&a, c.pid)), 5);
	sample(&vmon);
	assert_true(nc->is_stale);
	assert_true(na->children_changed);
	assert_int_equal(dtors(c.pid), 0);
	sample(&vmon);
	assert_null(find_child(&vmon, na, c.pid));
	assert_int_equal(dtors(c.pid), 1);
	assert_false(na->children_changed);

	/* d exits unreaped: stays a zombie across samples */
	nd = must_child(&vmon, must_child(&vmon, na, b.pid), d.pid);
	puppet_exit(&d, 0);
	wait_field(d.pid, 3, 'Z');
	for (int i = 0; i < 3; i++) {
		sample(&vmon);
		assert_int_equal(pstat(nd)->state, 'Z');
		assert_false(nd->is_stale);
	}
	puppet_reap(&b, d.pid);
	sample(&vmon);
	assert_true(nd->is_stale);
	sample(&vmon);
	assert_int_equal(count_children(must_child(&vmon, na, b.pid)), 0);
	assert_int_equal(ctors(d.pid), 1);
	assert_int_equal(dtors(d.pid), 1);
	vmon_destroy(&vmon);
	assert_int_equal(dtors(a.pid), 1);
	assert_int_equal(dtors(b.pid), 1);
}

static void test_fork_tree_proc_all(void **state)
{
	puppet_t a, b, c, d;
	vmon_t vmon;
	vmon_proc_t *self, *na;

	fork_tree(&a, &b, &c, &d);
	live_init(&vmon, NULL, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY,
		  VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO, -1);
	sample(&vmon);
	self = must_find(&vmon, getpid());
	assert_int_equal(self->parent ? self->parent->pid : 0, getppid());
	na = must_child(&vmon, self, a.pid);
	check_fork_tree(&vmon, na, &a, &b, &c, &d, true);
	/* our own children have readable io and memory */
	assert_true(BITTEST(pio(na)->present, VMON_PROC_IO_RCHAR));
	assert_true(pvm(na)->resident_pages > 0);
	sample(&vmon);
	check_fork_tree(&vmon, na, &a, &b, &c, &d, false);

	puppet_exit(&c, 9);
	wait_field(c.pid, 3, 'Z');
	sample(&vmon);
	assert_int_equal(pstat(must_child(&vmon, na, c.pid))->state, 'Z');
	puppet_reap(&a, c.pid);
	sample(&vmon);
	assert_true(find_child(&vmon, na, c.pid)->is_stale);
	assert_null(vmon_proc_lookup(&vmon, c.pid));
	sample(&vmon);
	assert_null(find_child(&vmon, na, c.pid));
	assert_int_equal(ctors(c.pid), 1);
	assert_int_equal(dtors(c.pid), 1);
	vmon_destroy(&vmon);
}

/* cmdline, argv and exe are read again after an exec; a 100 KiB command line is read whole */
static void test_exec(void **state)
{
	/* sleep adds up its arguments: any number of intervals is a valid command line */
	static const char *const argv[] = { "/bin/sleep", "300", "0.25", "1m", NULL };
	puppet_t a, b;
	vmon_t vmon;
	vmon_proc_t *na, *nb;
	char self_cmdline[4096], exe[PATH_MAX], path[64];
	ssize_t len;
	const int extra = 100 * 1024 / 8;

	puppet_spawn(&a);
	puppet_spawn(&b);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	nb = vmon_proc_monitor(&vmon, b.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	assert_non_null(nb);
	sample(&vmon);
	/*
	 * before: the test's command line and executable (a puppet is a fork
	 * of it), as /proc/PID says; not /proc/self, which valgrind fakes
	 */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", a.pid);
	len = read_file(path, self_cmdline, sizeof(self_cmdline));
	assert_true(len > 0);
	assert_int_equal(pstat(na)->cmdline.len, (size_t)len);
	assert_memory_equal(pstat(na)->cmdline.array, self_cmdline, (size_t)len);
	snprintf(path, sizeof(path), "/proc/%d/exe", a.pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	assert_string_equal(pstat(na)->exe.array, exe);

	puppet_exec(&a, argv, 0);
	puppet_exec(&b, (const char *const[]){ "/bin/sleep", "300", NULL }, extra);
	sample(&vmon);
	assert_false(na->is_stale);
	assert_ptr_equal(must_find(&vmon, a.pid), na);
	assert_int_equal(pstat(na)->argc, 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(pstat(na)->argv[i], argv[i]);
	assert_null(pstat(na)->argv[4]);
	snprintf(path, sizeof(path), "/proc/%d/exe", a.pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	assert_string_equal(pstat(na)->exe.array, exe);
	assert_string_equal(pstat(na)->comm.array, "sleep");
	assert_true(BITTEST(pstat(na)->changed, VMON_PROC_STAT_CMDLINE));
	assert_true(BITTEST(pstat(na)->changed, VMON_PROC_STAT_ARGV));
	assert_true(BITTEST(pstat(na)->changed, VMON_PROC_STAT_EXE));
	assert_true(BITTEST(pstat(na)->changed, VMON_PROC_STAT_COMM));
	assert_int_equal(ctors(a.pid), 1);

	/* the 100 KiB one */
	assert_int_equal(pstat(nb)->argc, 2 + extra);
	assert_int_equal(pstat(nb)->cmdline.len, sizeof("/bin/sleep") + sizeof("300") + (size_t)extra * 8);
	for (int i = 0; i < extra; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%07d", i);
		if (strcmp(pstat(nb)->argv[2 + i], want) != 0)
			fail_msg("argv[%d] is \"%s\", not \"%s\"", 2 + i, pstat(nb)->argv[2 + i], want);
	}

	/* nothing new since: not changed */
	sample(&vmon);
	assert_false(BITTEST(pstat(na)->changed, VMON_PROC_STAT_CMDLINE));
	assert_false(BITTEST(pstat(na)->changed, VMON_PROC_STAT_EXE));
	vmon_destroy(&vmon);
}

/* PROC_FOLLOW_THREADS: threads found in the sample they appear in, stale for one sample when they exit */
static void test_threads(void **state)
{
	puppet_t a;
	vmon_t vmon;
	vmon_proc_t *na, *n1, *n2, *lead;
	pid_t t1, t2;
	char path[64];

	puppet_spawn(&a);
	live_init(&vmon, NULL, VMON_FLAG_PROC_ARRAY, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_FOLLOW_THREADS, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	assert_int_equal(count_threads(na), 0);

	t1 = puppet_thread(&a, "worker-1");
	t2 = puppet_thread(&a, "worker-2");
	sample(&vmon);
	assert_int_equal(count_threads(na), 3);
	assert_true(na->threads_changed);
	assert_true(na->is_threaded);
	lead = find_thread(na, a.pid);
	n1 = find_thread(na, t1);
	n2 = find_thread(na, t2);
	assert_non_null(lead);
	assert_non_null(n1);
	assert_non_null(n2);
	for (vmon_proc_t *t = lead; t; t = t == lead ? n1 : t == n1 ? n2 : NULL) {
		assert_true(t->is_thread);
		assert_true(t->is_new);
		assert_ptr_equal(t->parent, na);
		assert_int_equal(ctors(t->pid), t->pid == a.pid ? 2 : 1);	/* the process and its leader thread */
		assert_true(BITTEST(pvm(t)->present, VMON_PROC_VM_SIZE_PAGES));
	}
	assert_string_equal(pstat(n1)->comm.array, "worker-1");
	assert_string_equal(pstat(n2)->comm.array, "worker-2");
	assert_int_equal(pstat(na)->num_threads, 3);
	sample(&vmon);
	assert_false(n1->is_new);
	assert_false(na->threads_changed);

	puppet_thread_end(&a, t1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", a.pid, t1);
	wait_gone(path);
	sample(&vmon);
	assert_true(n1->is_stale);
	assert_false(n2->is_stale);
	assert_true(na->threads_changed);
	sample(&vmon);
	assert_null(find_thread(na, t1));
	assert_int_equal(dtors(t1), 1);
	assert_int_equal(count_threads(na), 2);

	puppet_thread_end(&a, t2);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", a.pid, t2);
	wait_gone(path);
	sample(&vmon);
	assert_true(n2->is_stale);
	assert_true(lead->is_stale);
	assert_false(na->is_stale);
	sample(&vmon);
	assert_int_equal(count_threads(na), 0);
	assert_int_equal(dtors(t2), 1);
	vmon_destroy(&vmon);
}

/*
 * A process's io counts the threads that exited too.  A thread that does
 * I/O and exits while the main thread sleeps must show at the next sample,
 * although the main thread (whose schedstat says whether io can have moved)
 * did not run.
 */
static void test_io_of_exited_thread(void **state)
{
	puppet_t a;
	vmon_t vmon;
	vmon_proc_t *na;
	int trigger[2];
	pid_t tid;
	unsigned long long before;
	char path[64];
	const size_t bytes = 1 << 20;

	puppet_spawn(&a);
	assert_int_equal(pipe2(trigger, O_CLOEXEC), 0);
	tid = puppet_io_thread(&a, trigger[0], bytes);
	close(trigger[0]);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	assert_true(wait_sleeping(a.pid, 5000));
	sample(&vmon);
	sample(&vmon);
	before = pio(na)->wchars;
	assert_int_equal(na->errors[VMON_STORE_PROC_IO], 0);

	assert_int_equal(write(trigger[1], "go", 1), 1);
	close(trigger[1]);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", a.pid, tid);
	wait_gone(path);
	sample(&vmon);
	if (pio(na)->wchars < before + bytes)
		fail_msg("wchar %llu after the thread wrote %zu bytes on %llu", pio(na)->wchars, bytes, before);
	assert_true(BITTEST(pio(na)->changed, VMON_PROC_IO_WCHAR));
	vmon_destroy(&vmon);
}

/*
 * A monitored child of the test exits: zombie (state Z, exit code) until we
 * reap it; then, monitored at the top, it is kept, never stale: state X,
 * its last data and exit code, its generation no longer moving, its dtor
 * at the vmon_proc_unmonitor().
 */
static void test_exit_and_zombie(void **state)
{
	puppet_t a;
	vmon_t vmon;
	vmon_proc_t *na;
	int status;

	puppet_spawn(&a);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	assert_true(pvm(na)->size_pages > 0);
	puppet_exit(&a, 3);
	wait_field(a.pid, 3, 'Z');
	for (int i = 0; i < 3; i++) {
		sample(&vmon);
		assert_int_equal(pstat(na)->state, 'Z');
		assert_int_equal(pstat(na)->exit_code, 3 << 8);
		assert_false(na->is_stale);
		assert_int_equal(pvm(na)->size_pages, 0);
		assert_false(BITTEST(pstat(na)->present, VMON_PROC_STAT_EXE));
	}
	assert_int_equal(waitpid(a.pid, &status, 0), a.pid);
	assert_int_equal(WEXITSTATUS(status), 3);
	sample(&vmon);
	assert_false(na->is_stale);
	assert_int_equal(pstat(na)->state, 'X');
	assert_int_equal(pstat(na)->exit_code, 3 << 8);	/* its last data stays */
	assert_null(vmon_proc_lookup(&vmon, a.pid));
	for (int i = 0; i < 2; i++) {
		sample(&vmon);
		assert_int_equal(dtors(a.pid), 0);
		assert_ptr_equal(list_first_entry(&vmon.processes, vmon_proc_t, siblings), na);
		assert_false(na->is_stale || na->is_new);
		assert_true(na->generation < vmon.generation - i);
	}
	vmon_proc_unmonitor(&vmon, na, NULL, NULL);	/* it goes now, dtor and all */
	assert_int_equal(dtors(a.pid), 1);
	assert_true(list_empty(&vmon.processes));
	vmon_destroy(&vmon);
	assert_int_equal(dtors(a.pid), 1);
}

/*
 * A read of one of its files finds the process gone (ESRCH) while its stat
 * line shows it lives on, as a read can in the moment one of its threads
 * execs (the kernel moves the pid to that thread and releases the old
 * leader): the node stays, its store says EAGAIN, and the next sample reads
 * it again.  A process gone for real when its read fails is ended.
 */
static void test_gone_read_of_live_process(void **state)
{
	puppet_t a, b;
	vmon_t vmon;
	vmon_proc_t *na, *nb;
	char cmdline[4096], path[64];
	ssize_t len;

	puppet_spawn(&a);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	/* its first sample reads cmdline (whichever source samples it): that open fails */
	gone_once_name = "cmdline";
	gone_once_pid = a.pid;
	sample(&vmon);
	assert_int_equal(gone_once_done, 1);
	assert_false(na->is_stale);
	assert_ptr_equal(must_find(&vmon, a.pid), na);
	assert_int_equal(na->errors[VMON_STORE_PROC_STAT], EAGAIN);
	assert_int_equal(pstat(na)->pid, a.pid);
	assert_int_equal(ctors(a.pid), 1);

	sample(&vmon);
	assert_int_equal(na->errors[VMON_STORE_PROC_STAT], 0);
	assert_false(na->is_stale);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", a.pid);
	len = read_file(path, cmdline, sizeof(cmdline));
	assert_true(len > 0);
	assert_true(BITTEST(pstat(na)->present, VMON_PROC_STAT_CMDLINE));
	assert_int_equal(pstat(na)->cmdline.len, (size_t)len);
	assert_memory_equal(pstat(na)->cmdline.array, cmdline, (size_t)len);

	vmon_proc_unmonitor(&vmon, na, NULL, NULL);

	/* gone for real (killed and reaped just before the failing open): ended in that sample */
	puppet_spawn(&b);
	nb = vmon_proc_monitor(&vmon, b.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(nb);
	gone_once_reap = true;
	gone_once_pid = b.pid;
	sample(&vmon);
	assert_int_equal(gone_once_done, 2);
	assert_null(vmon_proc_lookup(&vmon, b.pid));
	assert_int_not_equal(nb->errors[VMON_STORE_PROC_STAT], EAGAIN);
	vmon_proc_unmonitor(&vmon, nb, NULL, NULL);
	vmon_destroy(&vmon);
}

/*
 * A task without memory reads ESRCH from smaps_rollup (a kernel thread, a
 * zombie): it is not gone, its rollup fields are absent, and that is no
 * error, sample after sample.
 */
static void test_rollup_without_memory(void **state)
{
	puppet_t a;
	vmon_t vmon;
	vmon_proc_t *kthreadd, *na;

	puppet_spawn(&a);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_ROLLUP, -1);
	kthreadd = vmon_proc_monitor(&vmon, 2, VMON_WANT_PROC_INHERIT, NULL, NULL);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	assert_int_equal(na->errors[VMON_STORE_PROC_ROLLUP], 0);
	assert_true(BITTEST(((vmon_proc_rollup_t *)na->stores[VMON_STORE_PROC_ROLLUP])->present,
			    VMON_PROC_ROLLUP_PSS_KB));
	puppet_exit(&a, 0);
	wait_field(a.pid, 3, 'Z');
	for (int i = 0; i < 3; i++) {
		sample(&vmon);
		if (kthreadd) {
			/* (no pid 2 in a PID namespace without kthreadd: the zombie alone) */
			assert_false(kthreadd->is_stale);
			assert_ptr_equal(must_find(&vmon, 2), kthreadd);
			assert_int_equal(kthreadd->errors[VMON_STORE_PROC_ROLLUP], 0);
			assert_false(BITTEST(((vmon_proc_rollup_t *)kthreadd->stores[VMON_STORE_PROC_ROLLUP])->present,
					     VMON_PROC_ROLLUP_PSS_KB));
		}
		assert_false(na->is_stale);
		assert_ptr_equal(must_find(&vmon, a.pid), na);
		assert_int_equal(pstat(na)->state, 'Z');
		assert_int_equal(na->errors[VMON_STORE_PROC_ROLLUP], 0);
		assert_false(BITTEST(((vmon_proc_rollup_t *)na->stores[VMON_STORE_PROC_ROLLUP])->present,
				     VMON_PROC_ROLLUP_PSS_KB));
	}
	vmon_destroy(&vmon);
}

/* a middle process dies: its child goes to the followed subreaper above it, the same node */
static void test_reparent_to_subreaper(void **state)
{
	puppet_t s, m, g;
	vmon_t vmon;
	vmon_proc_t *ns, *nm, *ng;

	puppet_spawn(&s);
	puppet_subreaper(&s);
	puppet_fork(&s, &m, true);
	puppet_fork(&m, &g, false);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, -1);
	ns = vmon_proc_monitor(&vmon, s.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(ns);
	sample(&vmon);
	nm = must_child(&vmon, ns, m.pid);
	ng = must_child(&vmon, nm, g.pid);
	sample(&vmon);

	puppet_exit(&m, 0);
	wait_field(g.pid, 4, s.pid);
	puppet_reap(&s, m.pid);
	sample(&vmon);
	assert_true(nm->is_stale);
	assert_ptr_equal(must_child(&vmon, ns, g.pid), ng);
	assert_false(ng->is_stale);
	assert_false(ng->is_new);
	assert_int_equal(pstat(ng)->ppid, s.pid);
	assert_true(ns->children_changed);
	sample(&vmon);
	assert_ptr_equal(must_child(&vmon, ns, g.pid), ng);
	assert_int_equal(ctors(g.pid), 1);
	assert_int_equal(dtors(g.pid), 0);
	assert_int_equal(dtors(m.pid), 1);
	vmon_destroy(&vmon);
}

/* PROC_ALL: an orphan goes under whatever its stat names as its new parent (init, or the nearest subreaper) */
static void test_reparent_to_init(void **state)
{
	puppet_t a, m, g;
	vmon_t vmon;
	vmon_proc_t *ng;
	int new_ppid;

	puppet_spawn(&a);
	puppet_fork(&a, &m, true);
	puppet_fork(&m, &g, false);
	live_init(&vmon, NULL, VMON_FLAG_PROC_ALL, VMON_WANT_PROC_STAT, -1);
	sample(&vmon);
	ng = must_find(&vmon, g.pid);
	assert_int_equal(ng->parent->pid, m.pid);

	puppet_exit(&m, 0);
	puppet_reap(&a, m.pid);
	new_ppid = stat_field(g.pid, 4);
	assert_true(new_ppid > 0 && new_ppid != m.pid);
	sample(&vmon);
	assert_ptr_equal(must_find(&vmon, g.pid), ng);
	assert_false(ng->is_new);
	assert_false(ng->is_stale);
	assert_int_equal(ng->parent->pid, new_ppid);
	assert_true(ng->parent->children_changed);
	assert_int_equal(ctors(g.pid), 1);
	/* the orphan is not ours to reap: kill it ourselves */
	kill(g.pid, SIGKILL);
	vmon_destroy(&vmon);
}

/*
 * PID reuse, as root, in a PID namespace of our own where nobody else forks:
 * a helper enters it and forks its init, which mounts a procfs of the
 * namespace (in a mount namespace of its own) and spawns sleepers, or
 * threads of its own, at the pid we ask for (ns_last_pid).  libvmon reads
 * that procfs through /proc/INIT/root.  The old process (thread) must be
 * stale and the new one new in the same sample, whether the old one's files
 * were held open (a read of a held fd fails) or not (the start time
 * differs).
 */
static int pidns_init(void *arg);

struct pidns {
	int	sock;		/* the test's end: commands to the namespace's init */
	pid_t	init;		/* its pid, as we see it */
	char	mnt[64];	/* where it mounted its procfs, in its mount namespace */
	char	root[128];	/* the same, from here */
};

static int pidns_command(struct pidns *ns, char op, int pid)
{
	int msg[2] = { op, pid }, r = -1;

	assert_int_equal(send(ns->sock, msg, sizeof(msg), MSG_NOSIGNAL), (ssize_t)sizeof(msg));
	assert_int_equal(recv(ns->sock, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	return r;
}

static int pidns_sock, pidns_test_end;
static const char *pidns_mnt;

/* the threads of the namespace's init: each waits until a byte comes on its wake pipe */
static struct pidns_thread {
	pthread_t	thread;
	pid_t		tid;		/* 0: a free slot */
	int		wake[2];
	int		report[2];	/* the thread tells its tid */
} pidns_threads[4];

static void *pidns_thread_main(void *arg)
{
	struct pidns_thread *t = arg;
	pid_t tid = gettid();
	char c;

	if (write(t->report[1], &tid, sizeof(tid)) == (ssize_t)sizeof(tid))
		(void)!read(t->wake[0], &c, 1);
	return NULL;
}

static void pidns_thread_end(struct pidns_thread *t)
{
	(void)!write(t->wake[1], "x", 1);
	pthread_join(t->thread, NULL);
	for (int i = 0; i < 2; i++) {
		close(t->wake[i]);
		close(t->report[i]);
	}
	t->tid = 0;
}

/*
 * A thread of ours at tid, or -1.  The tid of a thread just joined may not
 * be free yet (the kernel wakes the joiner before it releases the task), so
 * a thread that got another tid ends and we try again.
 */
static int pidns_thread_start(int tid)
{
	struct pidns_thread *t = NULL;

	for (size_t i = 0; i < sizeof(pidns_threads) / sizeof(pidns_threads[0]) && !t; i++)
		t = pidns_threads[i].tid ? NULL : &pidns_threads[i];
	for (int attempt = 0; t && attempt < 1000; attempt++) {
		char text[16];
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		bool written;

		snprintf(text, sizeof(text), "%d", tid - 1);
		written = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
		if (fd >= 0)
			close(fd);
		if (!written || pipe2(t->wake, O_CLOEXEC) < 0)
			return -1;
		if (pipe2(t->report, O_CLOEXEC) < 0 || pthread_create(&t->thread, NULL, pidns_thread_main, t) != 0)
			return -1;
		if (read(t->report[0], &t->tid, sizeof(t->tid)) != (ssize_t)sizeof(t->tid))
			return -1;
		if (t->tid == tid)
			return tid;
		pidns_thread_end(t);
		usleep(1000);
	}
	return -1;
}

/*
 * pid 1 of the namespace: mount its procfs, then spawn ('s') and kill ('k')
 * sleepers at given pids, and start ('t') and end ('x') threads of its own
 * at given tids
 */
static int pidns_init(void *arg)
{
	int msg[2];

	/* (the type is ignored for a propagation change; valgrind wants one) */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", pidns_mnt, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return 2;
	while (recv(pidns_sock, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg)) {
		int r = -1;

		if (msg[0] == 's') {
			char text[16];
			int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
			pid_t pid;

			snprintf(text, sizeof(text), "%d", msg[1] - 1);
			if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text)) {
				pid = fork();
				if (pid == 0) {
					close_range(3, ~0U, 0);
					for (;;)
						pause();
				}
				r = pid;
			}
			if (fd >= 0)
				close(fd);
		} else if (msg[0] == 'k') {
			kill(msg[1], SIGKILL);
			r = waitpid(msg[1], NULL, 0);
		} else if (msg[0] == 't') {
			r = pidns_thread_start(msg[1]);
		} else if (msg[0] == 'x') {
			for (size_t i = 0; i < sizeof(pidns_threads) / sizeof(pidns_threads[0]); i++) {
				if (pidns_threads[i].tid == msg[1]) {
					pidns_thread_end(&pidns_threads[i]);
					r = msg[1];
				}
			}
		}
		if (send(pidns_sock, &r, sizeof(r), MSG_NOSIGNAL) < 0)
			break;
	}
	return 0;	/* the namespace, and every sleeper in it, dies with us */
}

/* the helper: a new PID and mount namespace for its child, which is the namespace's init */
static int pidns_helper(void *arg)
{
	pid_t init;
	int status;

	/* only the test may hold its end: the namespace's init must see EOF when the test is gone */
	close(pidns_test_end);
	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
		return 3;
	init = fork();
	if (init < 0)
		return 4;
	if (init == 0) {
		/* nothing of the test's but stdio and our socket */
		if (dup2(pidns_sock, 3) < 0)
			_exit(6);
		pidns_sock = 3;
		close_range(4, ~0U, 0);
		_exit(pidns_init(NULL));
	}
	/* tell the test init's pid, then wait for it */
	if (send(pidns_sock, &init, sizeof(init), MSG_NOSIGNAL) < 0)
		return 5;
	while (waitpid(init, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static bool pidns_start(struct pidns *ns)
{
	int sv[2];
	pid_t helper;
	struct stat st;

	snprintf(ns->mnt, sizeof(ns->mnt), "/tmp/vmon-pidns-XXXXXX");
	assert_non_null(mkdtemp(ns->mnt));
	snprintf(pidns_dir, sizeof(pidns_dir), "%s", ns->mnt);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pidns_sock = sv[1];
	pidns_test_end = sv[0];
	pidns_mnt = ns->mnt;
	helper = spawn_fn(pidns_helper, NULL);
	puppets_track(helper);
	close(sv[1]);
	ns->sock = sv[0];
	if (recv(ns->sock, &ns->init, sizeof(ns->init), 0) != (ssize_t)sizeof(ns->init))
		return false;
	puppets_track(ns->init);
	snprintf(ns->root, sizeof(ns->root), "/proc/%d/root%s", ns->init, ns->mnt);
	/* wait until its procfs is there: its own pid 1 shows */
	for (int i = 0; i < 5000; i++) {
		char one[160];

		snprintf(one, sizeof(one), "%s/1/stat", ns->root);
		if (stat(one, &st) == 0)
			return true;
		usleep(1000);
	}
	return false;
}

static void pidns_stop(struct pidns *ns)
{
	close(ns->sock);
	puppets_cleanup();
	rmdir(ns->mnt);
}

static void pidns_must_start(struct pidns *ns)
{
	if (!pidns_start(ns)) {
		pidns_stop(ns);
		fail_msg("could not start a PID namespace with its own procfs");
	}
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int stats_budget(vmon_t *vmon)
{
	vmon_stats_t st;

	vmon_get_stats(vmon, &st);
	return st.fd_budget;
}

static void check_reuse(vmon_t *vmon, struct pidns *ns, vmon_proc_t *parent, bool explicit, int pause_ms)
{
	const int pid = 100;
	vmon_proc_t *old, *reborn;

	assert_int_equal(pidns_command(ns, 's', pid), pid);
	sample(vmon);
	old = explicit ? must_child(vmon, parent, pid) : must_find(vmon, pid);
	assert_true(old->is_new);
	sample(vmon);
	assert_false(old->is_new);

	assert_int_equal(pidns_command(ns, 'k', pid), pid);
	/* a later start time, or (0 ms) perhaps the same tick: then only a held fd can tell */
	sleep_ms(pause_ms);
	assert_int_equal(pidns_command(ns, 's', pid), pid);
	sample(vmon);
	assert_true(old->is_stale);
	assert_false(old->is_new);
	reborn = vmon_proc_lookup(vmon, pid);
	if (!reborn || reborn == old || (explicit && reborn->parent != parent))
		fail_msg("pid %d was reused (%s mode, fd budget %d, %d ms apart): the new process is not in the tree"
			 " in the same sample as the old one goes stale", pid, explicit ? "explicit" : "PROC_ALL",
			 vmon->internal ? stats_budget(vmon) : -1, pause_ms);
	assert_ptr_equal(vmon_proc_lookup(vmon, pid), reborn);
	assert_true(reborn->is_new);
	assert_false(reborn->is_stale);
	assert_int_equal(ctors(pid), 2);
	sample(vmon);
	assert_false(reborn->is_new);
	assert_int_equal(dtors(pid), 1);
	assert_ptr_equal(vmon_proc_lookup(vmon, pid), reborn);
	assert_int_equal(pidns_command(ns, 'k', pid), pid);
	sample(vmon);
	assert_true(reborn->is_stale);
	sample(vmon);
}

static void test_pid_reuse(void **state)
{
	struct pidns ns;
	vmon_t vmon;

	SKIP_IF(!is_root(), "PID reuse needs root: a PID namespace, a procfs mount and ns_last_pid");
	pidns_must_start(&ns);
	/* PROC_ALL, files held open (the default budget) and not (no budget) */
	for (int budget = -1; budget <= 0; budget++) {
		for (int pause_ms = 0; pause_ms <= 30; pause_ms += 30) {
			if (budget == 0 && pause_ms == 0)
				continue;	/* nothing could tell them apart: the same pid and start, no fd */
			live_init(&vmon, ns.root, VMON_FLAG_PROC_ALL, VMON_WANT_PROC_STAT, budget);
			check_reuse(&vmon, &ns, NULL, false, pause_ms);
			vmon_destroy(&vmon);
		}
	}
	/* explicit mode: the namespace's init, followed */
	for (int budget = -1; budget <= 0; budget++) {
		vmon_proc_t *init;

		live_init(&vmon, ns.root, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, budget);
		init = vmon_proc_monitor(&vmon, 1, VMON_WANT_PROC_INHERIT, NULL, NULL);
		assert_non_null(init);
		check_reuse(&vmon, &ns, init, true, budget ? 0 : 30);
		vmon_destroy(&vmon);
	}
	pidns_stop(&ns);
}

/* the live thread node tid of proc, or NULL (a stale one with the same tid may be there too) */
static vmon_proc_t *live_thread(vmon_proc_t *proc, int tid)
{
	vmon_proc_t *t;

	list_for_each_entry(t, &proc->threads, threads) {
		if (t->pid == tid && !t->is_stale)
			return t;
	}
	return NULL;
}

/* as check_reuse(), for a thread of the namespace's init: its tid reused by a new thread of init */
static void check_tid_reuse(vmon_t *vmon, struct pidns *ns, int pause_ms)
{
	const int tid = 100;
	vmon_proc_t *init, *old, *reborn;

	assert_int_equal(pidns_command(ns, 't', tid), tid);
	sample(vmon);
	init = must_find(vmon, 1);
	old = live_thread(init, tid);
	assert_non_null(old);
	assert_true(old->is_new);
	sample(vmon);
	assert_false(old->is_new);
	assert_ptr_equal(live_thread(init, tid), old);

	assert_int_equal(pidns_command(ns, 'x', tid), tid);
	sleep_ms(pause_ms);
	assert_int_equal(pidns_command(ns, 't', tid), tid);
	sample(vmon);
	assert_true(old->is_stale);
	assert_false(old->is_new);
	reborn = live_thread(init, tid);
	if (!reborn)
		fail_msg("tid %d was reused (%s mode, fd budget %d, %d ms apart): the new thread is not in the tree"
			 " in the same sample as the old one goes stale", tid,
			 (vmon->flags & VMON_FLAG_PROC_ALL) ? "PROC_ALL" : "explicit", stats_budget(vmon), pause_ms);
	assert_true(reborn->is_new);
	assert_ptr_equal(reborn->parent, init);
	assert_true(init->threads_changed);
	assert_int_equal(ctors(tid), 2);
	sample(vmon);
	assert_false(reborn->is_new);
	assert_false(reborn->is_stale);
	assert_int_equal(dtors(tid), 1);
	assert_ptr_equal(live_thread(init, tid), reborn);
	assert_int_equal(pidns_command(ns, 'x', tid), tid);
	sample(vmon);
	assert_true(reborn->is_stale);
	sample(vmon);
	assert_int_equal(dtors(tid), 2);
}

static void test_tid_reuse(void **state)
{
	struct pidns ns;
	vmon_t vmon;

	SKIP_IF(!is_root(), "thread id reuse needs root: a PID namespace, a procfs mount and ns_last_pid");
	pidns_must_start(&ns);
	/* PROC_ALL and explicit mode; files held open (the default budget) and not (no budget) */
	for (int all = 0; all < 2; all++) {
		for (int budget = -1; budget <= 0; budget++) {
			for (int pause_ms = 0; pause_ms <= 30; pause_ms += 30) {
				if (budget == 0 && pause_ms == 0)
					continue;	/* nothing could tell them apart: the same tid and start, no fd */
				live_init(&vmon, ns.root, all ? VMON_FLAG_PROC_ALL : VMON_FLAG_NONE,
					  VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_THREADS, budget);
				if (!all)
					assert_non_null(vmon_proc_monitor(&vmon, 1, VMON_WANT_PROC_INHERIT, NULL, NULL));
				check_tid_reuse(&vmon, &ns, pause_ms);
				vmon_destroy(&vmon);
			}
		}
	}
	pidns_stop(&ns);
}

/* --- callbacks on live processes --- */

static struct {
	char	log[256];
	size_t	len;
	vmon_proc_t *other;	/* 2PASS: must be sampled when the first callback runs */
	int	other_sampled;
	bool	unmonitor_self;
} cb;

static void on_sample(vmon_t *vmon, void *arg)
{
	cb.len += (size_t)snprintf(cb.log + cb.len, sizeof(cb.log) - cb.len, "S ");
}

static void on_proc(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg)
{
	cb.len += (size_t)snprintf(cb.log + cb.len, sizeof(cb.log) - cb.len, "%s%s ", (const char *)arg,
				   proc->is_stale ? "(stale)" : "");
	if (cb.other && cb.other_sampled < 0)
		cb.other_sampled = cb.other->generation == vmon->generation;
	if (cb.unmonitor_self)
		vmon_proc_unmonitor(vmon, proc, on_proc, arg);
}

static void log_reset(void)
{
	cb.len = 0;
	cb.log[0] = '\0';
}

static void test_callbacks(void **state)
{
	puppet_t a, b;
	vmon_t vmon;
	vmon_proc_t *na, *nb;

	puppet_spawn(&a);
	puppet_fork(&a, &b, true);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, -1);
	memset(&cb, 0, sizeof(cb));
	vmon.sample_cb = on_sample;
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, on_proc, "a");
	assert_non_null(na);
	sample(&vmon);
	nb = vmon_proc_monitor(&vmon, b.pid, VMON_WANT_PROC_INHERIT, on_proc, "b");
	assert_ptr_equal(nb, must_child(&vmon, na, b.pid));
	log_reset();
	sample(&vmon);
	assert_string_equal(cb.log, "S b a ");

	puppet_exit(&b, 0);
	puppet_reap(&a, b.pid);
	log_reset();
	sample(&vmon);
	assert_string_equal(cb.log, "S b(stale) a ");
	assert_int_equal(dtors(b.pid), 0);
	log_reset();
	sample(&vmon);
	assert_string_equal(cb.log, "S a ");
	/* out of the tree, but monitored: its dtor waits for the vmon_proc_unmonitor() */
	assert_int_equal(dtors(b.pid), 0);
	vmon_proc_unmonitor(&vmon, nb, on_proc, "b");
	assert_int_equal(dtors(b.pid), 1);

	/* unmonitored from its own callback: gone when the pass ends, with its subtree */
	puppet_fork(&a, &b, true);
	sample(&vmon);
	assert_non_null(must_child(&vmon, na, b.pid));
	cb.unmonitor_self = true;
	sample(&vmon);
	assert_true(list_empty(&vmon.processes));
	assert_int_equal(dtors(a.pid), 1);
	assert_true(dtors(b.pid) >= 1);
	assert_int_equal(dtors(b.pid), ctors(b.pid));
	vmon_destroy(&vmon);
}

/* every node under proc had its ctor and holds a stat store; how many did not */
static int unseen_nodes(vmon_proc_t *proc)
{
	vmon_proc_t *child;
	int n = !proc->stores[VMON_STORE_PROC_STAT] || ctors(proc->pid) == 0;

	if (!proc->is_thread) {
		list_for_each_entry(child, &proc->threads, threads)
			n += unseen_nodes(child);
	}
	list_for_each_entry(child, &proc->children, siblings)
		n += unseen_nodes(child);
	return n;
}

/*
 * A followed child that lists a child of its own and dies before the rest
 * of its reads: the grandchild was made from the listing, never read, and
 * was left in the tree with no ctor and no stat store, shown is_new, then
 * is_stale (a client reading its stat store crashed).  A churn of such
 * lives, sampled as fast as the library goes: the timing is the kernel's,
 * so a pass catches the moment in a few percent of passes (36 in 3,000
 * without the fix); in none may the tree hold a node the caller was not
 * told of.
 */
static void test_unread_child_of_dying_parent(void **state)
{
	vmon_t vmon;
	vmon_proc_t *top;
	int unseen = 0;
	pid_t churn = fork();

	assert_true(churn >= 0);
	if (churn == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		srand((unsigned)getpid());
		for (;;) {
			pid_t parent = fork();

			if (parent == 0) {
				if (fork() == 0) {
					usleep(30000);
					_exit(0);
				}
				/* dies a moment later, at a different one each time */
				for (volatile int spin = rand() % 200000; spin > 0; spin--)
					;
				_exit(0);
			}
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			usleep(500);
		}
	}
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
	top = vmon_proc_monitor(&vmon, churn, VMON_WANT_PROC_FOLLOW_CHILDREN | VMON_WANT_PROC_IO | VMON_WANT_PROC_SCHED |
				VMON_WANT_PROC_VM_STATUS, NULL, NULL);
	assert_non_null(top);
	for (int i = 0; i < 2000; i++) {
		assert_true(vmon_sample(&vmon));
		unseen += unseen_nodes(top);
	}
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
	vmon_destroy(&vmon);
	assert_int_equal(unseen, 0);
}

/*
 * Unmonitored from its own callback while at the top, then found in the
 * same pass to be a child of a process monitored with FOLLOW_CHILDREN,
 * walked after it: the removal deferred to the end of the pass must find
 * the tree holding it, and only the caller's reference goes.  It went
 * instead, dtor and all, from under its parent: the next sample made a
 * second node for the same process, new again.
 */
static void test_unmonitor_in_callback_then_followed(void **state)
{
	puppet_t a, b;
	vmon_t vmon;
	vmon_proc_t *na, *nb;

	puppet_spawn(&a);
	puppet_fork(&a, &b, true);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
	memset(&cb, 0, sizeof(cb));
	cb.unmonitor_self = true;
	/* b first: at the top when its callback runs, before a's walk finds it */
	nb = vmon_proc_monitor(&vmon, b.pid, VMON_WANT_PROC_INHERIT, on_proc, "b");
	assert_non_null(nb);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	assert_string_equal(cb.log, "b ");
	assert_ptr_equal(must_child(&vmon, na, b.pid), nb);
	assert_int_equal(nb->refcnt, 1);	/* the tree's */
	assert_int_equal(dtors(b.pid), 0);

	log_reset();
	sample(&vmon);
	assert_string_equal(cb.log, "");
	assert_ptr_equal(must_child(&vmon, na, b.pid), nb);
	assert_false(nb->is_new);
	assert_int_equal(ctors(b.pid), 1);
	assert_int_equal(dtors(b.pid), 0);

	/* the tree's to free, as any followed child's */
	puppet_exit(&b, 0);
	puppet_reap(&a, b.pid);
	sample(&vmon);
	assert_true(nb->is_stale);
	sample(&vmon);
	assert_null(find_child(&vmon, na, b.pid));
	assert_int_equal(dtors(b.pid), 1);
	vmon_proc_unmonitor(&vmon, na, NULL, NULL);
	vmon_destroy(&vmon);
}

/*
 * A child found by its parent's listing whose first read fails with an
 * error that does not mean "gone" (EIO here): it is in the tree the caller
 * walks, so it has had its ctor, carries the error, and reads normally once
 * it can be read (the same process: not a reused id); its exit is then an
 * ordinary exit, with one dtor.
 */
static void test_unreadable_at_first(void **state)
{
	puppet_t a, b;
	vmon_t vmon;
	vmon_proc_t *na, *nb;

	puppet_spawn(&a);
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN, -1);
	/* the EIO comes from /proc's stat file (the interposer): the /proc source, whatever $VMON_SAMPLER says */
	assert_int_equal(vmon_set_sampler(&vmon, VMON_SAMPLER_PROC), 0);
	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);

	puppet_fork(&a, &b, true);
	unreadable_pid = b.pid;
	for (int pass = 0; pass < 2; pass++) {
		sample(&vmon);
		nb = must_child(&vmon, na, b.pid);
		assert_int_equal(nb->errors[VMON_STORE_PROC_STAT], EIO);
		assert_int_equal(ctors(b.pid), 1);
		assert_false(nb->is_stale);
	}
	unreadable_pid = 0;
	sample(&vmon);
	assert_ptr_equal(must_child(&vmon, na, b.pid), nb);
	assert_int_equal(nb->errors[VMON_STORE_PROC_STAT], 0);
	assert_false(nb->is_stale);
	assert_int_equal(pstat(nb)->pid, b.pid);
	assert_int_equal(pstat(nb)->ppid, a.pid);
	assert_int_equal(ctors(b.pid), 1);

	puppet_exit(&b, 3);
	assert_int_equal(WEXITSTATUS(puppet_reap(&a, b.pid)), 3);
	sample(&vmon);
	assert_true(nb->is_stale);
	sample(&vmon);
	assert_null(find_child(&vmon, na, b.pid));
	assert_int_equal(dtors(b.pid), 1);

	/* never readable, then gone: still one ctor and one dtor */
	puppet_fork(&a, &b, true);
	unreadable_pid = b.pid;
	sample(&vmon);
	assert_int_equal(must_child(&vmon, na, b.pid)->errors[VMON_STORE_PROC_STAT], EIO);
	puppet_exit(&b, 0);
	puppet_reap(&a, b.pid);
	unreadable_pid = 0;
	sample(&vmon);
	sample(&vmon);
	assert_null(find_child(&vmon, na, b.pid));
	assert_int_equal(ctors(b.pid), 1);
	assert_int_equal(dtors(b.pid), 1);
	vmon_destroy(&vmon);
}

/*
 * A thread id is not a process: /proc/TID answers for its process, and a
 * node for it would be a second one of that process.  vmon_proc_monitor()
 * refuses it (EINVAL), before and after the process's threads are in the
 * tree; monitoring the process again with more wants raises its threads'.
 */
static void test_monitor_thread_id(void **state)
{
	puppet_t a;
	vmon_t vmon;
	vmon_stats_t stats;
	vmon_proc_t *na, *t;
	pid_t tid;

	puppet_spawn(&a);
	tid = puppet_thread(&a, "worker");
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
	errno = 0;
	assert_null(vmon_proc_monitor(&vmon, tid, VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ctors(tid), 0);

	na = vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_THREADS, NULL, NULL);
	assert_non_null(na);
	sample(&vmon);
	t = find_thread(na, tid);
	assert_non_null(t);
	errno = 0;
	assert_null(vmon_proc_monitor(&vmon, tid, VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vmon_get_stats(&vmon, &stats), 0);
	assert_int_equal(stats.procs, 1);
	assert_int_equal(stats.threads, 2);

	assert_false(t->wants & VMON_WANT_PROC_VM);
	assert_ptr_equal(vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_VM, NULL, NULL), na);
	assert_true(na->wants & VMON_WANT_PROC_VM);
	assert_true(t->wants & VMON_WANT_PROC_VM);
	assert_false(t->wants & VMON_WANT_PROC_FOLLOW_THREADS);
	sample(&vmon);
	assert_non_null(pvm(t));
	assert_true(pvm(t)->size_pages > 0);
	vmon_proc_unmonitor(&vmon, na, NULL, NULL);
	vmon_proc_unmonitor(&vmon, na, NULL, NULL);
	vmon_destroy(&vmon);
}

static void test_2pass(void **state)
{
	for (int twopass = 0; twopass < 2; twopass++) {
		puppet_t a, b;
		vmon_t vmon;

		puppet_spawn(&a);
		puppet_spawn(&b);
		live_init(&vmon, NULL, twopass ? VMON_FLAG_2PASS : VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
		memset(&cb, 0, sizeof(cb));
		assert_non_null(vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, on_proc, "a"));
		cb.other = vmon_proc_monitor(&vmon, b.pid, VMON_WANT_PROC_INHERIT, on_proc, "b");
		assert_non_null(cb.other);
		sample(&vmon);
		cb.other_sampled = -1;
		log_reset();
		sample(&vmon);
		assert_string_equal(cb.log, "a b ");
		assert_int_equal(cb.other_sampled, twopass);
		vmon_destroy(&vmon);
		puppets_cleanup();
	}
}

/*
 * A process monitored from a sample callback.  Without 2PASS the walk goes
 * on to the new top-level node and reads it in the same sample; with 2PASS
 * every read is over when the callbacks run, so the node waits for the next
 * sample.  Either way its callback first runs in the sample that first
 * reads it, with its stat store filled and is_new set: a callback run
 * before that read finds no comm, and is_new spent before the read.
 */
static struct {
	pid_t	pid;
	vmon_proc_t *node;
	int	runs;
	int	first_generation;
	bool	first_new;
	bool	always_read;	/* every run: read in this sample, with a comm */
} late;

static void on_late_proc(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg)
{
	if (late.runs++ == 0) {
		late.first_generation = vmon->generation;
		late.first_new = proc->is_new;
	}
	if (proc->generation != vmon->generation || !pstat(proc) || !pstat(proc)->comm.array)
		late.always_read = false;
}

static void on_monitor_late(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg)
{
	if (!late.node)
		late.node = vmon_proc_monitor(vmon, late.pid, VMON_WANT_PROC_INHERIT, on_late_proc, NULL);
}

static void test_monitor_in_callback(void **state)
{
	for (int twopass = 0; twopass < 2; twopass++) {
		int first_sample = twopass ? 2 : 1;
		puppet_t a, b;
		vmon_t vmon;

		puppet_spawn(&a);
		puppet_spawn(&b);
		live_init(&vmon, NULL, twopass ? VMON_FLAG_2PASS : VMON_FLAG_NONE, VMON_WANT_PROC_STAT, -1);
		memset(&late, 0, sizeof(late));
		late.pid = b.pid;
		late.always_read = true;
		assert_non_null(vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, on_monitor_late, NULL));
		for (int n = 1; n <= 3; n++) {
			sample(&vmon);
			assert_non_null(late.node);
			assert_int_equal(late.runs, n >= first_sample ? n - first_sample + 1 : 0);
			/* new in exactly one sample, the one that read it: not in the one that made it unread */
			assert_int_equal(late.node->is_new, n == first_sample);
		}
		assert_int_equal(late.first_generation, first_sample);
		assert_true(late.first_new);
		assert_true(late.always_read);
		assert_int_equal(pstat(late.node)->pid, b.pid);
		vmon_destroy(&vmon);
		puppets_cleanup();
	}
}

/*
 * Another user's process: its io cannot be read (EACCES, recorded in
 * errors[PROC_IO]), nor its exe link (an expected limit: exe is absent and
 * PROC_STAT has no error); the rest of its stat store is there.  As root, a
 * child of ours drops to nobody and samples a root-owned process; it
 * reports what it saw on a pipe (it must not use cmocka's asserts, which
 * would unwind into the test runner in the child).
 */
struct eacces_arg {
	pid_t	target;
	int	report;	/* pipe: a line of text, empty when all is well */
};

static int eacces_check(void *arg)
{
	struct eacces_arg *e = arg;
	char msg[512] = "";
	vmon_t vmon;
	vmon_proc_t *p, *self;
	char *dump = NULL;
	size_t dump_len = 0;
	FILE *out;

	if (is_root() && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			  setresuid(65534, 65534, 65534) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)) {
		snprintf(msg, sizeof(msg), "cannot drop to nobody: %s", strerror(errno));
		goto out;
	}
	if (!vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO)) {
		snprintf(msg, sizeof(msg), "vmon_init: %s", strerror(errno));
		goto out;
	}
	p = vmon_proc_monitor(&vmon, e->target, VMON_WANT_PROC_INHERIT, NULL, NULL);
	self = vmon_proc_monitor(&vmon, getpid(), VMON_WANT_PROC_INHERIT, NULL, NULL);
	if (!p || !self) {
		snprintf(msg, sizeof(msg), "monitor failed: %s", strerror(errno));
		goto destroy;
	}
	/* the first sample reads exe, the second only what can change */
	for (int n = 1; n <= 2 && !msg[0]; n++) {
		if (!vmon_sample(&vmon)) {
			snprintf(msg, sizeof(msg), "sample %d failed: %s", n, strerror(errno));
			goto destroy;
		}
		if (p->errors[VMON_STORE_PROC_IO] != EACCES)
			snprintf(msg, sizeof(msg), "errors[PROC_IO] of %d is %d, not EACCES", p->pid, p->errors[VMON_STORE_PROC_IO]);
		else if (BITTEST(pio(p)->present, VMON_PROC_IO_RCHAR) || pio(p)->rchars)
			snprintf(msg, sizeof(msg), "io of %d present (rchar %llu) though unreadable", p->pid, pio(p)->rchars);
		else if (p->is_stale || pstat(p)->pid != e->target || !BITTEST(pstat(p)->present, VMON_PROC_STAT_PPID) ||
			 pstat(p)->ppid != getppid())
			snprintf(msg, sizeof(msg), "stat of %d wrong: stale %d pid %d ppid %lld", p->pid, p->is_stale,
				 pstat(p)->pid, pstat(p)->ppid);
		else if (self->errors[VMON_STORE_PROC_IO] || !BITTEST(pio(self)->present, VMON_PROC_IO_RCHAR))
			snprintf(msg, sizeof(msg), "own io unreadable: %d", self->errors[VMON_STORE_PROC_IO]);
		else if (p->errors[VMON_STORE_PROC_STAT])
			snprintf(msg, sizeof(msg), "errors[PROC_STAT] of %d is %s", p->pid,
				 strerrorname_np(p->errors[VMON_STORE_PROC_STAT]));
		else if (BITTEST(pstat(p)->present, VMON_PROC_STAT_EXE) || pstat(p)->exe.len || pstat(p)->exe.array[0])
			snprintf(msg, sizeof(msg), "exe of %d present (\"%s\") though unreadable", p->pid, pstat(p)->exe.array);
		else if (!BITTEST(pstat(p)->present, VMON_PROC_STAT_CMDLINE) || !pstat(p)->argc ||
			 !BITTEST(pstat(p)->present, VMON_PROC_STAT_WCHAN) || !BITTEST(pstat(p)->present, VMON_PROC_STAT_UID) ||
			 pstat(p)->uid != 0)
			snprintf(msg, sizeof(msg), "cmdline, wchan or uid of %d absent: argc %d uid %u", p->pid,
				 pstat(p)->argc, (unsigned)pstat(p)->uid);
		else if (self->errors[VMON_STORE_PROC_STAT] || !BITTEST(pstat(self)->present, VMON_PROC_STAT_EXE) ||
			 pstat(self)->exe.array[0] != '/')
			snprintf(msg, sizeof(msg), "own exe unreadable: \"%s\", error %d", pstat(self)->exe.array,
				 self->errors[VMON_STORE_PROC_STAT]);
	}
	if (!msg[0]) {
		char want[64];

		out = open_memstream(&dump, &dump_len);
		vmon_dump_procs(&vmon, out);
		fclose(out);
		snprintf(want, sizeof(want), "io{rchars=- ");
		if (!strstr(dump, "errors{proc_io=EACCES}") || !strstr(dump, want))
			snprintf(msg, sizeof(msg), "the dump does not show the error: %.300s", dump);
		free(dump);
	}
destroy:
	vmon_destroy(&vmon);
out:
	if (write(e->report, msg, strlen(msg)) < 0)
		return 2;
	return 0;
}

static void test_eacces(void **state)
{
	struct eacces_arg e;
	char msg[600];
	int report[2], status;
	ssize_t n;
	pid_t child;
	puppet_t root_owned;

	if (is_root()) {
		puppet_spawn(&root_owned);
		e.target = root_owned.pid;
	} else {
		/* as a user: pid 1, if its io is indeed closed to us */
		int fd = open("/proc/1/io", O_RDONLY | O_CLOEXEC);

		SKIP_IF(fd >= 0 || errno != EACCES, "not root, and /proc/1/io is not EACCES to us");
		e.target = 1;
	}
	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	e.report = report[1];
	child = spawn_fn(eacces_check, &e);
	close(report[1]);
	n = read(report[0], msg, sizeof(msg) - 1);
	close(report[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(n >= 0);
	msg[n] = '\0';
	if (msg[0])
		fail_msg("as nobody: %s", msg);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* the dump escapes what a process calls itself */
static void test_dump_escapes(void **state)
{
	puppet_t a;
	vmon_t vmon;
	char *text = NULL, want[64];
	size_t len = 0;
	FILE *out;

	puppet_spawn(&a);
	puppet_name(&a, "\x1b[2J\x1b]0;x\x07");
	assert_true(wait_sleeping(a.pid, 5000));
	live_init(&vmon, NULL, VMON_FLAG_NONE, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM, -1);
	assert_non_null(vmon_proc_monitor(&vmon, a.pid, VMON_WANT_PROC_INHERIT, NULL, NULL));
	sample(&vmon);
	out = open_memstream(&text, &len);
	vmon_dump_procs(&vmon, out);
	fclose(out);
	snprintf(want, sizeof(want), "%d %d 1 n--- S \\x1b[2J\\x1b]0;x\\x07 [", a.pid, getpid());
	if (!strstr(text, want))
		fail_msg("the dump\n%s\nlacks the escaped comm", text);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)text[i] < 0x20 && text[i] != '\n')
			fail_msg("the dump holds the control byte 0x%02x", (unsigned char)text[i]);
	}
	free(text);
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fork_tree_explicit, teardown),
		cmocka_unit_test_teardown(test_fork_tree_proc_all, teardown),
		cmocka_unit_test_teardown(test_exec, teardown),
		cmocka_unit_test_teardown(test_threads, teardown),
		cmocka_unit_test_teardown(test_io_of_exited_thread, teardown),
		cmocka_unit_test_teardown(test_exit_and_zombie, teardown),
		cmocka_unit_test_teardown(test_gone_read_of_live_process, teardown),
		cmocka_unit_test_teardown(test_rollup_without_memory, teardown),
		cmocka_unit_test_teardown(test_reparent_to_subreaper, teardown),
		cmocka_unit_test_teardown(test_reparent_to_init, teardown),
		cmocka_unit_test_teardown(test_pid_reuse, teardown),
		cmocka_unit_test_teardown(test_tid_reuse, teardown),
		cmocka_unit_test_teardown(test_callbacks, teardown),
		cmocka_unit_test_teardown(test_unmonitor_in_callback_then_followed, teardown),
		cmocka_unit_test_teardown(test_unreadable_at_first, teardown),
		cmocka_unit_test_teardown(test_unread_child_of_dying_parent, teardown),
		cmocka_unit_test_teardown(test_monitor_thread_id, teardown),
		cmocka_unit_test_teardown(test_2pass, teardown),
		cmocka_unit_test_teardown(test_monitor_in_callback, teardown),
		cmocka_unit_test_teardown(test_eacces, teardown),
		cmocka_unit_test_teardown(test_dump_escapes, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
