/*
 * source.h: the sampling-source interface.  A source is where a pass gets
 * its tasks from: it lists the processes, probes each node (its identity,
 * parent, state, and whether it ran since the last sample) and may fill
 * stores from a record it read, in place of the files those stores read
 * under /proc.  One source serves an instance at a time, chosen by
 * vmon_set_sampler(); the pass and the stores call it through source_*()
 * and never ask which one it is.  A new source is a file (or folder) here
 * and one line in source.c's table.
 */
#ifndef VMON_SOURCE_H
#define VMON_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "vmon.h"
#include "core/instance.h"

struct proc_node;

/* source_fill() and source_next_thread(): the source has no record of this for the node; read /proc */
#define SOURCE_NO_RECORD	(-2)
/* source_next_thread()'s first cursor */
#define SOURCE_THREADS_START	(-2)

/* source_list()'s answer */
#define SOURCE_LISTED_ALL	1	/* every process was listed: the event feed's listing */
#define SOURCE_LISTED_ENDS	2	/* ... and a process not listed is gone */

/* what a source is */
#define SOURCE_RECORDS		1	/* its records stand for stat, schedstat and task/: no fds held for them */
#define SOURCE_NOT_LIVE		2	/* it samples nothing: vmon_sample(), monitoring and the sampler choice are EINVAL */

typedef struct source_ops {
	vmon_sampler_t	sampler;	/* the vmon_set_sampler() name of it */
	unsigned	caps;		/* SOURCE_* */
	const char	*note;		/* vmon_sampler_reason() while it is in use, or NULL */
	/* set up (0), or -1 with errno and a line in why saying why it cannot; may be NULL */
	int	(*open)(vmon_t *vmon, char *why, size_t why_size);
	void	(*close)(vmon_t *vmon);
	/* at the start of a pass: 1 read, 0 nothing to read, -1 failed (this pass falls back on /proc) */
	int	(*pass_begin)(vmon_t *vmon);
	/* list the processes (node->seen), `wanted` when the feed asks for a listing: SOURCE_LISTED_*, or -1;
	 * it and probe are NULL only in a source that samples nothing (SOURCE_NOT_LIVE) */
	int	(*list)(vmon_t *vmon, bool wanted);
	/* the node's stat line or record for this pass: 0, or -1 (ESRCH, ESTALE: gone) */
	int	(*probe)(vmon_t *vmon, struct proc_node *node);
	/* fill a store from the node's record: changes, -1, or SOURCE_NO_RECORD; may be NULL */
	int	(*fill)(vmon_t *vmon, struct proc_node *node, vmon_proc_store_t store, void *s, bool first);
	/* the next thread of the node's group after *cursor: tid, 0 at the end, or SOURCE_NO_RECORD; may be NULL */
	int	(*next_thread)(vmon_t *vmon, struct proc_node *node, int *cursor);
	/* the fds it holds, or NULL: none */
	int	(*fds)(const vmon_t *vmon);
} source_ops_t;

/* the sources (sources/procfs.c, sources/iter.c; a log's replay, sources/log_replay.c, is set by vmon_log_replay_init()) */
extern const source_ops_t procfs_source;
extern const source_ops_t iter_source;
extern const source_ops_t replay_source;

/* take the source vmon_set_sampler() names (VMON_SAMPLER_PROC or _ITER): 0, or -1 with why (and /proc in use) */
int source_choose(vmon_t *vmon, vmon_sampler_t sampler, char *why, size_t why_size);
void source_close(vmon_t *vmon);
/* a source no vmon_set_sampler() names, set once for the instance's life (the replay) */
void source_set(vmon_t *vmon, const source_ops_t *src);
const char *source_note(const vmon_t *vmon);
vmon_sampler_t source_sampler(const vmon_t *vmon);
int source_pass_begin(vmon_t *vmon);
int source_list(vmon_t *vmon, bool wanted);
int source_probe(vmon_t *vmon, struct proc_node *node);
int source_fill(vmon_t *vmon, struct proc_node *node, vmon_proc_store_t store, void *s, bool first);
int source_next_thread(vmon_t *vmon, struct proc_node *node, int *cursor);
int source_fds(const vmon_t *vmon);

/* has the source in use these SOURCE_* caps? */
static inline bool source_has(const vmon_t *vmon, unsigned caps)
{
	const source_ops_t *src = vmon->internal->source;

	return src && (src->caps & caps) == caps;
}

#endif
