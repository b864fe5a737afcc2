/*
 * feed.h: the records the BPF program (feed.bpf.c) writes into its ring
 * buffer and libvmon/feed/feed_bpf.c reads: the one definition both sides share.
 *
 * Built twice: by clang -target bpf after vmlinux.h (which defines the
 * kernel's __u32 and friends), and by the library's compiler after
 * <linux/types.h>.
 */
#ifndef VMON_BPF_FEED_H
#define VMON_BPF_FEED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FEED_COMM_LEN		16
#define FEED_FILENAME_MAX	256	/* a power of two: an exec's path is read up to FEED_FILENAME_MAX - 1 bytes, NUL included */
/*
 * The size of the template of the feed's rings (feed.bpf.c's rings[]): a
 * kernel that wants every ring put in its slot to be the template's size
 * (before user space can put a ring of another) has a ring of this size.
 */
#define FEED_RING_TEMPLATE_BYTES	(1u << 20)
#define FEED_ARGS_MAX		4096	/* a power of two: up to FEED_ARGS_MAX - 1 bytes of arguments are carried */

enum feed_rec_kind {
	FEED_REC_FORK = 1,
	FEED_REC_EXEC,
	FEED_REC_EXIT,
};

struct feed_rec {
	__u32	kind;		/* enum feed_rec_kind */
	__u32	pid;		/* the process: tgid */
	__u32	tid;		/* the thread; exec: its id before the exec */
	__u32	ppid;		/* the real parent's tgid, as /proc/PID/stat's ppid */
	__u32	uid;		/* effective */
	__u32	pad;
	__u64	time_ns;	/* CLOCK_BOOTTIME */
	__u64	start_ns;	/* the leader's start_boottime: /proc's start time, in ns */
	char	comm[FEED_COMM_LEN];
	union {
		struct {
			__s32	status;		/* as waitpid(2) reports it */
			__u32	pad;
			__u64	utime_ns;
			__u64	stime_ns;
			__u64	maxrss_pages;
			__u64	minflt;
			__u64	majflt;
		} exit;
		struct {
			__u32	filename_len;	/* bytes at data[0], its NUL excluded */
			__u32	args_len;	/* bytes right after the filename's NUL */
			__u32	truncated;	/* the arguments were longer */
			__u32	pad;
		} exec;
	};
};

/*
 * An exec record: the header, the path and its NUL, the arguments (each
 * NUL-terminated).  Only as many bytes as they take are sent; the size
 * bounds the BPF verifier needs come from the two powers of two above.
 */
struct feed_exec_rec {
	struct feed_rec	rec;
	char		data[FEED_FILENAME_MAX + FEED_ARGS_MAX];
};

#endif
