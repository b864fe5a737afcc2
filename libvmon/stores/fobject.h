/*
 * fobject.h: the open file objects, as proc_files.c and sys_sockets.c share
 * them (fobject.c).  Not installed.
 *
 * An object is found by its key.  The kernel's identity of an open file is
 * its inode, but not every inode names one object:
 *   - pipes, sockets and namespaces have inode numbers unique in their
 *     pseudo file system, and the number is in their link target: the key
 *     is (class, 0, ino), the same whether or not stat(2) could be asked;
 *   - a file system object is (class, st_dev, st_ino);
 *   - most anonymous inodes (eventfd, epoll, timerfd, signalfd, inotify...)
 *     are one inode shared by every such file of the system.  Where fdinfo
 *     names the object (eventfd-id) the key is (class, 0, 0, that id + 1);
 *     otherwise /proc cannot tell whether two fds share one, and each fd
 *     gets an object of its own (a unique id).  Anonymous files with an
 *     inode of their own (pidfd on pidfs) are keyed by it.
 */
#ifndef VMON_FOBJECT_H
#define VMON_FOBJECT_H

#include "core/internal.h"
#include "util/hash.h"

typedef struct fobject_key {
	vmon_fobject_type_t	class;	/* vmon_fobject_types[type].type_class */
	uint64_t		dev;
	uint64_t		ino;
	uint64_t		id;	/* tells apart objects sharing one inode; 0 when the inode is enough */
} fobject_key_t;

typedef struct fobject_node {
	vmon_fobject_t		pub;		/* what callers see: first */
	fobject_key_t		key;
	bool			table_held;	/* SYS_SOCKETS lists it and holds a reference */
	int			table_seen;	/* the generation its row was last listed */
	list_head_t		table_link;	/* in files->table_objs while table_held */
} fobject_node_t;

static inline fobject_node_t *fobject_node_of(vmon_fobject_t *obj)
{
	return (fobject_node_t *)obj;
}

/* the open-files state of an instance, created on first use */
struct vmon_files {
	vhash_t		index;		/* the objects by their key's hash */
	uint64_t	next_unique;	/* ids for objects /proc cannot identify */
	list_head_t	table_objs;	/* objects SYS_SOCKETS holds */
	int		*nums;		/* fd numbers of the listing being merged */
	size_t		nums_cap;
	buf_t	link;		/* a link target */
	buf_t	info;		/* an fdinfo file */
	bool		anon_known;	/* anon_dev/anon_ino are the shared anonymous inode */
	uint64_t	anon_dev, anon_ino;
};

struct vmon_files *files_state(vmon_t *vmon);
vmon_fobject_t *fobject_find(vmon_t *vmon, const fobject_key_t *key);
/*
 * The object of key, created if new (then *created is set, and the caller
 * calls fobject_created() once it has filled it in); the caller owns one
 * more reference.
 */
vmon_fobject_t *fobject_get(vmon_t *vmon, const fobject_key_t *key, vmon_fobject_type_t type, bool *created);
void fobject_created(vmon_t *vmon, vmon_fobject_t *obj);
/* drop a reference; the last one calls the dtor and frees the object */
void fobject_put(vmon_t *vmon, vmon_fobject_t *obj);
uint64_t fobject_unique_id(vmon_t *vmon);
void fobject_socket_free(vmon_fobject_socket_t *socket);
/* the type of a socket protocol name or an anonymous inode kind; class itself when unknown */
vmon_fobject_type_t fobject_type_match(vmon_fobject_type_t class, const char *name, size_t len);

#endif
