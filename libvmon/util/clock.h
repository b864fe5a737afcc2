/*
 * clock.h: the one clock helper of libvmon (and of vtop, which links the
 * same convenience library, libvmon/util/libvmonutil.la): a clock's
 * reading as seconds, for intervals and deadlines (CLOCK_MONOTONIC), or as
 * nanoseconds, for event times (CLOCK_BOOTTIME) and CPU cost
 * (CLOCK_THREAD_CPUTIME_ID).  Every clock these name is always there on
 * Linux; should a read fail, the reading is 0.
 */
#ifndef VMON_UTIL_CLOCK_H
#define VMON_UTIL_CLOCK_H

#include <time.h>

double vclock_secs(clockid_t id);
unsigned long long vclock_ns(clockid_t id);

#endif
