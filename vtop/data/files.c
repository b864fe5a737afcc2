/*
 * files.c: the open files of one process, copied out of the library for
 * the files view (files_view.c), like lsof -p, with who else holds each of
 * its pipes and sockets.
 *
 * Runs in the sampling thread, the only one that touches the vmon_t: what
 * the screen reads is a vt_files_t in the snapshot's arena, every string
 * in it escaped.  The other holders of a pipe or a socket are the other
 * fds on its fobject's ref_fds, so they are only known for processes whose
 * open files are sampled: the sampler takes PROC_FILES for every process
 * while the view is open (vt_source_set_files()), and SYS_SOCKETS for the
 * sockets' addresses.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "data/snapshot.h"

/* text made for the snapshot: escaped (flags) into the arena */
static const char *arena_escaped(vt_arena_t *arena, const char *s, size_t len, unsigned flags)
{
	size_t n = vmon_escape(NULL, 0, s, len, flags);
	char *out = vt_arena_alloc(arena, n + 1);

	if (!out)
		return NULL;
	vmon_escape(out, n + 1, s, len, flags);
	return out;
}

/* "127.0.0.1:631 -> 0.0.0.0:0 LISTEN", or a unix socket's "PATH CONNECTED" */
static const char *socket_text(vt_arena_t *arena, const vmon_fobject_t *obj, unsigned flags)
{
	const vmon_fobject_socket_t *s = obj->socket;
	const char *local;
	char *out;
	size_t n;

	if (!s)
		return NULL;
	local = arena_escaped(arena, s->local.array ? s->local.array : "", s->local.array ? s->local.len : 0, flags);
	if (!local)
		return NULL;
	n = strlen(local) + (s->remote.array ? s->remote.len : 0) + 32;
	out = vt_arena_alloc(arena, n);
	if (!out)
		return NULL;
	if (s->remote.len)
		snprintf(out, n, "%s -> %s %s", local, s->remote.array, s->state_name ? s->state_name : "?");
	else
		snprintf(out, n, "%s%s%s", local, *local ? " " : "", s->state_name ? s->state_name : "?");
	return out;
}

/* the fds of other processes on the object of a pipe or a socket */
static int copy_holders(vt_arena_t *arena, const vmon_proc_fd_t *fd, unsigned flags, vt_file_t *out)
{
	vmon_fobject_type_t class = vmon_fobject_types[fd->object->type].type_class;
	const vmon_field_t *comm = &vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_COMM];
	const vmon_proc_fd_t *other;
	int nr = 0;

	if (class != VMON_FOBJECT_TYPE_PIPE && class != VMON_FOBJECT_TYPE_SOCKET)
		return 0;
	list_for_each_entry(other, &fd->object->ref_fds, ref_fds)
		nr += other->process != fd->process && !other->is_stale;
	if (!nr)
		return 0;
	out->holders = vt_arena_alloc(arena, sizeof(*out->holders) * (size_t)(nr < VT_FILES_HOLDERS_MAX ? nr : VT_FILES_HOLDERS_MAX));
	if (!out->holders)
		return -1;
	list_for_each_entry(other, &fd->object->ref_fds, ref_fds) {
		const vmon_proc_stat_t *st = other->process->stores[VMON_STORE_PROC_STAT];
		vt_file_holder_t *h;
		char buf[64];

		if (other->process == fd->process || other->is_stale)
			continue;
		if (out->holders_nr == VT_FILES_HOLDERS_MAX) {
			out->holders_more++;
			continue;
		}
		h = &out->holders[out->holders_nr++];
		h->pid = other->process->pid;
		h->fd = other->fdnum;
		h->access = other->access ? other->access : "?";
		if (st)
			vmon_field_format(comm, st, buf, sizeof(buf), flags);
		else
			snprintf(buf, sizeof(buf), "?");
		h->comm = vt_arena_strndup(arena, buf, strlen(buf));
		if (!h->comm)
			return -1;
	}
	return 0;
}

int vt_files_build(vmon_t *vmon, int pid, unsigned escape_flags, vt_snapshot_t *snap)
{
	const vmon_field_t *name = &vmon_proc_store_descs[VMON_STORE_PROC_FILES].fields[VMON_FILES_OBJPATH];
	vt_arena_t *arena = &snap->arena;
	vmon_proc_t *proc = vmon_proc_lookup(vmon, pid);
	vmon_proc_files_t *table;
	vmon_proc_fd_t *fd;
	vt_files_t *f;
	int n = 0;

	f = vt_arena_alloc(arena, sizeof(*f));
	if (!f)
		return -1;
	memset(f, 0, sizeof(*f));
	f->pid = pid;
	snap->files = f;
	if (!proc) {
		f->gone = true;
		return 0;
	}
	table = proc->stores[VMON_STORE_PROC_FILES];
	f->error = proc->errors[VMON_STORE_PROC_FILES];
	if (!table) {
		f->pending = !f->error;
		return 0;
	}
	list_for_each_entry(fd, &table->fds, fds)
		f->nr++;
	f->files = vt_arena_alloc(arena, sizeof(*f->files) * (size_t)(f->nr ? f->nr : 1));
	if (!f->files)
		return -1;
	list_for_each_entry(fd, &table->fds, fds) {
		vt_file_t *out = &f->files[n++];
		size_t len = (size_t)vmon_field_format(name, fd, NULL, 0, escape_flags);
		char *text = vt_arena_alloc(arena, len + 1);

		memset(out, 0, sizeof(*out));
		if (!text)
			return -1;
		vmon_field_format(name, fd, text, len + 1, escape_flags);
		out->name = text;
		out->fd = fd->fdnum;
		out->type = fd->type ? fd->type : "?";
		out->access = fd->access ? fd->access : "";
		out->pos = fd->pos;
		out->flags = fd->flags;
		out->is_new = fd->is_new;
		out->closed = fd->is_stale;
		f->open_nr += !fd->is_stale;
		out->socket = socket_text(arena, fd->object, escape_flags);
		if (copy_holders(arena, fd, escape_flags, out) < 0)
			return -1;
	}
	return 0;
}
