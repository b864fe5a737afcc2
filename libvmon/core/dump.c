/*
 * dump.c: vmon_dump_procs(), the tree as text, one line per node:
 *
 *	<indent>PID PPID GEN FLAGS S COMM [ARGV] [stat{...}] [vm{...}] [io{...}] [errors{...}]
 *
 * indented two spaces per level, threads right under their process.  FLAGS
 * is four characters, each a letter or '-': n new, s stale, t thread, e a
 * store failed (see errors{}).  COMM and ARGV are escaped (vmon_escape()).
 * The figures are the main fields of each wanted store, as name=value with
 * the names of defs/, and "-" for a value that is absent (its present bit
 * clear: not printed by this kernel, or unreadable, see errors{});
 * vmon_dump_procs(3) documents the format.
 */
#include "config.h"

#include <string.h>

#include "core/internal.h"

static const int stat_main[] = {
	VMON_PROC_STAT_UTIME, VMON_PROC_STAT_STIME, VMON_PROC_STAT_NICE,
	VMON_PROC_STAT_NUM_THREADS, VMON_PROC_STAT_VSIZE, VMON_PROC_STAT_RSS,
};
static const int vm_main[] = {
	VMON_PROC_VM_SIZE_PAGES, VMON_PROC_VM_RESIDENT_PAGES, VMON_PROC_VM_SHARED_PAGES,
};
static const int vm_status_main[] = {
	VMON_PROC_VM_STATUS_RSS_ANON_KB, VMON_PROC_VM_STATUS_RSS_FILE_KB, VMON_PROC_VM_STATUS_SWAP_KB,
};
static const int stat_extra_main[] = {
	VMON_PROC_STAT_EXTRA_POLICY, VMON_PROC_STAT_EXTRA_RT_PRIORITY, VMON_PROC_STAT_EXTRA_SIGNAL,
	VMON_PROC_STAT_EXTRA_SIGBLOCKED,
};
static const int io_main[] = {
	VMON_PROC_IO_RCHAR, VMON_PROC_IO_WCHAR, VMON_PROC_IO_READBYTES, VMON_PROC_IO_WRITEBYTES,
};
static const int sched_main[] = {
	VMON_PROC_SCHED_VOLUNTARY_CTXT, VMON_PROC_SCHED_INVOLUNTARY_CTXT, VMON_PROC_SCHED_OOM_SCORE,
	VMON_PROC_SCHED_OOM_SCORE_ADJ, VMON_PROC_SCHED_IO_CLASS, VMON_PROC_SCHED_IO_LEVEL,
	VMON_PROC_SCHED_CPUS_ALLOWED,
};
static const int rollup_main[] = {
	VMON_PROC_ROLLUP_PSS_KB, VMON_PROC_ROLLUP_PSS_ANON_KB, VMON_PROC_ROLLUP_PSS_FILE_KB,
	VMON_PROC_ROLLUP_PSS_SHMEM_KB, VMON_PROC_ROLLUP_SWAP_PSS_KB,
};

static const struct dump_store {
	vmon_proc_store_t	id;
	const char		*name;
	const int		*syms;
	size_t			nr;
} dump_stores[] = {
	{ VMON_STORE_PROC_STAT, "stat", stat_main, sizeof(stat_main) / sizeof(stat_main[0]) },
	{ VMON_STORE_PROC_VM, "vm", vm_main, sizeof(vm_main) / sizeof(vm_main[0]) },
	{ VMON_STORE_PROC_VM_STATUS, "status", vm_status_main, sizeof(vm_status_main) / sizeof(vm_status_main[0]) },
	{ VMON_STORE_PROC_IO, "io", io_main, sizeof(io_main) / sizeof(io_main[0]) },
	{ VMON_STORE_PROC_SCHED, "sched", sched_main, sizeof(sched_main) / sizeof(sched_main[0]) },
	{ VMON_STORE_PROC_ROLLUP, "rollup", rollup_main, sizeof(rollup_main) / sizeof(rollup_main[0]) },
	{ VMON_STORE_PROC_STAT_EXTRA, "extra", stat_extra_main, sizeof(stat_extra_main) / sizeof(stat_extra_main[0]) },
};

static int depth_of(const vmon_proc_t *proc)
{
	int depth = 0;

	for (proc = proc->parent; proc; proc = proc->parent)
		depth++;
	return depth;
}

static void dump_field(FILE *out, const vmon_proc_t *proc, vmon_proc_store_t id, int sym, char *buf, size_t size)
{
	const vmon_field_t *f = &vmon_proc_store_descs[id].fields[sym];

	vmon_field_format(f, proc->stores[id], buf, size, 0);
	fputs(buf, out);
}

static void dump_node(vmon_t *vmon, FILE *out, vmon_proc_t *proc)
{
	const vmon_proc_stat_t *stat = proc->stores[VMON_STORE_PROC_STAT];
	char *buf = vmon->buf_bis;
	size_t size = sizeof(vmon->buf_bis);
	bool failed = false;

	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		failed |= proc->errors[i] != 0;
	fprintf(out, "%*s%d %d %d %c%c%c%c %c ", depth_of(proc) * 2, "", proc->pid,
		proc->is_thread ? proc->parent->pid : node_of(proc)->line.ppid, proc->generation,
		proc->is_new ? 'n' : '-', proc->is_stale ? 's' : '-', proc->is_thread ? 't' : '-',
		failed ? 'e' : '-', stat && stat->state ? stat->state : '?');
	if (stat) {
		dump_field(out, proc, VMON_STORE_PROC_STAT, VMON_PROC_STAT_COMM, buf, size);
		if (!proc->is_thread && stat->argc) {
			fputs(" [", out);
			dump_field(out, proc, VMON_STORE_PROC_STAT, VMON_PROC_STAT_ARGV, buf, size);
			fputc(']', out);
		}
	} else {
		fputc('?', out);
	}
	for (size_t s = 0; s < sizeof(dump_stores) / sizeof(dump_stores[0]); s++) {
		const struct dump_store *d = &dump_stores[s];

		if (!proc->stores[d->id] || !(proc->wants & (1L << d->id)))
			continue;
		fprintf(out, " %s{", d->name);
		for (size_t i = 0; i < d->nr; i++) {
			const vmon_store_desc_t *desc = &vmon_proc_store_descs[d->id];

			fprintf(out, "%s%s=", i ? " " : "", desc->fields[d->syms[i]].name);
			/* a value the kernel did not give (or we could not read) is "-", never a made-up 0 */
			if (vmon_field_present(desc, &desc->fields[d->syms[i]], proc->stores[d->id]))
				dump_field(out, proc, d->id, d->syms[i], buf, size);
			else
				fputc('-', out);
		}
		fputc('}', out);
	}
	if (failed) {
		bool sep = false;

		fputs(" errors{", out);
		for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
			if (!proc->errors[i])
				continue;
			fprintf(out, "%s%s=%s", sep ? " " : "", vmon_proc_store_descs[i].name, strerrorname_np(proc->errors[i]) ?: "?");
			sep = true;
		}
		fputc('}', out);
	}
	fputc('\n', out);
}

void vmon_dump_procs(vmon_t *vmon, FILE *out)
{
	vmon_stats_t stats;

	if (!vmon->internal)
		return;
	vmon_get_stats(vmon, &stats);
	fprintf(out, "# generation %d: %d processes, %d threads\n", vmon->generation, stats.procs, stats.threads);
	for (vmon_proc_t *proc = tree_first(vmon); proc; proc = tree_next(vmon, proc, true))
		dump_node(vmon, out, proc);
}
