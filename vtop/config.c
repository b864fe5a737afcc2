/*
 * config.c: vtop's settings: the defaults, then $XDG_CONFIG_HOME/vtop/vtoprc
 * (what the setup screen saved), then the command line, each overriding
 * the one before.
 *
 * vtoprc is "key = value" lines; '#' starts a comment.  A bad line is
 * reported (the screen shows it) and skipped: a settings file never stops
 * vtop from starting.  It is written whole to a temporary file and renamed
 * over the old one, so a crash never leaves half a file.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtop.h"
#include "data/columns.h"
#include "data/sampler.h"
#include "batch/batch.h"

void vt_config_defaults(vt_config_t *cfg)
{
	char err[128];

	memset(cfg, 0, sizeof(*cfg));
	cfg->delay = 1.5;
	cfg->format = VT_FORMAT_TEXT;
	cfg->columns_nr = vt_column_parse_list(vt_default_columns, cfg->columns, VT_MAX_COLUMNS, err, sizeof(err));
	if (cfg->columns_nr < 0)
		cfg->columns_nr = 0;
	cfg->view.tree = true;
	cfg->view.exited_rows = true;
	cfg->view.show_path = true;
	cfg->view.sort_col[0] = vt_column_find("cpu_percent");
	cfg->view.sort_desc[0] = true;
	cfg->view.sort_col[1] = vt_column_find("pid");
	cfg->view.sort_desc[1] = false;
	snprintf(cfg->backend, sizeof(cfg->backend), "auto");
	cfg->color = VT_COLOR_AUTO;
	cfg->mouse = true;
	cfg->exited_keep = 3;
}

int vt_config_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/vtop/vtoprc", xdg);
	else if (home && home[0])
		n = snprintf(buf, size, "%s/.config/vtop/vtoprc", home);
	else
		return -1;
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* "FILE:LINE: what", appended to what the screen will show */
static void warn(vt_config_t *cfg, const char *path, int line, const char *what, const char *detail)
{
	size_t len = strlen(cfg->warnings);
	char msg[256];

	snprintf(msg, sizeof(msg), "%s:%d: %s%s", path, line, what, detail);
	if (len + strlen(msg) + 3 < sizeof(cfg->warnings))
		snprintf(cfg->warnings + len, sizeof(cfg->warnings) - len, "%s%s", len ? "; " : "", msg);
}

/* --source and "source =": a vmon_sampler_name() */
static int parse_source(const char *v, vmon_sampler_t *out)
{
	for (int i = 0; i < VMON_SAMPLER_NR; i++) {
		if (!strcmp(v, vmon_sampler_name((vmon_sampler_t)i))) {
			*out = (vmon_sampler_t)i;
			return 0;
		}
	}
	return -1;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "on"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "off"))
		*out = false;
	else
		return -1;
	return 0;
}

static int parse_seconds(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= 0.05 && d <= 86400))
		return -1;
	*out = d;
	return 0;
}

static int parse_int(const char *v, long min, long max, long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

static int parse_color(const char *v, vt_color_t *out)
{
	if (!strcasecmp(v, "auto"))
		*out = VT_COLOR_AUTO;
	else if (!strcasecmp(v, "never") || !strcasecmp(v, "no") || !strcasecmp(v, "mono"))
		*out = VT_COLOR_NEVER;
	else if (!strcasecmp(v, "always") || !strcasecmp(v, "yes"))
		*out = VT_COLOR_ALWAYS;
	else
		return -1;
	return 0;
}

/* "[+|-]COLUMN": + ascending, - descending, neither: numbers largest first, text A first */
static int parse_sort(const char *v, int *col, bool *desc)
{
	int c = vt_column_find(v[0] == '+' || v[0] == '-' ? v + 1 : v);

	if (c < 0)
		return -1;
	*col = c;
	if (v[0] == '+' || v[0] == '-')
		*desc = v[0] == '-';
	else
		*desc = vt_columns[c].kind == VT_VALUE_NUMBER;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* one "key = value" of vtoprc; -1 for an unknown key, -2 for a bad value */
static int apply(vt_config_t *cfg, const char *key, const char *v)
{
	long n;
	char err[128];
	int cols[VT_MAX_COLUMNS], nr;

	if (!strcmp(key, "columns")) {
		nr = vt_column_parse_list(v, cols, VT_MAX_COLUMNS, err, sizeof(err));
		if (nr < 0)
			return -2;
		memcpy(cfg->columns, cols, sizeof(int) * (size_t)nr);
		cfg->columns_nr = nr;
	} else if (!strcmp(key, "sort")) {
		return parse_sort(v, &cfg->view.sort_col[0], &cfg->view.sort_desc[0]) < 0 ? -2 : 0;
	} else if (!strcmp(key, "sort_descending")) {
		return parse_bool(v, &cfg->view.sort_desc[0]) < 0 ? -2 : 0;
	} else if (!strcmp(key, "tree_sort")) {
		return parse_sort(v, &cfg->view.sort_col[1], &cfg->view.sort_desc[1]) < 0 ? -2 : 0;
	} else if (!strcmp(key, "tree_sort_descending")) {
		return parse_bool(v, &cfg->view.sort_desc[1]) < 0 ? -2 : 0;
	} else if (!strcmp(key, "tree")) {
		return parse_bool(v, &cfg->view.tree) < 0 ? -2 : 0;
	} else if (!strcmp(key, "threads")) {
		return parse_bool(v, &cfg->view.threads) < 0 ? -2 : 0;
	} else if (!strcmp(key, "kernel_threads")) {
		return parse_bool(v, &cfg->view.kthreads) < 0 ? -2 : 0;
	} else if (!strcmp(key, "exited_rows")) {
		return parse_bool(v, &cfg->view.exited_rows) < 0 ? -2 : 0;
	} else if (!strcmp(key, "program_path")) {
		return parse_bool(v, &cfg->view.show_path) < 0 ? -2 : 0;
	} else if (!strcmp(key, "delay")) {
		return parse_seconds(v, &cfg->delay) < 0 ? -2 : 0;
	} else if (!strcmp(key, "color")) {
		return parse_color(v, &cfg->color) < 0 ? -2 : 0;
	} else if (!strcmp(key, "ascii")) {
		return parse_bool(v, &cfg->ascii) < 0 ? -2 : 0;
	} else if (!strcmp(key, "mouse")) {
		return parse_bool(v, &cfg->mouse) < 0 ? -2 : 0;
	} else if (!strcmp(key, "backend")) {
		if (vt_feed_check_backend(v, err, sizeof(err)) < 0)
			return -2;
		snprintf(cfg->backend, sizeof(cfg->backend), "%s", v);
	} else if (!strcmp(key, "source")) {
		return parse_source(v, &cfg->source) < 0 ? -2 : 0;
	} else if (!strcmp(key, "exited_refreshes")) {
		if (parse_int(v, 1, 100, &n) < 0)
			return -2;
		cfg->exited_keep = (int)n;
	} else {
		return -1;
	}
	return 0;
}

/* 0: read (or there is none yet); -1: it exists but cannot be read (warnings say why) */
int vt_config_load(vt_config_t *cfg, const char *path)
{
	FILE *f;
	char line[4096];
	int lineno = 0;

	snprintf(cfg->config_path, sizeof(cfg->config_path), "%s", path);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		warn(cfg, path, 0, strerror(errno), "");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p, *eq, *key, *val;
		int r;

		lineno++;
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		p = trim(line);
		if (!*p)
			continue;
		eq = strchr(p, '=');
		if (!eq) {
			warn(cfg, path, lineno, "not \"key = value\": ", p);
			continue;
		}
		*eq = '\0';
		key = trim(p);
		val = trim(eq + 1);
		r = apply(cfg, key, val);
		if (r == -1)
			warn(cfg, path, lineno, "unknown setting ", key);
		else if (r == -2)
			warn(cfg, path, lineno, "bad value for ", key);
	}
	fclose(f);
	cfg->config_loaded = true;
	return 0;
}

static int mkdir_parents(const char *path)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

unsigned vt_config_escape_flags(const vt_config_t *cfg)
{
	return cfg->ascii ? VMON_ESCAPE_ASCII : 0;
}

void vt_config_set_view(vt_config_t *cfg, const vt_view_settings_t *view)
{
	cfg->view = *view;
}

void vt_config_step(vt_config_t *cfg, vt_setting_t setting, int dir)
{
	static const double delays[] = { 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30 };
	int k = 0, n = (int)(sizeof(delays) / sizeof(delays[0]));

	switch (setting) {
	case VT_SETTING_DELAY:
		/* from the nearest offered at or above the delay now (-d may have set one between) */
		while (k < n - 1 && delays[k] < cfg->delay)
			k++;
		k += dir;
		cfg->delay = delays[k < 0 ? 0 : k >= n ? n - 1 : k];
		break;
	case VT_SETTING_COLOR:
		cfg->color = (vt_color_t)((cfg->color + 3 + dir % 3) % 3);
		break;
	case VT_SETTING_ASCII:
		cfg->ascii = !cfg->ascii;
		break;
	case VT_SETTING_MOUSE:
		cfg->mouse = !cfg->mouse;
		break;
	case VT_SETTING_EXITED_KEEP:
		cfg->exited_keep += dir;
		if (cfg->exited_keep < 1)
			cfg->exited_keep = 1;
		if (cfg->exited_keep > 100)
			cfg->exited_keep = 100;
		break;
	}
}

int vt_config_column_move(vt_config_t *cfg, int i, int dir)
{
	int j = i + dir, tmp;

	if (i < 0 || i >= cfg->columns_nr || j < 0 || j >= cfg->columns_nr)
		return -1;
	tmp = cfg->columns[i];
	cfg->columns[i] = cfg->columns[j];
	cfg->columns[j] = tmp;
	return j;
}

int vt_config_column_remove(vt_config_t *cfg, int i)
{
	if (cfg->columns_nr <= 1 || i < 0 || i >= cfg->columns_nr)
		return -1;
	memmove(cfg->columns + i, cfg->columns + i + 1, sizeof(cfg->columns[0]) * (size_t)(cfg->columns_nr - i - 1));
	cfg->columns_nr--;
	return 0;
}

int vt_config_column_insert(vt_config_t *cfg, int at, int col)
{
	if (cfg->columns_nr >= VT_MAX_COLUMNS)
		return -1;
	if (at < 0)
		at = 0;
	if (at > cfg->columns_nr)
		at = cfg->columns_nr;
	memmove(cfg->columns + at + 1, cfg->columns + at, sizeof(cfg->columns[0]) * (size_t)(cfg->columns_nr - at));
	cfg->columns[at] = col;
	cfg->columns_nr++;
	return 0;
}

int vt_config_save(const vt_config_t *cfg, const char *path, char *err, size_t err_size)
{
	static const char *const colors[] = { "auto", "never", "always" };
	char tmp[PATH_MAX];
	FILE *f;
	int fd;

	if (!path || !path[0]) {
		snprintf(err, err_size, "no place for vtoprc: neither XDG_CONFIG_HOME nor HOME is set");
		return -1;
	}
	if (mkdir_parents(path) < 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp) || (fd = mkstemp(tmp)) < 0) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f, "# vtop settings, saved by the setup screen (F2); vtop(1) describes them.\n");
	fprintf(f, "columns = ");
	for (int i = 0; i < cfg->columns_nr; i++)
		fprintf(f, "%s%s", i ? "," : "", vt_columns[cfg->columns[i]].name);
	fprintf(f, "\nsort = %s%s\n", cfg->view.sort_desc[0] ? "-" : "+", vt_columns[cfg->view.sort_col[0]].name);
	fprintf(f, "tree_sort = %s%s\n", cfg->view.sort_desc[1] ? "-" : "+", vt_columns[cfg->view.sort_col[1]].name);
	fprintf(f, "tree = %s\n", cfg->view.tree ? "yes" : "no");
	fprintf(f, "threads = %s\n", cfg->view.threads ? "yes" : "no");
	fprintf(f, "kernel_threads = %s\n", cfg->view.kthreads ? "yes" : "no");
	fprintf(f, "exited_rows = %s\n", cfg->view.exited_rows ? "yes" : "no");
	fprintf(f, "program_path = %s\n", cfg->view.show_path ? "yes" : "no");
	fprintf(f, "delay = %g\n", cfg->delay);
	fprintf(f, "color = %s\n", colors[cfg->color]);
	fprintf(f, "ascii = %s\n", cfg->ascii ? "yes" : "no");
	fprintf(f, "mouse = %s\n", cfg->mouse ? "yes" : "no");
	fprintf(f, "exited_refreshes = %d\n", cfg->exited_keep);
	fprintf(f, "backend = %s\n", cfg->backend);
	fprintf(f, "source = %s\n", vmon_sampler_name(cfg->source));
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || ferror(f)) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, path) < 0) {
		snprintf(err, err_size, "cannot replace %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

void vt_usage(FILE *out)
{
	fprintf(out,
		"usage: vtop [options]\n"
		"  -d SECS            seconds between refreshes (default 1.5)\n"
		"  -p PID[,PID...]    show only these processes and their descendants\n"
		"  -u USER            show only USER's processes\n"
		"  -t, --tree         tree view (the default); --flat for a sorted list\n"
		"  -H                 show threads\n"
		"  -K                 show kernel threads\n"
		"  -s [+|-]COLUMN     sort by COLUMN (+ ascending, - descending)\n"
		"  -o COLUMNS         the columns, comma-separated (-o help lists them); with --events,\n"
		"                     the fields of json and csv (--events -o help lists them)\n"
		"  -b                 batch mode: print refreshes instead of a screen\n"
		"  -n N               batch mode: stop after N refreshes\n"
		"  --format FORMAT    batch output: text, json, csv, prometheus or openmetrics\n"
		"  --events           print process events as they arrive, one per line (--format text,\n"
		"                     json or csv)\n"
		"  -w, --write FILE   record every sample to FILE (a vmon_log(5) log) while showing them\n"
		"  -r, --replay FILE  show the samples recorded in FILE (- for standard input) instead of this\n"
		"                     machine now; with -b, print what the recording run printed\n"
		"  --backend NAME     the event feed: auto (default), ebpf, perf, netlink or none\n"
		"  --source NAME      how processes are sampled: auto (default), proc or iter\n"
		"  --color WHEN       auto, never or always (NO_COLOR in the environment means never)\n"
		"  --ascii            ASCII only: no line drawing, escape all non-ASCII text\n"
		"  --no-mouse         leave the mouse to the terminal\n"
		"  --exited N         refreshes an exited process stays listed (default 3)\n"
		"  --config FILE      settings file (default $XDG_CONFIG_HOME/vtop/vtoprc)\n"
		"  --version, --help\n"
		"Keys: h or F1 in vtop; everything in vtop(1).\n");
}

static void list_columns(void)
{
	printf("%-22s %-10s %s\n", "NAME", "LABEL", "DESCRIPTION");
	for (int i = 0; i < vt_columns_nr; i++)
		printf("%-22s %-10s %s\n", vt_columns[i].name, vt_columns[i].label, vt_columns[i].desc);
}

/* -o: the columns, or with --events the fields of json and csv; "help" lists them (1) */
static int parse_fields(vt_config_t *cfg, const char *arg)
{
	char err[256];
	int n;

	if (!strcmp(arg, "help")) {
		if (cfg->events)
			vt_event_fields_list(stdout);
		else
			list_columns();
		return 1;
	}
	if (cfg->events && cfg->format == VT_FORMAT_TEXT) {
		fprintf(stderr, "vtop: --events -o chooses the fields of --format json or csv; text has its own layout\n");
		return -1;
	}
	if (cfg->events)
		n = vt_event_fields_parse(arg, cfg->event_fields, VT_MAX_EVENT_FIELDS, err, sizeof(err));
	else
		n = vt_column_parse_list(arg, cfg->columns, VT_MAX_COLUMNS, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "vtop: -o: %s\n", err);
		return -1;
	}
	if (cfg->events)
		cfg->event_fields_nr = n;
	else
		cfg->columns_nr = n;
	return 0;
}

static int parse_pids(vt_config_t *cfg, const char *arg)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno || end == p || pid <= 0 || pid > INT_MAX || (*end && *end != ',')) {
			fprintf(stderr, "vtop: -p wants process ids separated by commas, not \"%s\"\n", arg);
			return -1;
		}
		if (cfg->pids_nr == VT_MAX_PIDS) {
			fprintf(stderr, "vtop: -p: at most %d processes\n", VT_MAX_PIDS);
			return -1;
		}
		cfg->pids[cfg->pids_nr++] = (int)pid;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_user(vt_config_t *cfg, const char *arg)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	long uid;

	if (getpwnam_r(arg, &pw, buf, sizeof(buf), &res) == 0 && res) {
		cfg->view.user_uid = res->pw_uid;
	} else if (parse_int(arg, 0, INT_MAX, &uid) == 0) {
		cfg->view.user_uid = (uid_t)uid;
	} else {
		fprintf(stderr, "vtop: -u: no user \"%s\"\n", arg);
		return -1;
	}
	cfg->view.user_set = true;
	snprintf(cfg->user_name, sizeof(cfg->user_name), "%s", arg);
	return 0;
}

enum {
	OPT_FORMAT = 256, OPT_BACKEND, OPT_SOURCE, OPT_EVENTS, OPT_VERSION, OPT_COLOR, OPT_NO_COLOR, OPT_ASCII,
	OPT_NO_MOUSE, OPT_CONFIG, OPT_FLAT, OPT_EXITED,
};

/* -w and -r: a path, kept whole */
static int set_path(char *dst, size_t size, const char *opt, const char *arg)
{
	if (!arg[0] || strlen(arg) >= size) {
		fprintf(stderr, "vtop: %s wants a file name%s\n", opt, arg[0] ? " shorter than that" : "");
		return -1;
	}
	snprintf(dst, size, "%s", arg);
	return 0;
}

static const struct option long_options[] = {
	{ "tree", no_argument, NULL, 't' },
	{ "flat", no_argument, NULL, OPT_FLAT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "events", no_argument, NULL, OPT_EVENTS },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "ascii", no_argument, NULL, OPT_ASCII },
	{ "no-mouse", no_argument, NULL, OPT_NO_MOUSE },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "exited", required_argument, NULL, OPT_EXITED },
	{ "write", required_argument, NULL, 'w' },
	{ "replay", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

static const char short_options[] = "d:p:u:tHKs:o:bn:hVw:r:";

int vt_config_args(vt_config_t *cfg, int argc, char **argv)
{
	char path[PATH_MAX] = "", err[256];
	const char *sort = NULL, *fields = NULL;
	int opt;

	/* the settings file first, so that every option overrides it */
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		if (opt == OPT_CONFIG)
			snprintf(path, sizeof(path), "%s", optarg);
	}
	if (path[0] || vt_config_path(path, sizeof(path)) == 0)
		vt_config_load(cfg, path);

	opterr = 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		long n;

		switch (opt) {
		case 'd':
			if (parse_seconds(optarg, &cfg->delay) < 0) {
				fprintf(stderr, "vtop: -d wants seconds from 0.05 to 86400, not \"%s\"\n", optarg);
				return -1;
			}
			break;
		case 'p':
			if (parse_pids(cfg, optarg) < 0)
				return -1;
			break;
		case 'u':
			if (parse_user(cfg, optarg) < 0)
				return -1;
			break;
		case 't':
			cfg->view.tree = true;
			break;
		case OPT_FLAT:
			cfg->view.tree = false;
			break;
		case 'H':
			cfg->view.threads = true;
			break;
		case 'K':
			cfg->view.kthreads = true;
			break;
		case 's':
			sort = optarg;	/* for the view chosen by all the options */
			break;
		case 'o':
			fields = optarg;	/* columns, or with --events the events' fields */
			break;
		case 'b':
			cfg->batch = true;
			break;
		case 'n':
			if (parse_int(optarg, 1, LONG_MAX, &n) < 0) {
				fprintf(stderr, "vtop: -n wants a count of at least 1, not \"%s\"\n", optarg);
				return -1;
			}
			cfg->iterations = n;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				cfg->format = VT_FORMAT_TEXT;
			else if (!strcmp(optarg, "json"))
				cfg->format = VT_FORMAT_JSON;
			else if (!strcmp(optarg, "csv"))
				cfg->format = VT_FORMAT_CSV;
			else if (!strcmp(optarg, "prometheus"))
				cfg->format = VT_FORMAT_PROMETHEUS;
			else if (!strcmp(optarg, "openmetrics"))
				cfg->format = VT_FORMAT_OPENMETRICS;
			else {
				fprintf(stderr, "vtop: --format: text, json, csv, prometheus or openmetrics, not \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case OPT_BACKEND:
			if (vt_feed_check_backend(optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "vtop: %s\n", err);
				return -1;
			}
			snprintf(cfg->backend, sizeof(cfg->backend), "%s", optarg);
			break;
		case OPT_SOURCE:
			if (parse_source(optarg, &cfg->source) < 0) {
				fprintf(stderr, "vtop: --source: auto, proc or iter, not \"%s\"\n", optarg);
				return -1;
			}
			break;
		case OPT_EVENTS:
			cfg->events = true;
			break;
		case OPT_VERSION:
		case 'V':
			printf("vtop %s (libvmon)\n", PACKAGE_VERSION);
			return 1;
		case 'h':
			vt_usage(stdout);
			return 1;
		case OPT_COLOR:
			if (parse_color(optarg, &cfg->color) < 0) {
				fprintf(stderr, "vtop: --color: auto, never or always, not \"%s\"\n", optarg);
				return -1;
			}
			break;
		case OPT_NO_COLOR:
			cfg->color = VT_COLOR_NEVER;
			break;
		case OPT_ASCII:
			cfg->ascii = true;
			break;
		case OPT_NO_MOUSE:
			cfg->mouse = false;
			break;
		case OPT_CONFIG:
			break;
		case 'w':
			if (set_path(cfg->write_path, sizeof(cfg->write_path), "-w", optarg) < 0)
				return -1;
			break;
		case 'r':
			if (set_path(cfg->replay_path, sizeof(cfg->replay_path), "-r", optarg) < 0)
				return -1;
			break;
		case OPT_EXITED:
			if (parse_int(optarg, 1, 100, &n) < 0) {
				fprintf(stderr, "vtop: --exited wants 1 to 100 refreshes, not \"%s\"\n", optarg);
				return -1;
			}
			cfg->exited_keep = (int)n;
			break;
		default:
			vt_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vtop: unexpected argument \"%s\"\n", argv[optind]);
		vt_usage(stderr);
		return -1;
	}
	if (fields && parse_fields(cfg, fields) != 0)
		return !strcmp(fields, "help") ? 1 : -1;
	if (cfg->events && cfg->format != VT_FORMAT_TEXT && cfg->format != VT_FORMAT_JSON && cfg->format != VT_FORMAT_CSV) {
		fprintf(stderr, "vtop: --events writes text, json or csv\n");
		return -1;
	}
	if (sort && parse_sort(sort, &cfg->view.sort_col[cfg->view.tree], &cfg->view.sort_desc[cfg->view.tree]) < 0) {
		fprintf(stderr, "vtop: -s: no column \"%s\" (vtop -o help lists them)\n", sort);
		return -1;
	}
	if (cfg->iterations && !cfg->batch && !cfg->events) {
		fprintf(stderr, "vtop: -n counts batch refreshes: use it with -b\n");
		return -1;
	}
	/* a replay shows what was recorded, as it was recorded */
	if (cfg->replay_path[0] && cfg->write_path[0]) {
		fprintf(stderr, "vtop: -r and -w: a replay is not recorded again (copy the file)\n");
		return -1;
	}
	if (!strcmp(cfg->replay_path, "-") && !cfg->batch && !cfg->events) {
		fprintf(stderr, "vtop: -r -: standard input is the terminal's on the screen: use it with -b\n");
		return -1;
	}
	if (cfg->replay_path[0] && cfg->pids_nr) {
		fprintf(stderr, "vtop: -p does not apply to a replay: it shows the processes that were recorded\n");
		return -1;
	}
	return 0;
}
