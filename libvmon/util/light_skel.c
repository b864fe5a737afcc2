/*
 * light_skel.c: the kernel's reason for refusing a light skeleton's load
 * (light_skel.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util/light_skel.h"

/*
 * The verifier's log of a program it refused ends with what it refused;
 * since Linux 6.4 a log that does not fit keeps its end, before then its
 * beginning (and the load fails with ENOSPC, not the refusal's errno: that
 * is why the log is asked for only on the try that says why).
 */
#define LIGHT_SKEL_LOG_BYTES	(64 * 1024)

char *light_skel_log_on(struct bpf_loader_ctx *ctx)
{
	char *log = calloc(1, LIGHT_SKEL_LOG_BYTES);

	if (!log)
		return NULL;
	ctx->log_level = 1;
	ctx->log_size = LIGHT_SKEL_LOG_BYTES;
	ctx->log_buf = (__u64)(unsigned long)log;
	return log;
}

void light_skel_reason(char *log, char *said, size_t said_size)
{
	size_t len;
	char *line;

	said[0] = '\0';
	if (!log)
		return;
	log[LIGHT_SKEL_LOG_BYTES - 1] = '\0';
	len = strlen(log);
	/* the last line with something in it */
	while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
		log[--len] = '\0';
	line = strrchr(log, '\n');
	line = line ? line + 1 : log;
	if (said_size) {
		strncpy(said, line, said_size - 1);
		said[said_size - 1] = '\0';
	}
	free(log);
}
