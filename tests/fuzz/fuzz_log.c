/*
 * fuzz_log.c: libFuzzer on the log reader and the replay (vmon_log(5)).
 *
 * The input is a log stream, fed to a memory parser in chunks whose size
 * the first byte picks (1 to 64 bytes, so that every REQUIRE_DATA path is
 * taken), each record read, every field of every sample formatted, and
 * every sample replayed into a vmon_t.  Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which skips the records'
 * checksums: a fuzzer cannot forge them, and what they guard is what it
 * must reach.  `make fuzz` runs it (tests/fuzz/local.mk).
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vmon.h"
#include "vmon_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void format_store(const vmon_store_desc_t *desc, const void *store)
{
	char buf[256];

	if (!store)
		return;
	for (int i = 0; i < desc->fields_nr; i++) {
		if (desc->fields[i].offset + desc->fields[i].size <= desc->size)
			vmon_field_format(&desc->fields[i], store, buf, sizeof(buf), 0);
	}
}

static void sample(const vmon_log_sample_t *s)
{
	for (int i = 0; i < VMON_STORE_SYS_NR; i++)
		format_store(&vmon_sys_store_descs[i], s->sys_stores[i]);
	for (int p = 0; p < s->procs_nr; p++) {
		for (int i = 0; i < VMON_STORE_PROC_NR; i++)
			format_store(&vmon_proc_store_descs[i], s->procs[p].stores[i]);
	}
}

/* what a replay hands over is read whole: its texts, and the node it names */
static void on_event(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	volatile size_t sum = 0;

	(void)vmon;
	(void)arg;
	if (ev->filename)
		sum += strlen(ev->filename);
	for (size_t i = 0; ev->args && i < ev->args_len; i++)
		sum += (unsigned char)ev->args[i];
	if (proc && proc->pid != ev->pid)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk = size ? 1 + data[0] % 64 : 1, fed = 0;
	vmon_log_t *log = vmon_log_open(VMON_LOG_FD_NONE);
	vmon_log_record_t rec;
	bool replaying = false;
	vmon_t vmon;

	if (!log)
		return 0;
	for (;;) {
		if (vmon_log_read(log, &rec) == 0) {
			if (rec.type == VMON_LOG_HEADER && !replaying) {
				replaying = vmon_log_replay_init(&vmon, rec.u.header, VMON_FLAG_PROC_ARRAY) == 0;
				if (replaying)
					vmon_feed_set_callback(&vmon, on_event, NULL);
			}
			if (rec.type == VMON_LOG_SAMPLE)
				sample(rec.u.sample);
			if (replaying && rec.type != VMON_LOG_HEADER)
				vmon_log_replay_record(&vmon, &rec);
			continue;
		}
		if (rec.state != VMON_LOG_REQUIRE_DATA || fed == size)
			break;
		vmon_log_feed(log, data + fed, size - fed < chunk ? size - fed : chunk);
		fed += size - fed < chunk ? size - fed : chunk;
	}
	if (replaying)
		vmon_destroy(&vmon);
	vmon_log_close(log);
	return 0;
}
