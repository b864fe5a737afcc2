/*
 * light_skel.c: the kernel's reason for refusing a light skeleton's load
 * (light_skel.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
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
