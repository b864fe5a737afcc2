/* testlib.c: see testlib.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/mount.h>
#include <unistd.h>
#include <linux/sched.h>

#include "testlib.h"

#ifndef FIXTURES_DIR
#error "build with -DFIXTURES_DIR=\"$(srcdir)/tests/fixtures\""
#endif

bool tracefs_mount(void)
{
	if (!is_root() || access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return false;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		return true;
	print_message("cannot mount tracefs: %s\n", strerror(errno));
	return false;
}

void tracefs_umount(bool mounted)
{
	if (mounted)
		umount2("/sys/kernel/tracing", MNT_DETACH);
}

bool is_root(void)
{
	return geteuid() == 0;
}

vmon_proc_t *must_find(vmon_t *vmon, int pid)
{
	vmon_proc_t *proc = vmon_proc_lookup(vmon, pid);

	if (!proc)
		fail_msg("pid %d is not in the tree", pid);
	return proc;
}

unsigned long long field_value(const vmon_field_t *f, const void *store)
{
	const char *m = (const char *)store + f->offset;

	switch (f->type) {
	case VMON_TYPE_char:		return (unsigned long long)(unsigned char)*m;
	case VMON_TYPE_int:		return (unsigned long long)(long long)*(const int *)m;
	case VMON_TYPE_uint:		return *(const unsigned int *)m;
	case VMON_TYPE_long:		return (unsigned long long)(long long)*(const long *)m;
	case VMON_TYPE_ulong:		return *(const unsigned long *)m;
	case VMON_TYPE_longlong:	return (unsigned long long)*(const long long *)m;
	case VMON_TYPE_ulonglong:	return *(const unsigned long long *)m;
	default:
		fail_msg("field %s is not a number", f->name);
		return 0;
	}
}

void assert_bits_exactly(const char *bitmap, const vmon_store_desc_t *desc, const int *want, const char *what)
{
	char msg[2048];
	size_t len = 0;

	msg[0] = '\0';
	for (int sym = 0; sym < desc->fields_nr; sym++) {
		bool wanted = false;

		for (int i = 0; want && want[i] >= 0; i++)
			wanted |= want[i] == sym;
		if (!!BITTEST(bitmap, sym) != wanted && len < sizeof(msg) - 64)
			len += (size_t)snprintf(msg + len, sizeof(msg) - len, " %s%s", wanted ? "missing:" : "extra:",
						desc->fields[sym].name);
	}
	if (len)
		fail_msg("%s %s bits:%s", desc->name, what, msg);
}

vmon_proc_t *find_child(vmon_t *vmon, vmon_proc_t *parent, int pid)
{
	list_head_t *head = parent ? &parent->children : &vmon->processes;
	vmon_proc_t *proc;

	list_for_each_entry(proc, head, siblings) {
		if (proc->pid == pid)
			return proc;
	}
	return NULL;
}

int count_children(vmon_proc_t *proc)
{
	vmon_proc_t *c;
	int n = 0;

	list_for_each_entry(c, &proc->children, siblings)
		n++;
	return n;
}

int count_threads(vmon_proc_t *proc)
{
	vmon_proc_t *t;
	int n = 0;

	list_for_each_entry(t, &proc->threads, threads)
		n++;
	return n;
}

vmon_proc_t *find_thread(vmon_proc_t *proc, int tid)
{
	vmon_proc_t *t;

	list_for_each_entry(t, &proc->threads, threads) {
		if (t->pid == tid)
			return t;
	}
	return NULL;
}

bool under_valgrind(void)
{
	const char *v = getenv("VMON_UNDER_VALGRIND");

	return v && *v && strcmp(v, "0") != 0;
}

int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return n - 1;	/* not the one listing them */
}

/* the roots of the fixtures not yet freed, for fixtures_cleanup() */
static char *fixture_roots[64];

void fixture_init(fixture_t *fx)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fx->root, sizeof(fx->root), "%s/vmon-fixture-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(fx->root));
	for (size_t i = 0; i < sizeof(fixture_roots) / sizeof(fixture_roots[0]); i++) {
		if (!fixture_roots[i]) {
			fixture_roots[i] = strdup(fx->root);
			break;
		}
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void remove_root(const char *root)
{
	for (size_t i = 0; i < sizeof(fixture_roots) / sizeof(fixture_roots[0]); i++) {
		if (fixture_roots[i] && strcmp(fixture_roots[i], root) == 0) {
			free(fixture_roots[i]);
			fixture_roots[i] = NULL;
		}
	}
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void fixture_free(fixture_t *fx)
{
	if (fx->root[0])
		remove_root(fx->root);
	fx->root[0] = '\0';
}

int fixtures_cleanup(void **state)
{
	for (size_t i = 0; i < sizeof(fixture_roots) / sizeof(fixture_roots[0]); i++) {
		if (fixture_roots[i]) {
			char *root = fixture_roots[i];

			fixture_roots[i] = NULL;
			nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
			free(root);
		}
	}
	return 0;
}

static void make_parents(const char *path)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
}

void fixture_write(fixture_t *fx, const char *path, const void *data, size_t len)
{
	char full[512], tmp[520];
	int fd;

	snprintf(full, sizeof(full), "%s/%s", fx->root, path);
	snprintf(tmp, sizeof(tmp), "%s.new", full);
	make_parents(full);
	/* write aside and rename, as the kernel's files change atomically for a reader */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(rename(tmp, full), 0);
}

void fixture_printf(fixture_t *fx, const char *path, const char *fmt, ...)
{
	char *text;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&text, fmt, ap);
	va_end(ap);
	assert_true(len >= 0);
	fixture_write(fx, path, text, (size_t)len);
	free(text);
}

void fixture_symlink(fixture_t *fx, const char *path, const char *target)
{
	char full[512];

	snprintf(full, sizeof(full), "%s/%s", fx->root, path);
	make_parents(full);
	unlink(full);
	assert_int_equal(symlink(target, full), 0);
}

void fixture_remove(fixture_t *fx, const char *path)
{
	char full[512];
	struct stat st;

	snprintf(full, sizeof(full), "%s/%s", fx->root, path);
	if (lstat(full, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		nftw(full, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		unlink(full);
}

/* NAME.link -> the symlink NAME to the target the file holds */
static int make_link(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t len = strlen(path);
	char target[4096], link[4096];
	FILE *f;
	size_t n;

	(void)st; (void)ftw;
	if (flag != FTW_F || len < 5 || strcmp(path + len - 5, ".link") != 0)
		return 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(target, 1, sizeof(target) - 1, f);
	fclose(f);
	target[n] = '\0';
	snprintf(link, sizeof(link), "%.*s", (int)(len - 5), path);
	if (symlink(target, link) < 0 || unlink(path) < 0)
		return -1;
	return 0;
}

void fixture_copy(fixture_t *fx, const char *name)
{
	char cmd[1024];

	/*
	 * The fixture names are ours, never from a process: no shell quoting
	 * issue.  Writable copies, though the source tree may be read-only
	 * (make distcheck): the tests change and remove what they copied.
	 */
	snprintf(cmd, sizeof(cmd), "cp -R '%s/%s/.' '%s/' && chmod -R u+w '%s'", FIXTURES_DIR, name, fx->root, fx->root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(nftw(fx->root, make_link, 16, FTW_PHYS), 0);
}

void fixture_small_tree(fixture_t *fx)
{
	static const char *const init_argv[] = { "/sbin/init", "splash", NULL };
	static const char *const sh_argv[] = { "/bin/sh", "-c", "sleep 1", NULL };
	static const char *const sleep_argv[] = { "sleep", "1", NULL };

	fixture_system(fx);
	fixture_proc(fx, 1, 0, NULL, 'S', 5, init_argv);
	fixture_proc(fx, 2, 0, "kthreadd", 'S', 5, NULL);
	fixture_proc(fx, 3, 2, "kworker/0:0-events", 'I', 6, NULL);
	fixture_proc(fx, 100, 1, NULL, 'S', 500, sh_argv);
	fixture_proc(fx, 101, 100, NULL, 'S', 510, sleep_argv);
}

void fixture_system(fixture_t *fx)
{
	fixture_printf(fx, "stat",
		"cpu  100 2 50 1000 5 0 3 0 0 0\n"
		"cpu0 60 1 30 500 3 0 2 0 0 0\n"
		"cpu1 40 1 20 500 2 0 1 0 0 0\n"
		"intr 12345 1 2 3\n"
		"ctxt 67890\n"
		"btime 1700000000\n"
		"processes 4242\n"
		"procs_running 2\n"
		"procs_blocked 0\n"
		"softirq 100 1 2 3 4 5 6 7 8 9 10\n");
	fixture_printf(fx, "meminfo",
		"MemTotal:       16000000 kB\n"
		"MemFree:         8000000 kB\n"
		"MemAvailable:   12000000 kB\n"
		"Buffers:          100000 kB\n"
		"Cached:          2000000 kB\n"
		"SwapTotal:       1000000 kB\n"
		"SwapFree:         900000 kB\n");
	fixture_printf(fx, "uptime", "1234.56 2000.00\n");
}

void fixture_stat_init(fixture_stat_t *st, int pid, int ppid, const char *comm, char state, unsigned long long start)
{
	static const char *const template[FIXTURE_STAT_FIELDS + 1] = {
		[7] = "0", [8] = "-1", [9] = "4194304", [10] = "100", [11] = "0", [12] = "0", [13] = "0",
		[14] = "7", [15] = "3", [16] = "0", [17] = "0", [18] = "20", [19] = "0", [20] = "1", [21] = "0",
		[23] = "10485760", [24] = "300", [25] = "18446744073709551615", [26] = "4194304",
		[27] = "4198400", [28] = "140730000000000", [29] = "0", [30] = "0", [31] = "0", [32] = "0",
		[33] = "0", [34] = "0", [35] = "0", [36] = "0", [37] = "0", [38] = "17", [39] = "1", [40] = "0",
		[41] = "0", [42] = "0", [43] = "0", [44] = "0", [45] = "6291456", [46] = "6295552",
		[47] = "8388608", [48] = "140730000001000", [49] = "140730000001100", [50] = "140730000001100",
		[51] = "140730000002000", [52] = "0",
	};

	memset(st, 0, sizeof(*st));
	snprintf(st->comm, sizeof(st->comm), "%s", comm ? comm : "");
	for (int i = 3; i <= FIXTURE_STAT_FIELDS; i++) {
		if (template[i])
			snprintf(st->f[i], sizeof(st->f[i]), "%s", template[i]);
	}
	fixture_stat_set(st, 1, "%d", pid);
	fixture_stat_set(st, 3, "%c", state);
	fixture_stat_set(st, 4, "%d", ppid);
	fixture_stat_set(st, 5, "%d", pid);
	fixture_stat_set(st, 6, "%d", pid);
	fixture_stat_set(st, 22, "%llu", start);
}

void fixture_stat_set(fixture_stat_t *st, int field, const char *fmt, ...)
{
	va_list ap;

	assert_true(field >= 1 && field <= FIXTURE_STAT_FIELDS && field != 2);
	va_start(ap, fmt);
	vsnprintf(st->f[field], sizeof(st->f[field]), fmt, ap);
	va_end(ap);
}

void fixture_stat_write(fixture_t *fx, const char *path, const fixture_stat_t *st, int nfields, bool newline)
{
	char line[4096];
	size_t len = 0;

	for (int i = 1; i <= nfields; i++) {
		int n = i == 2 ? snprintf(line + len, sizeof(line) - len, "%s(%s)", i > 1 ? " " : "", st->comm)
			       : snprintf(line + len, sizeof(line) - len, "%s%s", i > 1 ? " " : "", st->f[i]);

		assert_true(n >= 0 && (size_t)n < sizeof(line) - len);
		len += (size_t)n;
	}
	if (newline)
		line[len++] = '\n';
	fixture_write(fx, path, line, len);
}

/* the files every task has, under dir ("PID" or "PID/task/TID") */
static void fixture_task_files(fixture_t *fx, const char *dir, const fixture_stat_t *st, const char *comm,
			       char state, int tgid, int pid, int ppid, int threads)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/stat", dir);
	fixture_stat_write(fx, path, st, FIXTURE_STAT_FIELDS, true);
	snprintf(path, sizeof(path), "%s/statm", dir);
	fixture_printf(fx, path, "2560 300 200 2 0 400 0\n");
	snprintf(path, sizeof(path), "%s/io", dir);
	fixture_printf(fx, path,
		"rchar: 1000\nwchar: 2000\nsyscr: 10\nsyscw: 20\nread_bytes: 4096\n"
		"write_bytes: 8192\ncancelled_write_bytes: 0\n");
	snprintf(path, sizeof(path), "%s/status", dir);
	fixture_printf(fx, path,
		"Name:\t%s\nState:\t%c (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n"
		"VmPeak:\t   10240 kB\nVmSize:\t   10240 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n"
		"VmHWM:\t    1300 kB\nVmRSS:\t    1200 kB\nRssAnon:\t     400 kB\nRssFile:\t     800 kB\n"
		"RssShmem:\t       0 kB\nVmData:\t    1600 kB\nVmStk:\t     132 kB\nVmExe:\t       8 kB\n"
		"VmLib:\t    1500 kB\nVmPTE:\t      44 kB\nVmSwap:\t       0 kB\nHugetlbPages:\t       0 kB\n"
		"Threads:\t%d\n",
		comm, state, tgid, pid, ppid, threads);
	snprintf(path, sizeof(path), "%s/wchan", dir);
	fixture_printf(fx, path, "%s", state == 'R' ? "0" : "do_select");
	snprintf(path, sizeof(path), "%s/schedstat", dir);
	fixture_printf(fx, path, "1000000 2000 %d\n", 10 + pid % 7);
}

void fixture_proc(fixture_t *fx, int pid, int ppid, const char *comm, char state,
		  unsigned long long start, const char *const *argv)
{
	char path[64], dir[32], cmdline[4096];
	fixture_stat_t st;
	size_t len = 0;

	if (!comm && argv && argv[0]) {
		const char *slash = strrchr(argv[0], '/');

		comm = slash ? slash + 1 : argv[0];
	}
	if (!comm)
		comm = "";
	fixture_stat_init(&st, pid, ppid, comm, state, start);
	snprintf(dir, sizeof(dir), "%d", pid);
	fixture_task_files(fx, dir, &st, comm, state, pid, pid, ppid, 1);
	/* the leader task: its stat (for a thread listing) and its children file */
	snprintf(dir, sizeof(dir), "%d/task/%d", pid, pid);
	fixture_task_files(fx, dir, &st, comm, state, pid, pid, ppid, 1);
	fixture_children(fx, pid, NULL, 0);
	for (int i = 0; argv && argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;

		assert_true(len + n <= sizeof(cmdline));
		memcpy(cmdline + len, argv[i], n);
		len += n;
	}
	snprintf(path, sizeof(path), "%d/cmdline", pid);
	fixture_write(fx, path, cmdline, len);
	snprintf(path, sizeof(path), "%d/exe", pid);
	fixture_symlink(fx, path, argv && argv[0] ? argv[0] : "/nonexistent");
}

void fixture_thread(fixture_t *fx, int tgid, int tid, const char *comm, char state, unsigned long long start)
{
	fixture_stat_t st;
	char dir[64], path[96];

	fixture_stat_init(&st, tid, 1, comm, state, start);
	fixture_stat_set(&st, 5, "%d", tgid);
	fixture_stat_set(&st, 6, "%d", tgid);
	snprintf(dir, sizeof(dir), "%d/task/%d", tgid, tid);
	fixture_task_files(fx, dir, &st, comm, state, tgid, tid, 1, 1);
	snprintf(path, sizeof(path), "%s/children", dir);
	fixture_printf(fx, path, "%s", "");
}

void fixture_children(fixture_t *fx, int pid, const int *children, size_t nr)
{
	char path[64], text[4096];
	size_t len = 0;

	text[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		int n = snprintf(text + len, sizeof(text) - len, "%d ", children[i]);

		assert_true(n > 0 && (size_t)n < sizeof(text) - len);
		len += (size_t)n;
	}
	snprintf(path, sizeof(path), "%d/task/%d/children", pid, pid);
	fixture_write(fx, path, text, len);
}

void fixture_ran(fixture_t *fx, int pid)
{
	static unsigned count = 1000;
	char path[64];

	snprintf(path, sizeof(path), "%d/schedstat", pid);
	fixture_printf(fx, path, "%u 2000 %u\n", 1000000 + count, count);
	count++;
}

int fixture_vmon(fixture_t *fx, vmon_t *vmon, vmon_flags_t flags, vmon_sys_wants_t sys, vmon_proc_wants_t proc)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = flags;
	attr.sys_wants = sys;
	attr.proc_wants = proc;
	attr.proc_root = fx->root;
	return vmon_init_attr(vmon, &attr);
}

pid_t spawn_fn(int (*fn)(void *), void *arg)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
		_exit(fn(arg));
	}
	return pid;
}

static int sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

pid_t spawn_sleeper(void)
{
	return spawn_fn(sleep_forever, NULL);
}

/*
 * A sleeper at a chosen pid, one that was another process's: clone3()'s
 * set_tid; where clone3() is not there (valgrind does not know it), the last
 * pid given out set to want - 1, then a fork.  Another fork on the machine
 * can come between the two: then the child is not want, and it is tried
 * again.  Needs CAP_SYS_ADMIN; -1 with errno if it cannot be done.
 */
static pid_t fork_sleeper_at(pid_t want)
{
	for (int tries = 0; tries < 200; tries++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		char buf[16];
		int n = snprintf(buf, sizeof(buf), "%d", want - 1);
		ssize_t w;
		pid_t pid;

		if (fd < 0)
			return -1;
		w = write(fd, buf, (size_t)n);
		close(fd);
		if (w != n)
			return -1;
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			sleep_forever(NULL);
		}
		if (pid < 0 || pid == want)
			return pid;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	errno = EAGAIN;
	return -1;
}

pid_t spawn_sleeper_at(pid_t want)
{
	struct clone_args args;
	pid_t tid = want;
	long r;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uintptr_t)&tid;
	args.set_tid_size = 1;
	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sleep_forever(NULL);
	}
	if (r < 0 && errno == ENOSYS)
		return fork_sleeper_at(want);
	return (pid_t)r;
}

pid_t spawn_exec(const char *const *argv)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int reap(pid_t pid, int sig)
{
	int status = 0;

	if (sig)
		kill(pid, sig);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

bool wait_for(bool (*pred)(void *), void *arg, int ms)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	for (int waited = 0; waited < ms; waited += 2) {
		if (pred(arg))
			return true;
		nanosleep(&ts, NULL);
	}
	return pred(arg);
}

/* the pid's stat line from field 3 on (its state) into buf, or NULL if it is gone */
static const char *stat_after_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	char *paren;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] && paren[2] ? paren + 2 : NULL;
}

char proc_state(pid_t pid)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));

	return p ? *p : '?';
}

unsigned long long proc_stat_field(pid_t pid, int n)
{
	char buf[1024];
	const char *p = stat_after_comm(pid, buf, sizeof(buf));

	/* p is at field 3 (the state): a space before each of the next */
	for (int field = 3; p && field < n; field++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return p && *p >= '0' && *p <= '9' ? strtoull(p, NULL, 10) : ULLONG_MAX;
}

unsigned long long proc_start(pid_t pid)
{
	unsigned long long start = proc_stat_field(pid, 22);

	return start == ULLONG_MAX ? 0 : start;
}

static bool is_sleeping(void *arg)
{
	char s = proc_state((pid_t)(intptr_t)arg);

	return s != 'R' && s != '?';
}

bool wait_sleeping(pid_t pid, int ms)
{
	return wait_for(is_sleeping, (void *)(intptr_t)pid, ms);
}

/*
 * CPU 1 is the machine's, not the build tree's: one make check runs the
 * three backends' programs one after the other (tests/local.mk), but two
 * checks on one machine (two trees, or a distcheck beside a check) do not.
 * A test that pins a child to CPU 1 while another has it offline fails
 * (sched_setaffinity(): EINVAL, seen in a distcheck beside another tree's
 * check), and one that finds it offline skips.  So the tests that take CPU 1
 * offline, and those that need it online throughout, hold this lock, in
 * /tmp for every tree (vtop/tests/e2e_sched.py takes the same); the kernel
 * lets it go if the program dies.  Where it cannot be opened (another
 * user's, a symlink) the test goes on unlocked.
 */
#define CPU1_LOCK	"/tmp/libvmon-tests-cpu1.lock"
static int cpu1_lock_fd = -1;

void cpu1_lock(void)
{
	if (cpu1_lock_fd >= 0)
		return;
	cpu1_lock_fd = open(CPU1_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	while (cpu1_lock_fd >= 0 && flock(cpu1_lock_fd, LOCK_EX) < 0 && errno == EINTR)
		;
}

void cpu1_unlock(void)
{
	if (cpu1_lock_fd >= 0)
		close(cpu1_lock_fd);
	cpu1_lock_fd = -1;
}
