/*
 * vmon.h: libvmon, a sampler of Linux process and system state from /proc
 * into a process tree.
 *
 * The types, names and call pattern are those of the libvmon of the vwm
 * window manager, so that a program written against that header compiles
 * unchanged; vmon(3) describes the model and lists where this library
 * deliberately differs.  Additions are marked "libvmon 1:" below.
 *
 * Every datum is declared once, in a table under defs/: the store structs,
 * the VMON_<STORE>_<FIELD> symbols that index their `changed` bitmaps and
 * the field descriptions (vmon_sys_store_descs[], vmon_proc_store_descs[])
 * all come from those rows.  See vmon_fields(7).
 */
#ifndef _VMON_H
#define _VMON_H

#include <sys/types.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>	/* vmon_dump_procs() */
#include <string.h>

#include "bitmap.h"
#include "list.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VMON_HTAB_SIZE		1024	/* buckets of vmon->htab[] */
#define VMON_ARRAY_GROWBY	5	/* least growth of vmon->array[] (it grows geometrically) */

typedef enum _vmon_flags_t {
	VMON_FLAG_NONE		= 0,
	VMON_FLAG_PROC_ARRAY	= 1L,		/* keep every node in the flat vmon->array[] too */
	VMON_FLAG_PROC_ALL	= 1L << 1,	/* monitor every process of the system, as one tree */
	VMON_FLAG_2PASS		= 1L << 2,	/* sample everything first, then run every callback */
	/*
	 * libvmon 1: PROC_STAT's wchan not read, and absent: it costs a walk of
	 * the kernel stack (or a /proc read) for every task that ran.  May be
	 * set and cleared in vmon->flags between samples (vmon(3)).
	 */
	VMON_FLAG_NO_WCHAN	= 1L << 3,
} vmon_flags_t;

/* system-wide wants: store indices into vmon->stores[], and bits of the sys_wants mask */
typedef enum _vmon_sys_store_t {
#define vmon_want(_sym, _name, _func) VMON_STORE_ ## _sym,
#include "defs/sys_wants.def"
	VMON_STORE_SYS_NR
} vmon_sys_store_t;

typedef enum _vmon_sys_wants_t {
	VMON_WANT_SYS_NONE = 0,
#define vmon_want(_sym, _name, _func) VMON_WANT_ ## _sym = 1L << VMON_STORE_ ## _sym,
#include "defs/sys_wants.def"
} vmon_sys_wants_t;

/* per-process wants: store indices into proc->stores[], and bits of the proc_wants masks */
typedef enum _vmon_proc_store_t {
#define vmon_want(_sym, _name, _func) VMON_STORE_ ## _sym,
#include "defs/proc_wants.def"
	VMON_STORE_PROC_NR
} vmon_proc_store_t;

typedef enum _vmon_proc_wants_t {
	VMON_WANT_PROC_INHERIT = 0,	/* vmon_proc_monitor(): use vmon->proc_wants */
#define vmon_want(_sym, _name, _func) VMON_WANT_ ## _sym = 1L << VMON_STORE_ ## _sym,
#include "defs/proc_wants.def"
} vmon_proc_wants_t;

/*
 * A string as read from /proc.  array is always NUL-terminated; len counts
 * the bytes the kernel gave, so for cmdline it includes every argument's
 * NUL, and for comm it includes the NUL that replaces the kernel's newline
 * (comm.len - 1 is the name's length, as libvmon clients expect).  The
 * library's strings are its own, to be read only: alloc_len is what it
 * allocated, or 0 for one shared between processes (VMON_FIELD_SHARED).
 */
typedef struct _vmon_char_array_t {
	char	*array;
	size_t	len;
	size_t	alloc_len;
} vmon_char_array_t;

typedef struct _vmon_str_array_t {
	char	**array;
	size_t	len;
	size_t	alloc_len;
} vmon_str_array_t;

/* libvmon 1: the description of each datum, generated from its defs/ row */
typedef enum _vmon_type_t {
	VMON_TYPE_char,
	VMON_TYPE_int,
	VMON_TYPE_uint,
	VMON_TYPE_long,
	VMON_TYPE_ulong,
	VMON_TYPE_longlong,
	VMON_TYPE_ulonglong,
	VMON_TYPE_char_array,	/* vmon_char_array_t */
	VMON_TYPE_str_array,	/* char **, argc entries (the field before it) */
	VMON_TYPE_cstr,		/* const char *, a constant string (a name) the library owns */
} vmon_type_t;

/* what a number measures, for programs that convert or export it (the type column of its defs/ row) */
typedef enum _vmon_kind_t {
	VMON_KIND_gauge,	/* a level that goes up and down */
	VMON_KIND_counter,	/* only grows while the process (or the system) lives */
	VMON_KIND_id,		/* names something or is a code (a pid, a uid, a policy): no quantity */
	VMON_KIND_address,	/* a memory address */
	VMON_KIND_bitmap,	/* a set of flag bits */
	VMON_KIND_text,		/* not a number: char, char_array, str_array, cstr */
} vmon_kind_t;

typedef enum _vmon_unit_t {
	VMON_UNIT_none,		/* a count, or a number without a unit */
	VMON_UNIT_ticks,	/* clock ticks, sysconf(_SC_CLK_TCK) a second */
	VMON_UNIT_pages,	/* pages of sysconf(_SC_PAGESIZE) bytes */
	VMON_UNIT_kb,		/* 1024 bytes (/proc's "kB") */
	VMON_UNIT_bytes,
	VMON_UNIT_seconds,
	VMON_UNIT_hundredths,	/* fixed point: 27 is 0.27 */
} vmon_unit_t;

typedef enum _vmon_source_t {
	VMON_SOURCE_POS,	/* field n of a one-line file */
	VMON_SOURCE_KEY,	/* value n of the line starting with key */
	VMON_SOURCE_CPU,	/* column n of the cpu lines of /proc/stat */
	VMON_SOURCE_FILE,	/* a whole file */
	VMON_SOURCE_LINK,	/* a symbolic link's target */
	VMON_SOURCE_DERIVED,	/* computed; key says from what */
} vmon_source_t;

typedef struct _vmon_field_t {
	const char	*name;		/* the struct member: "utime" */
	const char	*label;		/* a short column header: "UTIME" */
	const char	*desc;		/* one line, with the unit: "user-mode CPU time (clock ticks)" */
	vmon_type_t	type;
	size_t		offset;		/* of the member in the store struct */
	size_t		size;		/* of the member */
	int		sym;		/* its symbol: the bit in changed[] and present[] */
	const char	*symbol;	/* the symbol's name: "VMON_PROC_STAT_UTIME" */
	vmon_source_t	source;
	const char	*file;		/* "stat", "status", "meminfo"...; NULL for DERIVED */
	const char	*key;		/* KEY: the key; CPU: "cpu"; DERIVED: what from; else NULL */
	int		n;		/* POS, KEY, CPU: the field number */
	vmon_kind_t	kind;
	vmon_unit_t	unit;
	unsigned	flags;		/* VMON_FIELD_* */
} vmon_field_t;

/*
 * vmon_field_t.flags: a SHARED text is one copy for every process with the
 * same bytes (the threads and workers of one program): read-only, as every
 * string the library gives is, and its alloc_len is 0; a SHARED vector
 * (argv) is that text's own, built once.
 */
#define VMON_FIELD_SHARED	1u

typedef struct _vmon_store_desc_t {
	const char		*name;		/* the want's name: "proc_stat" */
	size_t			size;		/* sizeof the store struct */
	const vmon_field_t	*fields;	/* indexed by the store's symbols */
	int			fields_nr;	/* 0 for stores without data of their own */
	size_t			present_offset;	/* of the store's present[] bitmap; 0: it has none */
} vmon_store_desc_t;

/* system stat (/proc/stat) */
typedef enum _vmon_sys_stat_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/sys_stat.def"
	VMON_SYS_STAT_NR
} vmon_sys_stat_sym_t;

/* libvmon 1: one "cpuN" line of /proc/stat; changed[] uses the VMON_SYS_STAT_CPU_* symbols */
typedef struct _vmon_sys_cpu_t {
	char		changed[BITNSLOTS(VMON_SYS_STAT_NR)];
	unsigned	online:1;	/* its line was in the last sample (offline CPUs have none) */
#define VMON_DECLARE_CPU_MEMBERS
#include "defs/sys_stat.def"
} vmon_sys_cpu_t;

typedef struct _vmon_sys_stat_t {
	int		stat_fd;
	char		changed[BITNSLOTS(VMON_SYS_STAT_NR)];	/* fields that changed in the last sample */
	char		present[BITNSLOTS(VMON_SYS_STAT_NR)];	/* libvmon 1: fields the kernel printed */
#define VMON_DECLARE_MEMBERS
#include "defs/sys_stat.def"
	vmon_sys_cpu_t	*cpus;		/* libvmon 1: cpus[N] is the line "cpuN" */
	int		cpus_nr;	/* 1 + the highest N seen */
} vmon_sys_stat_t;

/* system memory (/proc/meminfo) */
typedef enum _vmon_sys_vm_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/sys_vm.def"
	VMON_SYS_VM_NR,
	/* the original libvmon's name of DirectMap2M's symbol (its meminfo said DirectMap4M) */
	VMON_SYS_VM_DIRECTMAP_4M_KB = VMON_SYS_VM_DIRECTMAP_2M_KB
} vmon_sys_vm_sym_t;

typedef struct _vmon_sys_vm_t {
	int	meminfo_fd;
	char	changed[BITNSLOTS(VMON_SYS_VM_NR)];
	char	present[BITNSLOTS(VMON_SYS_VM_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/sys_vm.def"
	/*
	 * The original libvmon's spelling of committed_as_kb, for its clients:
	 * a copy the library keeps equal to it (sys_vm_names_of_old()), not a
	 * field of the table (its changed and present bits are
	 * committed_as_kb's).
	 */
	unsigned long	commited_as_kb;
} vmon_sys_vm_t;

/* libvmon 1: system load (/proc/loadavg) */
typedef enum _vmon_sys_loadavg_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/sys_loadavg.def"
	VMON_SYS_LOADAVG_NR
} vmon_sys_loadavg_sym_t;

typedef struct _vmon_sys_loadavg_t {
	int	loadavg_fd;
	char	changed[BITNSLOTS(VMON_SYS_LOADAVG_NR)];
	char	present[BITNSLOTS(VMON_SYS_LOADAVG_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/sys_loadavg.def"
} vmon_sys_loadavg_t;

/* libvmon 1: the socket tables of /proc/net; each socket's row is on its fobject */
typedef enum _vmon_sys_sockets_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/sys_sockets.def"
	VMON_SYS_SOCKETS_NR
} vmon_sys_sockets_sym_t;

typedef struct _vmon_sys_sockets_t {
	int	unix_fd, tcp_fd, tcp6_fd, udp_fd, udp6_fd;	/* /proc/net files, held open */
	char	changed[BITNSLOTS(VMON_SYS_SOCKETS_NR)];
	char	present[BITNSLOTS(VMON_SYS_SOCKETS_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/sys_sockets.def"
} vmon_sys_sockets_t;

/* per-process stat: sampled for every process, whatever its wants */
typedef enum _vmon_proc_stat_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_stat.def"
	VMON_PROC_STAT_NR
} vmon_proc_stat_sym_t;

typedef struct _vmon_proc_stat_t {
	int	cmdline_fd, comm_fd, wchan_fd, stat_fd;	/* owned by the library; -1 when not held open
							 * (cmdline_fd and comm_fd always: vmon(3)) */
	char	changed[BITNSLOTS(VMON_PROC_STAT_NR)];
	char	present[BITNSLOTS(VMON_PROC_STAT_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_stat.def"
} vmon_proc_stat_t;

/* per-process memory */
typedef enum _vmon_proc_vm_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_vm.def"
	VMON_PROC_VM_NR
} vmon_proc_vm_sym_t;

typedef struct _vmon_proc_vm_t {
	int	statm_fd;
	char	changed[BITNSLOTS(VMON_PROC_VM_NR)];
	char	present[BITNSLOTS(VMON_PROC_VM_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_vm.def"
} vmon_proc_vm_t;

/* per-process I/O */
typedef enum _vmon_proc_io_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_io.def"
	VMON_PROC_IO_NR
} vmon_proc_io_sym_t;

typedef struct _vmon_proc_io_t {
	int	io_fd;
	char	changed[BITNSLOTS(VMON_PROC_IO_NR)];
	char	present[BITNSLOTS(VMON_PROC_IO_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_io.def"
} vmon_proc_io_t;

/* libvmon 1: environment and directories, for the processes that want them */
typedef enum _vmon_proc_env_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_env.def"
	VMON_PROC_ENV_NR
} vmon_proc_env_sym_t;

typedef struct _vmon_proc_env_t {
	char	changed[BITNSLOTS(VMON_PROC_ENV_NR)];
	char	present[BITNSLOTS(VMON_PROC_ENV_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_env.def"
} vmon_proc_env_t;

/* libvmon 1: scheduling (context switches, affinity, I/O priority) and OOM score */
typedef enum _vmon_proc_sched_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_sched.def"
	VMON_PROC_SCHED_NR
} vmon_proc_sched_sym_t;

typedef struct _vmon_proc_sched_t {
	char	changed[BITNSLOTS(VMON_PROC_SCHED_NR)];
	char	present[BITNSLOTS(VMON_PROC_SCHED_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_sched.def"
} vmon_proc_sched_t;

/* libvmon 1: smaps_rollup (PSS), costly: for the few processes that want it */
typedef enum _vmon_proc_rollup_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_rollup.def"
	VMON_PROC_ROLLUP_NR
} vmon_proc_rollup_sym_t;

typedef struct _vmon_proc_rollup_t {
	char	changed[BITNSLOTS(VMON_PROC_ROLLUP_NR)];
	char	present[BITNSLOTS(VMON_PROC_ROLLUP_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_rollup.def"
} vmon_proc_rollup_t;

/*
 * libvmon 1: the stat line's fields the original's PROC_STAT skipped (layout
 * addresses, signal masks, exit signal, real-time priority and policy)
 */
typedef enum _vmon_proc_stat_extra_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_stat_extra.def"
	VMON_PROC_STAT_EXTRA_NR
} vmon_proc_stat_extra_sym_t;

typedef struct _vmon_proc_stat_extra_t {
	char	changed[BITNSLOTS(VMON_PROC_STAT_EXTRA_NR)];
	char	present[BITNSLOTS(VMON_PROC_STAT_EXTRA_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_stat_extra.def"
} vmon_proc_stat_extra_t;

/* libvmon 1: the memory lines of /proc/PID/status (PROC_VM is statm's, as the original's) */
typedef enum _vmon_proc_vm_status_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_vm_status.def"
	VMON_PROC_VM_STATUS_NR
} vmon_proc_vm_status_sym_t;

typedef struct _vmon_proc_vm_status_t {
	char	changed[BITNSLOTS(VMON_PROC_VM_STATUS_NR)];
	char	present[BITNSLOTS(VMON_PROC_VM_STATUS_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/proc_vm_status.def"
} vmon_proc_vm_status_t;

/* the follow-children want's context */
typedef struct _vmon_proc_follow_children_t {
	int	children_fd;	/* /proc/PID/task/PID/children, -1 when not held open */
} vmon_proc_follow_children_t;

/* the follow-threads want's context */
typedef struct _vmon_proc_follow_threads_t {
	DIR	*task_dir;	/* /proc/PID/task, NULL when not held open */
} vmon_proc_follow_threads_t;

/*
 * Open files (the PROC_FILES want; vmon_proc_files(3)).  proc->stores[
 * VMON_STORE_PROC_FILES] is the process's vmon_proc_files_t, shared by its
 * threads; its fds list holds one vmon_proc_fd_t per open descriptor, in
 * fd order.  Each fd points at the vmon_fobject_t of the file it refers to:
 * one object per open file (device and inode), on vmon->fobjects, linking
 * every fd of every sampled process that refers to it on its ref_fds.
 */
typedef enum _vmon_proc_files_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/proc_files.def"
	VMON_PROC_FILES_NR
} vmon_proc_files_sym_t;

/* the kinds of file, from defs/fobject_types.def; the first four are the original header's */
typedef enum _vmon_fobject_type_t {
#define vmon_fobject_type(_sym, _name, _class, _match, _desc) VMON_FOBJECT_TYPE_ ## _sym,
#include "defs/fobject_types.def"
	VMON_FOBJECT_TYPE_NR
} vmon_fobject_type_t;

/* libvmon 1: vmon_fobject_types[type] describes each type */
typedef struct _vmon_fobject_type_desc_t {
	const char		*name;		/* "pipe", "tcp", "eventfd"...: an fd's TYPE */
	vmon_fobject_type_t	type_class;	/* UNRECOGNIZED, PIPE, SOCKET, ANON, or the type itself */
	const char		*desc;		/* one line */
} vmon_fobject_type_desc_t;

/* libvmon 1: a socket's row in /proc/net (the SYS_SOCKETS want; defs/fobject_socket.def) */
typedef enum _vmon_fobject_socket_sym_t {
#define VMON_ENUM_SYMBOLS
#include "defs/fobject_socket.def"
	VMON_FOBJECT_SOCKET_NR
} vmon_fobject_socket_sym_t;

typedef struct _vmon_fobject_socket_t {
	char	changed[BITNSLOTS(VMON_FOBJECT_SOCKET_NR)];	/* fields that changed in the last sample */
	char	present[BITNSLOTS(VMON_FOBJECT_SOCKET_NR)];
#define VMON_DECLARE_MEMBERS
#include "defs/fobject_socket.def"
} vmon_fobject_socket_t;

typedef struct _vmon_fobject_t {
	list_head_t		bucket;		/* node in vmon->fobjects */
	uint64_t		inum;		/* inode number */
	list_head_t		ref_fds;	/* the vmon_proc_fd_t's that have this object open */
	int			refcnt;		/* references: the fds on ref_fds, and any other holder */
	vmon_fobject_type_t	type;
	void			*foo;		/* the caller's, for fobject_ctor_cb/fobject_dtor_cb */
	/* libvmon 1 */
	uint64_t		dev;		/* st_dev of the inode, 0 if unknown (pipes and sockets need none) */
	int			ref_fds_nr;	/* fds on ref_fds */
	vmon_fobject_socket_t	*socket;	/* SYS_SOCKETS: its /proc/net row, else NULL */
} vmon_fobject_t;

typedef struct _vmon_proc_fd_t {
	list_head_t		fds;		/* node in the process's vmon_proc_files_t.fds */
	int			generation;	/* the sample that last saw this fd */
	struct _vmon_proc_t	*process;	/* the process holding it */
	list_head_t		ref_fds;	/* node in object->ref_fds */
	vmon_fobject_t		*object;	/* the file it refers to */
#define VMON_DECLARE_MEMBERS
#include "defs/proc_files.def"
	/* libvmon 1 */
	char			changed[BITNSLOTS(VMON_PROC_FILES_NR)];	/* fields that changed in the last sample */
	char			present[BITNSLOTS(VMON_PROC_FILES_NR)];	/* fields known */
	unsigned		is_new:1;	/* opened since the sample before (exactly one sample) */
	unsigned		is_stale:1;	/* closed since (exactly one sample, then freed) */
} vmon_proc_fd_t;

typedef struct _vmon_proc_files_t {
	int		refcnt;		/* threads share their process's table */
	DIR		*fd_dir;	/* /proc/PID/fd, NULL when not held open */
	list_head_t	fds;		/* the vmon_proc_fd_t's, in fd order (closed ones for one sample) */
	/* libvmon 1 */
	int		fds_nr;		/* open fds (the stale are not counted) */
	unsigned	fds_changed:1;	/* an fd was opened or closed in the last sample */
} vmon_proc_files_t;

struct _vmon_t;
struct _vmon_proc_t;

/* a per-process sample callback, as registered with vmon_proc_monitor() */
typedef struct _vmon_proc_callback_t {
	void		(*func)(struct _vmon_t *, void *, struct _vmon_proc_t *, void *);
	void		*arg;
	list_head_t	callbacks;
} vmon_proc_callback_t;

typedef struct _vmon_proc_t {
	list_head_t		bucket;		/* node in vmon->htab[] (processes only) */
	list_head_t		children;	/* head of this process's child processes */
	list_head_t		siblings;	/* node in the parent's children, or in vmon->processes */
	list_head_t		threads;	/* a process: head of its threads; a thread: node in them */
	struct _vmon_proc_t	*parent;	/* parent process (a thread's: its process); NULL at the top */
	int			array_hint_pos;	/* index in vmon->array[] (VMON_FLAG_PROC_ARRAY) */
	int			pid;		/* process id, or thread id for a thread */
	int			generation;	/* vmon->generation when last sampled */
	int			refcnt;		/* references: monitors plus the tree's own */
	vmon_proc_wants_t	wants;		/* what is sampled at this node */
	vmon_proc_wants_t	activity;	/* wants whose store changed in the last sample */
	void			*stores[VMON_STORE_PROC_NR];	/* the per-want stores, NULL when not wanted */
	list_head_t		sample_callbacks;	/* vmon_proc_callback_t's, run after sampling at and below */
	void			*foo;		/* the caller's, for proc_ctor_cb/proc_dtor_cb */
	unsigned		children_changed:1;	/* a child became new or stale in the last sample */
	unsigned		threads_changed:1;	/* a thread became new or stale in the last sample */
	unsigned		is_new:1;	/* first seen in the last sample (exactly one sample) */
	unsigned		is_stale:1;	/* gone (exactly one sample, never its is_new one; then freed) */
	unsigned		is_thread:1;	/* a thread of parent */
	unsigned		is_threaded:1;	/* has, or has had, threads */
	/* libvmon 1 (its bit in the word of the original's: 8 bytes a process) */
	unsigned		has_exit_status:1;	/* the event feed saw it exit and said how (vmon_feed(7)) */
	/*
	 * errno of the last failed sample of each store, else 0: a byte each
	 * (the errnos Linux gives user space are all below 256; right after
	 * the bitfields, 40 bytes a process less than ints), EOVERFLOW
	 * standing for any other (a kernel-internal code that leaked)
	 */
	unsigned char		errors[VMON_STORE_PROC_NR];
	int			exit_status;	/* how it ended, as waitpid(2) reports it, when has_exit_status */
} vmon_proc_t;

typedef struct _vmon_t {
	DIR		*proc_dir;		/* the /proc root, opened by vmon_init() */

	/* VMON_FLAG_PROC_ARRAY: every node, processes and threads, in no particular order */
	vmon_proc_t	**array;
	int		array_allocated_nr;	/* slots in array[] */
	int		array_active_nr;	/* nodes in array[] (stale ones included); the rest are NULL */
	int		array_hint_free;	/* a slot that may be free */

	list_head_t	htab[VMON_HTAB_SIZE];	/* processes by pid (vmon(3): lookups use a resizing index) */
	list_head_t	processes;		/* the top of the tree */
	list_head_t	orphans;		/* always empty: each pass places every process (kept for the original's clients) */
	unsigned	processes_changed:1;	/* the top of the tree changed in the last sample */

	list_head_t	fobjects;		/* open file objects, by their bucket (PROC_FILES, SYS_SOCKETS: vmon_fobject(3)) */
	int		fobjects_nr;

	vmon_flags_t		flags;
	vmon_sys_wants_t	sys_wants;
	vmon_proc_wants_t	proc_wants;	/* what VMON_WANT_PROC_INHERIT means */

	long		ticks_per_sec;		/* sysconf(_SC_CLK_TCK) */
	long		num_cpus;		/* sysconf(_SC_NPROCESSORS_ONLN) */

	/* the samplers behind each want */
	int		(*sys_funcs[VMON_STORE_SYS_NR])(struct _vmon_t *, void **);
	int		(*proc_funcs[VMON_STORE_PROC_NR])(struct _vmon_t *, vmon_proc_t *, void **);

	vmon_sys_wants_t	activity;	/* sys wants whose store changed in the last sample */
	void			*stores[VMON_STORE_SYS_NR];

	void		(*sample_cb)(struct _vmon_t *, void *);	/* after the sys wants, once per vmon_sample() */
	void		*sample_cb_arg;

	char		buf[8192];		/* scratch */
	char		buf_bis[8192];		/* scratch */
	int		generation;		/* incremented by each vmon_sample() */

	void		(*proc_ctor_cb)(struct _vmon_t *, vmon_proc_t *);
	void		(*proc_dtor_cb)(struct _vmon_t *, vmon_proc_t *);
	void		(*fobject_ctor_cb)(struct _vmon_t *, vmon_fobject_t *);
	void		(*fobject_dtor_cb)(struct _vmon_t *, vmon_fobject_t *);

	/* libvmon 1 */
	int			sys_errors[VMON_STORE_SYS_NR];	/* errno of the last failed sample of each sys store */
	struct _vmon_internal	*internal;			/* the library's own state */
} vmon_t;

/*
 * libvmon 1: where the per-process data comes from (vmon_set_sampler(3)):
 * /proc files, or one read of a BPF task iterator per vmon_sample() for the
 * PROC_STAT, PROC_VM and PROC_IO numbers and the thread and process lists,
 * with /proc for the rest.
 */
typedef enum _vmon_sampler_t {
	VMON_SAMPLER_AUTO = 0,	/* the iterator with VMON_FLAG_PROC_ALL where it loads, else /proc */
	VMON_SAMPLER_PROC,	/* /proc only */
	VMON_SAMPLER_ITER,	/* the task iterator, in every mode */
	VMON_SAMPLER_NR
} vmon_sampler_t;

/* libvmon 1: everything vmon_init_attr() can be told; start from vmon_attr_default() */
typedef struct _vmon_attr_t {
	vmon_flags_t		flags;
	vmon_sys_wants_t	sys_wants;
	vmon_proc_wants_t	proc_wants;
	const char		*proc_root;	/* NULL: $VMON_PROC_ROOT, else "/proc" */
	int			fd_budget;	/* files held open between samples; -1: the default (vmon(3)) */
	const char		*feed;		/* event feed backends to try, in order: "ebpf,perf,netlink"; NULL: $VMON_FEED, else all */
	size_t			feed_buffer_bytes;	/* the feed's kernel buffer; 0: the default (vmon_feed(7)) */
	vmon_sampler_t		sampler;	/* VMON_SAMPLER_AUTO: $VMON_SAMPLER, else automatic */
} vmon_attr_t;

/* libvmon 1: counters, for a status line or a benchmark */
typedef struct _vmon_stats_t {
	unsigned long long	samples;	/* vmon_sample() calls */
	unsigned long long	procs_new;	/* processes ever new */
	unsigned long long	procs_stale;	/* processes ever stale */
	unsigned long long	threads_new;
	unsigned long long	threads_stale;
	unsigned long long	vanished;	/* listed, but gone before they could be read */
	unsigned long long	errors;		/* per-process read errors other than vanishing */
	unsigned long long	opens;		/* files opened */
	unsigned long long	reads;		/* files read */
	unsigned long long	reads_skipped;	/* reads saved because nothing could have changed */
	unsigned long long	iter_reads;	/* task iterator reads (a pass each), vmon_set_sampler(3) */
	int			procs;		/* processes in the tree now */
	int			threads;	/* threads in the tree now */
	int			fds_held;	/* files held open between samples */
	int			fd_budget;	/* their limit */
	int			sampler_fds;	/* held by the task iterator (its program, link, maps), not in fds_held */
	unsigned long long	iter_walks;	/* of iter_reads, those made by a walk of the task list (Linux 6.12) */
} vmon_stats_t;

/*
 * libvmon 1: the event feed (vmon_feed(7)).  Fork, exec and exit events from
 * the kernel, applied at the start of each vmon_sample(), so that a process
 * that lived between two samples is still seen, with its command line and
 * exit status.
 */
typedef enum _vmon_feed_backend_t {
	VMON_FEED_NONE = 0,	/* no feed: /proc is listed every sample */
	VMON_FEED_EBPF,		/* BPF programs on the sched tracepoints, one BPF ring buffer */
	VMON_FEED_PERF,		/* the same tracepoints through perf_event_open(2), per-CPU rings */
	VMON_FEED_NETLINK,	/* the proc connector (CN_PROC) */
	VMON_FEED_BACKEND_NR
} vmon_feed_backend_t;

typedef enum _vmon_event_kind_t {
	VMON_EVENT_FORK,	/* a new process (not a new thread) */
	VMON_EVENT_EXEC,	/* a process loaded a new program */
	VMON_EVENT_EXIT,	/* a process ended: its last thread exited */
	VMON_EVENT_KIND_NR
} vmon_event_kind_t;

/* which members of a vmon_event_t are known: bits of its `has` */
typedef enum _vmon_event_has_t {
	VMON_EVENT_HAS_PPID		= 1 << 0,
	VMON_EVENT_HAS_START		= 1 << 1,	/* exact; see VMON_EVENT_HAS_START_APPROX */
	VMON_EVENT_HAS_START_APPROX	= 1 << 2,	/* start derived from the event's time: may be a tick off */
	VMON_EVENT_HAS_UID		= 1 << 3,
	VMON_EVENT_HAS_COMM		= 1 << 4,
	VMON_EVENT_HAS_FILENAME		= 1 << 5,
	VMON_EVENT_HAS_ARGS		= 1 << 6,
	VMON_EVENT_HAS_EXIT_STATUS	= 1 << 7,
	VMON_EVENT_HAS_TIMES		= 1 << 8,	/* utime, stime */
	VMON_EVENT_HAS_MAXRSS		= 1 << 9,
	VMON_EVENT_HAS_FAULTS		= 1 << 10,	/* minflt, majflt */
	VMON_EVENT_HAS_DURATION		= 1 << 11,	/* duration_ns: an exit's process's life */
	/* not a member: an exit not heard from the kernel (its event was lost) but found by a sample, at time_ns */
	VMON_EVENT_FOUND_GONE		= 1 << 12,
} vmon_event_has_t;

#define VMON_EVENT_ARGS_MAX	4095	/* bytes of arguments an ebpf exec event carries at most */

typedef struct _vmon_event_t {
	vmon_event_kind_t	kind;
	unsigned		has;		/* vmon_event_has_t bits */
	unsigned long long	time_ns;	/* when, CLOCK_BOOTTIME nanoseconds */
	int			pid;		/* the process (thread group) */
	int			tid;		/* the thread; exec: its id before the exec */
	int			ppid;		/* its parent process */
	unsigned long long	start;		/* start time, clock ticks after boot: /proc/PID/stat field 22 */
	unsigned		uid;		/* effective user id */
	char			comm[16];	/* command name, NUL-terminated */
	/* exec; the pointers are valid during the event callback only */
	const char		*filename;	/* the path given to execve(2) */
	const char		*args;		/* the arguments, each NUL-terminated */
	size_t			args_len;	/* bytes at args */
	unsigned		args_truncated:1;	/* more than VMON_EVENT_ARGS_MAX bytes: cut */
	/* exit */
	int			exit_status;	/* as waitpid(2) reports it */
	unsigned long long	utime;		/* user CPU time, clock ticks */
	unsigned long long	stime;		/* system CPU time, clock ticks */
	unsigned long long	maxrss_kb;	/* peak resident set size */
	unsigned long long	minflt;
	unsigned long long	majflt;
	/* libvmon 1.1 */
	unsigned		kinds;		/* 1 << kind of each event folded into this one (VMON_FEED_AGGREGATE) */
	unsigned long long	duration_ns;	/* exit: from the process's start to its exit */
} vmon_event_t;

typedef struct _vmon_feed_stats_t {
	vmon_feed_backend_t	backend;	/* in use */
	unsigned long long	events[VMON_EVENT_KIND_NR];	/* applied or ignored at vmon_sample(), by kind */
	unsigned long long	applied;	/* events that created or changed a node */
	unsigned long long	ignored;	/* events for processes outside the tree */
	unsigned long long	lost;		/* events the kernel could not deliver */
	unsigned long long	overruns;	/* times a loss was found */
	unsigned long long	reconciles;	/* /proc listings made while the feed was healthy or after a loss */
	unsigned long long	drains;		/* reads of the kernel buffers */
	size_t			pending;	/* events read, waiting for the next vmon_sample() */
	size_t			buffer_bytes;	/* the kernel buffer's size, whatever was asked */
	int			fds;		/* file descriptors the feed holds (not in vmon_stats_t.fds_held) */
	unsigned long long	cpu_ns;		/* CPU time (user and system) spent reading and applying events */
	/* libvmon 1.1: the stream (vmon_feed_stream()) */
	size_t			stream_pending;	/* events waiting for vmon_feed_next() */
	unsigned long long	stream_lost;	/* events the stream dropped: more than it holds, or no memory */
	size_t			exited;		/* ended processes vmon_feed_lookup() can find */
} vmon_feed_stats_t;

/* libvmon 1.1: vmon_feed_stream() flags */
#define VMON_FEED_EVENTS	0x1	/* keep each event for vmon_feed_next() */
#define VMON_FEED_AGGREGATE	0x2	/* and fold a process's fork, execs and exit within the window into one */
#define VMON_FEED_EXITS		0x4	/* keep the processes that ended lately for vmon_feed_lookup() */
#define VMON_FEED_WINDOW_MS	1000	/* the default window of VMON_FEED_AGGREGATE */
#define VMON_FEED_EXITED_MS	5000	/* how long vmon_feed_lookup() finds an ended process */

typedef void (*vmon_event_cb_t)(vmon_t *vmon, const vmon_event_t *event, vmon_proc_t *proc, void *arg);

int vmon_init(vmon_t *vmon, vmon_flags_t flags, vmon_sys_wants_t sys_wants, vmon_proc_wants_t proc_wants);
void vmon_destroy(vmon_t *vmon);
vmon_proc_t *vmon_proc_monitor(vmon_t *vmon, int pid, vmon_proc_wants_t wants,
			       void (*sample_cb)(vmon_t *, void *, vmon_proc_t *, void *), void *sample_cb_arg);
void vmon_proc_unmonitor(vmon_t *vmon, vmon_proc_t *proc,
			 void (*sample_cb)(vmon_t *, void *, vmon_proc_t *, void *), void *sample_cb_arg);
int vmon_sample(vmon_t *vmon);
void vmon_dump_procs(vmon_t *vmon, FILE *out);

/* libvmon 1 */
void vmon_attr_default(vmon_attr_t *attr);
int vmon_init_attr(vmon_t *vmon, const vmon_attr_t *attr);
int vmon_get_stats(const vmon_t *vmon, vmon_stats_t *stats);
/* bytes in a page of the machine the instance describes (a replay: the recorded one's), -1 EINVAL */
long vmon_page_size(const vmon_t *vmon);
vmon_proc_t *vmon_proc_lookup(const vmon_t *vmon, int pid);
int vmon_proc_set_wants(vmon_t *vmon, vmon_proc_t *proc, vmon_proc_wants_t wants);
int vmon_set_proc_wants(vmon_t *vmon, vmon_proc_wants_t wants);
int vmon_set_sys_wants(vmon_t *vmon, vmon_sys_wants_t wants);
/* vmon_escape() flags */
#define VMON_ESCAPE_ASCII	0x1	/* escape every byte outside printable ASCII, not only controls */
size_t vmon_escape(char *dst, size_t dst_size, const char *src, size_t src_len, unsigned flags);
int vmon_field_format(const vmon_field_t *field, const void *store, char *buf, size_t size, unsigned flags);
int vmon_field_compare(const vmon_field_t *field, const void *store_a, const void *store_b);
int vmon_field_present(const vmon_store_desc_t *desc, const vmon_field_t *field, const void *store);
/* libvmon 1: the event feed */
int vmon_feed_get_stats(const vmon_t *vmon, vmon_feed_stats_t *stats);
const char *vmon_feed_reason(const vmon_t *vmon);
const char *vmon_feed_backend_name(vmon_feed_backend_t backend);
int vmon_feed_fd(const vmon_t *vmon);
int vmon_feed_timeout(const vmon_t *vmon);
int vmon_feed_process(vmon_t *vmon);
int vmon_feed_set_callback(vmon_t *vmon, vmon_event_cb_t cb, void *arg);
/* libvmon 1.1: the events for the caller's loop, without a sample */
int vmon_feed_stream(vmon_t *vmon, unsigned flags, int window_ms);
int vmon_feed_next(vmon_t *vmon, vmon_event_t *event);
int vmon_feed_lookup(vmon_t *vmon, int pid, unsigned long long start, vmon_event_t *event);
/* libvmon 1: the sampling source */
int vmon_set_sampler(vmon_t *vmon, vmon_sampler_t sampler);
vmon_sampler_t vmon_get_sampler(const vmon_t *vmon);
const char *vmon_sampler_reason(const vmon_t *vmon);
const char *vmon_sampler_name(vmon_sampler_t sampler);
/* libvmon 1: a pidfd for the process a sample showed, and no other */
int vmon_pidfd_open(int pid, unsigned long long start, unsigned int flags);

extern const vmon_store_desc_t vmon_sys_store_descs[VMON_STORE_SYS_NR];
extern const vmon_store_desc_t vmon_proc_store_descs[VMON_STORE_PROC_NR];
/* libvmon 1: the open-files tables: the fields of a vmon_fobject_socket_t, and the fobject types */
extern const vmon_store_desc_t vmon_fobject_socket_desc;
extern const vmon_fobject_type_desc_t vmon_fobject_types[VMON_FOBJECT_TYPE_NR];

#ifdef __cplusplus
}
#endif

#endif
