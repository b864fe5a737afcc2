/*
 * host.h: what the event feed and the task iterator ask of the system they
 * run on (host.c); light_skel.h has what loading their BPF programs shares.
 */
#ifndef VMON_HOST_H
#define VMON_HOST_H

#include "vmon.h"

/* why the kernel's pids (its events, the iterator's records) are not the proc root's, or NULL */
const char *host_root_reason(vmon_t *vmon);
int host_count_fds(vmon_t *vmon);	/* open in this process, or -1 (the feed's and the iterator's are counted so) */
/* the kernel's nr_cpu_ids: the highest possible CPU + 1 (per-CPU data has a slot for each), at least 1 */
int host_possible_cpus(void);

#endif
