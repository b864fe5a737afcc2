/*
 * light_skel.h: what the event feed and the task iterator share in loading
 * their BPF programs, which are light skeletons (bpf/local.mk): the
 * kernel's reason when it refuses one.
 *
 * A load is first tried without the verifier's log (a log costs the
 * verifier time on every load that succeeds); after one failed, the caller
 * tries once more with light_skel_log_on() and light_skel_reason() gives
 * the log's last line, where the verifier says what it refused.
 */
#ifndef VMON_LIGHT_SKEL_H
#define VMON_LIGHT_SKEL_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <bpf/skel_internal.h>	/* it wants errno.h and string.h first */

/* have the next load of ctx's skeleton keep the kernel's log; NULL without memory for it */
char *light_skel_log_on(struct bpf_loader_ctx *ctx);
/* the log's last line that says something, into said; frees the log */
void light_skel_reason(char *log, char *said, size_t said_size);

#endif
