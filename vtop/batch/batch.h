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
void vt_event_write(FILE *out, const vt_event_t *e);

#endif
