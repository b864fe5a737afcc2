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
/* write (replace) root/path with the given bytes; directories are created */
void fixture_write(fixture_t *fx, const char *path, const void *data, size_t len);
void fixture_printf(fixture_t *fx, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fixture_symlink(fixture_t *fx, const char *path, const char *target);
void fixture_remove(fixture_t *fx, const char *path);
/* copy a captured tree from tests/fixtures/NAME into the fixture root */
void fixture_copy(fixture_t *fx, const char *name);
/*
 * A plausible process: stat, statm, io, status, cmdline (argv joined by
 * NULs), wchan, schedstat; comm is taken from argv[0]'s last component unless
 * given.  start is the start time in ticks (its identity).
 */
void fixture_proc(fixture_t *fx, int pid, int ppid, const char *comm, char state,
		  unsigned long long start, const char *const *argv);
void fixture_system(fixture_t *fx);	/* /proc/stat, meminfo, uptime */
int fixture_vmon(fixture_t *fx, vmon_t *vmon, vmon_flags_t flags, vmon_sys_wants_t sys, vmon_proc_wants_t proc);

/* --- children the test spawns --- */
/* fork a child that runs fn(arg) and _exit()s with its return value */
pid_t spawn_fn(int (*fn)(void *), void *arg);
/* fork a child that sleeps until killed */
pid_t spawn_sleeper(void);
/* fork+exec argv; returns the pid */
pid_t spawn_exec(const char *const *argv);
/* kill and reap; returns the wait status */
int reap(pid_t pid, int sig);
/* wait until pred(arg) is true, or ms milliseconds pass; returns pred's last answer */
bool wait_for(bool (*pred)(void *), void *arg, int ms);
/* the child's state letter from /proc/PID/stat, '?' if gone */
char proc_state(pid_t pid);
/* wait until the child sits in a sleep state (S, D, T, Z...) */
bool wait_sleeping(pid_t pid, int ms);

bool is_root(void);

#endif
