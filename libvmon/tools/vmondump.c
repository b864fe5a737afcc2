/*
 * vmondump: print the process tree of the whole system with
 * vmon_dump_procs(), or of the given pids and their descendants.
 *
 *	vmondump [-n SAMPLES] [-d SECONDS] [-t] [PID...]
 *
 * It samples SAMPLES times (default 2, so that the second dump shows what
 * changed), SECONDS apart (default 1), and dumps after the last sample.
 * -t follows threads.  Exit status: 0, or 1 with a message on stderr.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmon.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmondump [-n SAMPLES] [-d SECONDS] [-t] [PID...]\n");
}

static void sleep_seconds(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	vmon_proc_wants_t proc_wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS |
				       VMON_WANT_PROC_IO | VMON_WANT_PROC_FOLLOW_CHILDREN;
	vmon_flags_t flags = VMON_FLAG_PROC_ALL;
	double delay = 1.0;
	long samples = 2;
	vmon_t vmon;
	int opt;

	while ((opt = getopt(argc, argv, "n:d:th")) != -1) {
		char *end;

		switch (opt) {
		case 'n':
			samples = strtol(optarg, &end, 10);
			if (*end || samples < 1) {
				fprintf(stderr, "vmondump: -n wants a count of at least 1, not \"%s\"\n", optarg);
				return 1;
			}
			break;
		case 'd':
			delay = strtod(optarg, &end);
			if (*end || delay < 0) {
				fprintf(stderr, "vmondump: -d wants seconds, not \"%s\"\n", optarg);
				return 1;
			}
			break;
		case 't':
			proc_wants |= VMON_WANT_PROC_FOLLOW_THREADS;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc)
		flags = VMON_FLAG_NONE;

	if (!vmon_init(&vmon, flags, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM, proc_wants)) {
		fprintf(stderr, "vmondump: cannot start libvmon: %s\n", strerror(errno));
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		char *end;
		long pid = strtol(argv[i], &end, 10);

		if (*end || pid <= 0 || pid > 0x7fffffff) {
			fprintf(stderr, "vmondump: \"%s\" is not a pid\n", argv[i]);
			vmon_destroy(&vmon);
			return 1;
		}
		if (!vmon_proc_monitor(&vmon, (int)pid, VMON_WANT_PROC_INHERIT, NULL, NULL)) {
			fprintf(stderr, "vmondump: cannot monitor %ld: %s\n", pid, strerror(errno));
			vmon_destroy(&vmon);
			return 1;
		}
	}
	for (long i = 0; i < samples; i++) {
		if (i)
			sleep_seconds(delay);
		if (!vmon_sample(&vmon)) {
			fprintf(stderr, "vmondump: sampling failed: %s\n", strerror(errno));
			vmon_destroy(&vmon);
			return 1;
		}
	}
	vmon_dump_procs(&vmon, stdout);
	vmon_destroy(&vmon);
	return 0;
}
