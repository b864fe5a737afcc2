/*
 * batch.h: vtop -b's formats and --events' lines, written over the model.
 */
#ifndef VTOP_BATCH_H
#define VTOP_BATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "vtop.h"
#include "data/model.h"
#include "data/snapshot.h"

void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first);

/* events.c: --events, in text, json or csv */
typedef struct vt_event_writer {
	FILE		*out;		/* where the record being written goes: stage when queued */
	FILE		*direct;	/* the output, written to at once when there is no queue */
	struct vt_outq	*queue;		/* records handed to a thread that writes them (output_queue.c), or NULL */
	FILE		*stage;		/* with a queue: a record being made (a memory stream over stage_buf) */
	char		*stage_buf;
	size_t		stage_size;
	unsigned long long dropped;	/* events not queued (no room, no memory) and not yet said lost */
	unsigned long long staged_lost;	/* of those, the count said in the record being made */
	bool		header_staged;	/* csv: the header is in the record being made */
	vt_format_t	format;		/* text, json or csv */
	unsigned	escape_flags;	/* text's vmon_escape() flags */
	int		fields[VT_MAX_EVENT_FIELDS];	/* json and csv: the fields written, in order */
	int		fields_nr;
	bool		header_done;	/* csv */
	bool		events;		/* --events was asked for (-b alone writes no event, nor their header) */
} vt_event_writer_t;

void vt_event_writer_init(vt_event_writer_t *w, FILE *out, const vt_config_t *cfg);
/* the records written from now on by a thread to fd (output_queue.c): 0, or -1 with errno (written at once) */
int vt_event_writer_queue(vt_event_writer_t *w, int fd);
/* a write that failed: its errno, or 0 */
int vt_event_writer_error(vt_event_writer_t *w);
/*
 * What waits written (a last lost record with it), the thread gone:
 * vt_event_writer_error()'s answer.  Once *stop is set, a reader that takes
 * nothing for patience seconds (or most in all) is not waited for, and what
 * it did not get is said on standard error (output_queue.h).
 */
int vt_event_writer_close(vt_event_writer_t *w, const volatile sig_atomic_t *stop, double patience, double most);
void vt_event_write_feed(vt_event_writer_t *w, const vmon_event_t *ev, double realtime_offset);
void vt_event_write_found(vt_event_writer_t *w, const vt_event_t *e);
void vt_event_write_lost(vt_event_writer_t *w, unsigned long long lost, double when);
void vt_event_write(FILE *out, const vt_event_t *e);
/* -o for --events: the fields by name, into fields; the count, or -1 with the reason in err */
int vt_event_fields_parse(const char *list, int *fields, int max, char *err, size_t err_size);
void vt_event_fields_list(FILE *out);

#endif
