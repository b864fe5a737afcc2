/*
 * plan.c: what the batch formats share: the plan of the columns a machine
 * format writes (the identity first, each column with the one that goes
 * with it), a column's text for a program, and the real text of escaped
 * text.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vtop.h"
#include "batch/formats.h"
#include "data/columns.h"
#include "data/model.h"

/* a row's identity comes first in json and csv, by these names: the columns of the same name are not repeated */
bool batch_is_identity(int col)
{
	const char *name = vt_columns[col].name;

	return !strcmp(name, "pid") || !strcmp(name, "ppid") || !strcmp(name, "start");
}

const char *batch_row_status(const vt_row_t *row)
{
	return (row->flags & VT_ROW_EXITED) ? "exited" : (row->flags & VT_ROW_NEW) ? "new" : "running";
}

/* shown only as the ancestor of a match (-u in the tree): another user's, say, with nothing of its own to show */
bool batch_line_is_context(const vt_view_t *view, int line)
{
	return vt_view_flag(view, VT_VIEW_TREE) && (vt_view_line_flags(view, line) & VT_LINE_CONTEXT);
}

bool batch_is_json_number(const char *s)
{
	char *end;
	double d;

	if (!*s)
		return false;
	d = strtod(s, &end);
	return !*end && isfinite(d) && s[0] != '+' && s[0] != '.' && !(s[0] == '0' && s[1] >= '0' && s[1] <= '9');
}


static void plan_add(struct batch_plan *p, int col)
{
	for (int i = 0; i < p->nr; i++) {
		if (p->cols[i] == col)
			return;
	}
	p->cols[p->nr++] = col;
}

void batch_plan_make(struct batch_plan *p, const vt_config_t *cfg)
{
	int command = vt_column_find("command");

	p->nr = 0;
	p->command = command >= 0 ? &vt_columns[command] : NULL;
	for (int i = 0; i < cfg->columns_nr; i++) {
		int c = cfg->columns[i];

		if (batch_is_identity(c))
			continue;
		plan_add(p, c);
		if (vt_columns[c].with >= 0)
			plan_add(p, vt_columns[c].with);
	}
}

/*
 * The column's text for a program, whole: in buf, or when longer in *big
 * (which the caller frees); NULL when the row has no value.
 */
const char *batch_machine_text(const struct batch_plan *p, const vt_column_t *col, const vt_view_t *view,
				const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, char **big)
{
	int len;

	*big = NULL;
	if (col == p->command)
		return vt_view_command(view, row);
	len = vt_column_format(col, row, snap, buf, size, true);
	if (len < 0)
		return NULL;
	if ((size_t)len >= size && (*big = malloc((size_t)len + 1)))
		vt_column_format(col, row, snap, *big, (size_t)len + 1, true);
	return *big ? *big : buf;
}

/*
 * The real text of escaped text for csv and the metrics' labels, into
 * small or a buffer the caller frees (NULL: no memory).  A NUL (what
 * separates the strings of cmdline and environ) is a space there, as ps(1)
 * shows a command line: text files hold none.
 */
char *batch_real_text(const char *escaped, char *small, size_t small_size)
{
	size_t len = strlen(escaped), n;
	char *text = VT_TEXT_REAL_SIZE(len) <= small_size ? small : malloc(VT_TEXT_REAL_SIZE(len));

	if (!text)
		return NULL;
	n = vt_text_real(text, escaped, len);
	for (char *z = memchr(text, '\0', n); z; z = memchr(z, '\0', n - (size_t)(z - text)))
		*z = ' ';
	return text;
}


