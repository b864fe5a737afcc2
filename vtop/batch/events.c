/*
 * events.c: vtop --events, one line per process event, oldest first, in
 * one of three formats:
 *
 *   text   TIME fork pid=P ppid=Q comm=NAME, for a person (vt_event_write())
 *   json   one object per line, for jq: the event's fields by name
 *   csv    RFC 4180: a header, then one row per event
 *
 * json and csv are written over one table, event_fields[], of the
 * members of the library's vmon_event_t: a member the library gains is one
 * row here, and -o chooses among the rows.  A member the event does not
 * carry (its bit of vmon_event_t.has is clear: the backend does not know
 * it, or the kind has none) is null in json and an empty field in csv,
 * never a 0 that was not seen.  Text from the process (comm, filename,
 * args) is its real text, as the -b formats give it: a byte that is not
 * UTF-8 becomes U+FFFD, a control a JSON escape.
 *
 * Without the feed the events are found by comparing samples: kind "new"
 * or "exit", with what the sample knew (pid, ppid, the exit status).
 *
 * Events the kernel could not deliver (its buffer was full) are never a
 * silent gap: a line of kind "lost" says how many since the last such line
 * (vt_event_write_lost()).  A lost exit still comes, as found_gone, when a
 * sample finds the process gone; a lost fork or exec has only that count.
 *
 * Live, the records are made whole in a memory stream (the stage) and
 * queued for a thread that writes them (output_queue.c), so that a reader
 * that falls behind does not stop the sampling; one that finds the queue
 * full is dropped and counted in the next lost line (record_begin()).  A
 * replay writes them at once: it waits for its reader, as a file is read.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "batch/batch.h"
#include "batch/formats.h"
#include "batch/output_queue.h"
#include "data/columns.h"
#include "data/sampler.h"

/* how a member is written */
enum event_type {
	EV_KIND,	/* fork, exec, exit (new, exit without the feed) */
	EV_WALL,	/* time_ns as seconds since the epoch */
	EV_INT,		/* a signed integer of any size */
	EV_UINT,	/* an unsigned integer of any size */
	EV_CHARS,	/* a NUL-terminated char array */
	EV_STRING,	/* a const char *, NUL-terminated */
	EV_ARGS,	/* args and args_len: the arguments, each NUL-terminated */
	EV_ARGS_CUT,	/* args_truncated, a bit field */
	EV_EXIT_CODE,	/* exit_status: the code of a process that exited, unknown if a signal ended it */
	EV_EXIT_SIGNAL,	/* exit_status: the signal that ended it, unknown if it exited */
	EV_FLAG,	/* true or false: the flag's bit in has */
	EV_LOST,	/* a "lost" line's count; no other event has it */
};

/* has: the vmon_event_t.has bits that say the member is known; 0: always; FEED_ONLY: every event of the feed's */
#define FEED_ONLY	0x80000000u

struct event_field {
	const char	*name;
	enum event_type	type;
	unsigned	has;
	size_t		offset;
	size_t		size;
	const char	*desc;
	unsigned	flag;		/* EV_FLAG's bit of has */
};

#define MEMBER(m)	offsetof(vmon_event_t, m), sizeof(((vmon_event_t *)NULL)->m)
#define NO_MEMBER	0, 0

static const struct event_field event_fields[] = {
	{ "kind", EV_KIND, 0, MEMBER(kind), "fork, exec or exit (without the feed: new or exit)" },
	{ "time", EV_WALL, 0, MEMBER(time_ns), "when, in seconds since the epoch" },
	{ "time_ns", EV_UINT, FEED_ONLY, MEMBER(time_ns), "when, in CLOCK_BOOTTIME nanoseconds" },
	{ "pid", EV_INT, 0, MEMBER(pid), "the process (thread group)" },
	{ "tid", EV_INT, FEED_ONLY, MEMBER(tid), "the thread; exec: its id before the exec" },
	{ "ppid", EV_INT, VMON_EVENT_HAS_PPID, MEMBER(ppid), "its parent process" },
	{ "start", EV_UINT, VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX, MEMBER(start),
	  "start time, clock ticks after boot (/proc/PID/stat field 22)" },
	{ "uid", EV_UINT, VMON_EVENT_HAS_UID, MEMBER(uid), "effective user id" },
	{ "comm", EV_CHARS, VMON_EVENT_HAS_COMM, MEMBER(comm), "command name" },
	{ "filename", EV_STRING, VMON_EVENT_HAS_FILENAME, MEMBER(filename), "exec: the path given to execve(2)" },
	{ "args", EV_ARGS, VMON_EVENT_HAS_ARGS, NO_MEMBER, "exec: the arguments (csv: as a JSON array)" },
	{ "args_truncated", EV_ARGS_CUT, VMON_EVENT_HAS_ARGS, NO_MEMBER, "exec: the arguments were cut" },
	{ "exit_status", EV_INT, VMON_EVENT_HAS_EXIT_STATUS, MEMBER(exit_status), "exit: as waitpid(2) reports it" },
	{ "exit_code", EV_EXIT_CODE, VMON_EVENT_HAS_EXIT_STATUS, MEMBER(exit_status),
	  "exit: the code it exited with (null when a signal ended it)" },
	{ "exit_signal", EV_EXIT_SIGNAL, VMON_EVENT_HAS_EXIT_STATUS, MEMBER(exit_status),
	  "exit: the signal that ended it (null when it exited)" },
	{ "utime", EV_UINT, VMON_EVENT_HAS_TIMES, MEMBER(utime), "exit: user CPU time, clock ticks" },
	{ "stime", EV_UINT, VMON_EVENT_HAS_TIMES, MEMBER(stime), "exit: system CPU time, clock ticks" },
	{ "maxrss_kb", EV_UINT, VMON_EVENT_HAS_MAXRSS, MEMBER(maxrss_kb), "exit: peak resident set size, kB" },
	{ "minflt", EV_UINT, VMON_EVENT_HAS_FAULTS, MEMBER(minflt), "exit: minor page faults" },
	{ "majflt", EV_UINT, VMON_EVENT_HAS_FAULTS, MEMBER(majflt), "exit: major page faults" },
	{ "duration_ns", EV_UINT, VMON_EVENT_HAS_DURATION, MEMBER(duration_ns), "exit: the process's life, nanoseconds" },
	{ "found_gone", EV_FLAG, FEED_ONLY, NO_MEMBER,
	  "exit: its event was lost, the process found gone by a sample (no status; the time it was found)",
	  VMON_EVENT_FOUND_GONE },
	{ "lost", EV_LOST, 0, NO_MEMBER,
	  "lost: how many events the kernel could not deliver, or vtop hold for a reader far behind, since the last "
	  "such line (null for the others)" },
};

#define EVENT_FIELDS_NR	((int)(sizeof(event_fields) / sizeof(event_fields[0])))

void vt_event_fields_list(FILE *out)
{
	fprintf(out, "%-16s %s\n", "NAME", "DESCRIPTION (--events --format json or csv)");
	for (int i = 0; i < EVENT_FIELDS_NR; i++)
		fprintf(out, "%-16s %s\n", event_fields[i].name, event_fields[i].desc);
}

int vt_event_fields_parse(const char *list, int *fields, int max, char *err, size_t err_size)
{
	const char *p = list;
	int nr = 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		int i;

		for (i = 0; i < EVENT_FIELDS_NR; i++) {
			if (strlen(event_fields[i].name) == len && !strncasecmp(p, event_fields[i].name, len))
				break;
		}
		if (i == EVENT_FIELDS_NR || !len) {
			snprintf(err, err_size, "no event field \"%.*s\" (vtop --events -o help lists them)", (int)len, p);
			return -1;
		}
		if (nr == max) {
			snprintf(err, err_size, "at most %d fields", max);
			return -1;
		}
		fields[nr++] = i;
		p += len;
		if (*p == ',' && *++p == '\0') {
			snprintf(err, err_size, "a field name after the last comma");
			return -1;
		}
	}
	if (!nr) {
		snprintf(err, err_size, "no field");
		return -1;
	}
	return nr;
}

void vt_event_writer_init(vt_event_writer_t *w, FILE *out, const vt_config_t *cfg)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->direct = out;
	w->format = cfg->format;
	w->events = cfg->events;
	w->escape_flags = vt_config_escape_flags(cfg);
	w->fields_nr = cfg->event_fields_nr;
	memcpy(w->fields, cfg->event_fields, sizeof(w->fields[0]) * (size_t)cfg->event_fields_nr);
	if (!w->fields_nr) {
		for (int i = 0; i < EVENT_FIELDS_NR && i < VT_MAX_EVENT_FIELDS; i++)
			w->fields[w->fields_nr++] = i;
	}
}

/* an integer member of any size, as text */
static void write_int(FILE *out, const struct event_field *f, const vmon_event_t *ev)
{
	const void *p = (const char *)ev + f->offset;
	bool sign = f->type == EV_INT;

	switch (f->size) {
	case 1:
		fprintf(out, sign ? "%d" : "%u", sign ? *(const signed char *)p : *(const unsigned char *)p);
		break;
	case 2:
		fprintf(out, sign ? "%d" : "%u", sign ? *(const short *)p : *(const unsigned short *)p);
		break;
	case 4:
		if (sign)
			fprintf(out, "%d", *(const int *)p);
		else
			fprintf(out, "%u", *(const unsigned *)p);
		break;
	default:
		if (sign)
			fprintf(out, "%lld", *(const long long *)p);
		else
			fprintf(out, "%llu", *(const unsigned long long *)p);
		break;
	}
}

/* the arguments as a JSON array of strings */
static void json_args(FILE *out, const vmon_event_t *ev)
{
	const char *p = ev->args, *end = ev->args + ev->args_len;

	fputc('[', out);
	for (bool first = true; p < end; first = false) {
		size_t n = strnlen(p, (size_t)(end - p));

		fputs(first ? "" : ",", out);
		batch_json_bytes(out, p, n);
		p += n + 1;
	}
	fputc(']', out);
}

/* text (len bytes a process gave) as a csv field of its real text */
static void csv_bytes(FILE *out, const char *s, size_t len)
{
	size_t need = vmon_escape(NULL, 0, s, len, 0) + 1;
	char small[1024], *buf = need <= sizeof(small) ? small : malloc(need);

	if (!buf)
		return;	/* an empty field: no value rather than half of one */
	vmon_escape(buf, need, s, len, 0);
	batch_csv_value(out, buf);
	if (buf != small)
		free(buf);
}

/* one field's value, or false if the event does not carry it; lost: a "lost" line's count (else 0) */
static bool write_value(vt_event_writer_t *w, const struct event_field *f, const vmon_event_t *ev,
			const char *kind, double when, bool from_feed, unsigned long long lost)
{
	bool json = w->format == VT_FORMAT_JSON;
	FILE *out = w->out;

	/* a "lost" line is of no process: its kind, its time and its count */
	if (lost ? f->type != EV_KIND && f->type != EV_WALL && f->type != EV_LOST : f->type == EV_LOST)
		return false;
	if (f->has == FEED_ONLY ? !from_feed : f->has && !(ev->has & f->has))
		return false;
	switch (f->type) {
	case EV_KIND:
		fprintf(out, json ? "\"%s\"" : "%s", kind);
		return true;
	case EV_WALL:
		fprintf(out, "%.6f", when);
		return true;
	case EV_INT:
	case EV_UINT:
		write_int(out, f, ev);
		return true;
	case EV_CHARS:
	case EV_STRING: {
		const char *s = f->type == EV_CHARS ? (const char *)ev + f->offset :
				*(const char *const *)(const void *)((const char *)ev + f->offset);
		size_t len = f->type == EV_CHARS ? strnlen(s, f->size) : s ? strlen(s) : 0;

		if (!s)
			return false;
		if (json)
			batch_json_bytes(out, s, len);
		else
			csv_bytes(out, s, len);
		return true;
	}
	case EV_ARGS: {
		char *text = NULL;
		size_t size = 0;
		FILE *mem;

		if (!ev->args)
			return false;
		if (json) {
			json_args(out, ev);
			return true;
		}
		/* csv: the array as JSON text, so that arguments with spaces or commas stay apart */
		mem = open_memstream(&text, &size);
		if (!mem)
			return false;
		json_args(mem, ev);
		if (fclose(mem) == 0)
			batch_csv_text(out, text);
		free(text);
		return true;
	}
	case EV_ARGS_CUT:
		fputs(ev->args_truncated ? "true" : "false", out);
		return true;
	case EV_EXIT_CODE:
		if (!WIFEXITED(ev->exit_status))
			return false;
		fprintf(out, "%d", WEXITSTATUS(ev->exit_status));
		return true;
	case EV_EXIT_SIGNAL:
		if (!WIFSIGNALED(ev->exit_status))
			return false;
		fprintf(out, "%d", WTERMSIG(ev->exit_status));
		return true;
	case EV_FLAG:
		fputs(ev->has & f->flag ? "true" : "false", out);
		return true;
	case EV_LOST:
		fprintf(out, "%llu", lost);
		return true;
	}
	return false;
}

/* csv's header, once, before its first row (in the stage with it, when there is a queue) */
static void write_header(vt_event_writer_t *w)
{
	if (w->format == VT_FORMAT_JSON || w->header_done)
		return;
	for (int i = 0; i < w->fields_nr; i++)
		fprintf(w->out, "%s%s", i ? "," : "", event_fields[w->fields[i]].name);
	fputs("\r\n", w->out);
	w->header_done = true;
	w->header_staged = w->queue != NULL;
}

static void write_record(vt_event_writer_t *w, const vmon_event_t *ev, const char *kind, double when, bool from_feed,
			 unsigned long long lost)
{
	bool json = w->format == VT_FORMAT_JSON;

	write_header(w);
	if (json)
		fputc('{', w->out);
	for (int i = 0; i < w->fields_nr; i++) {
		const struct event_field *f = &event_fields[w->fields[i]];

		if (json)
			fprintf(w->out, "%s\"%s\":", i ? "," : "", f->name);
		else if (i)
			fputc(',', w->out);
		if (!write_value(w, f, ev, kind, when, from_feed, lost) && json)
			fputs("null", w->out);
	}
	fputs(json ? "}\n" : "\r\n", w->out);
}

static const char *const kind_names[VMON_EVENT_KIND_NR] = { "fork", "exec", "exit" };

static bool write_lost(vt_event_writer_t *w, unsigned long long lost, double when);

static double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the stage emptied for the next record */
static void stage_reset(vt_event_writer_t *w)
{
	rewind(w->stage);
	w->header_staged = false;
	w->staged_lost = 0;
}

/*
 * A record about to be written: false if it is dropped (a queue with no
 * room: counted, and said in a lost record once there is room).  With a
 * queue, the record is made in the stage, after a lost record for those
 * dropped before it, so that the reader sees where the gap was.
 */
static bool record_begin(vt_event_writer_t *w)
{
	if (!w->queue)
		return true;
	if (!vt_outq_room(w->queue)) {
		w->dropped++;
		return false;
	}
	stage_reset(w);
	if (w->dropped && write_lost(w, w->dropped, realtime_now()))
		w->staged_lost = w->dropped;	/* (said on standard error instead: said) */
	w->dropped = 0;
	return true;
}

/* the record made (of events events) into the queue, whole; one that cannot be is counted as dropped */
static void record_end(vt_event_writer_t *w, unsigned long long events)
{
	off_t len;

	if (!w->queue)
		return;
	if (fflush(w->stage) != 0 || (len = ftello(w->stage)) < 0 ||
	    vt_outq_put(w->queue, w->stage_buf, (size_t)len, w->staged_lost + events) < 0) {
		w->dropped += w->staged_lost + events;
		if (w->header_staged)
			w->header_done = false;
	}
	w->staged_lost = 0;
	w->header_staged = false;
}

/* an event of the feed (or of a replay of its log); offset turns its CLOCK_BOOTTIME into wall-clock seconds */
void vt_event_write_feed(vt_event_writer_t *w, const vmon_event_t *ev, double offset)
{
	vt_event_t e;

	if (!record_begin(w))
		return;
	if (w->format == VT_FORMAT_TEXT) {
		vt_event_from_feed(&e, ev, offset, w->escape_flags);
		vt_event_write(w->out, &e);
	} else {
		write_record(w, ev, ev->kind < VMON_EVENT_KIND_NR ? kind_names[ev->kind] : "?",
			     (double)ev->time_ns / 1e9 + offset, true, 0);
	}
	record_end(w, 1);
}

/* an event found by comparing samples (no feed): what the samples knew of it */
void vt_event_write_found(vt_event_writer_t *w, const vt_event_t *e)
{
	vmon_event_t ev = { .pid = e->pid, .ppid = e->ppid, .exit_status = e->exit_code };

	if (!record_begin(w))
		return;
	if (w->format == VT_FORMAT_TEXT) {
		vt_event_write(w->out, e);
	} else {
		ev.has = (e->ppid > 0 ? VMON_EVENT_HAS_PPID : 0) |
			 (e->kind == 'X' && e->exit_code >= 0 ? VMON_EVENT_HAS_EXIT_STATUS : 0);
		write_record(w, &ev, e->kind == 'X' ? "exit" : "new", e->when, false, 0);
	}
	record_end(w, 1);
}

/* text: the time a line starts with, local, to the millisecond */
static void write_when(FILE *out, double when)
{
	time_t t = (time_t)when;
	char text[32];
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, "%s.%03d", text, (int)((when - (double)t) * 1000));
}

/* a lost record of count lost, to w->out: true; false if said on standard error instead */
static bool write_lost(vt_event_writer_t *w, unsigned long long lost, double when)
{
	vmon_event_t ev = { 0 };

	if (w->format == VT_FORMAT_TEXT) {
		write_when(w->out, when);
		fprintf(w->out, " lost events=%llu\n", lost);
		return true;
	}
	/* -o without kind and lost: the record would be nulls, like no event; said on standard error instead */
	for (int i = 0; i < w->fields_nr; i++) {
		enum event_type type = event_fields[w->fields[i]].type;

		if (type == EV_KIND || type == EV_LOST) {
			write_record(w, &ev, "lost", when, true, lost);
			return true;
		}
	}
	fprintf(stderr, "vtop: %llu events lost (a buffer was full): -o kind or lost would show it\n", lost);
	return false;
}

/*
 * Events the kernel (or the library's stream) could not deliver, found by
 * when (CLOCK_REALTIME seconds), with those the queue had no room for
 * (lost may be 0 for those alone), said once there is room: none is a
 * silent gap.  force: whatever room (the last record, at close).
 */
static void lost_record(vt_event_writer_t *w, unsigned long long lost, double when, bool force)
{
	if (!w->queue) {
		if (lost)
			write_lost(w, lost, when);
		return;
	}
	lost += w->dropped;
	w->dropped = 0;
	if (!lost)
		return;
	if (!force && !vt_outq_room(w->queue)) {
		w->dropped = lost;
		return;
	}
	stage_reset(w);
	if (write_lost(w, lost, when))
		record_end(w, lost);
}

void vt_event_write_lost(vt_event_writer_t *w, unsigned long long lost, double when)
{
	lost_record(w, lost, when, false);
}

int vt_event_writer_queue(vt_event_writer_t *w, int fd)
{
	w->stage = open_memstream(&w->stage_buf, &w->stage_size);
	if (!w->stage)
		return -1;
	w->queue = vt_outq_open(fd);
	if (!w->queue) {
		int err = errno;

		fclose(w->stage);
		free(w->stage_buf);
		w->stage = NULL;
		w->stage_buf = NULL;
		errno = err;
		return -1;
	}
	w->out = w->stage;
	return 0;
}

int vt_event_writer_error(vt_event_writer_t *w)
{
	if (w->queue)
		return vt_outq_error(w->queue);
	return fflush(w->direct) != 0 || ferror(w->direct) ? (errno ? errno : EIO) : 0;
}

int vt_event_writer_close(vt_event_writer_t *w, const volatile sig_atomic_t *stop, double patience, double most)
{
	unsigned long long unwritten;
	int err;

	/* a csv of no events is a header alone, as -b's csv of no process is, not an empty file */
	if (w->events && w->format == VT_FORMAT_CSV && !w->header_done && record_begin(w)) {
		write_header(w);
		record_end(w, 0);
	}
	if (!w->queue)
		return vt_event_writer_error(w);
	lost_record(w, 0, realtime_now(), true);
	err = vt_outq_close(w->queue, stop, patience, most, &unwritten);
	if (unwritten)
		fprintf(stderr, "vtop: up to %llu events not written: the reader took nothing for %g s after the stop "
			"(or %g s passed)\n", unwritten, patience, most);
	w->queue = NULL;
	fclose(w->stage);
	free(w->stage_buf);
	w->stage = NULL;
	w->stage_buf = NULL;
	w->out = w->direct;
	return err;
}

/*
 * text: one line per event, oldest first:
 *   TIME fork pid=P ppid=Q comm=NAME
 *   TIME exec pid=P ppid=Q comm=NAME file=PATH args=ARG0 ARG1...
 *   TIME exit pid=P ppid=Q code=N comm=NAME	(or signal=SIGNAME)
 *   TIME lost events=N	(vt_event_write_lost(): events the kernel could not deliver)
 * and without the feed "new" and "exit", found by comparing samples, with
 * the command line as comm.  Every text is vmon_escape()d; args is the last
 * field and runs to the end of the line.
 */
void vt_event_write(FILE *out, const vt_event_t *e)
{
	write_when(out, e->when);
	fprintf(out, " %s pid=%d ppid=%d", e->kind == 'E' ? "exec" : e->kind == 'X' ? "exit" : e->from_feed ? "fork" : "new", e->pid, e->ppid);
	if (e->kind == 'X' && e->exit_code >= 0) {
		if (WIFSIGNALED(e->exit_code))
			fprintf(out, " signal=SIG%s", vt_signal_name(WTERMSIG(e->exit_code)));
		else
			fprintf(out, " code=%d", WEXITSTATUS(e->exit_code));
	}
	fprintf(out, " comm=%s", e->comm);
	if (e->kind == 'E')
		fprintf(out, " file=%s args=%s", e->file, e->args);
	fputc('\n', out);
}
