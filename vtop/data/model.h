/*
 * model.h: the view of a snapshot, which both the screen and the batch
 * formats read it through: filter, sort, tree flattening, collapse, search,
 * selection and tags.
 */
#ifndef VTOP_MODEL_H
#define VTOP_MODEL_H

#include <regex.h>
#include <stdbool.h>

#include "vtop.h"
#include "data/snapshot.h"

enum {
	VT_LINE_LAST		= 1 << 0,	/* the last of its siblings shown */
	VT_LINE_CHILDREN	= 1 << 1,	/* has children that could be shown */
	VT_LINE_COLLAPSED	= 1 << 2,	/* ... and they are folded away */
	VT_LINE_CONTEXT		= 1 << 3,	/* shown only as the ancestor of a match */
};

typedef struct vt_key {
	int			pid;
	unsigned long long	start;
} vt_key_t;

/*
 * model.c's alone: the settings (from the command line and vtoprc, then
 * the screen's keys and setup), what vt_view_build() made of a snapshot,
 * the selection and the tags, each read and changed through the functions
 * below; no other file touches a member.
 */
typedef struct vt_view {
	/* settings */
	vt_view_settings_t set;
	char		filter[256];
	bool		filter_regex;
	bool		filter_ok;	/* the regex compiled */
	char		filter_error[128];
	regex_t		filter_re;
	vt_key_t	*collapsed;	/* sorted */
	int		collapsed_nr;
	int		collapsed_cap;

	/* what vt_view_build() made of the snapshot (model.c's) */
	int		*lines;		/* row index of each line */
	unsigned char	*line_flags;
	int		*line_depth;
	size_t		*line_prefix;	/* offset in prefix[] of depth bytes: 1 where an ancestor level goes on */
	unsigned char	*prefix;
	size_t		prefix_len;
	size_t		prefix_cap;
	int		lines_nr;
	int		lines_cap;
	int		matches;	/* lines that match (not context) */

	/* selection (model.c's) */
	int		cursor;		/* selected line */
	int		top;		/* first line on screen */
	bool		follow;		/* the selection stays on sel (F) */
	bool		pinned;		/* ... until the cursor moves: sel was picked by name (vt_view_pick()) */
	vt_key_t	sel;		/* the selected row's identity */
	vt_key_t	*tagged;	/* sorted */
	int		tagged_nr;
	int		tagged_cap;

	/* scratch */
	int		*scratch;
	int		scratch_cap;
} vt_view_t;

void vt_view_init(vt_view_t *view);
/* what vt_view_build() made: the lines, the selection, the tags, for the screen and the batch formats */
int vt_view_lines(const vt_view_t *view);
int vt_view_top(const vt_view_t *view);
int vt_view_cursor(const vt_view_t *view);
unsigned char vt_view_line_flags(const vt_view_t *view, int line);	/* VT_LINE_* */
int vt_view_line_depth(const vt_view_t *view, int line);
int vt_view_matches(const vt_view_t *view);
vt_key_t vt_view_selected(const vt_view_t *view);
int vt_view_tagged_nr(const vt_view_t *view);
vt_key_t vt_view_tagged_at(const vt_view_t *view, int k);
int vt_view_collapsed_nr(const vt_view_t *view);
void vt_view_free(vt_view_t *view);
int vt_view_set_filter(vt_view_t *view, const char *text, bool regex);
void vt_view_build(vt_view_t *view, const vt_snapshot_t *snap);
const vt_row_t *vt_view_row(const vt_view_t *view, const vt_snapshot_t *snap, int line);
int vt_view_find_line(const vt_view_t *view, const vt_snapshot_t *snap, int pid);
void vt_view_select(vt_view_t *view, const vt_snapshot_t *snap, int line);
void vt_view_pick(vt_view_t *view, const vt_snapshot_t *snap, int line);
void vt_view_move(vt_view_t *view, const vt_snapshot_t *snap, int delta);
void vt_view_scroll_to_cursor(vt_view_t *view, int height);
int vt_view_search(const vt_view_t *view, const vt_snapshot_t *snap, const char *text, int from, int dir);
bool vt_view_row_matches(const vt_view_t *view, const vt_row_t *row);
bool vt_view_text_matches(const vt_view_t *view, const char *text);
bool vt_view_is_collapsed(const vt_view_t *view, const vt_row_t *row);
void vt_view_set_collapsed(vt_view_t *view, const vt_row_t *row, bool collapsed);
void vt_view_collapse_all(vt_view_t *view, const vt_snapshot_t *snap, bool collapse);
bool vt_view_is_tagged(const vt_view_t *view, const vt_row_t *row);
void vt_view_set_tagged(vt_view_t *view, const vt_row_t *row, bool tagged);
void vt_view_clear_tags(vt_view_t *view);
int vt_view_sort_col(const vt_view_t *view);
bool vt_view_sort_desc(const vt_view_t *view);
void vt_view_set_sort(vt_view_t *view, int col, bool desc);
void vt_view_set_user(vt_view_t *view, bool set, uid_t uid);
const char *vt_view_filter(const vt_view_t *view, bool *regex);
const char *vt_view_filter_error(const vt_view_t *view);
bool vt_view_pinned(const vt_view_t *view);

/* the view's switches */
typedef enum vt_view_flag {
	VT_VIEW_TREE,		/* the tree, else a flat list */
	VT_VIEW_THREADS,	/* threads listed under their process */
	VT_VIEW_KTHREADS,	/* kernel threads listed */
	VT_VIEW_EXITED,		/* exited rows listed (X hides them: on a busy machine they swamp the list) */
	VT_VIEW_PATH,		/* COMMAND shows argv[0] whole, not only its last component */
	VT_VIEW_FOLLOW,		/* the selection stays on its process wherever it moves (F) */
} vt_view_flag_t;
bool vt_view_flag(const vt_view_t *view, vt_view_flag_t flag);
void vt_view_set_flag(vt_view_t *view, vt_view_flag_t flag, bool on);
/* all of them, as vtoprc keeps them (vt_config_set_view()) */
const vt_view_settings_t *vt_view_settings(const vt_view_t *view);
const char *vt_view_command(const vt_view_t *view, const vt_row_t *row);
size_t vt_view_tree_prefix(const vt_view_t *view, int line, bool utf8, int max_cols, char *buf, size_t size);
bool vt_key_in(const vt_key_t *set, int nr, vt_key_t key);
int vt_key_set(vt_key_t **set, int *nr, int *cap, vt_key_t key, bool on);

/* the settings the view starts from */
void vt_view_configure(vt_view_t *view, const vt_config_t *cfg);

#endif
