/*
 * host.c: what the event feed and the task iterator both ask of the
 * system they run on: whether the kernel's pids are the proc root's, how
 * many fds this process holds (to count what a BPF program or a ring
 * took), how many CPUs the kernel keeps per-CPU data for.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

/*
 * /sys/devices/system/cpu/possible is a list of ranges ("0-3", "0,2-5"),
 * the highest last; CPUs that may be hot-added count, as they do for the
 * kernel's per-CPU counters.  Without it, the CPUs configured now.
 */
int host_possible_cpus(void)
{
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC), highest = -1;
	char list[256];
	ssize_t n;

	if (fd >= 0) {
		n = read(fd, list, sizeof(list) - 1);
		close(fd);
		if (n > 0) {
			char *p = list, *end;

			list[n] = '\0';
			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p || v < 0 || v >= 1L << 20)
					break;
				if (v > highest)
					highest = (int)v;
				if (*end != ',' && *end != '-')
					break;
				p = end + 1;
			}
		}
	}
	if (highest < 0) {
		long conf = sysconf(_SC_NPROCESSORS_CONF);

		return conf > 0 ? (int)conf : 1;
	}
	return highest + 1;
}

/* the fds this process has open, the directory's own included (a difference cancels it) */
int host_count_fds(vmon_t *vmon)
{
	int fd = openat(vmon->internal->proc_fd, "self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The kernel's events name processes by their pids in the first pid
 * namespace: they describe the proc root only if it is that namespace's
 * procfs, read from inside it, and so do the task iterator's records.
 * NULL when they do, else why not.
 */
/* the nsfs inode of the first pid namespace: fixed since Linux 3.8 (PROC_PID_INIT_INO) */
#define PID_NS_FIRST_INO	0xeffffffcUL

const char *host_root_reason(vmon_t *vmon)
{
	static const char nested[] = "libvmon runs in a pid namespace of its own, and the kernel's events carry the first one's pids";
	struct _vmon_internal *in = vmon->internal;
	const char *reason = NULL;
	char link[32], *nspid;
	buf_t status = { 0 };
	struct stat ns;
	ssize_t n;
	int fd;

	if (!in->proc_is_live)
		return "the proc root is not a procfs";
	n = readlinkat(in->proc_fd, "self", link, sizeof(link) - 1);
	if (n <= 0)
		return "the proc root is another pid namespace's procfs";
	link[n] = '\0';
	if (atoi(link) != getpid())
		return "the proc root is another pid namespace's procfs";
	/*
	 * A container's pid namespace with its own procfs: self is ours, and
	 * NSpid shows one pid, the namespace's.  Its nsfs inode tells; where
	 * it cannot be looked at, NSpid catches a procfs of an outer one.
	 */
	if (fstatat(in->proc_fd, "self/ns/pid", &ns, 0) == 0 && ns.st_ino != PID_NS_FIRST_INO)
		return nested;
	fd = openat(in->proc_fd, "self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* the whole file: NSpid comes after Groups, which a process in many groups makes long */
	while (buf_reserve(&status, status.len + 4096) == 0 &&
	       (n = read(fd, status.data + status.len, status.cap - 1 - status.len)) > 0)
		status.len += (size_t)n;
	close(fd);
	if (!status.data)
		return NULL;
	status.data[status.len] = '\0';
	/* "NSpid:\t1234" in the first namespace; one more pid per nested one */
	nspid = strstr(status.data, "\nNSpid:");
	if (nspid) {
		const char *p = nspid + 7, *end = p + strcspn(p, "\n");
		unsigned long long pid;
		int pids = 0;

		for (;;) {
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (!parse_ull(&p, end, &pid))
				break;
			pids++;
		}
		if (pids > 1)
			reason = nested;
	}
	buf_free(&status);
	return reason;
}
