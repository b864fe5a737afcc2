/*
 * main.c: vtop, a top/htop-class viewer of the process tree, built on
 * libvmon alone.  The settings decide between the screen (screen/tui.c)
 * and batch output (batch/batch.c).
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#ifdef HAVE_MALLOPT
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vtop.h"
#include "data/columns.h"

int main(int argc, char **argv)
{
	vt_config_t cfg;
	int r;

	setlocale(LC_ALL, "");
	if (vt_columns_init() < 0) {
		fprintf(stderr, "vtop: the column table: %s\n", strerror(errno));
		return 1;
	}
	vt_config_defaults(&cfg);
	r = vt_config_args(&cfg, argc, argv);
	if (r > 0)
		return 0;
	if (r < 0)
		return 2;
	if (cfg.batch || cfg.events)
		return vt_batch_run(&cfg);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "vtop: not a terminal; use -b for batch output\n");
		return 2;
	}
#ifdef HAVE_MALLOPT
	/*
	 * One malloc arena for both threads.  The sampling thread's own arena
	 * kept what a storm of short lives left scattered in it: after 20,000
	 * lives, 7.7 MB resident of which 2 MB in use, which malloc_trim() did
	 * not give back; in the main arena the same settles within 20 s
	 * (vtop_bench --churn).  The two threads take turns at the sampler's
	 * lock, so they seldom wait for each other's malloc.
	 */
	mallopt(M_ARENA_MAX, 1);
#endif
	return vt_tui_run(&cfg);
}
