/*
 * vtop.h: the settings (the command line and vtoprc, config.c), and the
 * two ways vtop runs, which main.c picks between.
 *
 * The folders say who does what: data/ samples and models (the sampling
 * thread, snapshots, columns, the view), batch/ writes -b and --events,
 * screen/ is curses.  The sampling side owns the vmon_t; nothing else
 * touches it.  What the screen and the batch formats read is a snapshot of
 * plain copies, through the model.
 */
#ifndef VTOP_H
#define VTOP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "vmon.h"

typedef enum { VT_FORMAT_TEXT, VT_FORMAT_JSON, VT_FORMAT_CSV, VT_FORMAT_PROMETHEUS, VT_FORMAT_OPENMETRICS } vt_format_t;
typedef enum { VT_COLOR_AUTO, VT_COLOR_NEVER, VT_COLOR_ALWAYS } vt_color_t;

#define VT_MAX_COLUMNS	256
#define VT_MAX_PIDS	64
#define VT_MAX_EVENT_FIELDS	64

/*
 * What the list shows and how: the command line and vtoprc set it, the
 * view (data/model.c) starts from it, and what the screen changes is saved
 * back (vt_config_set_view()).
 */
typedef struct vt_view_settings {
	bool	tree;
	int	sort_col[2];	/* [0] flat, [1] tree: index into vt_columns */
	bool	sort_desc[2];
	bool	threads;
	bool	kthreads;
	bool	exited_rows;	/* exited processes are listed ("exited_rows = no" in vtoprc, X on the screen) */
	bool	show_path;	/* COMMAND shows argv[0] whole, not only its last component */
	bool	user_set;	/* -u: only user_uid's processes */
	uid_t	user_uid;
} vt_view_settings_t;

typedef struct vt_config {
	double		delay;		/* seconds between samples */
	long		iterations;	/* -n: 0 for no end */
	bool		batch;
	vt_format_t	format;
	int		columns[VT_MAX_COLUMNS];
	int		columns_nr;
	int		pids[VT_MAX_PIDS];
	int		pids_nr;
	vt_view_settings_t view;
	char		user_name[64];	/* -u as given */
	char		backend[32];
	vmon_sampler_t	source;		/* --source: how libvmon samples (vmon_set_sampler(3)) */
	bool		events;
	int		event_fields[VT_MAX_EVENT_FIELDS];	/* --events -o: json and csv's fields; 0 of them: all */
	int		event_fields_nr;
	vt_color_t	color;
	bool		ascii;
	bool		mouse;
	int		exited_keep;
	char		write_path[1024];	/* -w: record to this log, "" not */
	char		replay_path[1024];	/* -r: replay this log, "" live */
	char		config_path[1024];	/* where settings are read and saved */
	bool		config_loaded;
	char		warnings[1024];	/* what was wrong in the file: shown, not fatal */
} vt_config_t;

void vt_config_defaults(vt_config_t *cfg);
int vt_config_path(char *buf, size_t size);
int vt_config_load(vt_config_t *cfg, const char *path);
int vt_config_save(const vt_config_t *cfg, const char *path, char *err, size_t err_size);
/* returns 0 to go on, 1 when done (--help, --version), -1 on a usage error (message on stderr) */
int vt_config_args(vt_config_t *cfg, int argc, char **argv);
void vt_usage(FILE *out);

/* how text from processes is escaped for a terminal (vmon_escape() flags): --ascii's choice */
unsigned vt_config_escape_flags(const vt_config_t *cfg);

/* what the screen changes, saved to vtoprc when setup is left */
void vt_config_set_view(vt_config_t *cfg, const vt_view_settings_t *view);
typedef enum vt_setting {
	VT_SETTING_DELAY,	/* dir steps through the delays setup offers */
	VT_SETTING_COLOR,	/* auto, never, always */
	VT_SETTING_ASCII,	/* toggled */
	VT_SETTING_MOUSE,	/* toggled */
	VT_SETTING_EXITED_KEEP,	/* 1 to 100 refreshes */
} vt_setting_t;
void vt_config_step(vt_config_t *cfg, vt_setting_t setting, int dir);
/* the columns shown: i moved by dir (its new place, or -1), removed (-1: the last stays), col inserted at at (-1: full) */
int vt_config_column_move(vt_config_t *cfg, int i, int dir);
int vt_config_column_remove(vt_config_t *cfg, int i);
int vt_config_column_insert(vt_config_t *cfg, int at, int col);

/* batch/batch.c: -b and --events, until the iterations are done */
int vt_batch_run(const vt_config_t *cfg);
/* screen/tui.c: the screen, until q */
int vt_tui_run(vt_config_t *cfg);

#endif
