/*
 * puppet.h: children the live tests spawn and drive, so that what libvmon
 * reports can be checked against what they were told to do.
 *
 * A puppet is a forked copy of the test that obeys commands on its own
 * AF_UNIX SOCK_SEQPACKET socket: fork another puppet (a child of its own),
 * start and end threads, exec, exit, reap, become a subreaper, rename itself.
 * Each puppet holds only its own socket, so when the test dies, for whatever
 * reason, every puppet reads EOF and exits; sleepers and exec'd puppets die
 * with their parent (PR_SET_PDEATHSIG).  puppets_cleanup() kills and reaps
 * whatever is left: call it from every test's teardown.
 */
#ifndef VMON_PUPPET_H
#define VMON_PUPPET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct puppet {
	pid_t	pid;
	int	sock;	/* -1 once it exec'd or exited */
} puppet_t;

/* a puppet child of the test */
void puppet_spawn(puppet_t *p);
/* a puppet child of p; with die_with_parent, SIGKILL when p dies */
void puppet_fork(puppet_t *p, puppet_t *child, bool die_with_parent);
/* a child of p that sleeps until killed, and dies with p */
pid_t puppet_sleeper(puppet_t *p);
/* p _exit()s with code; nobody reaps it yet */
void puppet_exit(puppet_t *p, int code);
/* p waits for its child pid; returns the wait status */
int puppet_reap(puppet_t *p, pid_t pid);
/* p starts a thread named name that waits for puppet_thread_end(); returns its tid */
pid_t puppet_thread(puppet_t *p, const char *name);
void puppet_thread_end(puppet_t *p, pid_t tid);
/*
 * p starts a thread that waits until a byte can be read from trigger_fd (the
 * test keeps the other end), writes bytes to /dev/null and exits: its
 * process's main thread does not run for it.  Returns its tid.
 */
pid_t puppet_io_thread(puppet_t *p, int trigger_fd, size_t bytes);
/* p execs argv (NULL-terminated), with extra_args 8-byte arguments "0000000", "0000001"... appended */
void puppet_exec(puppet_t *p, const char *const *argv, int extra_args);
void puppet_subreaper(puppet_t *p);
void puppet_name(puppet_t *p, const char *comm);
/* p drops to uid/gid, and makes itself dumpable again (its /proc files its own) */
void puppet_setuid(puppet_t *p, uid_t uid, gid_t gid);

/* kill every process any puppet call made, and reap the test's own children */
void puppets_cleanup(void);
/* note a pid for puppets_cleanup() that the test made some other way */
void puppets_track(pid_t pid);

#endif
