/*
 * model.c: the view of a snapshot: which rows are lines, in which order,
 * at which depth, and which one is selected.  Nothing here draws; the TUI
 * and the batch formats both read the lines, and the unit tests check them.
 *
 * One vt_view_build() per refresh or per change of a setting:
 *   1. each row matches or not: threads (H), kernel threads (K), exited
 *      rows (X), user (u),
 *      filter (substring or extended regular expression, case-insensitive,
 *      over the command line as shown);
 *   2. flat: the matching rows sorted by the sort column;
 *      tree: siblings sorted by the tree's sort column, a row that does not
 *      match kept as context when something below it does, the children of
 *      collapsed rows folded away, and for each line the flags that draw its
 *      branch (last sibling, children, collapsed) and which ancestor levels
 *      go on below it;
 *   3. the selection: the same line index, or with F (follow) the same
 *      process (pid and start time) wherever it went.
 * Ties in any sort are broken by pid, so equal rows never swap places
 * between refreshes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "data/columns.h"
#include "data/model.h"
#include "data/room.h"

void vt_view_init(vt_view_t *view)
{
	memset(view, 0, sizeof(*view));
	view->set.tree = true;
	view->set.sort_col[0] = vt_column_find("cpu_percent");
	view->set.sort_desc[0] = true;
	view->set.sort_col[1] = vt_column_find("pid");
	view->set.sort_desc[1] = false;
	view->set.show_path = true;
	view->set.exited_rows = true;
	view->filter_ok = true;
	view->sel.pid = -1;
}

void vt_view_free(vt_view_t *view)
{
	if (view->filter_regex && view->filter[0] && view->filter_ok)
		regfree(&view->filter_re);
	free(view->collapsed);
	free(view->tagged);
	free(view->lines);
	free(view->line_flags);
	free(view->line_depth);
	free(view->line_prefix);
	free(view->prefix);
	free(view->scratch);
	memset(view, 0, sizeof(*view));
}

/* --- sets of processes by identity (collapsed, tagged): sorted arrays --- */

static int key_cmp(vt_key_t a, vt_key_t b)
{
	if (a.pid != b.pid)
		return (a.pid > b.pid) - (a.pid < b.pid);
	return (a.start > b.start) - (a.start < b.start);
}

static int key_pos(const vt_key_t *set, int nr, vt_key_t key, bool *found)
{
	int lo = 0, hi = nr;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = key_cmp(set[mid], key);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

bool vt_key_in(const vt_key_t *set, int nr, vt_key_t key)
{
	bool found;

	key_pos(set, nr, key, &found);
	return found;
}

int vt_key_set(vt_key_t **set, int *nr, int *cap, vt_key_t key, bool on)
{
	bool found;
	int pos = key_pos(*set, *nr, key, &found);

	if (on == found)
		return 0;
	if (!on) {
		memmove(*set + pos, *set + pos + 1, sizeof(**set) * (size_t)(*nr - pos - 1));
		(*nr)--;
		return 0;
	}
	if (*nr == *cap) {
		int c = *cap ? *cap * 2 : 32;
		vt_key_t *v = realloc(*set, sizeof(*v) * (size_t)c);

		if (!v)
			return -1;
		*set = v;
		*cap = c;
	}
	memmove(*set + pos + 1, *set + pos, sizeof(**set) * (size_t)(*nr - pos));
	(*set)[pos] = key;
	(*nr)++;
	return 0;
}

static vt_key_t row_key(const vt_row_t *row)
{
	vt_key_t k = { row->pid, row->start };

	return k;
}

bool vt_view_is_collapsed(const vt_view_t *view, const vt_row_t *row)
{
	return vt_key_in(view->collapsed, view->collapsed_nr, row_key(row));
}

void vt_view_set_collapsed(vt_view_t *view, const vt_row_t *row, bool collapsed)
{
	vt_key_set(&view->collapsed, &view->collapsed_nr, &view->collapsed_cap, row_key(row), collapsed);
}

void vt_view_collapse_all(vt_view_t *view, const vt_snapshot_t *snap, bool collapse)
{
	view->collapsed_nr = 0;
	if (!collapse)
		return;
	for (int i = 0; i < snap->rows_nr; i++) {
		int p = snap->rows[i].parent;

		if (p >= 0)
			vt_view_set_collapsed(view, &snap->rows[p], true);
	}
}

bool vt_view_is_tagged(const vt_view_t *view, const vt_row_t *row)
{
	return vt_key_in(view->tagged, view->tagged_nr, row_key(row));
}

/* an exited process is not tagged: it is to be neither signalled nor reniced */
void vt_view_set_tagged(vt_view_t *view, const vt_row_t *row, bool tagged)
{
	if (tagged && (row->flags & VT_ROW_EXITED))
		return;
	vt_key_set(&view->tagged, &view->tagged_nr, &view->tagged_cap, row_key(row), tagged);
}

/*
 * A tag is a process's, (pid, start time), and goes when the process does:
 * when it exits (its exited row keeps no tag) or is no longer in the
 * snapshot.  A tag that outlived its process made a later kill or renice
 * "of 2 tagged processes" for rows long gone, and not of the one selected.
 * A tagged process hidden by a filter is still tagged (the screen counts
 * the tags).
 */
static void prune_tags(vt_view_t *view, const vt_snapshot_t *snap)
{
	unsigned char *alive;
	int kept = 0;

	if (!view->tagged_nr || !snap->seq)
		return;
	alive = calloc((size_t)view->tagged_nr, 1);
	if (!alive)
		return;
	for (int i = 0; i < snap->rows_nr; i++) {
		const vt_row_t *r = &snap->rows[i];
		bool found;
		int pos;

		if (r->flags & VT_ROW_EXITED)
			continue;
		pos = key_pos(view->tagged, view->tagged_nr, row_key(r), &found);
		if (found)
			alive[pos] = 1;
	}
	for (int k = 0; k < view->tagged_nr; k++) {
		if (alive[k])
			view->tagged[kept++] = view->tagged[k];
	}
	view->tagged_nr = kept;
	free(alive);
}

void vt_view_clear_tags(vt_view_t *view)
{
	view->tagged_nr = 0;
}

/* --- settings --- */

int vt_view_sort_col(const vt_view_t *view)
{
	return view->set.sort_col[view->set.tree];
}

bool vt_view_sort_desc(const vt_view_t *view)
{
	return view->set.sort_desc[view->set.tree];
}

void vt_view_set_sort(vt_view_t *view, int col, bool desc)
{
	if (col < 0 || col >= vt_columns_nr)
		return;
	view->set.sort_col[view->set.tree] = col;
	view->set.sort_desc[view->set.tree] = desc;
}

/* set: only uid's processes are listed; else everyone's */
void vt_view_set_user(vt_view_t *view, bool set, uid_t uid)
{
	view->set.user_set = set;
	view->set.user_uid = set ? uid : 0;
}

const vt_view_settings_t *vt_view_settings(const vt_view_t *view)
{
	return &view->set;
}

bool vt_view_flag(const vt_view_t *view, vt_view_flag_t flag)
{
	switch (flag) {
	case VT_VIEW_TREE:
		return view->set.tree;
	case VT_VIEW_THREADS:
		return view->set.threads;
	case VT_VIEW_KTHREADS:
		return view->set.kthreads;
	case VT_VIEW_EXITED:
		return view->set.exited_rows;
	case VT_VIEW_PATH:
		return view->set.show_path;
	case VT_VIEW_FOLLOW:
		return view->follow;
	}
	return false;
}

/* takes effect at the next vt_view_build() */
void vt_view_set_flag(vt_view_t *view, vt_view_flag_t flag, bool on)
{
	switch (flag) {
	case VT_VIEW_TREE:
		view->set.tree = on;
		break;
	case VT_VIEW_THREADS:
		view->set.threads = on;
		break;
	case VT_VIEW_KTHREADS:
		view->set.kthreads = on;
		break;
	case VT_VIEW_EXITED:
		view->set.exited_rows = on;
		break;
	case VT_VIEW_PATH:
		view->set.show_path = on;
		break;
	case VT_VIEW_FOLLOW:
		view->follow = on;
		break;
	}
}

/* the filter's text ("" none) and whether it is a regex */
const char *vt_view_filter(const vt_view_t *view, bool *regex)
{
	if (regex)
		*regex = view->filter_regex;
	return view->filter;
}

/* why the filter's regex does not compile; NULL when it does (or is none) */
const char *vt_view_filter_error(const vt_view_t *view)
{
	return view->filter_ok ? NULL : view->filter_error;
}

bool vt_view_pinned(const vt_view_t *view)
{
	return view->pinned;
}

int vt_view_set_filter(vt_view_t *view, const char *text, bool regex)
{
	if (view->filter_regex && view->filter[0] && view->filter_ok)
		regfree(&view->filter_re);
	snprintf(view->filter, sizeof(view->filter), "%s", text);
	view->filter_regex = regex;
	view->filter_ok = true;
	view->filter_error[0] = '\0';
	if (regex && view->filter[0]) {
		int r = regcomp(&view->filter_re, view->filter, REG_EXTENDED | REG_ICASE | REG_NOSUB);

		if (r) {
			regerror(r, &view->filter_re, view->filter_error, sizeof(view->filter_error));
			view->filter_ok = false;
			return -1;
		}
	}
	return 0;
}

/* the command line as the COMMAND column shows it: argv[0] whole, or its last component */
const char *vt_view_command(const vt_view_t *view, const vt_row_t *row)
{
	if (!row->command)
		return "";
	if (view->set.show_path || row->arg0_base == 0)
		return row->command;
	return row->command + row->arg0_base;
}

static bool visible(const vt_view_t *view, const vt_row_t *row)
{
	if ((row->flags & VT_ROW_THREAD) && !view->set.threads)
		return false;
	if ((row->flags & VT_ROW_KTHREAD) && !view->set.kthreads)
		return false;
	if ((row->flags & VT_ROW_EXITED) && !view->set.exited_rows)
		return false;
	return true;
}

/* the filter (substring or regular expression) on a text; true without a filter */
bool vt_view_text_matches(const vt_view_t *view, const char *text)
{
	if (!view->filter[0] || !view->filter_ok)
		return true;
	if (view->filter_regex)
		return regexec(&view->filter_re, text, 0, NULL, 0) == 0;
	return strcasestr(text, view->filter) != NULL;
}

bool vt_view_row_matches(const vt_view_t *view, const vt_row_t *row)
{
	if (!visible(view, row))
		return false;
	if (view->set.user_set && vt_row_uid(row) != view->set.user_uid)
		return false;
	return vt_view_text_matches(view, vt_view_command(view, row));
}

/* --- building the lines --- */

struct sort_ctx {
	const vt_snapshot_t	*snap;
	const vt_column_t	*col;
	bool			desc;
};

static int row_order(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;
	const vt_row_t *ra = &ctx->snap->rows[*(const int *)a], *rb = &ctx->snap->rows[*(const int *)b];
	int c = ctx->col ? vt_column_compare(ctx->col, ra, rb) : 0;

	if (c)
		return ctx->desc ? -c : c;
	return (ra->pid > rb->pid) - (ra->pid < rb->pid);
}

/*
 * Siblings often come in order already (by pid, the tree view's default:
 * thousands of children of one parent are listed by pid), and a check is
 * one comparison each where the sort is n log n.  A list in order is left
 * as it is, as a stable sort leaves it (glibc's qsort_r() is a merge sort);
 * row_order() finds rows equal only with one pid and one key.
 */
static bool in_order(const int *rows, int nr, struct sort_ctx *ctx)
{
	for (int i = 1; i < nr; i++) {
		if (row_order(&rows[i - 1], &rows[i], ctx) > 0)
			return false;
	}
	return true;
}

/* realloc()'s, the block kept as it was when it fails (and *failed set) */
static void *resize(void *block, size_t size, bool *failed)
{
	void *v = realloc(block, size);

	if (!v) {
		*failed = true;
		return block;
	}
	return v;
}

/* the least room the lines are cut back to: under it, a cut is not worth the copies */
#define LINES_LEAST	1024

/*
 * The lines' room for nr rows: grown when they need more (half as much
 * again, and 64), and made small again once a build uses under a quarter
 * of it (vt_room_fit(); a storm's exited rows had grown it; at 1,000
 * processes a storm of 20,000 lives left room for 10,000 lines).  A shrink
 * that fails keeps the bigger blocks, which hold the new room all the same.
 */
static int grow_lines(vt_view_t *view, int nr)
{
	bool shrink = false, failed = false;
	int cap;

	if (nr > view->lines_cap) {
		cap = nr + nr / 2 + 64;
	} else {
		cap = (int)vt_room_fit((size_t)view->lines_cap, (size_t)nr, LINES_LEAST);
		if (cap == view->lines_cap)
			return 0;
		shrink = true;
	}
	view->lines = resize(view->lines, sizeof(*view->lines) * (size_t)cap, &failed);
	view->line_flags = resize(view->line_flags, (size_t)cap, &failed);
	view->line_depth = resize(view->line_depth, sizeof(*view->line_depth) * (size_t)cap, &failed);
	view->line_prefix = resize(view->line_prefix, sizeof(*view->line_prefix) * (size_t)cap, &failed);
	/* growing: each holds the old room at least */
	if (failed && !shrink)
		return -1;
	view->lines_cap = cap;
	return 0;
}

static int add_prefix(vt_view_t *view, const unsigned char *cont, int n)
{
	if (view->prefix_len + (size_t)n > view->prefix_cap) {
		size_t cap = (view->prefix_len + (size_t)n) * 2 + 256;
		bool failed = false;

		view->prefix = resize(view->prefix, cap, &failed);
		if (failed)
			return -1;
		view->prefix_cap = cap;
	}
	memcpy(view->prefix + view->prefix_len, cont, (size_t)n);
	view->prefix_len += (size_t)n;
	return 0;
}

/* the least room the tree's work space and its prefixes are cut back to */
#define SCRATCH_LEAST	4096
#define PREFIX_LEAST	4096

/*
 * The tree build's work space, n ints: grown to what a build needs and an
 * eighth more (a count that creeps up is not a realloc at every build), and
 * cut back by vt_room_fit() once a build needs under a quarter of it (a
 * storm's rows had grown it: 5 ints a row; a flat build needs none).  A cut
 * that fails keeps the bigger block, which holds the n all the same.
 */
static int *scratch(vt_view_t *view, int n)
{
	size_t cap = n > view->scratch_cap ? (size_t)n + (size_t)n / 8 :
		     vt_room_fit((size_t)view->scratch_cap, (size_t)n, SCRATCH_LEAST);
	bool failed = false;

	if (cap == (size_t)view->scratch_cap)
		return view->scratch;
	view->scratch = resize(view->scratch, sizeof(*view->scratch) * cap, &failed);
	if (failed)
		return n > view->scratch_cap ? NULL : view->scratch;
	view->scratch_cap = (int)cap;
	return view->scratch;
}

/* after a build: the prefixes' room cut back by vt_room_fit() to what it used (a failed cut keeps it) */
static void prefix_fit(vt_view_t *view)
{
	size_t cap = vt_room_fit(view->prefix_cap, view->prefix_len, PREFIX_LEAST);
	bool failed = false;

	if (cap == view->prefix_cap)
		return;
	view->prefix = resize(view->prefix, cap, &failed);
	if (!failed)
		view->prefix_cap = cap;
}

static void build_flat(vt_view_t *view, const vt_snapshot_t *snap, const unsigned char *keep, struct sort_ctx *ctx)
{
	int nr = 0;

	for (int i = 0; i < snap->rows_nr; i++) {
		if (keep[i] == 2)
			view->lines[nr++] = i;
	}
	/* none before the first sample: no lines[] to give qsort_r() */
	if (nr > 1)
		qsort_r(view->lines, (size_t)nr, sizeof(int), row_order, ctx);
	for (int i = 0; i < nr; i++) {
		view->line_flags[i] = 0;
		view->line_depth[i] = 0;
		view->line_prefix[i] = 0;
	}
	view->lines_nr = nr;
}

/*
 * keep[i]: 0 not shown, 1 context (an ancestor of a match), 2 a match.  A
 * kept row hangs under its parent if that is kept, else at the top (its
 * parent is a hidden kernel thread, or not in the snapshot).  The children
 * of each row are grouped by parent in the scratch space (first[], list[]),
 * which also holds the stack of the depth-first walk.
 */
static int build_tree(vt_view_t *view, const vt_snapshot_t *snap, const unsigned char *keep, struct sort_ctx *ctx)
{
	int n = snap->rows_nr, nr = 0, sp = 0;
	int *work = scratch(view, (n + 3) + n + 3 * (n + 1)), *first, *list, *stack;
	unsigned char *cont = NULL;
	size_t cont_cap = 0;

	if (!work)
		return -1;
	/*
	 * Counting sort by effective parent p (-1 .. n-1): count at first[p + 2],
	 * prefix sums, then fill from the end of each group; afterwards p's
	 * children are list[first[p + 2] .. first[p + 3]).
	 */
	first = work;
	list = first + n + 3;
	stack = list + n;	/* (row, depth, last) triples */
	memset(first, 0, sizeof(int) * (size_t)(n + 3));
	for (int i = 0; i < n; i++) {
		int p = snap->rows[i].parent;

		if (keep[i])
			first[(p >= 0 && keep[p] ? p : -1) + 2]++;
	}
	for (int k = 1; k < n + 3; k++)
		first[k] += first[k - 1];
	for (int i = n - 1; i >= 0; i--) {
		int p = snap->rows[i].parent;

		if (keep[i])
			list[--first[(p >= 0 && keep[p] ? p : -1) + 2]] = i;
	}
	for (int p = -1; p < n; p++) {
		int lo = first[p + 2], hi = first[p + 3];

		if (hi - lo > 1 && !in_order(list + lo, hi - lo, ctx))
			qsort_r(list + lo, (size_t)(hi - lo), sizeof(int), row_order, ctx);
	}

	/* depth first from the roots, pushed in reverse so that they come out in order */
	for (int k = first[2] - 1; k >= first[1]; k--) {
		stack[sp++] = list[k];
		stack[sp++] = 0;
		stack[sp++] = k == first[2] - 1;
	}
	while (sp) {
		bool last = stack[--sp];
		int depth = stack[--sp], row = stack[--sp];
		int lo = first[row + 2], hi = first[row + 3];
		unsigned char flags = last ? VT_LINE_LAST : 0;

		if (hi > lo)
			flags |= VT_LINE_CHILDREN;
		if (hi > lo && vt_view_is_collapsed(view, &snap->rows[row]))
			flags |= VT_LINE_COLLAPSED;
		if (keep[row] == 1)
			flags |= VT_LINE_CONTEXT;
		/* cont[d]: the line's ancestor at depth d has siblings still to come */
		if ((size_t)depth + 1 > cont_cap) {
			size_t c = (size_t)depth * 2 + 64;
			unsigned char *v = realloc(cont, c);

			if (!v) {
				free(cont);
				return -1;
			}
			memset(v + cont_cap, 0, c - cont_cap);
			cont = v;
			cont_cap = c;
		}
		cont[depth] = !last;
		view->lines[nr] = row;
		view->line_flags[nr] = flags;
		view->line_depth[nr] = depth;
		view->line_prefix[nr] = view->prefix_len;
		/* levels 1 .. depth - 1 are drawn as "| " where cont[] says, else blank */
		if (depth > 1 && add_prefix(view, cont + 1, depth - 1) < 0) {
			free(cont);
			return -1;
		}
		nr++;
		if (flags & VT_LINE_COLLAPSED)
			continue;
		for (int k = hi - 1; k >= lo; k--) {
			stack[sp++] = list[k];
			stack[sp++] = depth + 1;
			stack[sp++] = k == hi - 1;
		}
	}
	free(cont);
	view->lines_nr = nr;
	return 0;
}

void vt_view_build(vt_view_t *view, const vt_snapshot_t *snap)
{
	int col = vt_view_sort_col(view);
	struct sort_ctx ctx = { snap, col >= 0 && col < vt_columns_nr ? &vt_columns[col] : NULL, vt_view_sort_desc(view) };
	unsigned char *keep;
	int old_cursor = view->cursor;
	bool pinned;

	view->lines_nr = 0;
	view->prefix_len = 0;
	view->matches = 0;
	/*
	 * A snapshot of no sample (none taken yet, or the last one failed and
	 * sampler.c cleared it) has no lines; the selection, following, cursor
	 * and tags stay as they are for the next one, which finds them again.
	 */
	if (!snap->seq)
		return;
	prune_tags(view, snap);
	if (grow_lines(view, snap->rows_nr) < 0)
		return;
	keep = calloc((size_t)snap->rows_nr + 1, 1);
	if (!keep)
		return;
	for (int i = 0; i < snap->rows_nr; i++) {
		if (vt_view_row_matches(view, &snap->rows[i])) {
			keep[i] = 2;
			view->matches++;
		}
	}
	if (view->set.tree) {
		/* a match keeps its ancestors, as context: the walk up stops where one is kept already */
		for (int i = 0; i < snap->rows_nr; i++) {
			if (keep[i] != 2)
				continue;
			for (int p = snap->rows[i].parent; p >= 0 && !keep[p]; p = snap->rows[p].parent) {
				if (!visible(view, &snap->rows[p]))
					break;
				keep[p] = 1;
			}
		}
		if (build_tree(view, snap, keep, &ctx) < 0)
			build_flat(view, snap, keep, &ctx);
	} else {
		build_flat(view, snap, keep, &ctx);
		(void)scratch(view, 0);	/* the tree's work space, unused: cut back */
	}
	prefix_fit(view);
	free(keep);

	/*
	 * The selection: the same process when following or when it was picked
	 * by name (search, a typed pid, a click), else the same line, as htop
	 * does.  A process found by a search must still be the one selected when
	 * the next key (Enter, k) comes, however the list moved in between.
	 */
	pinned = view->pinned;
	if ((view->follow || pinned) && view->sel.pid >= 0) {
		int line = -1;

		for (int i = 0; i < view->lines_nr; i++) {
			const vt_row_t *r = &snap->rows[view->lines[i]];

			if (r->pid == view->sel.pid && r->start == view->sel.start) {
				line = i;
				break;
			}
		}
		if (line >= 0)
			old_cursor = line;
		else
			view->follow = pinned = false;	/* it is gone, or filtered out */
	}
	vt_view_select(view, snap, old_cursor);
	view->pinned = pinned;
}

const vt_row_t *vt_view_row(const vt_view_t *view, const vt_snapshot_t *snap, int line)
{
	if (line < 0 || line >= view->lines_nr)
		return NULL;
	return &snap->rows[view->lines[line]];
}

/* the line of pid: the live process's, else an exited one's (a pid reused since is two rows) */
int vt_view_find_line(const vt_view_t *view, const vt_snapshot_t *snap, int pid)
{
	int exited = -1;

	for (int i = 0; i < view->lines_nr; i++) {
		const vt_row_t *r = &snap->rows[view->lines[i]];

		if (r->pid != pid)
			continue;
		if (!(r->flags & VT_ROW_EXITED))
			return i;
		if (exited < 0)
			exited = i;
	}
	return exited;
}

void vt_view_select(vt_view_t *view, const vt_snapshot_t *snap, int line)
{
	const vt_row_t *row;

	if (line >= view->lines_nr)
		line = view->lines_nr - 1;
	if (line < 0)
		line = 0;
	view->cursor = line;
	view->pinned = false;
	row = vt_view_row(view, snap, line);
	if (row) {
		view->sel.pid = row->pid;
		view->sel.start = row->start;
	} else {
		view->sel.pid = -1;
		view->sel.start = 0;
	}
}

/* select a line for the process on it: it stays selected across rebuilds until the cursor moves */
void vt_view_pick(vt_view_t *view, const vt_snapshot_t *snap, int line)
{
	vt_view_select(view, snap, line);
	view->pinned = view->sel.pid >= 0;
}

void vt_view_move(vt_view_t *view, const vt_snapshot_t *snap, int delta)
{
	long line = (long)view->cursor + delta;

	if (line < 0)
		line = 0;
	if (line > view->lines_nr - 1)
		line = view->lines_nr - 1;
	vt_view_select(view, snap, (int)line);
}

/* keep the cursor on a screen of height lines */
void vt_view_scroll_to_cursor(vt_view_t *view, int height)
{
	if (height < 1)
		height = 1;
	if (view->cursor < view->top)
		view->top = view->cursor;
	if (view->cursor >= view->top + height)
		view->top = view->cursor - height + 1;
	if (view->top > view->lines_nr - height)
		view->top = view->lines_nr - height;
	if (view->top < 0)
		view->top = 0;
}

/*
 * The next line from `from` (itself included) in direction dir (+1, -1)
 * whose command line, as shown, holds text (case-insensitive); the search
 * wraps around.  -1 when no line does.
 */
int vt_view_search(const vt_view_t *view, const vt_snapshot_t *snap, const char *text, int from, int dir)
{
	int n = view->lines_nr;

	if (!text[0] || n == 0)
		return -1;
	if (from < 0)
		from = dir > 0 ? 0 : n - 1;
	for (int k = 0; k < n; k++) {
		int line = ((from + dir * k) % n + n) % n;
		const vt_row_t *row = &snap->rows[view->lines[line]];

		if (strcasestr(vt_view_command(view, row), text))
			return line;
	}
	return -1;
}

/*
 * The tree branches drawn before a line's command: for each ancestor level
 * a bar where that level goes on below, then the line's own branch, and a
 * '+' when its children are folded away.  UTF-8 box drawing, or ASCII.
 *
 * max_cols > 0 bounds the prefix's width: a process twenty levels down
 * (a build running its tests under make and shells) would otherwise push its
 * command off the screen.  The outermost levels are then folded into a count,
 * "\u2026N" ("..N" in ASCII), so the line still says how deep it is and its
 * own branch keeps its place next to its parent's.
 */
/* s appended at len, bounded as snprintf() would be; the length of the whole */
static size_t prefix_append(char *buf, size_t size, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (len + 1 < size) {
		size_t room = size - len - 1, k = n < room ? n : room;

		memcpy(buf + len, s, k);
		buf[len + k] = '\0';
	}
	return len + n;
}

size_t vt_view_tree_prefix(const vt_view_t *view, int line, bool utf8, int max_cols, char *buf, size_t size)
{
	const char *bar = utf8 ? "\u2502 " : "| ", *blank = "  ";
	const char *tee = utf8 ? "\u251c\u2500" : "|-", *elbow = utf8 ? "\u2514\u2500" : "`-";
	size_t len = 0;
	int depth, hidden = 0;
	unsigned char flags;

	if (size)
		buf[0] = '\0';
	if (!view->set.tree || line < 0 || line >= view->lines_nr)
		return 0;
	depth = view->line_depth[line];
	flags = view->line_flags[line];
	if (max_cols > 0) {
		int tail = (flags & VT_LINE_COLLAPSED) ? 1 : 0;

		/* fold levels 1..hidden until the marker and what is left fit (the own branch always stays) */
		while (hidden < depth - 1 && 2 * (depth - hidden) + tail +
		       (hidden ? (utf8 ? 1 : 2) + snprintf(NULL, 0, "%d", hidden) : 0) > max_cols)
			hidden++;
		if (hidden)
			len += (size_t)snprintf(buf, size, "%s%d", utf8 ? "\u2026" : "..", hidden);
	}
	for (int d = hidden + 1; d < depth; d++)
		len = prefix_append(buf, size, len, view->prefix[view->line_prefix[line] + (size_t)d - 1] ? bar : blank);
	if (depth > 0)
		len = prefix_append(buf, size, len, (flags & VT_LINE_LAST) ? elbow : tee);
	if (flags & VT_LINE_COLLAPSED)
		len = prefix_append(buf, size, len, "+");
	return len;
}

/* the settings of the command line and vtoprc */
void vt_view_configure(vt_view_t *view, const vt_config_t *cfg)
{
	view->set = cfg->view;
}

int vt_view_lines(const vt_view_t *view)
{
	return view->lines_nr;
}

int vt_view_top(const vt_view_t *view)
{
	return view->top;
}

int vt_view_cursor(const vt_view_t *view)
{
	return view->cursor;
}

unsigned char vt_view_line_flags(const vt_view_t *view, int line)
{
	return view->line_flags[line];
}

int vt_view_line_depth(const vt_view_t *view, int line)
{
	return view->line_depth[line];
}

int vt_view_matches(const vt_view_t *view)
{
	return view->matches;
}

vt_key_t vt_view_selected(const vt_view_t *view)
{
	return view->sel;
}

int vt_view_tagged_nr(const vt_view_t *view)
{
	return view->tagged_nr;
}

vt_key_t vt_view_tagged_at(const vt_view_t *view, int k)
{
	return view->tagged[k];
}

int vt_view_collapsed_nr(const vt_view_t *view)
{
	return view->collapsed_nr;
}
