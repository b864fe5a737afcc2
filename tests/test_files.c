/*
 * test_files.c: the PROC_FILES and SYS_SOCKETS wants on live processes.
 *
 * Every child here makes its own fds from a clean table (close_range), so
 * that the listing the library gives can be checked entry by entry against
 * what the child itself saw (its fstat(2) of each fd, its socket's port),
 * and then stops itself (SIGSTOP): the test samples a process that is not
 * running, and lets it take one step at a time with SIGCONT.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files_testlib.h"

/* what a child tells the test, in memory shared across the fork */
struct kid {
	char			path[256];	/* a regular file the test made */
	int			port;		/* of its listening socket */
	int			nfds;		/* fds it holds */
	int			fd_limit;	/* its own fds are below: valgrind keeps its own above */
	pid_t			grandchild;
	unsigned long long	ino[32], dev[32];	/* its fstat(2) of fds 0..31 */
};

static struct kid *kid_new(void)
{
	struct kid *k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(k != MAP_FAILED);
	memset(k, 0, sizeof(*k));
	return k;
}

static void kid_free(struct kid *k)
{
	if (k->path[0])
		unlink(k->path);
	munmap(k, sizeof(*k));
}

/* a file of 20000 bytes the children open */
static void kid_make_file(struct kid *k)
{
	static char zeros[20000];
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(k->path, sizeof(k->path), "%s/vmon-files-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(k->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, zeros, sizeof(zeros)), (ssize_t)sizeof(zeros));
	close(fd);
}

/*
 * The child's fd table: nothing but 0, 1, 2 on one /dev/null description,
 * and whatever valgrind holds at or above the child's fd limit (it shows in
 * /proc, and the tests leave it out).
 */
static int clean_fds(struct kid *k)
{
	struct rlimit rl;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	k->fd_limit = rl.rlim_cur > 0x7fffffff ? 0x7fffffff : (int)rl.rlim_cur;
	if (close_range(0, ~0U, 0) < 0 || open("/dev/null", O_RDWR) != 0 || dup(0) != 1 || dup(0) != 2)
		return -1;
	return 0;
}

/* the child's own open fds: those below its limit */
static int own_fds(vmon_proc_t *proc, const struct kid *k)
{
	vmon_proc_fd_t *fd;
	int n = 0;

	list_for_each_entry(fd, &((vmon_proc_files_t *)proc->stores[VMON_STORE_PROC_FILES])->fds, fds)
		n += !fd->is_stale && fd->fdnum < k->fd_limit;
	return n;
}

static void note_fds(struct kid *k, int upto)
{
	for (int i = 0; i <= upto && i < 32; i++) {
		struct stat st;

		if (fstat(i, &st) == 0) {
			k->ino[i] = st.st_ino;
			k->dev[i] = st.st_dev;
		}
	}
}

static void wait_stopped(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, WUNTRACED) < 0) {
		if (errno != EINTR)
			fail_msg("waitpid %d: %s", pid, strerror(errno));
	}
	if (!WIFSTOPPED(status))
		fail_msg("child %d did not stop: it %s %d", pid, WIFEXITED(status) ? "exited with" : "was killed by",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* the child runs to its next raise(SIGSTOP) */
static void step(pid_t pid)
{
	assert_int_equal(kill(pid, SIGCONT), 0);
	wait_stopped(pid);
}

static pid_t spawn_stopped(int (*fn)(void *), void *arg)
{
	pid_t pid = spawn_fn(fn, arg);

	wait_stopped(pid);
	return pid;
}

static void init_monitor(vmon_t *vmon, vmon_sys_wants_t sys)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.sys_wants = sys;
	attr.proc_wants = VMON_WANT_PROC_FILES;
	attr.proc_root = "/proc";
	assert_true(vmon_init_attr(vmon, &attr));
}

/* the distinct objects of the child's own fds (marked through foo, which is ours) */
static int count_objects(vmon_proc_t *proc, const struct kid *k)
{
	static int mark;
	vmon_proc_fd_t *fd;
	int n = 0;

	mark++;
	list_for_each_entry(fd, &files_of(proc)->fds, fds) {
		if (fd->is_stale || fd->fdnum >= k->fd_limit || fd->object->foo == (void *)(uintptr_t)mark)
			continue;
		fd->object->foo = (void *)(uintptr_t)mark;
		n++;
	}
	return n;
}

static int ctors, dtors, ctor_untyped;

static void count_ctor(vmon_t *vmon, vmon_fobject_t *obj)
{
	ctors++;
	/* the object is complete when the caller first sees it */
	if (obj->type == VMON_FOBJECT_TYPE_UNRECOGNIZED || obj->refcnt < 1)
		ctor_untyped++;
}

static void count_dtor(vmon_t *vmon, vmon_fobject_t *obj)
{
	dtors++;
}

/* --- a child with known fds --- */

static int known_fds_child(void *arg)
{
	struct kid *k = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int p[2], sv[2], fd;

	if (clean_fds(k) < 0)
		return 10;
	if (pipe(p) < 0 || p[0] != 3 || p[1] != 4)
		return 11;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || sv[0] != 5 || sv[1] != 6)
		return 12;
	fd = open(k->path, O_RDONLY | O_CLOEXEC);
	if (fd != 7 || lseek(fd, 12345, SEEK_SET) != 12345)
		return 13;
	if (eventfd(0, EFD_NONBLOCK) != 8)
		return 14;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd != 9 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return 15;
	k->port = ntohs(sin.sin_port);
	note_fds(k, 9);
	raise(SIGSTOP);

	/* step 1: fd 8 closed and its number reused for another file; fd 30 opened */
	close(8);
	if (open("/dev/zero", O_RDONLY) != 8 || dup2(7, 30) != 30)
		return 20;
	note_fds(k, 30);
	raise(SIGSTOP);

	/* step 2: a seek through fd 30 moves fd 7 too (one description); fd 9 closed */
	if (lseek(30, 100, SEEK_SET) != 100)
		return 21;
	close(9);
	raise(SIGSTOP);
	for (;;)
		pause();
}

static void check_fd(vmon_proc_fd_t *fd, const char *type, const char *path, const char *access)
{
	assert_string_equal(fd->type, type);
	assert_string_equal(fd->object_path.array, path);
	assert_string_equal(fd->access, access);
	assert_string_equal(vmon_fobject_types[fd->object->type].name, type);
	assert_true(BITTEST(fd->present, VMON_FILES_POS));
	assert_true(BITTEST(fd->present, VMON_FILES_FLAGS));
}

static void check_known_listing(vmon_t *vmon, vmon_proc_t *proc, struct kid *k, bool sockets)
{
	vmon_proc_files_t *files = files_of(proc);
	vmon_proc_fd_t *fd, *fd3, *fd4, *fd9;
	struct stat null_st;
	char want[64];
	int n = 0;

	assert_non_null(files);
	assert_int_equal(proc->errors[VMON_STORE_PROC_FILES], 0);
	assert_int_equal(own_fds(proc, k), 10);
	list_for_each_entry(fd, &files->fds, fds) {
		if (fd->fdnum >= k->fd_limit)
			break;
		assert_int_equal(fd->fdnum, n);	/* 0..9, in order, nothing else */
		assert_true(fd->is_new);
		assert_false(fd->is_stale);
		assert_ptr_equal(fd->process, proc);
		assert_int_equal(fd->generation, vmon->generation);
		n++;
	}
	assert_int_equal(n, 10);
	n = 0;
	list_for_each_entry(fd, &files->fds, fds)
		n += !fd->is_stale;
	assert_int_equal(files->fds_nr, n);

	assert_int_equal(stat("/dev/null", &null_st), 0);
	for (int i = 0; i < 3; i++) {
		fd = must_fd(proc, i);
		check_fd(fd, "chr", "/dev/null", "rw");
		assert_int_equal(fd->dev, null_st.st_dev);
		assert_int_equal(fd->object->inum, null_st.st_ino);
		assert_ptr_equal(fd->object, must_fd(proc, 0)->object);
	}
	assert_int_equal(must_fd(proc, 0)->object->refcnt, 3);
	assert_int_equal(must_fd(proc, 0)->object->ref_fds_nr, 3);

	fd3 = must_fd(proc, 3);
	fd4 = must_fd(proc, 4);
	snprintf(want, sizeof(want), "pipe:[%llu]", k->ino[3]);
	check_fd(fd3, "pipe", want, "r");
	check_fd(fd4, "pipe", want, "w");
	assert_ptr_equal(fd3->object, fd4->object);
	assert_int_equal(fd3->object->inum, k->ino[3]);
	assert_int_equal(fd3->object->refcnt, 2);
	assert_int_equal(fd3->ino, k->ino[3]);

	for (int i = 5; i <= 6; i++) {
		fd = must_fd(proc, i);
		snprintf(want, sizeof(want), "socket:[%llu]", k->ino[i]);
		check_fd(fd, "unix", want, "rw");
		assert_int_equal(fd->object->inum, k->ino[i]);
		assert_int_equal(fd->object->refcnt, sockets ? 2 : 1);	/* the table holds one */
		if (sockets) {
			assert_non_null(fd->object->socket);
			assert_int_equal(fd->object->socket->family, AF_UNIX);
			assert_int_equal(fd->object->socket->sock_type, SOCK_STREAM);
			assert_string_equal(fd->object->socket->state_name, "CONNECTED");
			assert_string_equal(fd->object->socket->local.array, "");
		} else {
			assert_null(fd->object->socket);
		}
	}
	assert_ptr_not_equal(must_fd(proc, 5)->object, must_fd(proc, 6)->object);

	fd = must_fd(proc, 7);
	check_fd(fd, "file", k->path, "r");
	assert_int_equal(fd->pos, 12345);
	assert_true(fd->flags & O_CLOEXEC);
	assert_int_equal(fd->object->inum, k->ino[7]);
	assert_int_equal(fd->object->dev, k->dev[7]);
	assert_int_equal(fd->dev, k->dev[7]);
	assert_int_equal(fd->object->type, VMON_FOBJECT_TYPE_FILE);

	fd = must_fd(proc, 8);
	check_fd(fd, "eventfd", "anon_inode:[eventfd]", "rw");
	assert_true(fd->flags & O_NONBLOCK);
	assert_int_equal(fd->object->refcnt, 1);
	assert_int_equal(vmon_fobject_types[fd->object->type].type_class, VMON_FOBJECT_TYPE_ANON);

	fd9 = must_fd(proc, 9);
	snprintf(want, sizeof(want), "socket:[%llu]", k->ino[9]);
	check_fd(fd9, "tcp", want, "rw");
	assert_int_equal(vmon_fobject_types[fd9->object->type].type_class, VMON_FOBJECT_TYPE_SOCKET);
	if (sockets) {
		vmon_fobject_socket_t *s = fd9->object->socket;

		assert_non_null(s);
		snprintf(want, sizeof(want), "127.0.0.1:%d", k->port);
		assert_string_equal(s->local.array, want);
		assert_string_equal(s->remote.array, "0.0.0.0:0");
		assert_string_equal(s->state_name, "LISTEN");
		assert_int_equal(s->state, 10);
		assert_int_equal(s->family, AF_INET);
		assert_int_equal(s->sock_type, SOCK_STREAM);
		assert_int_equal(s->uid, getuid());
	}
}

static void test_known_fds(void **state)
{
	struct kid *k = kid_new();
	vmon_proc_fd_t *fd, *old8, *new8;
	vmon_proc_files_t *files;
	vmon_stats_t before, after;
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid;
	int n;

	kid_make_file(k);
	pid = spawn_stopped(known_fds_child, k);
	init_monitor(&vmon, VMON_WANT_SYS_SOCKETS);
	ctors = dtors = ctor_untyped = 0;
	vmon.fobject_ctor_cb = count_ctor;
	vmon.fobject_dtor_cb = count_dtor;
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES, NULL, NULL);
	assert_non_null(proc);
	sample_checked(&vmon);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_SOCKETS], 0);
	check_known_listing(&vmon, proc, k, true);
	assert_true(files_of(proc)->fds_changed);
	assert_true(proc->activity & VMON_WANT_PROC_FILES);
	assert_int_equal(ctor_untyped, 0);

	/* the child did not run: nothing new, nothing read but its schedstat */
	vmon_get_stats(&vmon, &before);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &after);
	files = files_of(proc);
	assert_false(files->fds_changed);
	assert_int_equal(proc->activity & VMON_WANT_PROC_FILES, 0);
	assert_true(after.reads_skipped - before.reads_skipped >= 11);
	list_for_each_entry(fd, &files->fds, fds) {
		assert_false(fd->is_new);
		assert_int_equal(fd->generation, vmon.generation);
		for (size_t b = 0; b < sizeof(fd->changed); b++)
			assert_int_equal(fd->changed[b], 0);
	}

	/* fd 8 closed and reused, fd 30 opened: both show for one sample */
	step(pid);
	sample_checked(&vmon);
	assert_true(files->fds_changed);
	assert_true(proc->activity & VMON_WANT_PROC_FILES);
	assert_int_equal(own_fds(proc, k), 11);
	old8 = fd_find(proc, 8, true);
	new8 = fd_find(proc, 8, false);
	assert_non_null(old8);
	assert_non_null(new8);
	assert_true(old8->is_stale);
	assert_int_equal(old8->generation, vmon.generation - 1);
	assert_string_equal(old8->type, "eventfd");
	assert_true(new8->is_new);
	assert_string_equal(new8->object_path.array, "/dev/zero");
	assert_string_equal(new8->type, "chr");
	fd = must_fd(proc, 30);
	assert_true(fd->is_new);
	assert_ptr_equal(fd->object, must_fd(proc, 7)->object);	/* the same file */
	assert_int_equal(fd->object->ref_fds_nr, 2);
	assert_int_equal(fd->pos, 12345);
	n = 0;
	list_for_each_entry(fd, &files->fds, fds) {
		n += !fd->is_new && !fd->is_stale && fd->fdnum < k->fd_limit;
		if (fd->fds.next != &files->fds)
			assert_true(fd->fdnum <= list_entry(fd->fds.next, vmon_proc_fd_t, fds)->fdnum);
	}
	assert_int_equal(n, 9);

	/* the stale fd leaves after one sample */
	sample_checked(&vmon);
	assert_null(fd_find(proc, 8, true));
	assert_false(must_fd(proc, 8)->is_new);
	assert_false(files->fds_changed);

	/* one seek moves both fds of the description; fd 9 closes */
	step(pid);
	sample_checked(&vmon);
	assert_int_equal(must_fd(proc, 30)->pos, 100);
	assert_int_equal(must_fd(proc, 7)->pos, 100);
	assert_true(BITTEST(must_fd(proc, 7)->changed, VMON_FILES_POS));
	assert_false(BITTEST(must_fd(proc, 7)->changed, VMON_FILES_FLAGS));
	assert_non_null(fd_find(proc, 9, true));
	assert_null(fd_find(proc, 9, false));
	assert_int_equal(own_fds(proc, k), 10);

	reap(pid, SIGKILL);
	vmon_destroy(&vmon);
	assert_true(ctors > 0);
	assert_int_equal(ctors, dtors);
	kid_free(k);
}

/* the same child without SYS_SOCKETS: the protocols still come from the sockets themselves */
static void test_known_fds_without_tables(void **state)
{
	struct kid *k = kid_new();
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid;

	SKIP_IF(access("/proc/self/fd", R_OK) != 0, "no /proc/self/fd");
	kid_make_file(k);
	pid = spawn_stopped(known_fds_child, k);
	init_monitor(&vmon, 0);
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES, NULL, NULL);
	assert_non_null(proc);
	sample_checked(&vmon);
	check_known_listing(&vmon, proc, k, false);
	assert_int_equal(count_objects(proc, k), 7);	/* null, pipe, 2 unix, file, eventfd, tcp */
	reap(pid, SIGKILL);
	vmon_destroy(&vmon);
	kid_free(k);
}

/* --- a pipe between a parent and its child --- */

static int pipe_parent(void *arg)
{
	struct kid *k = arg;
	int p[2];
	pid_t child;

	if (clean_fds(k) < 0 || pipe(p) < 0 || p[0] != 3)
		return 10;
	note_fds(k, 4);
	child = fork();
	if (child < 0)
		return 11;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(3);	/* the child writes */
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	k->grandchild = child;
	close(4);	/* the parent reads */
	raise(SIGSTOP);
	for (;;)
		pause();
}

static bool is_stopped(void *arg)
{
	return proc_state((pid_t)(intptr_t)arg) == 'T';
}

static bool is_zombie(void *arg)
{
	return proc_state((pid_t)(intptr_t)arg) == 'Z';
}

static void test_pipe_shared_with_child(void **state)
{
	struct kid *k = kid_new();
	vmon_proc_t *parent, *child;
	vmon_proc_fd_t *rd, *wr, *fd;
	vmon_fobject_t *obj;
	vmon_t vmon;
	pid_t pid;
	bool seen_rd = false, seen_wr = false;

	pid = spawn_stopped(pipe_parent, k);
	assert_true(wait_for(is_stopped, (void *)(intptr_t)k->grandchild, 5000));
	init_monitor(&vmon, 0);
	parent = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES | VMON_WANT_PROC_FOLLOW_CHILDREN, NULL, NULL);
	assert_non_null(parent);
	sample_checked(&vmon);
	child = vmon_proc_lookup(&vmon, k->grandchild);
	assert_non_null(child);
	assert_ptr_equal(child->parent, parent);

	rd = must_fd(parent, 3);
	wr = must_fd(child, 4);
	assert_null(fd_find(parent, 4, false));
	assert_null(fd_find(child, 3, false));
	obj = rd->object;
	assert_ptr_equal(wr->object, obj);
	assert_int_equal(obj->type, VMON_FOBJECT_TYPE_PIPE);
	assert_int_equal(obj->inum, k->ino[3]);
	assert_int_equal(obj->refcnt, 2);
	assert_int_equal(obj->ref_fds_nr, 2);
	list_for_each_entry(fd, &obj->ref_fds, ref_fds) {
		seen_rd |= fd == rd && fd->process == parent;
		seen_wr |= fd == wr && fd->process == child;
	}
	assert_true(seen_rd && seen_wr);
	assert_string_equal(rd->access, "r");
	assert_string_equal(wr->access, "w");

	/* the child dies (a zombie: its stopped parent does not reap it): its end closes */
	assert_int_equal(kill(k->grandchild, SIGKILL), 0);
	assert_true(wait_for(is_zombie, (void *)(intptr_t)k->grandchild, 5000));
	sample_checked(&vmon);
	wr = fd_find(child, 4, true);
	assert_non_null(wr);
	assert_int_equal(files_of(child)->fds_nr, 0);
	sample_checked(&vmon);
	assert_null(fd_find(child, 4, true));
	obj = must_fd(parent, 3)->object;
	assert_int_equal(obj->refcnt, 1);
	assert_int_equal(obj->ref_fds_nr, 1);

	reap(pid, SIGKILL);
	vmon_destroy(&vmon);
	kid_free(k);
}

/* --- a description shared by two processes, one of which does not run --- */

static int shared_description_child(void *arg)
{
	int fd = (int)(intptr_t)arg;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(fd, 100) != 100 || close_range(0, 99, 0) < 0 || close_range(101, ~0U, 0) < 0 ||
	    dup2(100, 3) != 3 || close(100) < 0 ||
	    open("/dev/null", O_RDWR) != 0 || dup(0) != 1 || dup(0) != 2)
		return 10;
	raise(SIGSTOP);
	if (lseek(3, 777, SEEK_SET) != 777)
		return 11;
	raise(SIGSTOP);
	for (;;)
		pause();
}

static void test_shared_description(void **state)
{
	struct kid *k = kid_new();
	vmon_proc_t *pa, *pb;
	vmon_stats_t before, after;
	vmon_t vmon;
	pid_t a, b;
	int fd;

	kid_make_file(k);
	fd = open(k->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	a = spawn_stopped(shared_description_child, (void *)(intptr_t)fd);
	b = spawn_stopped(shared_description_child, (void *)(intptr_t)fd);
	close(fd);

	init_monitor(&vmon, 0);
	pa = vmon_proc_monitor(&vmon, a, VMON_WANT_PROC_FILES, NULL, NULL);
	pb = vmon_proc_monitor(&vmon, b, VMON_WANT_PROC_FILES, NULL, NULL);
	assert_non_null(pa);
	assert_non_null(pb);
	sample_checked(&vmon);
	assert_ptr_equal(must_fd(pa, 3)->object, must_fd(pb, 3)->object);
	assert_int_equal(must_fd(pa, 3)->object->refcnt, 2);
	assert_int_equal(must_fd(pa, 3)->pos, 0);
	sample_checked(&vmon);

	/* b seeks; a does not run, so a is not listed, but its fd is read again through the object */
	step(b);
	vmon_get_stats(&vmon, &before);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &after);
	assert_int_equal(must_fd(pb, 3)->pos, 777);
	assert_int_equal(must_fd(pa, 3)->pos, 777);
	assert_true(BITTEST(must_fd(pa, 3)->changed, VMON_FILES_POS));
	assert_true(pa->activity & VMON_WANT_PROC_FILES);
	assert_true(after.reads_skipped > before.reads_skipped);	/* a's listing */

	reap(a, SIGKILL);
	reap(b, SIGKILL);
	vmon_destroy(&vmon);
	kid_free(k);
}

/* --- threads share their process's table --- */

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static int threaded_child(void *arg)
{
	struct kid *k = arg;
	pthread_t t;
	int p[2];

	if (clean_fds(k) < 0 || pipe(p) < 0)
		return 10;
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
			return 11;
	}
	raise(SIGSTOP);
	for (;;)
		pause();
}

static void test_threads_share_table(void **state)
{
	struct kid *k = kid_new();
	vmon_proc_files_t *files;
	vmon_proc_t *proc, *thread;
	vmon_t vmon;
	pid_t pid;
	int threads = 0;

	pid = spawn_stopped(threaded_child, k);
	init_monitor(&vmon, 0);
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES | VMON_WANT_PROC_FOLLOW_THREADS, NULL, NULL);
	assert_non_null(proc);
	sample_checked(&vmon);
	files = files_of(proc);
	assert_non_null(files);
	assert_int_equal(own_fds(proc, k), 5);
	list_for_each_entry(thread, &proc->threads, threads) {
		assert_true(thread->is_thread);
		assert_ptr_equal(thread->stores[VMON_STORE_PROC_FILES], files);
		threads++;
	}
	assert_int_equal(threads, 3);
	assert_int_equal(files->refcnt, 1 + threads);
	sample_checked(&vmon);
	assert_int_equal(files->refcnt, 1 + threads);

	/* the want dropped: the table goes from the process and its threads, and its objects with it */
	assert_int_equal(vmon_proc_set_wants(&vmon, proc, VMON_WANT_PROC_FOLLOW_THREADS), 0);
	assert_null(proc->stores[VMON_STORE_PROC_FILES]);
	list_for_each_entry(thread, &proc->threads, threads)
		assert_null(thread->stores[VMON_STORE_PROC_FILES]);
	assert_int_equal(vmon.fobjects_nr, 0);
	assert_true(list_empty(&vmon.fobjects));
	/* and back: listed whole again */
	assert_int_equal(vmon_proc_set_wants(&vmon, proc, VMON_WANT_PROC_FILES | VMON_WANT_PROC_FOLLOW_THREADS), 0);
	sample_checked(&vmon);
	assert_int_equal(own_fds(proc, k), 5);
	assert_true(must_fd(proc, 3)->is_new);
	assert_int_equal(files_of(proc)->refcnt, 1 + threads);
	reap(pid, SIGKILL);
	sample_checked(&vmon);
	/* monitored at the top: kept after its end (vmon_proc_monitor(3)) */
	assert_false(proc->is_stale);
	assert_int_equal(pstat(proc)->state, 'X');
	vmon_destroy(&vmon);
	kid_free(k);
}

/* --- another user's fds --- */

/* sample a process we may not read; exit 0 when EACCES is recorded and the sample goes on */
static int sample_forbidden(void *arg)
{
	pid_t target = (pid_t)(intptr_t)arg;
	vmon_proc_t *proc;
	vmon_t vmon;
	vmon_attr_t attr;

	if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
		return 10;
	vmon_attr_default(&attr);
	attr.proc_wants = VMON_WANT_PROC_FILES;
	attr.proc_root = "/proc";
	if (!vmon_init_attr(&vmon, &attr))
		return 11;
	proc = vmon_proc_monitor(&vmon, target, VMON_WANT_PROC_FILES, NULL, NULL);
	if (!proc)
		return 12;
	if (!vmon_sample(&vmon) || !vmon_sample(&vmon))
		return 13;
	if (proc->errors[VMON_STORE_PROC_FILES] != EACCES)
		return 14;
	if (proc->is_stale || (files_of(proc) && files_of(proc)->fds_nr != 0))
		return 15;
	if (!proc->stores[VMON_STORE_PROC_STAT] || vmon.fobjects_nr != 0)
		return 16;
	vmon_destroy(&vmon);
	return 0;
}

static void test_other_users_fds(void **state)
{
	struct stat st;
	pid_t target, pid;
	int status;

	if (is_root()) {
		target = getpid();	/* root's, read by a child that is nobody */
	} else {
		SKIP_IF(stat("/proc/1", &st) < 0 || st.st_uid == getuid(), "no process of another user to read");
		target = 1;
	}
	pid = spawn_fn(sample_forbidden, (void *)(intptr_t)target);
	status = reap(pid, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --- as many fds as the limit allows --- */

static int many_fds_child(void *arg)
{
	struct kid *k = arg;
	struct rlimit rl;
	int limit, p[2];

	/* up to the hard limit, or under valgrind (slow, and it keeps the top fds) 2000 */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 10;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (clean_fds(k) < 0)
		return 11;
	limit = under_valgrind() ? 2000 : (k->fd_limit > 1000000 ? 1000000 : k->fd_limit);
	while (k->nfds + 2 <= limit - 3 && pipe(p) == 0)
		k->nfds += 2;
	k->nfds += 3;
	raise(SIGSTOP);
	/* close every tenth fd from 10 up */
	for (int i = 10; i < k->nfds; i += 10)
		close(i);
	raise(SIGSTOP);
	for (;;)
		pause();
}

static void test_many_fds(void **state)
{
	struct kid *k = kid_new();
	vmon_stats_t before, after;
	vmon_proc_files_t *files;
	vmon_proc_fd_t *fd;
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid;
	int n = 0, stale = 0, closed = 0;

	pid = spawn_stopped(many_fds_child, k);
	print_message("a child with %d fds (pipes up to its fd limit)\n", k->nfds);
	assert_true(k->nfds > 1000);
	init_monitor(&vmon, 0);
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES, NULL, NULL);
	assert_non_null(proc);
	sample_checked(&vmon);
	files = files_of(proc);
	assert_int_equal(own_fds(proc, k), k->nfds);
	list_for_each_entry(fd, &files->fds, fds) {
		if (fd->fdnum >= k->fd_limit)
			break;
		assert_int_equal(fd->fdnum, n);
		if (n >= 3) {
			/* pipe() gives the read end the lower number */
			vmon_proc_fd_t *peer = list_entry(n % 2 ? fd->fds.next : fd->fds.prev, vmon_proc_fd_t, fds);

			assert_int_equal(fd->object->type, VMON_FOBJECT_TYPE_PIPE);
			assert_int_equal(fd->object->refcnt, 2);
			assert_ptr_equal(peer->object, fd->object);
		}
		n++;
	}
	assert_int_equal(n, k->nfds);
	assert_int_equal(count_objects(proc, k), 1 + (k->nfds - 3) / 2);

	/* not running: the listing and every fdinfo are skipped */
	vmon_get_stats(&vmon, &before);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &after);
	assert_true(after.reads_skipped - before.reads_skipped >= (unsigned long long)k->nfds);
	assert_true(after.reads - before.reads < 10);

	step(pid);
	for (int i = 10; i < k->nfds; i += 10)
		closed++;
	sample_checked(&vmon);
	list_for_each_entry(fd, &files->fds, fds) {
		if (fd->is_stale) {
			stale++;
			assert_int_equal(fd->fdnum % 10, 0);
		}
	}
	assert_int_equal(stale, closed);
	assert_int_equal(own_fds(proc, k), k->nfds - closed);
	/* its peer, 10 (pipes are 3-4, 5-6...), closed: still linked while it shows as stale, then gone */
	assert_int_equal(must_fd(proc, 9)->object->refcnt, 2);
	assert_true(fd_find(proc, 10, true)->object == must_fd(proc, 9)->object);
	sample_checked(&vmon);
	assert_null(fd_find(proc, 10, true));
	assert_int_equal(must_fd(proc, 9)->object->refcnt, 1);
	assert_int_equal(must_fd(proc, 9)->object->ref_fds_nr, 1);

	reap(pid, SIGKILL);
	vmon_destroy(&vmon);
	kid_free(k);
}


/* --- the fd budget --- */

static int idle_child(void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

static int budget_holder(void *arg)
{
	struct kid *k = arg;
	int p[2];

	if (clean_fds(k) < 0)
		return 10;
	k->nfds = 3;
	while (k->nfds < 503 && pipe(p) == 0)
		k->nfds += 2;
	for (;;)
		raise(SIGSTOP);
}

/*
 * A sampler left with 3 free fds: while it lists the holder it runs out, the
 * budget shrinks, the files another process held are given back, and the
 * listing is still whole.  Exits 0 when it is.
 */
static int sample_short_of_fds(void *arg)
{
	struct kid *k = arg;
	struct rlimit rl = { 64, 64 };
	vmon_stats_t stats;
	vmon_proc_t *proc, *other;
	vmon_t vmon;
	int fd, last = -1;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || !vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_FILES))
		return 10;
	/* sampled first, it holds files the holder's listing will need */
	other = vmon_proc_monitor(&vmon, k->port, VMON_WANT_PROC_STAT, NULL, NULL);
	proc = vmon_proc_monitor(&vmon, k->grandchild, VMON_WANT_PROC_FILES, NULL, NULL);
	if (!other || !proc)
		return 11;
	while ((fd = open("/dev/null", O_RDONLY)) >= 0)
		last = fd;
	for (int i = 0; i < 3 && last >= 0; i++)
		close(last--);
	for (int i = 0; i < 3; i++) {
		if (!vmon_sample(&vmon))
			return 12;
		if (proc->errors[VMON_STORE_PROC_FILES] || own_fds(proc, k) != k->nfds)
			return 13 + i;
	}
	vmon_get_stats(&vmon, &stats);
	if (stats.fd_budget >= 32 || stats.fds_held > stats.fd_budget)
		return 20;
	vmon_destroy(&vmon);
	return 0;
}

static void test_fd_budget(void **state)
{
	struct kid *k = kid_new();
	vmon_stats_t stats;
	vmon_attr_t attr;
	vmon_proc_t *proc;
	vmon_t vmon;
	pid_t pid, sampler;
	int status;

	pid = spawn_stopped(budget_holder, k);
	k->grandchild = pid;
	k->port = spawn_fn(idle_child, NULL);	/* a second process for the sampler short of fds */

	/* with room, the table keeps /proc/PID/fd and fdinfo open between samples */
	init_monitor(&vmon, 0);
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES, NULL, NULL);
	sample_checked(&vmon);
	assert_non_null(files_of(proc)->fd_dir);
	assert_int_equal(own_fds(proc, k), k->nfds);
	vmon_destroy(&vmon);

	/* without: the same listing, nothing held */
	vmon_attr_default(&attr);
	attr.proc_root = "/proc";
	attr.fd_budget = 0;
	assert_true(vmon_init_attr(&vmon, &attr));
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_FILES, NULL, NULL);
	sample_checked(&vmon);
	step(pid);	/* it ran: listed again, through files opened for the pass */
	sample_checked(&vmon);
	assert_null(files_of(proc)->fd_dir);
	assert_int_equal(own_fds(proc, k), k->nfds);
	assert_int_equal(proc->errors[VMON_STORE_PROC_FILES], 0);
	vmon_get_stats(&vmon, &stats);
	assert_int_equal(stats.fds_held, 0);
	vmon_destroy(&vmon);

	/* out of fds (valgrind keeps fds of its own and fakes the limit: not there) */
	if (under_valgrind()) {
		print_message("SKIP: running out of fds under valgrind\n");
	} else {
		sampler = spawn_fn(sample_short_of_fds, k);
		status = reap(sampler, 0);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}

	reap(pid, SIGKILL);
	reap(k->port, SIGKILL);
	kid_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_fds),
		cmocka_unit_test(test_known_fds_without_tables),
		cmocka_unit_test(test_pipe_shared_with_child),
		cmocka_unit_test(test_shared_description),
		cmocka_unit_test(test_threads_share_table),
		cmocka_unit_test(test_other_users_fds),
		cmocka_unit_test(test_many_fds),
		cmocka_unit_test(test_fd_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
