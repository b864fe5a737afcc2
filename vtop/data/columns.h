/*
 * columns.h: every column vtop can show, print or sort by (the defs tables'
 * fields and vtop's own derived ones), and the text helpers that format
 * values for a person or a program.
 */
#ifndef VTOP_COLUMNS_H
#define VTOP_COLUMNS_H

#include <stdbool.h>
#include <stdio.h>

#include "data/snapshot.h"

/*
 * Beside the library's wants in a column's: it shows wchan, which the
 * library reads only for a caller that wants it (else vtop sets
 * VMON_FLAG_NO_WCHAN: a kernel stack walk saved per process that ran).
 * A bit above every want of defs/proc_wants.def; never given to the library.
 */
#define VT_WANT_WCHAN	((vmon_proc_wants_t)(1L << 30))
_Static_assert(VMON_STORE_PROC_NR < 30, "VT_WANT_WCHAN is above the library's wants");

typedef enum {
	VT_VALUE_NUMBER,	/* json number, a metric's sample */
	VT_VALUE_STRING,	/* json string, a label of vtop_process_info */
} vt_value_kind_t;

typedef struct vt_column vt_column_t;

/* a vtop column computed from a row (vtop's own: CPU%, MEM%, TIME+, USER, COMMAND...) */
typedef struct vt_derived {
	const char	*name;
	const char	*label;
	const char	*desc;
	int		width;		/* 0: takes the rest of the line */
	bool		left;
	vt_value_kind_t	kind;
	vmon_proc_wants_t wants;
	/* the text for a person (units scaled) or, with machine, for a program (plain units); -1: missing */
	int		(*format)(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine);
	int		(*compare)(const vt_row_t *a, const vt_row_t *b);
	/* for metrics (a plain gauge when left out): what the machine text measures, its unit, per second */
	vmon_kind_t	measure;
	vmon_unit_t	unit;
	bool		rate;
	const char	*with;		/* a column written beside this one in json, csv and metrics */
	bool		timed;		/* its text depends on the snapshot's time too (snap->when) */
} vt_derived_t;

struct vt_column {
	const char		*name;		/* identifier: -o, vtoprc, json keys, csv header, metric names */
	const char		*label;		/* column header */
	const char		*desc;		/* one line, for the setup screen */
	int			width;		/* 0: the rest of the line */
	bool			left;
	vt_value_kind_t		kind;
	vmon_kind_t		measure;	/* what a number measures: gauge, counter, id, address, bitmap */
	vmon_unit_t		unit;		/* the unit of its machine text */
	bool			rate;		/* ... per second */
	int			with;		/* a column that goes beside it in json, csv and metrics, or -1 */
	vmon_proc_wants_t	wants;		/* what must be sampled for it */
	/* either a field of the defs tables ... */
	int			store;		/* VMON_STORE_PROC_*, or -1 */
	const vmon_field_t	*field;
	/* ... or one of vtop's own */
	const vt_derived_t	*derived;
};

extern const vt_column_t *vt_columns;
extern int vt_columns_nr;

int vt_columns_init(void);
int vt_column_find(const char *name);	/* by name or label, case-insensitive; -1 */
int vt_column_parse_list(const char *list, int *cols, int max, char *err, size_t err_size);
int vt_column_format(const vt_column_t *col, const vt_row_t *row, const vt_snapshot_t *snap,
		     char *buf, size_t size, bool machine);
int vt_column_compare(const vt_column_t *col, const vt_row_t *a, const vt_row_t *b);
vmon_proc_wants_t vt_columns_wants(const int *cols, int nr);
void vt_format_size(char *buf, size_t size, double bytes);
void vt_format_number(char *buf, size_t size, const char *digits, int width);
extern const char *const vt_default_columns;

/* text helpers */
#define VT_TEXT_REAL_SIZE(len)	(3 * (len) + 1)
size_t vt_text_real(char *dst, const char *escaped, size_t len);
void vt_json_string(FILE *out, const char *escaped);
void vt_text_fit(char *dst, size_t size, const char *escaped, size_t len);
const char *vt_signal_name(int sig);
const char *vt_io_class_name(int io_class);

#endif
