/*
 * stream.h: the feed's events for a caller's loop (stream.c), as feed.c
 * hands them over when it reads the kernel.
 */
#ifndef VMON_FEED_STREAM_H
#define VMON_FEED_STREAM_H

#include "core/internal.h"

typedef struct stream stream_t;

/* VMON_FEED_EVENTS, _AGGREGATE, _EXITS; window_ns: VMON_FEED_AGGREGATE's */
stream_t *stream_new(unsigned flags, unsigned long long window_ns);
void stream_free(stream_t *st);
/* one event as the kernel said it, in order; its strings are copied */
void stream_put(stream_t *st, const vmon_event_t *ev);
/* what the stream knows of a live process, into ev where ev lacks it */
void stream_complete(const stream_t *st, vmon_event_t *ev);
/* 1 and the next event (its strings valid until the next call), 0 none ready yet */
int stream_next(stream_t *st, vmon_event_t *ev, unsigned long long now_ns);
/* is the next entry one whose window is over (its events in the kernel still to be read first)? */
bool stream_window_over(stream_t *st, unsigned long long now_ns);
/* 1 and the ended process (its strings valid until the next call), 0 none */
int stream_lookup(stream_t *st, int pid, unsigned long long start, vmon_event_t *ev, unsigned long long now_ns);
/* milliseconds until the held event at the head is due, -1: none held */
int stream_due_ms(const stream_t *st, unsigned long long now_ns);
void stream_stats(const stream_t *st, vmon_feed_stats_t *stats);

#endif
