/*
 * formats.h: what the batch formats share (batch/ only): the plan of the
 * columns a machine format writes, a column's text for a program, and the
 * writer of each format, which batch.c picks.
 */
#ifndef VTOP_BATCH_FORMATS_H
#define VTOP_BATCH_FORMATS_H

#include <stdbool.h>
#include <stdio.h>

#include "vtop.h"
#include "data/columns.h"
#include "data/model.h"
#include "data/snapshot.h"

/*
 * What json, csv and the metrics write of a process beyond its identity:
 * the columns asked for, each followed by the one that goes with it
 * (exit_status by term_signal), none twice.
 */
struct batch_plan {
	int			cols[2 * VT_MAX_COLUMNS];
	int			nr;
	const vt_column_t	*command;	/* COMMAND shows argv[0] whole or not (vt_view_command()) */
};

/* plan.c */
void batch_plan_make(struct batch_plan *p, const vt_config_t *cfg);
const char *batch_machine_text(const struct batch_plan *p, const vt_column_t *col, const vt_view_t *view,
			       const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, char **big);
char *batch_real_text(const char *escaped, char *small, size_t small_size);
bool batch_is_identity(int col);
const char *batch_row_status(const vt_row_t *row);
bool batch_line_is_context(const vt_view_t *view, int line);
bool batch_is_json_number(const char *s);

/* json_csv.c: bytes as a JSON string; a csv field, of real text or of escaped text */
void batch_json_bytes(FILE *out, const char *s, size_t len);
void batch_csv_text(FILE *out, const char *text);
void batch_csv_value(FILE *out, const char *escaped);

/* text.c, json_csv.c, metrics.c */
void batch_write_text(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap, bool utf8);
void batch_write_json(FILE *out, const struct batch_plan *p, const vt_view_t *view, const vt_snapshot_t *snap);
void batch_write_csv(FILE *out, const struct batch_plan *p, const vt_view_t *view, const vt_snapshot_t *snap,
		     bool first);
void batch_write_exposition(FILE *out, bool om, const struct batch_plan *p, const vt_view_t *view,
			    const vt_snapshot_t *snap);

#endif
