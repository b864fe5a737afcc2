/*
 * light_skel.c: the kernel's reason for refusing a light skeleton's load,
 * and the loaders' pages given back after one (light_skel.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/light_skel.h"

/*
 * The verifier's log of a program it refused says what it refused, then
 * its statistics ("processed N insns ...", and with more detail
 * "verification time", "stack depth"): the reason is the last line before
 * those.  A log that does not fit fails the load with ENOSPC instead of the
 * refusal's errno (since Linux 6.4 it keeps the log's end, before then its
 * beginning): that is why the log is asked for only on the try that says
 * why.  The loader hands the same buffer to each program it loads, so a
 * failure that is not the verifier's (a map, an attach point) leaves the
 * last loaded program's log, which ends in statistics alone: no reason.
 */
#define LIGHT_SKEL_LOG_BYTES	(64 * 1024)

/*
 * The loaders' data and instructions (about 140 KB for the two skeletons)
 * are read by one bpf(2) call in each load, which copies them into the
 * kernel, and never again until the next load.  As constants in .rodata
 * they stayed resident in every client: a private read-only mapping of
 * libvmon.so, whose pages the kernel drops only under memory pressure.
 * MADV_DONTNEED unmaps them at once; read again (the iterator loads its
 * program again when its held table is resized) they fault in from the
 * file, the same bytes, as they did the first time.
 *
 * Giving back the blobs' pages among other constants was not enough: a
 * fault maps the file's pages already in the page cache around it, in a
 * window of 64 KiB aligned on 64 KiB (fault-around), so reading any
 * constant near them mapped most of them back.  That is why they have a
 * section of their own, vmon_bpf_loader (bpf/lskel-sections.awk), in which
 * each skeleton's blobs are one struct aligned to 64 KiB and padded to a
 * multiple of it: the section is whole windows that hold nothing else.
 * (The linker gives the section's segment that alignment, and ld.so maps
 * the library at an address aligned to it.)  The section's bounds are the
 * linker's __start_ and __stop_ symbols; weak, for a program of this file
 * without the skeletons (the unit test).
 */
extern const char __start_vmon_bpf_loader[] __attribute__((weak));
extern const char __stop_vmon_bpf_loader[] __attribute__((weak));

void light_skel_drop_loaders(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)__start_vmon_bpf_loader + page - 1) & ~(page - 1);
	uintptr_t stop = (uintptr_t)__stop_vmon_bpf_loader & ~(page - 1);
	int saved = errno;	/* the load's own errno, which the skeleton's caller reads */

	if (__start_vmon_bpf_loader && stop > start)
		madvise((void *)start, stop - start, MADV_DONTNEED);
	errno = saved;
}

int light_skel_iter_link_task(int prog_fd, int tid)
{
	union bpf_iter_link_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	info.task.tid = (__u32)tid;
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (__u32)prog_fd;
	attr.link_create.attach_type = BPF_TRACE_ITER;
	attr.link_create.iter_info = (__u64)(unsigned long)&info;
	attr.link_create.iter_info_len = sizeof(info);
	return skel_sys_bpf(BPF_LINK_CREATE, &attr, sizeof(attr));
}

int light_skel_iter_create(int link_fd)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.iter_create.link_fd = (__u32)link_fd;
	return skel_sys_bpf(BPF_ITER_CREATE, &attr, sizeof(attr));
}

void light_skel_hold_low_fds(int held[3])
{
	for (int fd = 0; fd < 3; fd++) {
		held[fd] = -1;
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest fd not open is this one: those below it are */
		held[fd] = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (held[fd] != fd) {
			if (held[fd] >= 0)
				close(held[fd]);
			held[fd] = -1;
			return;		/* no /dev/null: as it comes */
		}
	}
}

void light_skel_release_low_fds(int held[3])
{
	for (int fd = 0; fd < 3; fd++) {
		if (held[fd] >= 0)
			close(held[fd]);
		held[fd] = -1;
	}
}

void light_skel_log_on(struct bpf_loader_ctx *ctx, char **log)
{
	*log = calloc(1, LIGHT_SKEL_LOG_BYTES);
	if (!*log)
		return;
	ctx->log_level = 1;
	ctx->log_size = LIGHT_SKEL_LOG_BYTES;
	ctx->log_buf = (__u64)(unsigned long)*log;
}

int light_skel_load(light_skel_try_t *try, void *arg, char *said, size_t said_size)
{
	char *log = NULL;
	int err, again;

	if (said_size)
		said[0] = '\0';
	err = try(arg, NULL);
	if (!err || err == EPERM)
		return err;
	again = try(arg, &log);
	light_skel_reason(log, said, said_size);
	if (!again) {
		if (said_size)
			said[0] = '\0';	/* loaded: nothing was refused */
		return 0;
	}
	if ((again != err || !light_skel_refused(err)) && said_size)
		said[0] = '\0';	/* not the verifier's refusal, or the log failed the load (ENOSPC) */
	return err;
}

static bool is_statistics(const char *line)
{
	return !strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17) ||
	       !strncmp(line, "stack depth", 11);
}

void light_skel_reason(char *log, char *said, size_t said_size)
{
	bool stats = false;
	char *line;
	size_t len;

	said[0] = '\0';
	if (!log)
		return;
	log[LIGHT_SKEL_LOG_BYTES - 1] = '\0';
	len = strlen(log);
	/* from the end: the statistics, then the line before them */
	for (;;) {
		while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
			log[--len] = '\0';
		if (!len)
			break;
		line = strrchr(log, '\n');
		line = line ? line + 1 : log;
		if (is_statistics(line)) {
			stats = true;
			len = (size_t)(line - log);
			continue;
		}
		if (stats && said_size) {
			strncpy(said, line, said_size - 1);
			said[said_size - 1] = '\0';
		}
		break;
	}
	free(log);
}
