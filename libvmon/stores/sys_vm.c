/*
 * sys_vm.c: the SYS_VM want, /proc/meminfo parsed by key (defs/sys_vm.def).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

int sys_vm_sample(vmon_t *vmon, void **store)
{
	const vmon_store_desc_t *desc = &vmon_sys_store_descs[VMON_STORE_SYS_VM];
	buf_t *buf = &vmon->internal->buf;
	vmon_sys_vm_t *s = *store;
	bool first;
	int r;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->meminfo_fd = -1;
		*store = s;
	}
	first = !BITTEST(s->present, VMON_SYS_VM_TOTAL_KB);
	memset(s->changed, 0, sizeof(s->changed));
	if (procfs_read_root(vmon, "meminfo", &s->meminfo_fd, buf) < 0)
		return -1;
	r = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "meminfo", buf->data, buf->len,
			s, s->changed, s->present, first);
	sys_vm_names_of_old(s);
	if (r < 0)
		return -1;
	return r ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

void sys_vm_names_of_old(vmon_sys_vm_t *s)
{
	s->commited_as_kb = s->committed_as_kb;
}

void sys_vm_free(vmon_t *vmon, vmon_sys_vm_t *s)
{
	if (!s)
		return;
	if (s->meminfo_fd >= 0)
		close(s->meminfo_fd);
	free(s);
}
