/*
 * proc_stat.c: the PROC_STAT want (defs/proc_stat.def), sampled for every
 * node.  The stat line itself was read by procfs_probe() at the start of
 * the node's pass; what else is read depends on what can have changed:
 *
 *   cmdline, argv, exe	when the node is new and after an exec, which the
 *			stat line betrays by a new comm or new code, stack,
 *			argument or environment addresses (node_layout_seen(),
 *			whether or not PROC_STAT_EXTRA keeps them; or the event
 *			feed says so); and every CMDLINE_REFRESH_SECS for a
 *			process that ran, so that titles set by
 *			setproctitle() show.  Threads leave them empty:
 *			they are their process's.  A zombie's cmdline reads
 *			empty: a node the event feed wrote keeps its last
 *			(also once the feed saw it exit).
 *   wchan, uid		when the task ran since the last sample or changed
 *			state (schedstat's run count, see procfs_ran()): a
 *			task that was not on a CPU cannot have moved to
 *			another wait channel or changed its credentials.
 *			wchan not at all with VMON_FLAG_NO_WCHAN (absent),
 *			and for every task in the pass after it is cleared.
 *
 * With the task iterator (iter.c) the numbers and comm come from the
 * node's record instead of the stat line; these rules stay, the record's
 * run count answering "did it run?".  Its record gives the owner too, and
 * wchan where the program could read it (proc_stat_give_*()): those are
 * then not read from /proc.
 *
 * This file is the store's one writer: the line's parser here, and the
 * setters below for what others know (the iterator's record, the event
 * feed's events, the tree's end of a task) set its fields, their present
 * and changed bits, by the same rules.
 *
 * One of these that the kernel refuses to show us (EACCES, EPERM: exe of
 * another user's process, for one) is an expected limit of an unprivileged
 * caller, not a failure of the store: that field is absent and nothing is
 * recorded in errors[].  Any other failure is.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"

#define FIELD(_sym) (&vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[_sym])

/* the kernel will not show us this field (see the top): not an error */
static bool refused(int err)
{
	return err == EACCES || err == EPERM;
}

/*
 * A field that could not be read: absent (present bit clear, empty), not its
 * old value looking current; an error unless the kernel refused it to us or
 * err_absent says the kernel has no such field for this task.  A task that
 * is gone (ESRCH) keeps what was read, as its last data.  Returns whether
 * the field changed, or -1.
 */
static int unreadable(vmon_proc_stat_t *s, int sym, int err, int err_absent)
{
	int r = 0;

	if (err != ESRCH)
		r = parse_clear(FIELD(sym), s, s->changed, s->present);
	if (refused(err) || err == err_absent)
		return r;
	errno = err;
	return -1;
}

/* --- the writers (stores.h) --- */

/* a field given a value: present, and changed if it was absent (parse_given()) */
static int given(vmon_proc_stat_t *s, int sym, int r)
{
	return parse_given(FIELD(sym), r, s->changed, s->present);
}

int proc_stat_set_number(vmon_proc_stat_t *s, int sym, unsigned long long v, bool first)
{
	return given(s, sym, parse_set_ull(FIELD(sym), s, v, s->changed, first));
}

int proc_stat_clear(vmon_proc_stat_t *s, int sym)
{
	return parse_clear(FIELD(sym), s, s->changed, s->present);
}

int proc_stat_set_text(vmon_proc_stat_t *s, int sym, const char *text, size_t len, bool first)
{
	return given(s, sym, parse_set_string(FIELD(sym), s, text, len, s->changed, first));
}

/* the owner, as fstat of the node's /proc directory would give it, from the source's record */
int proc_stat_give_uid(vmon_t *vmon, vmon_proc_stat_t *s, unsigned uid, bool first)
{
	vmon->internal->stat_given |= STAT_GIVEN_UID;
	return proc_stat_set_number(s, VMON_PROC_STAT_UID, uid, first);
}

/* wchan, what /proc/PID/wchan would read, from the source's record */
int proc_stat_give_wchan(vmon_t *vmon, vmon_proc_stat_t *s, const char *name, size_t len, bool first)
{
	if (vmon->internal->wchan_off)
		return 0;	/* not wanted: proc_stat_sample() leaves it absent */
	vmon->internal->stat_given |= STAT_GIVEN_WCHAN;
	return proc_stat_set_text(s, VMON_PROC_STAT_WCHAN, name, len, first);
}

/*
 * The event feed's writers: what any event says of its process (parent,
 * start, owner, name), an exec's, an exit's.  Each returns whether a field
 * changed, for the caller to mark in the node's activity (node_store_written()).
 */
bool proc_stat_event(vmon_proc_stat_t *s, const vmon_event_t *ev, bool first)
{
	bool changed = false;

	/* the pid's present bit is the line's parser's: its first read is a first read (proc_stat_keep_pid()) */
	if (first)
		changed |= parse_set_ull(FIELD(VMON_PROC_STAT_PID), s, (unsigned long long)ev->pid, s->changed, first) > 0;
	if (ev->has & VMON_EVENT_HAS_PPID)
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_PPID, (unsigned long long)ev->ppid, first) > 0;
	if (ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX))
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_START, ev->start, first) > 0;
	if (ev->has & VMON_EVENT_HAS_UID)
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_UID, ev->uid, first) > 0;
	if (ev->has & VMON_EVENT_HAS_COMM)
		changed |= proc_stat_set_text(s, VMON_PROC_STAT_COMM, ev->comm, strnlen(ev->comm, sizeof(ev->comm)) + 1,
					      first) > 0;
	return changed;
}

/* an exec: the old program's arguments and path are not the new one's, better none than wrong */
bool proc_stat_event_exec(vmon_proc_stat_t *s, const vmon_event_t *ev)
{
	bool changed;

	if (ev->has & VMON_EVENT_HAS_ARGS)
		changed = proc_stat_set_cmdline(s, ev->args, ev->args_len, false) > 0;
	else
		changed = proc_stat_set_cmdline(s, "", 0, false) > 0;
	if (ev->has & VMON_EVENT_HAS_FILENAME)
		changed |= proc_stat_set_text(s, VMON_PROC_STAT_EXE, ev->filename, strlen(ev->filename), false) > 0;
	else
		changed |= proc_stat_set_text(s, VMON_PROC_STAT_EXE, "", 0, false) > 0;
	return changed;
}

/* an exit, before the node takes its status: times, faults, the status, the zombie's state */
bool proc_stat_event_exit(vmon_proc_stat_t *s, const proc_node_t *node, const vmon_event_t *ev)
{
	bool changed = false;

	if (ev->has & VMON_EVENT_HAS_TIMES) {
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_UTIME, ev->utime, false) > 0;
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_STIME, ev->stime, false) > 0;
	}
	if (ev->has & VMON_EVENT_HAS_FAULTS) {
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_MINFLT, ev->minflt, false) > 0;
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_MAJFLT, ev->majflt, false) > 0;
	}
	/* a status the event does not carry is unknown: not the 0 a running process's line says */
	if (ev->has & VMON_EVENT_HAS_EXIT_STATUS)
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_EXIT_CODE, (unsigned long long)ev->exit_status,
						false) > 0;
	else if (!node->pub.has_exit_status)
		changed |= parse_clear(FIELD(VMON_PROC_STAT_EXIT_CODE), s, s->changed, s->present) > 0;
	/* dead, not yet reaped; one found gone already is X (proc_stat_ended()) */
	if (!node->life.left)
		changed |= proc_stat_set_number(s, VMON_PROC_STAT_STATE, 'Z', false) > 0;
	return changed;
}

/* a life the feed alone saw, ending before any line was read: the pid is the events', and its last data says so */
void proc_stat_keep_pid(vmon_proc_stat_t *s)
{
	BITSET(s->present, VMON_PROC_STAT_PID);
}

/*
 * A task found gone (the tree's): its state is X, whether its last line said
 * it ran or was a zombie.  Its exit code stays known only where it was (the
 * feed's exit, or a zombie's own line): a running process's line says 0,
 * which is no exit status.
 */
bool proc_stat_ended(vmon_proc_stat_t *s, bool has_exit_status)
{
	bool changed = false;

	if (s->state != 'Z' && !has_exit_status)
		changed = parse_clear(FIELD(VMON_PROC_STAT_EXIT_CODE), s, s->changed, s->present) > 0;
	return proc_stat_set_number(s, VMON_PROC_STAT_STATE, 'X', false) > 0 || changed;
}

/* cmdline (the arguments, each NUL-terminated) and the argc/argv built on it; also the event feed's */
int proc_stat_set_cmdline(vmon_proc_stat_t *s, const char *text, size_t len, bool first)
{
	int r = given(s, VMON_PROC_STAT_CMDLINE, parse_set_string(FIELD(VMON_PROC_STAT_CMDLINE), s, text, len,
								     s->changed, first));

	if (r < 0)
		return -1;
	if (r > 0 || first || !s->argv)
		/* argv: argc pointers into cmdline, rebuilt whenever it changes */
		return parse_split_strings(FIELD(VMON_PROC_STAT_CMDLINE), FIELD(VMON_PROC_STAT_ARGC),
					   FIELD(VMON_PROC_STAT_ARGV), s, s->changed, s->present, first) < 0 ? -1 : 1;
	return 0;
}

static int sample_cmdline(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	buf_t *buf = &vmon->internal->buf;
	int r;

	if (procfs_read(vmon, node, "cmdline", NULL, buf) < 0) {
		int err = errno;

		if (err == ESRCH)
			return -1;
		/* argv points into cmdline: empty with it, and absent with it */
		r = parse_clear_strings(FIELD(VMON_PROC_STAT_CMDLINE), FIELD(VMON_PROC_STAT_ARGC),
					FIELD(VMON_PROC_STAT_ARGV), s, s->changed, s->present);
		if (r < 0 || refused(err))
			return r;
		errno = err;
		return -1;
	}
	node->due.cmdline = due_in(vmon->internal, CMDLINE_REFRESH_SECS);
	/*
	 * Empty from a process the event feed gave arguments: it is inside its
	 * exit (its memory is gone), caught after its state was read (with the
	 * task iterator, read at the start of the pass, the window is wider).
	 * It keeps the arguments, as a zombie does (see the caller).
	 */
	if (buf->len == 0 && node->life.fed && s->cmdline.len > 0 && BITTEST(s->present, VMON_PROC_STAT_CMDLINE))
		return 0;
	return proc_stat_set_cmdline(s, buf->data, buf->len, first);
}

static int sample_exe(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	buf_t *buf = &vmon->internal->buf;

	/*
	 * Kernel threads have no executable and a zombie has lost its mm
	 * (ENOENT): exe is then absent, as a key the kernel does not print,
	 * not an empty path that is present.  Another user's process gives
	 * EACCES (the ptrace access check).
	 */
	if (procfs_readlink(vmon, node, "exe", buf) < 0)
		return unreadable(s, VMON_PROC_STAT_EXE, errno, ENOENT);
	return proc_stat_set_text(s, VMON_PROC_STAT_EXE, buf->data, buf->len, first);
}

static int sample_wchan(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	buf_t *buf = &vmon->internal->buf;

	if (procfs_read(vmon, node, "wchan", &s->wchan_fd, buf) < 0)
		return unreadable(s, VMON_PROC_STAT_WCHAN, errno, 0);
	return proc_stat_set_text(s, VMON_PROC_STAT_WCHAN, buf->data, buf->len, first);
}

/* the owner of the node's /proc directory; an fd on a file under it keeps the owner of its open */
static int sample_uid(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	struct stat st;
	int dir = procfs_node_dir(vmon, node, true);

	if (dir < 0 || fstat(dir, &st) < 0)
		return unreadable(s, VMON_PROC_STAT_UID, errno, 0);
	return proc_stat_set_number(s, VMON_PROC_STAT_UID, st.st_uid, first);
}

/* a new program: its name, or the addresses that move only when one is loaded (node_layout_seen()) */
static bool execed(const proc_node_t *node, const vmon_proc_stat_t *s)
{
	return BITTEST(s->changed, VMON_PROC_STAT_COMM) || node->line.layout_moved;
}

/*
 * The line's layout addresses, for node_layout_seen(): the five rows of
 * PROC_STAT_EXTRA's table parsed into a scratch store, as the node may not
 * keep one (the line walked up to field 50, five numbers converted).  A
 * field the line lacks or garbles reads 0 here; PROC_STAT_EXTRA's own
 * parse of the line says so, where it is wanted.
 */
static void line_layout(proc_node_t *node, const char *rest, size_t len, bool first)
{
	/* (in the order of their fields: 26, 27, 28, 48, 50) */
	static const int syms[] = {
		VMON_PROC_STAT_EXTRA_STARTCODE, VMON_PROC_STAT_EXTRA_ENDCODE, VMON_PROC_STAT_EXTRA_STARTSTACK,
		VMON_PROC_STAT_EXTRA_ARG_START, VMON_PROC_STAT_EXTRA_ENV_START,
	};
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT_EXTRA];
	vmon_field_t rows[sizeof(syms) / sizeof(syms[0])];
	vmon_proc_stat_extra_t x;
	int err = errno;

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		rows[i] = desc->fields[syms[i]];
	memset(&x, 0, sizeof(x));
	(void)parse_stat_rest(rows, (int)(sizeof(rows) / sizeof(rows[0])), rest, len, &x, NULL, NULL, true);
	errno = err;
	node_layout_seen(node, x.startcode, x.endcode, x.startstack, x.arg_start, x.env_start, first);
}

/* the stat line's fields into the store, its layout into the node; the number that changed, or -1 */
static int parse_line(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, const buf_t *line, bool first)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
	buf_t *buf = &vmon->internal->buf;
	const char *rest, *comm, *p;
	unsigned long long pid;
	size_t comm_len;
	int changes = 0, r;

	rest = parse_stat_fields(line->data, line->len, &comm, &comm_len);
	if (!rest) {
		errno = EPROTO;
		return -1;
	}
	/* field 1: the word before " (comm)", a whole number */
	p = line->data;
	if (!parse_ull(&p, comm, &pid) || *p != ' ' || pid == 0 || pid > INT_MAX) {
		errno = EPROTO;
		return -1;
	}
	r = parse_set_ull(FIELD(VMON_PROC_STAT_PID), s, pid, s->changed, first);
	changes += r;
	BITSET(s->present, VMON_PROC_STAT_PID);

	/* comm.len counts a NUL in place of the newline of /proc/PID/comm, as libvmon clients expect */
	if (buf_reserve(buf, comm_len + 1) < 0)
		return -1;
	memcpy(buf->data, comm, comm_len);
	buf->data[comm_len] = '\0';
	r = parse_set_string(FIELD(VMON_PROC_STAT_COMM), s, buf->data, comm_len + 1, s->changed, first);
	if (r < 0)
		return -1;
	changes += r;
	BITSET(s->present, VMON_PROC_STAT_COMM);

	r = parse_stat_rest(desc->fields, desc->fields_nr, rest, (size_t)(line->data + line->len - rest),
			    s, s->changed, s->present, first);
	if (r < 0)
		return -1;
	line_layout(node, rest, (size_t)(line->data + line->len - rest), first);
	return changes + r;
}

/*
 * Add what one of the store's reads returned: the fields it changed, or its
 * errno.  The store reports one error; a task found gone wins, as it makes
 * the node stale rather than in error.
 */
static void tally(int r, int *changes, int *err)
{
	if (r >= 0)
		*changes += r;
	else if (*err != ESRCH)
		*err = errno;
}

int proc_stat_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node = node_of(proc);
	vmon_proc_stat_t *s = *store;
	char prev_state;
	bool first, moved;
	int changes = 0, ran, err = 0;

	/* the source's probe read this node's line in this pass (or took its record) and allocated the store */
	if (!s || node->pass.probed != vmon->generation || (!stat_line_probed(in, node) && !record_probed(in, node))) {
		errno = EINVAL;
		return -1;
	}
	first = !BITTEST(s->present, VMON_PROC_STAT_PID);
	prev_state = s->state;
	node_store_start(vmon, node, VMON_STORE_PROC_STAT, s->changed, sizeof(s->changed));

	/* the source's record in place of the line (the task iterator's), else the line its probe read */
	in->stat_given = 0;
	/* (a record the same as the last one's leaves them so; PROC_VM, sampled after, sets the second) */
	node->line.layout_moved = node->line.statm_moved = false;
	changes = source_fill(vmon, node, VMON_STORE_PROC_STAT, s, first);
	if (changes == SOURCE_NO_RECORD) {
		/* (parsed each time: the store's values are what a change is told against, no copy of the line) */
		changes = parse_line(vmon, node, s, &in->stat_line, first);
		if (changes < 0)
			return -1;
	} else if (changes < 0) {
		return -1;
	}

	if (!first && execed(node, s))
		node->life.exec_pending = true;
	/* read schedstat on the first pass too: the next pass needs its run count to skip anything */
	ran = procfs_ran(vmon, node);
	if (first)
		ran = 1;

	if (!proc->is_thread) {
		/*
		 * A zombie has no memory left, nor has a task caught inside its
		 * exit: its cmdline reads empty.  A node the event feed wrote
		 * keeps the arguments its exec event (or the last read) gave,
		 * the one thing the feed has on a short life, once it is a
		 * zombie or the feed saw it exit.
		 */
		if (node->life.fed && (s->state == 'Z' || proc->has_exit_status) &&
		    BITTEST(s->present, VMON_PROC_STAT_CMDLINE))
			in->stats.reads_skipped++;
		else if (node->life.exec_pending || node->life.retry ||
		    (ran != 0 && due_reached(in, node->due.cmdline)))
			tally(sample_cmdline(vmon, node, s, first), &changes, &err);
		else
			in->stats.reads_skipped++;
		if (node->life.exec_pending || node->life.retry)
			tally(sample_exe(vmon, node, s, first), &changes, &err);
	}

	moved = first || ran != 0 || s->state != prev_state;
	if (in->wchan_off) {
		/* (the store's state, not the pass's: a node not sampled when the flag came loses it later) */
		if (first || BITTEST(s->present, VMON_PROC_STAT_WCHAN))
			tally(parse_clear(FIELD(VMON_PROC_STAT_WCHAN), s, s->changed, s->present), &changes, &err);
	} else if ((moved || in->wchan_again) && !(in->stat_given & STAT_GIVEN_WCHAN))
		tally(sample_wchan(vmon, node, s, first), &changes, &err);
	else
		in->stats.reads_skipped++;
	if (moved) {
		if (!(in->stat_given & STAT_GIVEN_UID))
			tally(sample_uid(vmon, node, s, first), &changes, &err);
		else
			in->stats.reads_skipped++;
	} else {
		in->stats.reads_skipped++;
	}

	if (err) {
		errno = err;
		return -1;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
