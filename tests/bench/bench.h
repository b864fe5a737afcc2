/*
 * bench.h: what the pieces of `make bench` share.
 *
 * `make bench` builds one program, tests/bench/bench, from every piece listed
 * in tests/bench/local.mk, and runs each piece in name order (or only those
 * named on its command line).  A piece is a .c file that registers itself
 * from a constructor:
 *
 *	static int feed_run(int argc, char **argv) { ... return 0; }
 *	static const struct bench_piece feed_piece = {
 *		"feed", "event feed: events/s and CPU per event", feed_run,
 *	};
 *	static void __attribute__((constructor)) feed_register(void)
 *	{
 *		bench_register(&feed_piece);
 *	}
 *
 * The helpers below are for measuring honestly on a shared machine: CPU time
 * of the measured code only (never wall time), idle processes that are always
 * reaped, peers (top, htop) measured in the same run, syscalls counted by
 * strace.  Everything a piece starts is registered with bench_atexit_kill()
 * so that ^C, a crash or an early return leaves nothing behind.
 */
#ifndef VMON_BENCH_H
#define VMON_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bench_piece {
	const char	*name;		/* what `bench NAME` selects */
	const char	*summary;	/* one line for `bench --list` */
	int		(*run)(int argc, char **argv);	/* argv[0] is the name; 0 ok, else failed */
};

void bench_register(const struct bench_piece *piece);

/* --- cleanup: what to kill when the program exits, however it exits --- */
/* kill(pid, SIGKILL) at exit or on a fatal signal; a negative pid is a process group */
void bench_atexit_kill(pid_t pid);
void bench_atexit_forget(pid_t pid);
/* a temporary directory removed at exit (with what is in it, one level deep) */
const char *bench_tmpdir(void);

/* --- CPU time of this process --- */
typedef struct bench_cpu {
	uint64_t	total_ns;	/* CLOCK_PROCESS_CPUTIME_ID */
	uint64_t	user_us;	/* getrusage(RUSAGE_SELF) */
	uint64_t	sys_us;
} bench_cpu_t;

void bench_cpu_now(bench_cpu_t *cpu);
/* b - a into d */
void bench_cpu_sub(const bench_cpu_t *b, const bench_cpu_t *a, bench_cpu_t *d);

/* --- idle processes --- */
/*
 * Children that sleep in pause() until killed, all in one process group of
 * their own, each with PR_SET_PDEATHSIG so that they die with us even if we
 * are SIGKILLed.  bench_idle_wake() makes every one of them run once (a
 * signal whose handler writes a byte back) and returns when all have.
 */
typedef struct bench_idle {
	pid_t	pgid;		/* 0 until the first child */
	int	nr;
	int	wake_rd;	/* one byte per child per wake-up */
	int	wake_wr;
} bench_idle_t;

/* the most idle processes a piece may hold at once (pid_max is 32768, the machine is shared) */
#define BENCH_IDLE_MAX 10000

void bench_idle_init(bench_idle_t *idle);
/* grow to nr children; -1 on failure (what was spawned stays, for bench_idle_kill()) */
int bench_idle_spawn(bench_idle_t *idle, int nr);
int bench_idle_wake(bench_idle_t *idle);
void bench_idle_kill(bench_idle_t *idle);

/* the processes of the system now (numeric entries of /proc) */
int bench_count_procs(void);

/* sleep ms milliseconds, whatever signals come meanwhile (peers.c) */
void bench_sleep_ms(int ms);

/* --- tools --- */
/* the full path of a program on $PATH, or NULL */
const char *bench_which(const char *prog, char *path, size_t size);

/*
 * Syscalls of this process between bench_syscalls_start() and _stop(),
 * counted by strace attached to us.  *why says why it cannot when it returns -1.
 */
typedef struct bench_syscalls {
	pid_t		strace_pid;
	char		log[256];
	int		segments;	/* markers written so far */
} bench_syscalls_t;

typedef struct bench_syscall_count {
	char		name[32];
	unsigned long	count;
} bench_syscall_count_t;

#define BENCH_SYSCALL_NAMES 24
typedef struct bench_syscall_segment {
	unsigned long		total;
	int			nr;	/* names[] used */
	bench_syscall_count_t	names[BENCH_SYSCALL_NAMES];	/* most frequent first; "other" last */
} bench_syscall_segment_t;

int bench_syscalls_start(bench_syscalls_t *sc, const char **why);
/* end the current segment and start the next */
void bench_syscalls_mark(bench_syscalls_t *sc);
/* detach strace and count: seg[i] is what ran between mark i and mark i+1 */
int bench_syscalls_stop(bench_syscalls_t *sc, bench_syscall_segment_t *seg, int seg_nr);

/*
 * Peers: the CPU one refresh of top or htop costs, over every process of
 * the system.  Each returns -1 and sets *why when the peer cannot be measured
 * (not installed...).  The figure is the marginal cost of a refresh: start-up
 * is left out.
 */
int bench_peer_top(int refreshes, double *cpu_us_per_refresh, int *procs, const char **why);
int bench_peer_htop(int refreshes, double *cpu_us_per_refresh, int *procs, const char **why);

/* the self path, for helpers that re-execute this program (the htop watcher) */
extern const char *bench_argv0;
int bench_watch_main(int argc, char **argv);

#endif
