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

/*
 * fds 0, 1 and 2 that are not open, held on /dev/null while a skeleton
 * loads and attaches (held[] says which, -1 for none), and let go after:
 * the generated code takes an fd of 0 for none (it neither keeps nor closes
 * it), and a caller with its standard input closed would be given 0 for
 * the first map, program or link.
 */
void light_skel_hold_low_fds(int held[3]);
void light_skel_release_low_fds(int held[3]);	/* and sets them to -1 */

/* have the next load of ctx's skeleton keep the kernel's log; NULL without memory for it */
char *light_skel_log_on(struct bpf_loader_ctx *ctx);
/* what the verifier said it refused, into said ("" if the log does not say); frees the log */
void light_skel_reason(char *log, char *said, size_t said_size);
/* is err an errno the verifier refuses a program with (and its log says why)? */
static inline int light_skel_refused(int err)
{
	return err == EACCES || err == EINVAL;
}

#endif
