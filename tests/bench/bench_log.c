/*
 * bench_log.c: what recording costs (vmon_log(5)): bytes per process per
 * sample, and the CPU time of writing a sample next to that of taking it.
 *
 * libvmon samples every process (PROC_ALL) with the given wants, the system
 * plus N idle processes of its own, every --gap-ms, and each sample is
 * written to a log in a temporary file.  Two cases: the quiet one, where the
 * idle processes sleep through (a desktop or a server most of the time),
 * and the busy one, where each of them runs once between two samples (their
 * CPU time, faults and wait channel move).  Keyframes (every process written
 * whole, by default every 60th sample) are reported apart, and averaged in
 * at their rate.  Then the log is read back, to give the reader's cost.
 * CPU time is this process's (CLOCK_PROCESS_CPUTIME_ID) around the calls
 * measured only; wall time is never used.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "vmon.h"
#include "vmon_log.h"

struct log_opts {
	int			procs;
	int			samples;
	int			gap_ms;
	unsigned		keyframes;
	vmon_proc_wants_t	wants;
};

struct log_case {
	const char	*name;
	double		delta_bytes;	/* per entry, samples that are not keyframes */
	double		key_bytes;	/* per entry, keyframes */
	double		avg_bytes;	/* per entry, with keyframes at their rate */
	double		write_us;	/* CPU per entry */
	double		sample_us;	/* CPU of vmon_sample() per entry */
	double		read_us;	/* CPU of vmon_log_read() per entry */
	double		entries;	/* per sample */
	double		threads;	/* of which threads */
	int		samples;
};

static double ns_of(const bench_cpu_t *a, const bench_cpu_t *b)
{
	return (double)(b->total_ns - a->total_ns);
}

static int run_case(const struct log_opts *o, bench_idle_t *idle, bool busy, struct log_case *c)
{
	unsigned long long key_bytes = 0, key_entries = 0, delta_bytes = 0, delta_entries = 0, threads = 0;
	double write_ns = 0, sample_ns = 0, read_ns = 0;
	vmon_log_writer_stats_t before, after;
	char path[512];
	vmon_log_writer_t *w;
	vmon_log_record_t rec;
	vmon_log_t *log;
	vmon_attr_t attr;
	vmon_t vmon;
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/bench-%s.vlog", bench_tmpdir(), c->name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bench log: %s: %s\n", path, strerror(errno));
		return -1;
	}
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.sys_wants = VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM | VMON_WANT_SYS_LOADAVG;
	attr.proc_wants = o->wants;
	if (!vmon_init_attr(&vmon, &attr)) {
		fprintf(stderr, "bench log: vmon_init_attr: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	w = vmon_log_writer_open(fd, &vmon);
	if (!w || vmon_log_writer_set_keyframe_interval(w, o->keyframes) < 0) {
		fprintf(stderr, "bench log: vmon_log_writer_open: %s\n", strerror(errno));
		vmon_destroy(&vmon);
		close(fd);
		return -1;
	}
	for (int i = 0; i < o->samples; i++) {
		bench_cpu_t t0, t1, t2;
		vmon_stats_t st;

		if (i) {
			if (busy && bench_idle_wake(idle) < 0)
				fprintf(stderr, "bench log: waking the idle processes failed\n");
			bench_sleep_ms(o->gap_ms);
		}
		vmon_log_writer_get_stats(w, &before);
		bench_cpu_now(&t0);
		if (!vmon_sample(&vmon)) {
			fprintf(stderr, "bench log: vmon_sample: %s\n", strerror(errno));
			break;
		}
		bench_cpu_now(&t1);
		if (vmon_log_write_sample(w, &vmon, NULL) < 0) {
			fprintf(stderr, "bench log: vmon_log_write_sample: %s\n", strerror(errno));
			break;
		}
		bench_cpu_now(&t2);
		vmon_log_writer_get_stats(w, &after);
		vmon_get_stats(&vmon, &st);
		threads += (unsigned long long)st.threads;
		if (after.keyframes > before.keyframes) {
			/* the first sample is a keyframe too: its bytes are a keyframe's */
			key_bytes += after.sample_bytes - before.sample_bytes;
			key_entries += after.entries - before.entries;
		}
		/* the first sample finds every process new: not a steady state, its CPU not counted */
		if (i == 0)
			continue;
		sample_ns += ns_of(&t0, &t1);
		write_ns += ns_of(&t1, &t2);
		if (after.keyframes == before.keyframes) {
			delta_bytes += after.sample_bytes - before.sample_bytes;
			delta_entries += after.entries - before.entries;
		}
		n++;
	}
	vmon_log_writer_close(w);
	vmon_destroy(&vmon);

	/* read it back */
	lseek(fd, 0, SEEK_SET);
	log = vmon_log_open(fd);
	if (log) {
		bench_cpu_t t0, t1;

		bench_cpu_now(&t0);
		while (vmon_log_read(log, &rec) == 0)
			;
		bench_cpu_now(&t1);
		read_ns = ns_of(&t0, &t1);
		if (rec.state != VMON_LOG_EOF)
			fprintf(stderr, "bench log: reading back: %s\n", vmon_log_error(log));
		vmon_log_close(log);
	}
	close(fd);
	unlink(path);
	if (!n || !delta_entries) {
		fprintf(stderr, "bench log: no steady samples\n");
		return -1;
	}
	c->samples = n;
	c->entries = (double)(delta_entries + key_entries) / (n + 1);
	c->threads = (double)threads / (o->samples ? o->samples : 1);
	c->delta_bytes = (double)delta_bytes / (double)delta_entries;
	c->key_bytes = key_entries ? (double)key_bytes / (double)key_entries : 0;
	/* one sample in `keyframes` is one */
	c->avg_bytes = (c->delta_bytes * (o->keyframes - 1) + c->key_bytes) / o->keyframes;
	/* CPU per entry over the steady samples (n of them, keyframes among them included) */
	c->write_us = write_ns / 1e3 / (c->entries * n);
	c->sample_us = sample_ns / 1e3 / (c->entries * n);
	/* the reader read the first sample too */
	c->read_us = read_ns / 1e3 / (c->entries * (n + 1));
	return 0;
}

static void print_case(const struct log_case *c)
{
	printf("  %-6s %8.0f %8.1f %9.1f %9.1f %10.1f %11.2f %12.2f %9.2f %6.1f%%\n", c->name, c->entries, c->delta_bytes,
	       c->key_bytes, c->avg_bytes, c->avg_bytes * c->entries, c->write_us, c->sample_us, c->read_us,
	       c->sample_us > 0 ? 100.0 * c->write_us / c->sample_us : 0);
}

static int log_run(int argc, char **argv)
{
	struct log_opts o = {
		.procs = 1000, .samples = 31, .gap_ms = 1000, .keyframes = 60,
		.wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO,
	};
	struct log_case quiet = { .name = "quiet" }, busy = { .name = "busy" };
	bench_idle_t idle;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--procs") && next) {
			o.procs = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--samples") && next) {
			o.samples = atoi(argv[++i]) + 1;
		} else if (!strcmp(argv[i], "--gap-ms") && next) {
			o.gap_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--keyframes") && next) {
			o.keyframes = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--stat-only")) {
			o.wants = VMON_WANT_PROC_STAT;
		} else {
			printf("bench log [--procs N] [--samples N] [--gap-ms MS] [--keyframes N] [--stat-only]\n"
			       "  bytes per process per sample of a log of every process, and the CPU cost of writing it\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (o.procs < 0 || o.procs > BENCH_IDLE_MAX || o.samples < 3 || o.gap_ms < 0 || !o.keyframes) {
		fprintf(stderr, "bench log: --procs 0 to %d, --samples 2 or more, --keyframes 1 or more\n", BENCH_IDLE_MAX);
		return 2;
	}
	bench_idle_init(&idle);
	if (bench_idle_spawn(&idle, o.procs) < 0) {
		fprintf(stderr, "bench log: could not spawn %d idle processes\n", o.procs);
		bench_idle_kill(&idle);
		return 1;
	}
	printf("log: libvmon recording every process (PROC_ALL, %s), %d samples %d ms apart, a keyframe every %u\n",
	       o.wants == VMON_WANT_PROC_STAT ? "PROC_STAT" : "PROC_STAT|PROC_VM|PROC_IO", o.samples - 1, o.gap_ms,
	       o.keyframes);
	printf("  %d idle processes of ours, %d processes in all\n\n", o.procs, bench_count_procs());
	if (run_case(&o, &idle, false, &quiet) < 0 || run_case(&o, &idle, true, &busy) < 0)
		status = 1;
	bench_idle_kill(&idle);
	if (status)
		return status;
	printf("  bytes and CPU per process (or thread) per sample\n");
	printf("  %-6s %8s %8s %9s %9s %10s %11s %12s %9s %7s\n", "case", "entries", "delta B", "keyframe B", "average B",
	       "B/sample", "write us", "vmon_sample", "read us", "write/");
	printf("  %-6s %8s %8s %9s %9s %10s %11s %12s %9s %7s\n", "", "", "", "", "", "", "", "us", "", "sample");
	print_case(&quiet);
	print_case(&busy);
	printf("\n  target: at most 50 bytes per process per sample on a quiet system: %s (%.1f)\n",
	       quiet.avg_bytes <= 50 ? "met" : "NOT MET", quiet.avg_bytes);
	printf("  (busy: every idle process ran once between two samples; a sample's first pass is not counted)\n");
	return 0;
}

static const struct bench_piece log_piece = {
	"log", "recording: log bytes per process per sample, and the CPU cost of writing and reading them", log_run,
};

static void __attribute__((constructor)) log_register(void)
{
	bench_register(&log_piece);
}
