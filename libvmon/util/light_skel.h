/*
 * light_skel.h: what the event feed and the task iterator share in loading
 * their BPF programs, which are light skeletons (bpf/local.mk): the
 * kernel's reason when it refuses one, the one bpf(2) call their use
 * needs beyond the generated code (with these, no libbpf at run time), and
 * the loaders' memory given back once they have run.
 *
 * A load is first tried without the verifier's log (a log costs the
 * verifier time on every load that succeeds); after one failed, it is
 * tried once more with the log, whose line before the statistics says what
 * the verifier refused (light_skel_load()).
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

/*
 * One try at a skeleton's load (and attach, if the caller's try does that
 * too): it opens the skeleton, sets what the load depends on, calls
 * light_skel_log_on() on its loader context when log is not NULL, and
 * loads.  0 or an errno; on failure it leaves nothing loaded.
 */
typedef int light_skel_try_t(void *arg, char **log);

/*
 * A load through try: once without the log and, if that fails for another
 * reason than EPERM (no privilege: the log would not say more), once with
 * it.  0, or the first try's errno with the verifier's reason in said ("" if
 * the refusal was not the verifier's, or the log itself failed the load).
 */
int light_skel_load(light_skel_try_t *try, void *arg, char *said, size_t said_size);

/* have the next load of ctx's skeleton keep the kernel's log into *log (NULL without memory for it) */
void light_skel_log_on(struct bpf_loader_ctx *ctx, char **log);
/* what the verifier said it refused, into said ("" if the log does not say); frees the log */
void light_skel_reason(char *log, char *said, size_t said_size);
/* a new read of the iterator attached as link_fd (bpf(2)'s BPF_ITER_CREATE): its fd, or -1 */
int light_skel_iter_create(int link_fd);

/* a link of the task iterator program prog_fd for task tid alone (Linux 6.1): its fd, or -1 */
int light_skel_iter_link_task(int prog_fd, int tid);

/*
 * The skeletons' loader blobs (section vmon_bpf_loader) given back to the
 * kernel: each skeleton's load calls it once its loader has run
 * (bpf/lskel-sections.awk).
 */
void light_skel_drop_loaders(void);

/* is err an errno the verifier refuses a program with (and its log says why)? */
static inline int light_skel_refused(int err)
{
	return err == EACCES || err == EINVAL;
}

#endif
