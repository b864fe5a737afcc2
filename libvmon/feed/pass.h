/*
 * pass.h: what the pass, the tree and a replay ask of the event feed
 * (feed.c), and its listeners; feed.h is its backends' side.
 */
#ifndef VMON_FEED_PASS_H
#define VMON_FEED_PASS_H

#include "core/instance.h"

int feed_open(vmon_t *vmon, const vmon_attr_t *attr);
void feed_close(vmon_t *vmon);
void feed_apply(vmon_t *vmon);
/* in a long pass, between nodes: the kernel buffer read if it is filling (its events wait for the next pass) */
void feed_keep_up(vmon_t *vmon);
bool feed_wants_listing(vmon_t *vmon);
void feed_listed(vmon_t *vmon);
void feed_node_gone(vmon_t *vmon, proc_node_t *node);
/* an event done with: counted, handed to every listener */
void feed_deliver(vmon_t *vmon, const vmon_event_t *event, proc_node_t *node);
/*
 * A listener hears every event the feed delivers, at the end of the pass
 * (node: the event's node in the tree, or NULL), in list order: `first`
 * puts it before the others.  `gone`, if any, is called when the instance
 * goes.  The caller's callback is one (vmon_feed_set_callback()); the
 * others subscribe themselves.
 */
typedef void feed_listener_fn(vmon_t *vmon, const vmon_event_t *event, proc_node_t *node, void *ctx);
int feed_listen(vmon_t *vmon, feed_listener_fn *fn, void (*gone)(void *ctx), void *ctx, bool first);
void feed_unlisten(vmon_t *vmon, feed_listener_fn *fn, void *ctx);
/* the context of fn's listener, or NULL: none */
void *feed_listener_ctx(vmon_t *vmon, feed_listener_fn *fn);
/* the events applied in this pass, to feed_deliver(), now that the tree is whole */
void feed_flush(vmon_t *vmon);
/* n events lost (0: some, how many unknown), as a source that replays events says */
void feed_count_lost(vmon_t *vmon, unsigned long long n);

#endif
