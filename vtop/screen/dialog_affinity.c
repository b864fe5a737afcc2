/*
 * dialog_affinity.c: a, the selected task's CPU affinity
 * (sched_setaffinity(2), as taskset -p: one task), chosen in a menu of the
 * online CPUs.  The call goes through dialog_act(), which checks the
 * identity before and the process's life after; a failure is shown in the
 * dialog, which stays open.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screen/dialog.h"

static struct {
	dialog_targets_t	target;		/* the selected task alone */
	unsigned char		*cpus_on;	/* per CPU, 1 if chosen */
	int			cpus_nr;
	dialog_list_t		list;		/* the online CPUs */
	char			error[256];
} af;

static int *online_cpus(const tui_t *t, int *n);

static void affinity_close(tui_t *t)
{
	(void)t;
	dialog_targets_free(&af.target);
	free(af.cpus_on);
	af.cpus_on = NULL;
}

void dialog_open_affinity(tui_t *t)
{
	cpu_set_t *set;
	size_t size;
	int fd, n = t->snap->cpus_nr > 0 ? t->snap->cpus_nr : 1;

	if (!dialog_targets_take(t, &af.target, false))
		return;
	af.error[0] = '\0';
	free(af.cpus_on);
	af.cpus_on = calloc((size_t)n, sizeof(*af.cpus_on));
	if (!af.cpus_on) {
		tui_message(t, true, "out of memory");
		return;
	}
	af.cpus_nr = n;
	/* the CPUs it may use now, asked of the task itself, its identity checked */
	set = CPU_ALLOC((size_t)n);
	size = CPU_ALLOC_SIZE((size_t)n);
	fd = dialog_target_pidfd(&af.target.v[0]);
	if (set && fd >= 0 && sched_getaffinity(af.target.v[0].pid, size, set) == 0) {
		for (int c = 0; c < n; c++)
			af.cpus_on[c] = CPU_ISSET_S((size_t)c, size, set) != 0;
	} else {
		for (int c = 0; c < n; c++)
			af.cpus_on[c] = 1;
		snprintf(af.error, sizeof(af.error), "its CPUs now: %s",
			 fd < 0 && errno == ESRCH ? "it has exited" : strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	CPU_FREE(set);
	af.list = (dialog_list_t){ 0 };
	free(online_cpus(t, &af.list.nr));
	tui_open(t, &affinity_panel);
}

/* the menu's entries: the online CPUs' numbers (malloc'd, *n of them), or NULL */
static int *online_cpus(const tui_t *t, int *n)
{
	int *cpus = malloc((size_t)af.cpus_nr * sizeof(*cpus));

	*n = 0;
	if (!cpus)
		return NULL;
	for (int c = 0; c < af.cpus_nr; c++) {
		if (c < t->snap->cpus_nr && !t->snap->cpus[c].online)
			continue;
		cpus[(*n)++] = c;
	}
	return cpus;
}

/* the CPU of the menu's entry i */
static int entry_cpu(const tui_t *t, int i)
{
	int n, *cpus = online_cpus(t, &n), c = -1;

	if (cpus && i < n)
		c = cpus[i];
	free(cpus);
	return c;
}

/* arg: the CPUs chosen, one byte each (af.cpus_on) */
static int call_setaffinity(pid_t pid, const void *arg)
{
	const unsigned char *on = arg;
	cpu_set_t *set = CPU_ALLOC((size_t)af.cpus_nr);
	size_t size = CPU_ALLOC_SIZE((size_t)af.cpus_nr);
	int r, err;

	if (!set)
		return -1;
	CPU_ZERO_S(size, set);
	for (int c = 0; c < af.cpus_nr; c++) {
		if (on[c])
			CPU_SET_S((size_t)c, size, set);
	}
	r = sched_setaffinity(pid, size, set);
	err = errno;
	CPU_FREE(set);
	errno = err;
	return r;
}

/* true if set (and said), false with the reason in af.error */
static bool set_affinity(tui_t *t)
{
	char list[256], why[128];
	size_t len = 0;
	int err;

	list[0] = '\0';
	for (int c = 0; c < af.cpus_nr && len < sizeof(list) - 16; c++) {
		if (af.cpus_on[c])
			len += (size_t)snprintf(list + len, sizeof(list) - len, len ? ",%d" : "%d", c);
	}
	if (!len) {
		snprintf(af.error, sizeof(af.error), "choose at least one CPU (Space)");
		return false;
	}
	err = dialog_act(&af.target.v[0], call_setaffinity, af.cpus_on);
	/* the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	if (!err) {
		tui_message(t, false, "%d: CPUs %s", af.target.v[0].pid, list);
		return true;
	}
	dialog_error_text(err, why, sizeof(why));
	snprintf(af.error, sizeof(af.error), "CPU affinity: %s%s", why,
		 err == EPERM ? " (another user's process needs root)" : "");
	return false;
}

static void cpu_entry(const tui_t *t, int i, char *buf, size_t size)
{
	int c = entry_cpu(t, i);

	snprintf(buf, size, "[%c] CPU %d", c >= 0 && af.cpus_on[c] ? 'x' : ' ', c);
}

/* one line per online CPU, scrolled to keep the selected one in the box */
static void affinity_draw(tui_t *t)
{
	const char *extra[2] = { "Space: toggle  Enter: set  Esc: cancel", af.error };
	char what[80], title[128];
	int *cpus = online_cpus(t, &af.list.nr);

	free(cpus);
	if (af.list.sel >= af.list.nr)
		af.list.sel = af.list.nr ? af.list.nr - 1 : 0;
	dialog_targets_text(t, &af.target, what, sizeof(what));
	snprintf(title, sizeof(title), " CPUs for %s ", what);
	dialog_list_draw(t, title, 0, &af.list, LINES - 4 - (af.error[0] != '\0'), cpu_entry, extra,
			 af.error[0] ? 2 : 1, af.error[0] != '\0');
}

static panel_next_t affinity_key(tui_t *t, int ch)
{
	int c;

	switch (ch) {
	case '\n': case '\r': case KEY_ENTER:
		return set_affinity(t) ? PANEL_CLOSE : PANEL_STAY;
	case 27: case 'q':
		return PANEL_CLOSE;
	case ' ':
		c = entry_cpu(t, af.list.sel);
		if (c >= 0)
			af.cpus_on[c] ^= 1;
		break;
	default:
		if (ch != KEY_PPAGE && ch != KEY_NPAGE)
			dialog_list_key(&af.list, ch);
		break;
	}
	af.error[0] = '\0';
	return PANEL_STAY;
}

const panel_t affinity_panel = { "affinity", true, NULL, affinity_draw, affinity_key, affinity_close };
