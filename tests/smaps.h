/*
 * smaps.h: a process's mappings from /proc/PID/smaps, one at a time, for
 * the tests and benches that ask where its memory is (the BPF maps it
 * mapped, its heap, what a storm left resident).  No cmocka: the benches
 * use it too.
 */
#ifndef VMON_TESTS_SMAPS_H
#define VMON_TESTS_SMAPS_H

#include <sys/types.h>

typedef struct smaps_map {
	const char	*name;		/* as smaps names it ("[heap]", a path, "anon_inode:bpf-map"); "" for none */
	unsigned long	size;		/* bytes mapped */
	long		rss_kb;		/* resident */
} smaps_map_t;

/*
 * fn for each mapping of pid (0: this process), in address order; the
 * number of mappings, or -1 when smaps cannot be read or lists no mapping
 * (the process is gone, a zombie, a kernel thread).
 */
int smaps_each(pid_t pid, void (*fn)(const smaps_map_t *map, void *arg), void *arg);

#endif
