/*
 * internal.h: the headers of libvmon's parts, together, for the files that
 * use most of them; nothing outside the library sees them.  Each concern's
 * header is in its folder (core/, sources/, stores/, feed/, log/, util/).
 */
#ifndef VMON_INTERNAL_H
#define VMON_INTERNAL_H

#include "core/instance.h"
#include "core/tree.h"
#include "core/ended.h"
#include "sources/source.h"
#include "sources/procfs.h"
#include "stores/parse.h"
#include "stores/stores.h"
#include "feed/pass.h"
#include "util/host.h"

#endif
