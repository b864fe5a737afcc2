/*
 * batch.h: vtop -b's formats and --events' lines, written over the model.
 */
#ifndef VTOP_BATCH_H
#define VTOP_BATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "vtop.h"
#include "data/model.h"
#include "data/snapshot.h"

void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first);

/* events.c: --events, in text, json or csv */
typedef struct vt_event_writer {
	FILE		*out;
	vt_format_t	format;		/* text, json or csv */
	unsigned	escape_flags;	/* text's vmon_escape() flags */
	int		fields[VT_MAX_EVENT_FIELDS];	/* json and csv: the fields written, in order */
	int		fields_nr;
	bool		header_done;	/* csv */
} vt_event_writer_t;

void vt_event_writer_init(vt_event_writer_t *w, FILE *out, const vt_config_t *cfg);
void vt_event_write_feed(vt_event_writer_t *w, const vmon_event_t *ev, double realtime_offset);
void vt_event_write_found(vt_event_writer_t *w, const vt_event_t *e);
void vt_event_write_lost(vt_event_writer_t *w, unsigned long long lost, double when);
void vt_event_write(FILE *out, const vt_event_t *e);
/* -o for --events: the fields by name, into fields; the count, or -1 with the reason in err */
int vt_event_fields_parse(const char *list, int *fields, int max, char *err, size_t err_size);
void vt_event_fields_list(FILE *out);

#endif
