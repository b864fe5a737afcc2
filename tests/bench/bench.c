/*
 * bench.c: the `make bench` program: the registry of pieces, main(), and the
 * cleanup that runs however the program ends.
 *
 * Pieces register from constructors (see bench.h), so that adding one to
 * `make bench` is adding its .c file to the program in tests/bench/local.mk,
 * with no table here to keep in step.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_PIECES	32
#define MAX_KILLS	64
#define MAX_TMPFILES	16

static const struct bench_piece *pieces[MAX_PIECES];
static int pieces_nr;

const char *bench_argv0;

void bench_register(const struct bench_piece *piece)
{
	if (pieces_nr < MAX_PIECES)
		pieces[pieces_nr++] = piece;
}

/*
 * What to kill at exit.  The signal handler reads this array, so entries are
 * written whole (a pid_t store is atomic) and never moved: a freed slot is 0.
 */
static volatile pid_t kills[MAX_KILLS];

void bench_atexit_kill(pid_t pid)
{
	for (int i = 0; i < MAX_KILLS; i++) {
		if (kills[i] == 0) {
			kills[i] = pid;
			return;
		}
	}
	fprintf(stderr, "bench: too many processes to clean up; killing %d now\n", (int)pid);
	kill(pid, SIGKILL);
}

void bench_atexit_forget(pid_t pid)
{
	for (int i = 0; i < MAX_KILLS; i++) {
		if (kills[i] == pid)
			kills[i] = 0;
	}
}

/* the temporary directory and the files a piece may have made in it */
static char tmpdir[128];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

/* the directories of earlier runs that were SIGKILLed (their pid is in the name, and gone) */
static void remove_stale_tmpdirs(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[512];
		int pid;

		if (sscanf(de->d_name, "vmon-bench-%d-", &pid) != 1 || pid <= 0 ||
		    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
}

const char *bench_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *t = getenv("TMPDIR");

		if (!t || !*t || strlen(t) > 64)
			t = "/tmp";
		remove_stale_tmpdirs(t);
		snprintf(tmpdir, sizeof(tmpdir), "%s/vmon-bench-%d-XXXXXX", t, (int)getpid());
		if (!mkdtemp(tmpdir)) {
			perror("bench: mkdtemp");
			exit(1);
		}
	}
	return tmpdir;
}

/*
 * Async-signal-safe: kill what we started, empty and remove the temporary
 * directory.  The files in it are those the pieces and the peers make,
 * deepest first.
 */
static void cleanup_now(void)
{
	static const char *const names[] = { "strace.log", "htop.pid", "htop.pid.new", "tmux.sock",
					     "home/.config/htop/htoprc", "home/.config/htop",
					     "home/.config/procps/toprc", "home/.config/procps", "home/.config",
					     "home/.toprc", "home" };

	for (int i = 0; i < MAX_KILLS; i++) {
		pid_t pid = kills[i];

		if (pid)
			kill(pid, SIGKILL);
	}
	if (tmpdir[0]) {
		char path[256];

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			/* snprintf is not async-signal-safe: build the path by hand */
			size_t a = strlen(tmpdir), b = strlen(names[i]);

			if (a + 1 + b + 1 > sizeof(path))
				continue;
			memcpy(path, tmpdir, a);
			path[a] = '/';
			memcpy(path + a + 1, names[i], b + 1);
			if (unlink(path) < 0)
				rmdir(path);
		}
		rmdir(tmpdir);
	}
}

/* at exit: whatever else a peer left in its home goes too */
static void cleanup(void)
{
	cleanup_now();
	if (tmpdir[0] && access(tmpdir, F_OK) == 0)
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void on_fatal_signal(int sig)
{
	cleanup_now();
	signal(sig, SIG_DFL);
	raise(sig);
}

void bench_cpu_now(bench_cpu_t *cpu)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	getrusage(RUSAGE_SELF, &ru);
	cpu->total_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	cpu->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
	cpu->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
}

void bench_cpu_sub(const bench_cpu_t *b, const bench_cpu_t *a, bench_cpu_t *d)
{
	d->total_ns = b->total_ns - a->total_ns;
	d->user_us = b->user_us - a->user_us;
	d->sys_us = b->sys_us - a->sys_us;
}

static int piece_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct bench_piece *const *)a)->name, (*(const struct bench_piece *const *)b)->name);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench [--list] [PIECE [ARGS...]]\n"
		"Runs every benchmark piece in name order, or only PIECE with ARGS (bench PIECE --help).\n");
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS, SIGABRT, SIGFPE };
	struct sigaction sa;
	int status = 0;

	bench_argv0 = argv[0];
	/* the htop watcher re-executes this program inside tmux: see peers.c */
	if (argc > 1 && strcmp(argv[1], "--watch") == 0)
		return bench_watch_main(argc - 1, argv + 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	atexit(cleanup);
	setvbuf(stdout, NULL, _IOLBF, 0);

	qsort(pieces, (size_t)pieces_nr, sizeof(pieces[0]), piece_cmp);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (int i = 0; i < pieces_nr; i++)
			printf("%-10s %s\n", pieces[i]->name, pieces[i]->summary);
		return 0;
	}
	if (argc > 1) {
		for (int i = 0; i < pieces_nr; i++) {
			if (strcmp(pieces[i]->name, argv[1]) == 0)
				return pieces[i]->run(argc - 1, argv + 1) ? 1 : 0;
		}
		fprintf(stderr, "bench: no piece named '%s' (bench --list)\n", argv[1]);
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < pieces_nr; i++) {
		char *args[] = { (char *)pieces[i]->name, NULL };

		printf("\n######## %s: %s\n\n", pieces[i]->name, pieces[i]->summary);
		if (pieces[i]->run(1, args)) {
			printf("######## %s: FAILED\n", pieces[i]->name);
			status = 1;
		}
	}
	return status;
}
