/*
 * testlib.h: what the cmocka tests share: fixture /proc trees built in a
 * temporary directory, children the test spawns and controls, and skips
 * that say why.
 */
#ifndef VMON_TESTLIB_H
#define VMON_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

#include "vmon.h"

/* skip the current test, saying why on the test's output */
#define SKIP_IF(_cond, ...) do { \
		if (_cond) { \
			print_message("SKIP: " __VA_ARGS__); \
			print_message("\n"); \
			skip(); \
		} \
	} while (0)

/* --- fixture trees: a directory that vmon_init_attr() takes as proc_root --- */
typedef struct fixture {
	char	root[256];
} fixture_t;

/* a new empty fixture root under $TMPDIR, removed by fixture_free() */
void fixture_init(fixture_t *fx);
void fixture_free(fixture_t *fx);
/*
 * A cmocka group teardown: removes the roots of fixtures a failed test left
 * (a failing assert leaves the test before its fixture_free()).
 */
int fixtures_cleanup(void **state);
/* write (replace) root/path with the given bytes; directories are created */
void fixture_write(fixture_t *fx, const char *path, const void *data, size_t len);
void fixture_printf(fixture_t *fx, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fixture_symlink(fixture_t *fx, const char *path, const char *target);
void fixture_remove(fixture_t *fx, const char *path);
/*
 * copy a captured tree from tests/fixtures/NAME into the fixture root; a
 * file NAME.link there (a symlink's target, as text: a release tarball
 * follows symlinks) becomes the symlink NAME
 */
void fixture_copy(fixture_t *fx, const char *name);
/*
 * A plausible process: stat, statm, io, status, cmdline (argv joined by
 * NULs), wchan, schedstat; comm is taken from argv[0]'s last component unless
 * given.  start is the start time in ticks (its identity).
 */
void fixture_proc(fixture_t *fx, int pid, int ppid, const char *comm, char state,
		  unsigned long long start, const char *const *argv);
void fixture_system(fixture_t *fx);	/* /proc/stat, meminfo, uptime */
/*
 * A small system: fixture_system(), init (1), kthreadd (2), a kworker (3),
 * and "/bin/sh -c 'sleep 1'" (100, start 500) under init with its child
 * "sleep 1" (101, start 510).
 */
void fixture_small_tree(fixture_t *fx);
int fixture_vmon(fixture_t *fx, vmon_t *vmon, vmon_flags_t flags, vmon_sys_wants_t sys, vmon_proc_wants_t proc);

/*
 * A /proc/PID/stat line as fields: f[n] is field n of proc(5) (1..52) as
 * text, comm is field 2 without its parentheses.  fixture_stat_init() gives
 * the values fixture_proc() writes; change any field, then write it out.
 */
#define FIXTURE_STAT_FIELDS 52
typedef struct fixture_stat {
	char	comm[256];
	char	f[FIXTURE_STAT_FIELDS + 1][48];
} fixture_stat_t;

void fixture_stat_init(fixture_stat_t *st, int pid, int ppid, const char *comm, char state, unsigned long long start);
void fixture_stat_set(fixture_stat_t *st, int field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* write the line to root/path: fields 1..nfields, and a newline unless truncated */
void fixture_stat_write(fixture_t *fx, const char *path, const fixture_stat_t *st, int nfields, bool newline);
/*
 * A thread tid of process tgid: task/TID/{stat,statm,io,status,wchan,schedstat,children}
 * (the leader's, tid == tgid, is written by fixture_proc() too).
 */
void fixture_thread(fixture_t *fx, int tgid, int tid, const char *comm, char state, unsigned long long start);
/* the children file of a process's leader task: "pid pid ..." */
void fixture_children(fixture_t *fx, int pid, const int *children, size_t nr);
/* bump the run count of a task's schedstat, as if it ran (io, wchan and uid are re-read only then) */
void fixture_ran(fixture_t *fx, int pid);

/* --- children the test spawns --- */
/*
 * fork a child that runs fn(arg) and _exit()s with its return value; it gets
 * SIGKILL if the test dies first (PR_SET_PDEATHSIG), so none outlives us
 */
pid_t spawn_fn(int (*fn)(void *), void *arg);
/* fork a child that sleeps until killed */
pid_t spawn_sleeper(void);
/* a sleeper at pid want, which was another process's (needs CAP_SYS_ADMIN); -1 with errno if it cannot be had */
pid_t spawn_sleeper_at(pid_t want);
/* fork+exec argv; returns the pid */
pid_t spawn_exec(const char *const *argv);
/* kill and reap; returns the wait status */
int reap(pid_t pid, int sig);
/* wait until pred(arg) is true, or ms milliseconds pass; returns pred's last answer */
bool wait_for(bool (*pred)(void *), void *arg, int ms);
/* the child's state letter from /proc/PID/stat, '?' if gone */
char proc_state(pid_t pid);
/* the start time (clock ticks after boot) from /proc/PID/stat, 0 if gone */
unsigned long long proc_start(pid_t pid);
/* numeric field n (4 and up, numbered as in proc(5)) of /proc/PID/stat, ULLONG_MAX if gone */
unsigned long long proc_stat_field(pid_t pid, int n);
/* wait until the child sits in a sleep state (S, D, T, Z...) */
bool wait_sleeping(pid_t pid, int ms);
/* the lock of the tests that take CPU 1 offline or need it online throughout (testlib.c); the kernel drops it at exit */
void cpu1_lock(void);
void cpu1_unlock(void);

/* --- checks on what the library reports --- */
/* the live node of pid, failing the test if there is none */
vmon_proc_t *must_find(vmon_t *vmon, int pid);
static inline vmon_proc_stat_t *pstat(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_STAT]; }
static inline vmon_proc_stat_extra_t *pextra(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_STAT_EXTRA]; }
static inline vmon_proc_vm_t *pvm(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_VM]; }
static inline vmon_proc_vm_status_t *pvmst(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_VM_STATUS]; }
static inline vmon_proc_io_t *pio(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_IO]; }
/* a numeric field of a store as unsigned long long (sign-extended for signed types) */
unsigned long long field_value(const vmon_field_t *f, const void *store);
/*
 * Fail unless exactly the bits listed in want (ending with -1) are set in
 * bitmap, a changed[] or present[] of a store with desc's fields; names the
 * culprits.
 */
void assert_bits_exactly(const char *bitmap, const vmon_store_desc_t *desc, const int *want, const char *what);

/*
 * The tree is what it claims to be (consistency.c): parent and list links
 * agree; every live node, process or thread, is found by its id and no
 * stale one is; the indexes hold nothing else; every process is in
 * vmon->htab; refcnt counts the monitors and the tree's own reference;
 * with VMON_FLAG_PROC_ARRAY every node is in vmon->array at its
 * array_hint_pos and nothing else is.  Returns the number of nodes in the
 * tree.  Every vmon_sample() of a test runs it too (TESTS_LINK_CHECKED).
 */
int assert_tree_consistent(vmon_t *vmon);
/* the node of pid under parent (NULL: the top), or NULL */
vmon_proc_t *find_child(vmon_t *vmon, vmon_proc_t *parent, int pid);
/* the thread node tid of a process, or NULL */
vmon_proc_t *find_thread(vmon_proc_t *proc, int tid);
/* the lengths of a node's children and threads lists */
int count_children(vmon_proc_t *proc);
int count_threads(vmon_proc_t *proc);

bool is_root(void);
/*
 * perf's tracepoint ids need tracefs, and libvmon mounts nothing: as root,
 * mount it where it is missing (true when this did, for tracefs_umount()),
 * saying why not when that fails.
 */
bool tracefs_mount(void);
void tracefs_umount(bool mounted);
/* the heavy live tests run smaller under valgrind (make check-valgrind sets it) */
bool under_valgrind(void);
/* count of open file descriptors of this process */
int count_open_fds(void);

#endif
