/*
 * libbpf_said.h: libbpf's last complaint while a BPF program loads
 * (host.c), for the reason line of the event feed's backend and of the task
 * iterator; the library starts no threads, so one buffer serves.  And
 * host_libbpf_loaded(), after a load: the heap it used given back.
 */
#ifndef VMON_LIBBPF_SAID_H
#define VMON_LIBBPF_SAID_H

#include <stdarg.h>
#include <bpf/libbpf.h>

extern char host_libbpf_said[200];
int host_libbpf_capture(enum libbpf_print_level level, const char *fmt, va_list ap);
void host_libbpf_loaded(void);

#endif
