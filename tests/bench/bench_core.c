/*
 * bench_core.c: the cost of sampling the whole system with libvmon.
 *
 * At each scale (1,000 / 5,000 / 10,000 idle processes that it spawns
 * itself), libvmon samples PROC_STAT|PROC_VM|PROC_IO in VMON_FLAG_PROC_ALL
 * mode, once with a large fd budget and once with the default one, and the
 * benchmark reports per process per sample: CPU time (of this process, which
 * is single-threaded, around vmon_sample() only), syscalls (counted by strace
 * on separate passes), and heap.  Two steady states are measured: every
 * process idle since the last sample (the common case on a desktop or a
 * server, where libvmon's read-avoidance rules apply) and every process woken
 * once since the last sample (its worst case).  top and htop are measured at
 * the same scale in the same run; the figures the issue quotes for the
 * original libvmon and btop are printed as a reference only.
 *
 * For profiling: `bench core --hold N` keeps N idle processes for a while,
 * and `bench core --sample-only N` samples N steady passes of whatever runs,
 * each inside core_steady_pass() (valgrind --tool=callgrind
 * --toggle-collect=core_steady_pass).
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "vmon.h"

#define MAX_SCALES	8
#define MAX_PASSES	50
#define DEFAULT_SOFT_NOFILE	1024	/* what most logins get, and what the default budget is measured under */
#define RESERVED_FDS	1024	/* left to the benchmark and its helpers under the large budget */

#define CORE_WANTS (VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO)

struct core_opts {
	int	scales[MAX_SCALES];
	int	scales_nr;
	int	passes;
	int	gap_ms;
	bool	peers;
	bool	strace;
	bool	default_budget;
};

/* one libvmon configuration at one scale */
struct core_case {
	int		fd_budget;	/* asked for; -1 the default */
	int		budget_used;	/* as vmon_get_stats() says */
	int		soft_nofile;
	bool		ok;
	int		procs;		/* sampled: every process of the system */
	double		first_us;	/* per process, first pass */
	double		idle_us, idle_min_us, idle_sys_pct;	/* per process, steady, nothing ran */
	double		ran_us, ran_min_us;	/* per process, steady, every idle child ran */
	double		opens, reads, skipped;	/* per process per idle pass, library counters */
	double		heap_bytes;	/* per process */
	int		fds_held;
	bool		have_syscalls;
	const char	*no_syscalls_why;
	bench_syscall_segment_t	sc_idle, sc_ran;
};

struct core_scale {
	int		extra;		/* idle processes spawned */
	struct core_case	big, dflt;
	bool		have_top, have_htop;
	const char	*no_top_why, *no_htop_why;
	double		top_us, htop_us;	/* per process per refresh */
	int		top_procs, htop_procs;
	double		top_ms_per_1000;
};

/* the reference figures of issue 2, measured on this machine class but not here */
static const struct {
	const char	*who;
	double		lo, hi;
	const char	*note;
} reference[] = {
	{ "original libvmon", 28, 28, "fails beyond ~3,300 processes (6 fds per process)" },
	{ "top", 14, 19, "" },
	{ "htop", 21, 24, "" },
	{ "btop", 12, 14, "" },
};

static double heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (double)mi.uordblks + (double)mi.hblkhd;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int set_soft_nofile(rlim_t soft)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	rl.rlim_cur = soft > rl.rlim_max ? rl.rlim_max : soft;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* one sample, its CPU time into *cpu; kept out of line so that callgrind can count it alone */
int __attribute__((noinline)) core_steady_pass(vmon_t *vmon, bench_cpu_t *cpu);
int __attribute__((noinline)) core_steady_pass(vmon_t *vmon, bench_cpu_t *cpu)
{
	bench_cpu_t a, b;
	int r;

	bench_cpu_now(&a);
	r = vmon_sample(vmon);
	bench_cpu_now(&b);
	bench_cpu_sub(&b, &a, cpu);
	return r;
}

static int core_init(vmon_t *vmon, int fd_budget)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = CORE_WANTS;
	attr.fd_budget = fd_budget;
	attr.sampler = VMON_SAMPLER_PROC;	/* /proc's costs; bench_iter.c sets the task iterator beside them */
	if (!vmon_init_attr(vmon, &attr)) {
		fprintf(stderr, "bench core: vmon_init_attr: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int sample_or_complain(vmon_t *vmon, bench_cpu_t *cpu)
{
	if (!core_steady_pass(vmon, cpu)) {
		fprintf(stderr, "bench core: vmon_sample: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void run_case(const struct core_opts *o, bench_idle_t *idle, struct core_case *c)
{
	double idle_v[MAX_PASSES], ran_v[MAX_PASSES], idle_sys = 0, idle_total = 0, heap0;
	vmon_stats_t s0, s1;
	bench_syscalls_t sc;
	bench_cpu_t cpu;
	vmon_t vmon;
	int procs;

	c->ok = false;
	if (set_soft_nofile(c->soft_nofile) < 0) {
		perror("bench core: setrlimit");
		return;
	}
	heap0 = heap_in_use();
	if (core_init(&vmon, c->fd_budget) < 0)
		return;

	if (sample_or_complain(&vmon, &cpu) < 0)
		goto out;
	vmon_get_stats(&vmon, &s0);
	procs = s0.procs > 0 ? s0.procs : 1;
	c->procs = s0.procs;
	c->first_us = (double)cpu.total_ns / 1000.0 / procs;

	for (int i = 0; i < o->passes; i++) {
		bench_sleep_ms(o->gap_ms);
		if (sample_or_complain(&vmon, &cpu) < 0)
			goto out;
		idle_v[i] = (double)cpu.total_ns / 1000.0 / procs;
		idle_sys += (double)cpu.sys_us;
		idle_total += (double)(cpu.user_us + cpu.sys_us);
	}
	vmon_get_stats(&vmon, &s1);
	c->opens = (double)(s1.opens - s0.opens) / o->passes / procs;
	c->reads = (double)(s1.reads - s0.reads) / o->passes / procs;
	c->skipped = (double)(s1.reads_skipped - s0.reads_skipped) / o->passes / procs;
	c->idle_sys_pct = idle_total > 0 ? 100.0 * idle_sys / idle_total : 0;
	c->idle_min_us = idle_v[0];
	for (int i = 1; i < o->passes; i++) {
		if (idle_v[i] < c->idle_min_us)
			c->idle_min_us = idle_v[i];
	}
	c->idle_us = median(idle_v, o->passes);

	for (int i = 0; i < o->passes; i++) {
		if (bench_idle_wake(idle) < 0 || sample_or_complain(&vmon, &cpu) < 0)
			goto out;
		ran_v[i] = (double)cpu.total_ns / 1000.0 / procs;
	}
	c->ran_min_us = ran_v[0];
	for (int i = 1; i < o->passes; i++) {
		if (ran_v[i] < c->ran_min_us)
			c->ran_min_us = ran_v[i];
	}
	c->ran_us = median(ran_v, o->passes);

	vmon_get_stats(&vmon, &s1);
	c->heap_bytes = (heap_in_use() - heap0) / (s1.procs > 0 ? s1.procs : 1);
	c->fds_held = s1.fds_held;
	c->budget_used = s1.fd_budget;

	/* syscalls: one idle pass and one after a wake-up, each its own strace segment */
	c->have_syscalls = false;
	c->no_syscalls_why = "not asked for (--no-strace)";
	if (o->strace) {
		bench_syscall_segment_t seg[3];

		/*
		 * The children were woken just before the last pass, and some may
		 * have run on after it read them (back from their handler into
		 * pause()): one untraced pass takes that in, so that the traced
		 * one sees them idle.
		 */
		bench_sleep_ms(o->gap_ms);
		if (sample_or_complain(&vmon, &cpu) < 0)
			goto out;
		bench_sleep_ms(o->gap_ms);
		if (bench_syscalls_start(&sc, &c->no_syscalls_why) == 0) {
			int r = sample_or_complain(&vmon, &cpu);

			bench_syscalls_mark(&sc);
			if (r == 0)
				r = bench_idle_wake(idle);
			bench_syscalls_mark(&sc);
			if (r == 0)
				r = sample_or_complain(&vmon, &cpu);
			if (bench_syscalls_stop(&sc, seg, 3) == 0 && r == 0) {
				c->sc_idle = seg[0];
				c->sc_ran = seg[2];
				c->have_syscalls = true;
			} else {
				c->no_syscalls_why = "the strace log could not be read";
			}
		}
	}
	c->ok = true;
out:
	vmon_destroy(&vmon);
}

static void print_syscalls(const char *label, const bench_syscall_segment_t *seg, int procs)
{
	printf("    %-30s %6.2f  (", label, (double)seg->total / procs);
	for (int i = 0; i < seg->nr && i < 8; i++) {
		if (seg->names[i].count * 100 < seg->total)	/* under 1%: not worth a column */
			break;
		printf("%s%s %.2f", i ? ", " : "", seg->names[i].name, (double)seg->names[i].count / procs);
	}
	printf(")\n");
}

static void print_case(const char *title, const struct core_case *c)
{
	if (!c->ok) {
		printf("  %s: FAILED (see the messages above)\n", title);
		return;
	}
	printf("  %s (soft RLIMIT_NOFILE %d, fd budget %d, %d fds held)\n", title, c->soft_nofile,
	       c->budget_used, c->fds_held);
	printf("    %-30s %6.2f\n", "first pass, CPU us/proc", c->first_us);
	printf("    %-30s %6.2f  (min %.2f; %.0f%% of it in the kernel)\n", "steady, all idle, CPU us/proc",
	       c->idle_us, c->idle_min_us, c->idle_sys_pct);
	printf("    %-30s %6.2f  (min %.2f)\n", "steady, all ran, CPU us/proc", c->ran_us, c->ran_min_us);
	printf("    %-30s %6.2f opens, %.2f reads, %.2f reads skipped\n", "library counters /proc/pass",
	       c->opens, c->reads, c->skipped);
	if (c->have_syscalls) {
		print_syscalls("syscalls/proc, all idle", &c->sc_idle, c->procs);
		print_syscalls("syscalls/proc, all ran", &c->sc_ran, c->procs);
	} else {
		printf("    %-30s not counted: %s\n", "syscalls/proc", c->no_syscalls_why);
	}
	printf("    %-30s %6.0f\n", "heap bytes/proc", c->heap_bytes);
}

static int run_scale(const struct core_opts *o, bench_idle_t *idle, struct core_scale *sc, rlim_t hard)
{
	fprintf(stderr, "bench core: %d idle processes...\n", sc->extra);
	if (bench_idle_spawn(idle, sc->extra) < 0)
		return -1;

	sc->big.soft_nofile = (int)hard;
	sc->big.fd_budget = (int)hard > 2 * RESERVED_FDS ? (int)hard - RESERVED_FDS : (int)hard / 2;
	fprintf(stderr, "bench core: %d: libvmon, fd budget %d\n", sc->extra, sc->big.fd_budget);
	run_case(o, idle, &sc->big);

	if (o->default_budget) {
		sc->dflt.soft_nofile = (int)hard < DEFAULT_SOFT_NOFILE ? (int)hard : DEFAULT_SOFT_NOFILE;
		sc->dflt.fd_budget = -1;
		fprintf(stderr, "bench core: %d: libvmon, default fd budget\n", sc->extra);
		run_case(o, idle, &sc->dflt);
	}
	set_soft_nofile(hard);

	if (o->peers) {
		double us;

		fprintf(stderr, "bench core: %d: top\n", sc->extra);
		sc->have_top = bench_peer_top(o->passes, &us, &sc->top_procs, &sc->no_top_why) == 0;
		if (sc->have_top) {
			sc->top_us = us / sc->top_procs;
			sc->top_ms_per_1000 = us / 1000.0 / sc->top_procs * 1000.0;
		}
		fprintf(stderr, "bench core: %d: htop\n", sc->extra);
		sc->have_htop = bench_peer_htop(o->passes, &us, &sc->htop_procs, &sc->no_htop_why) == 0;
		if (sc->have_htop)
			sc->htop_us = us / sc->htop_procs;
	} else {
		sc->no_top_why = sc->no_htop_why = "not asked for (--no-peers)";
	}
	return 0;
}

static void print_scale(const struct core_opts *o, const struct core_scale *sc)
{
	printf("\n== %d idle processes spawned; libvmon sampled %d ==\n", sc->extra, sc->big.procs);
	print_case("large fd budget", &sc->big);
	if (o->default_budget)
		print_case("default fd budget", &sc->dflt);
	if (sc->have_top)
		printf("  top -b -d 0.2: %.2f us/proc/refresh = %.1f ms CPU per refresh per 1,000 processes"
		       " (%d processes)\n", sc->top_us, sc->top_ms_per_1000, sc->top_procs);
	else
		printf("  top: not measured: %s\n", sc->no_top_why);
	if (sc->have_htop)
		printf("  htop -d 10 in tmux: %.2f us/proc/refresh = %.1f ms CPU per refresh per 1,000 processes"
		       " (%d processes)\n", sc->htop_us, sc->htop_us, sc->htop_procs);
	else
		printf("  htop: not measured: %s\n", sc->no_htop_why);
}

static void print_ratio(bool have, double ours, double theirs)
{
	if (have && theirs > 0 && ours > 0)
		printf(" %6.2f", ours / theirs);
	else
		printf(" %6s", "-");
}

static void print_summary(const struct core_opts *o, const struct core_scale *scales, int nr)
{
	printf("\n== summary: CPU us per process per sample (libvmon) or per refresh (peers) ==\n");
	printf("%7s %7s %7s %7s %7s %7s %7s | %6s %6s %6s %6s | %7s %7s\n",
	       "procs", "idle", "ran", "dflt-i", "dflt-r", "top", "htop",
	       "i/top", "r/top", "i/htop", "r/htop", "sys-i", "sys-r");
	for (int i = 0; i < nr; i++) {
		const struct core_scale *s = &scales[i];

		printf("%7d", s->big.procs);
		if (s->big.ok)
			printf(" %7.2f %7.2f", s->big.idle_us, s->big.ran_us);
		else
			printf(" %7s %7s", "FAIL", "FAIL");
		if (o->default_budget && s->dflt.ok)
			printf(" %7.2f %7.2f", s->dflt.idle_us, s->dflt.ran_us);
		else
			printf(" %7s %7s", "-", "-");
		if (s->have_top)
			printf(" %7.2f", s->top_us);
		else
			printf(" %7s", "-");
		if (s->have_htop)
			printf(" %7.2f", s->htop_us);
		else
			printf(" %7s", "-");
		printf(" |");
		print_ratio(s->have_top && s->big.ok, s->big.idle_us, s->top_us);
		print_ratio(s->have_top && s->big.ok, s->big.ran_us, s->top_us);
		print_ratio(s->have_htop && s->big.ok, s->big.idle_us, s->htop_us);
		print_ratio(s->have_htop && s->big.ok, s->big.ran_us, s->htop_us);
		printf(" |");
		if (s->big.have_syscalls)
			printf(" %7.2f %7.2f\n", (double)s->big.sc_idle.total / s->big.procs,
			       (double)s->big.sc_ran.total / s->big.procs);
		else
			printf(" %7s %7s\n", "-", "-");
	}
	printf("columns: idle/ran = large fd budget, every spawned process idle / woken once since the last\n"
	       "sample (median of %d passes); dflt-i/dflt-r = the same under the default fd budget; i/top ...\n"
	       "= ratios libvmon / peer (below 1: libvmon is cheaper); sys-i/sys-r = syscalls per process\n"
	       "per sample, counted by strace.\n", o->passes);

	for (int i = 0; i < nr; i++) {
		if (scales[i].extra == 5000 && scales[i].big.ok)
			printf("target, <= 10 us/proc/sample at 5,000 processes: idle %.2f (%s), ran %.2f (%s)\n",
			       scales[i].big.idle_us, scales[i].big.idle_us <= 10 ? "met" : "NOT met",
			       scales[i].big.ran_us, scales[i].big.ran_us <= 10 ? "met" : "NOT met");
	}

	printf("\nreference, from the issue, not measured here (us per process per refresh):\n");
	for (size_t i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
		if (reference[i].lo == reference[i].hi)
			printf("  %-18s ~%.0f %s\n", reference[i].who, reference[i].lo, reference[i].note);
		else
			printf("  %-18s ~%.0f-%.0f %s\n", reference[i].who, reference[i].lo, reference[i].hi,
			       reference[i].note);
	}
	for (int i = 0; i < nr; i++) {
		if (!scales[i].big.ok)
			continue;
		printf("  libvmon at %d procs / reference: idle %.2f-%.2f of top, %.2f-%.2f of htop,"
		       " %.2f of the original libvmon; ran %.2f-%.2f of top\n",
		       scales[i].big.procs,
		       scales[i].big.idle_us / 19, scales[i].big.idle_us / 14,
		       scales[i].big.idle_us / 24, scales[i].big.idle_us / 21,
		       scales[i].big.idle_us / 28,
		       scales[i].big.ran_us / 19, scales[i].big.ran_us / 14);
	}
}

static void print_method(const struct core_opts *o)
{
	printf("libvmon core benchmark: PROC_STAT|PROC_VM|PROC_IO in VMON_FLAG_PROC_ALL mode, every process\n"
	       "of the system (the spawned idle processes and whatever else runs on this shared machine).\n"
	       "CPU: user+sys of this single-threaded process around vmon_sample() only\n"
	       "  (CLOCK_PROCESS_CPUTIME_ID; the kernel share from getrusage), divided by the processes sampled;\n"
	       "  a first pass, then %d passes %d ms apart with every spawned process idle, then %d passes\n"
	       "  each after waking every spawned process once (SIGUSR1, and we wait until all of them ran).\n"
	       "syscalls: counted for real by strace -p attached to this process, between markers, on one\n"
	       "  idle pass and one pass after a wake-up (outside the CPU measurements).\n"
	       "heap: mallinfo2() in use after the passes minus before vmon_init(), per process.\n"
	       "fd budgets: large = soft RLIMIT_NOFILE raised to the hard limit, budget = hard - %d;\n"
	       "  default = vmon_attr_default() (half the soft limit) under a soft limit of %d.\n"
	       "peers: their own CPU (rusage / schedstat), marginal cost of %d refreshes over all processes.\n",
	       o->passes, o->gap_ms, o->passes, RESERVED_FDS, DEFAULT_SOFT_NOFILE, o->passes);
}

static int parse_scales(struct core_opts *o, const char *list)
{
	char *copy = strdup(list), *save = NULL;

	o->scales_nr = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(t, &end, 10);

		if (*end || v < 1 || v > BENCH_IDLE_MAX || o->scales_nr == MAX_SCALES ||
		    (o->scales_nr && v <= o->scales[o->scales_nr - 1])) {
			fprintf(stderr, "bench core: --procs wants increasing counts up to %d, at most %d of them\n",
				BENCH_IDLE_MAX, MAX_SCALES);
			free(copy);
			return -1;
		}
		o->scales[o->scales_nr++] = (int)v;
	}
	free(copy);
	return o->scales_nr ? 0 : -1;
}

static void core_usage(FILE *out)
{
	fprintf(out,
		"usage: bench core [--procs N,N,...] [--passes N] [--gap-ms MS] [--no-peers] [--no-strace]\n"
		"                  [--no-default-budget]\n"
		"       bench core --hold N [--for S]  keep N idle processes for S seconds (600), for profiling\n"
		"       bench core --sample-only N     N steady passes over the system as it is, in\n"
		"                [--wake PGID]         core_steady_pass() (valgrind --toggle-collect=...);\n"
		"                                      --wake: SIGUSR1 to a --hold's group before each pass\n");
}

/* --hold N: idle processes for a profiler run in another shell, for `seconds` at most */
static int core_hold(int nr, int seconds)
{
	bench_idle_t idle;

	bench_idle_init(&idle);
	if (bench_idle_spawn(&idle, nr) < 0) {
		bench_idle_kill(&idle);
		return 1;
	}
	printf("holding %d idle processes (group %d) for %d s; ^C or kill %d ends them sooner\n", nr,
	       (int)idle.pgid, seconds, (int)getpid());
	bench_sleep_ms(seconds * 1000);
	bench_idle_kill(&idle);
	return 0;
}

/* --sample-only N [--wake PGID]: steady passes; with --wake, a group signalled before each (a --hold's) */
static int core_sample_only(int passes, int gap_ms, pid_t wake_pgid)
{
	bench_cpu_t cpu, sum = { 0, 0, 0 };
	vmon_stats_t st;
	vmon_t vmon;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		set_soft_nofile(rl.rlim_max);
	if (core_init(&vmon, rl.rlim_max > 2 * RESERVED_FDS ? (int)(rl.rlim_max - RESERVED_FDS) : -1) < 0)
		return 1;
	if (!vmon_sample(&vmon)) {
		perror("bench core: vmon_sample");
		vmon_destroy(&vmon);
		return 1;
	}
	for (int i = 0; i < passes; i++) {
		if (wake_pgid > 0 && kill(-wake_pgid, SIGUSR1) < 0) {
			perror("bench core: --wake");
			vmon_destroy(&vmon);
			return 1;
		}
		bench_sleep_ms(gap_ms);
		if (sample_or_complain(&vmon, &cpu) < 0) {
			vmon_destroy(&vmon);
			return 1;
		}
		sum.total_ns += cpu.total_ns;
	}
	vmon_get_stats(&vmon, &st);
	printf("%d steady passes over %d processes: %.2f us CPU per process per pass\n", passes, st.procs,
	       passes && st.procs ? (double)sum.total_ns / 1000.0 / passes / st.procs : 0.0);
	vmon_destroy(&vmon);
	return 0;
}

static int core_run(int argc, char **argv)
{
	struct core_opts o = { .passes = 5, .gap_ms = 200, .peers = true, .strace = true, .default_budget = true };
	struct core_scale scales[MAX_SCALES];
	bench_idle_t idle;
	struct rlimit rl;
	int status = 0, hold = 0, hold_secs = 600, sample_only = 0, wake_pgid = 0;

	parse_scales(&o, "1000,5000,10000");
	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--procs") == 0 && next) {
			if (parse_scales(&o, next) < 0)
				return 2;
			i++;
		} else if (strcmp(argv[i], "--passes") == 0 && next) {
			o.passes = atoi(next);
			if (o.passes < 1 || o.passes > MAX_PASSES) {
				fprintf(stderr, "bench core: --passes: 1 to %d\n", MAX_PASSES);
				return 2;
			}
			i++;
		} else if (strcmp(argv[i], "--gap-ms") == 0 && next) {
			o.gap_ms = atoi(next);
			i++;
		} else if (strcmp(argv[i], "--no-peers") == 0) {
			o.peers = false;
		} else if (strcmp(argv[i], "--no-strace") == 0) {
			o.strace = false;
		} else if (strcmp(argv[i], "--no-default-budget") == 0) {
			o.default_budget = false;
		} else if (strcmp(argv[i], "--hold") == 0 && next) {
			hold = atoi(next);
			i++;
		} else if (strcmp(argv[i], "--for") == 0 && next) {
			hold_secs = atoi(next);
			i++;
		} else if (strcmp(argv[i], "--wake") == 0 && next) {
			wake_pgid = atoi(next);
			i++;
		} else if (strcmp(argv[i], "--sample-only") == 0 && next) {
			sample_only = atoi(next);
			i++;
		} else {
			core_usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	if (hold > 0)
		return core_hold(hold, hold_secs);
	if (sample_only > 0)
		return core_sample_only(sample_only, o.gap_ms, wake_pgid);

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		perror("bench core: getrlimit");
		return 1;
	}
	print_method(&o);
	memset(scales, 0, sizeof(scales));
	bench_idle_init(&idle);
	for (int i = 0; i < o.scales_nr; i++) {
		scales[i].extra = o.scales[i];
		if (run_scale(&o, &idle, &scales[i], rl.rlim_max) < 0) {
			status = 1;
			o.scales_nr = i;
			break;
		}
		print_scale(&o, &scales[i]);
		if (!scales[i].big.ok || (o.default_budget && !scales[i].dflt.ok))
			status = 1;
	}
	bench_idle_kill(&idle);
	print_summary(&o, scales, o.scales_nr);
	return status;
}

static const struct bench_piece core_piece = {
	"core", "libvmon sampling every process (PROC_STAT|PROC_VM|PROC_IO, PROC_ALL) vs top and htop", core_run,
};

static void __attribute__((constructor)) core_register(void)
{
	bench_register(&core_piece);
}
