/*
 * vmon_log.h: libvmon's log stream, the record and replay of samples and
 * process events (vmon_log(5) is the format, vmon_log_open(3) the reader,
 * vmon_log_writer_open(3) the writer, vmon_log_replay(3) the replay).
 *
 * The writer appends records to a file descriptor: a header that names the
 * machine and carries the field tables of defs/ as this library has them,
 * then samples (system stores, every process with its stores, each process
 * delta-encoded against its previous sample), events, drop notices,
 * process-gone notices and a close marker.
 *
 * The reader follows pmclog(3): a parser over a file descriptor, or over
 * memory fed in chunks (VMON_LOG_FD_NONE), returning one record at a time
 * with a state of OK, EOF, ERROR or REQUIRE_DATA.  A sample comes back in
 * this library's store structs, whatever version of the field tables wrote
 * it, and vmon_log_replay() turns it into a vmon_t tree, so that a program
 * shows a replay through the code that shows live data.
 */
#ifndef _VMON_LOG_H
#define _VMON_LOG_H

#include <sys/types.h>
#include <stddef.h>
#include <time.h>

#include "vmon.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VMON_LOG_FD_NONE	(-1)	/* vmon_log_open(): the stream is in memory, given by vmon_log_feed() */

#define VMON_LOG_VERSION_MAJOR	1	/* a reader refuses logs of a later major version */
#define VMON_LOG_VERSION_MINOR	0	/* later minors only add what older readers skip */

/*
 * Events are the feed's vmon_event_t (vmon_feed_set_callback(3)): its
 * callback can hand each one to vmon_log_write_event() as it is, or
 * vmon_log_writer_follow_feed() writes every one the feed applies.
 */

/* --- the writer --- */

typedef struct _vmon_log_writer vmon_log_writer_t;

typedef struct _vmon_log_writer_stats_t {
	unsigned long long	bytes;		/* written to the fd, header included */
	unsigned long long	records;
	unsigned long long	samples;
	unsigned long long	keyframes;	/* samples written whole (vmon_log(5)) */
	unsigned long long	entries;	/* process and thread entries, over all samples */
	unsigned long long	sample_bytes;	/* bytes of sample records */
	unsigned long long	events;
} vmon_log_writer_stats_t;

vmon_log_writer_t *vmon_log_writer_open(int fd, const vmon_t *vmon);
int vmon_log_writer_set_keyframe_interval(vmon_log_writer_t *writer, unsigned samples);
int vmon_log_write_sample(vmon_log_writer_t *writer, const vmon_t *vmon, const struct timespec *when);
int vmon_log_write_event(vmon_log_writer_t *writer, const vmon_event_t *event);
/* every event vmon's feed delivers, and a drop notice of those it lost, written from now on; NULL: stop */
int vmon_log_writer_follow_feed(vmon_log_writer_t *writer, vmon_t *vmon);
int vmon_log_write_drop(vmon_log_writer_t *writer, unsigned long long lost);
int vmon_log_write_user(vmon_log_writer_t *writer, const void *data, size_t len);
int vmon_log_writer_get_stats(const vmon_log_writer_t *writer, vmon_log_writer_stats_t *stats);
int vmon_log_writer_close(vmon_log_writer_t *writer);

/* --- the reader --- */

typedef enum _vmon_log_state_t {
	VMON_LOG_OK,		/* a whole record was read into the caller's struct */
	VMON_LOG_EOF,		/* (files) the end of the file, after the last whole record */
	VMON_LOG_ERROR,		/* the stream is not a log this reader can read: vmon_log_error() says why */
	VMON_LOG_REQUIRE_DATA,	/* (memory, or an fd that would block) more bytes are needed */
} vmon_log_state_t;

typedef enum _vmon_log_type_t {
	VMON_LOG_HEADER = 1,	/* the first record: the machine and the field tables */
	VMON_LOG_SAMPLE,	/* the system and every process at one moment */
	VMON_LOG_EVENT,		/* a fork, exec or exit, as the event feed delivered it */
	VMON_LOG_DROP,		/* events were lost before they could be written */
	VMON_LOG_GONE,		/* a process found gone in the sample before */
	VMON_LOG_USER,		/* bytes a program wrote with vmon_log_write_user() */
	VMON_LOG_CLOSE,		/* the writer closed the log: the last record */
} vmon_log_type_t;

/* one field of a store as the log has it */
typedef struct _vmon_log_field_t {
	const char	*name;		/* as in defs/: "utime" */
	const char	*label;
	const char	*desc;
	vmon_type_t	type;
	int		sym;		/* this library's symbol of that name, -1 if it has none (the value is skipped) */
} vmon_log_field_t;

typedef struct _vmon_log_store_t {
	const char		*name;		/* "proc_stat" */
	int			id;		/* this library's store of that name, -1 if none */
	const vmon_log_field_t	*fields;
	int			fields_nr;
} vmon_log_store_t;

typedef struct _vmon_log_header_t {
	unsigned		version_major, version_minor;
	const char		*hostname;
	const char		*release;	/* uname -r */
	const char		*boot_id;	/* /proc/sys/kernel/random/boot_id */
	const char		*writer;	/* "libvmon 0.1.0" */
	long			ticks_per_sec;
	long			page_size;
	long			num_cpus;
	struct timespec		start;		/* CLOCK_REALTIME when the log was opened */
	vmon_flags_t		flags;		/* of the vmon_t that was recorded */
	vmon_sys_wants_t	sys_wants;	/* in this library's bits */
	vmon_proc_wants_t	proc_wants;
	const vmon_log_store_t	*sys_stores;
	int			sys_stores_nr;
	const vmon_log_store_t	*proc_stores;
	int			proc_stores_nr;
	int			fields_unknown;	/* fields of the log this library does not have: skipped */
	int			fields_missing;	/* fields of this library the log does not have: never present */
} vmon_log_header_t;

/* the flags of a vmon_log_proc_t */
#define VMON_LOG_PROC_THREAD	0x1	/* a thread of its parent */
#define VMON_LOG_PROC_NEW	0x2	/* is_new in that sample */
#define VMON_LOG_PROC_STALE	0x4	/* is_stale in that sample: gone, with its last data */

/* one process or thread of a sample */
typedef struct _vmon_log_proc_t {
	int			pid;		/* or tid */
	int			parent;		/* index of its tree parent in procs[], -1 at the top */
	unsigned		flags;		/* VMON_LOG_PROC_* */
	vmon_proc_wants_t	wants;		/* the stores recorded for it */
	vmon_proc_wants_t	activity;	/* those that changed since its previous sample */
	void			*stores[VMON_STORE_PROC_NR];	/* this library's structs; NULL when not recorded */
	int			errors[VMON_STORE_PROC_NR];
	unsigned long long	id;		/* the same for every sample of the same node */
} vmon_log_proc_t;

/* the flags of a vmon_log_sample_t */
#define VMON_LOG_SAMPLE_KEYFRAME 0x1	/* written whole: vmon_log_seek() can start here */

typedef struct _vmon_log_sample_t {
	unsigned long long	seq;		/* the writer's count: 1 for the first sample */
	struct timespec		time;		/* CLOCK_REALTIME of the sample */
	unsigned		flags;		/* VMON_LOG_SAMPLE_* */
	vmon_sys_wants_t	sys_wants;	/* the system stores recorded */
	vmon_sys_wants_t	sys_activity;	/* those that changed */
	void			*sys_stores[VMON_STORE_SYS_NR];
	int			sys_errors[VMON_STORE_SYS_NR];
	const vmon_log_proc_t	*procs;		/* the tree in pre-order, threads before children */
	int			procs_nr;
} vmon_log_sample_t;

typedef struct _vmon_log_gone_t {
	int			pid;
	unsigned long long	start;		/* its start time, clock ticks after boot; 0 unknown */
	int			exit_status;	/* as waitpid(2) reports it, -1 unknown */
} vmon_log_gone_t;

typedef struct _vmon_log_record_t {
	vmon_log_state_t	state;		/* the rest is valid only with VMON_LOG_OK */
	off_t			offset;		/* of the record in the stream */
	unsigned long long	serial;		/* 0 for the header, then +1 per record (those skipped too) */
	vmon_log_type_t		type;
	union {
		const vmon_log_header_t	*header;
		const vmon_log_sample_t	*sample;
		vmon_event_t	event;
		unsigned long long	lost;		/* VMON_LOG_DROP */
		vmon_log_gone_t		gone;
		struct {
			const void	*data;
			size_t		len;
		} user;
	} u;
	/* VMON_LOG_EVENT: 1 the feed handed it with the process's node, 0 without (not in the tree), -1 unknown */
	int			event_node;
} vmon_log_record_t;

typedef struct _vmon_log vmon_log_t;

vmon_log_t *vmon_log_open(int fd);
int vmon_log_read(vmon_log_t *log, vmon_log_record_t *rec);
int vmon_log_feed(vmon_log_t *log, const void *data, size_t len);
int vmon_log_seek(vmon_log_t *log, const vmon_log_record_t *rec);
const vmon_log_header_t *vmon_log_header(const vmon_log_t *log);
const char *vmon_log_error(const vmon_log_t *log);
void vmon_log_close(vmon_log_t *log);

/* --- replay: a vmon_t fed from samples instead of /proc --- */

int vmon_log_replay_init(vmon_t *vmon, const vmon_log_header_t *header, vmon_flags_t flags);
int vmon_log_replay(vmon_t *vmon, const vmon_log_sample_t *sample);
/* any record: a sample replayed, an event held for the next sample's feed callback, a drop counted lost */
int vmon_log_replay_record(vmon_t *vmon, const vmon_log_record_t *rec);

#ifdef __cplusplus
}
#endif

#endif
