/*
 * source.c: the sources an instance can sample from, and the calls the
 * pass and the stores make to whichever is in use (source.h).  /proc is
 * always there: it serves an instance until another source is chosen and
 * opens, and whenever that one fails.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "core/internal.h"

/* every source, by the vmon_sampler_t that names it: a new source is one line here */
static const source_ops_t *const sources[] = {
	&procfs_source,
	&iter_source,
};

static const source_ops_t *current(const vmon_t *vmon)
{
	const source_ops_t *src = vmon->internal->source;

	return src ? src : &procfs_source;
}

int source_choose(vmon_t *vmon, vmon_sampler_t sampler, char *why, size_t why_size)
{
	struct _vmon_internal *in = vmon->internal;
	const source_ops_t *want = NULL, *prev = current(vmon);

	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i]->sampler == sampler)
			want = sources[i];
	if (!want) {
		snprintf(why, why_size, "no such sampler");
		errno = EINVAL;
		return -1;
	}
	if (want == prev)
		return 0;
	if (prev->close)
		prev->close(vmon);
	in->source = &procfs_source;
	if (want->open && want->open(vmon, why, why_size) < 0)
		return -1;
	in->source = want;
	return 0;
}

void source_close(vmon_t *vmon)
{
	const source_ops_t *src = current(vmon);

	if (src->close)
		src->close(vmon);
	vmon->internal->source = &procfs_source;
}

void source_set(vmon_t *vmon, const source_ops_t *src)
{
	source_close(vmon);
	vmon->internal->source = src;
}

const char *source_note(const vmon_t *vmon)
{
	return current(vmon)->note;
}

vmon_sampler_t source_sampler(const vmon_t *vmon)
{
	return current(vmon)->sampler;
}

int source_pass_begin(vmon_t *vmon)
{
	const source_ops_t *src = current(vmon);

	return src->pass_begin ? src->pass_begin(vmon) : 0;
}

int source_list(vmon_t *vmon, bool wanted)
{
	const source_ops_t *src = current(vmon);

	return src->list ? src->list(vmon, wanted) : 0;
}

int source_probe(vmon_t *vmon, proc_node_t *node)
{
	const source_ops_t *src = current(vmon);

	if (!src->probe) {
		errno = EINVAL;	/* it samples nothing */
		return -1;
	}
	return src->probe(vmon, node);
}

int source_fill(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t store, void *s, bool first)
{
	const source_ops_t *src = current(vmon);

	return src->fill ? src->fill(vmon, node, store, s, first) : SOURCE_NO_RECORD;
}

int source_next_thread(vmon_t *vmon, proc_node_t *node, int *cursor)
{
	const source_ops_t *src = current(vmon);

	return src->next_thread ? src->next_thread(vmon, node, cursor) : SOURCE_NO_RECORD;
}

int source_fds(const vmon_t *vmon)
{
	const source_ops_t *src = current(vmon);

	return src->fds ? src->fds(vmon) : 0;
}
