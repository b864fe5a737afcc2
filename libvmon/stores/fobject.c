/*
 * fobject.c: the open file objects (vmon_fobject_t) and their index.
 *
 * Every object is on vmon->fobjects (through its `bucket`, as the original
 * header has it) and in a private hash index by key (fobject.h says what a
 * key is), so that finding the object of an fd costs the same whatever the
 * number of open files on the system.  An object lives as long as something
 * holds a reference: each fd on its ref_fds, and the SYS_SOCKETS table for
 * a socket it lists.  The caller's fobject_ctor_cb runs when an object is
 * created, fobject_dtor_cb when its last reference goes.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stores/fobject.h"

/*
 * The one inode that most anonymous files share (anon_inode_inode): learnt
 * from an eventfd of our own, so that an anonymous file with an inode of its
 * own (pidfd on pidfs, io_uring and userfaultfd on newer kernels) can be
 * told from the shared one by its stat(2).
 */
static void learn_anon_inode(vmon_t *vmon, struct vmon_files *files)
{
	struct stat st;
	int fd;

	if (!vmon->internal->proc_is_live)
		return;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		files->anon_dev = st.st_dev;
		files->anon_ino = st.st_ino;
		files->anon_known = true;
	}
	close(fd);
}

struct vmon_files *files_state(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	struct vmon_files *files = in->files;

	if (files)
		return files;
	files = calloc(1, sizeof(*files));
	if (!files)
		return NULL;
	INIT_LIST_HEAD(&files->table_objs);
	learn_anon_inode(vmon, files);
	in->files = files;
	return files;
}

/* every object is gone by now (their holders were freed first): only the index is left */
void files_fini(vmon_t *vmon)
{
	struct vmon_files *files = vmon->internal->files;

	if (!files)
		return;
	vhash_fini(&files->index);
	free(files->nums);
	buf_free(&files->link);
	buf_free(&files->info);
	free(files);
	vmon->internal->files = NULL;
}

static uint64_t key_hash(const fobject_key_t *key)
{
	uint64_t h = vhash_mix((uint64_t)key->class, key->dev);

	return vhash_mix(vhash_mix(h, key->ino), key->id);
}

static bool key_equal(const fobject_key_t *a, const fobject_key_t *b)
{
	return a->class == b->class && a->dev == b->dev && a->ino == b->ino && a->id == b->id;
}

vmon_fobject_t *fobject_find(vmon_t *vmon, const fobject_key_t *key)
{
	struct vmon_files *files = vmon->internal->files;
	uint64_t h = key_hash(key);

	if (!files)
		return NULL;
	/* two keys may share a hash: each entry of it is compared whole */
	for (size_t pos = vhash_find(&files->index, h); pos != VHASH_END; pos = vhash_find_next(&files->index, h, pos)) {
		fobject_node_t *n = vhash_val_at(&files->index, pos);

		if (key_equal(&n->key, key))
			return &n->pub;
	}
	return NULL;
}

vmon_fobject_t *fobject_get(vmon_t *vmon, const fobject_key_t *key, vmon_fobject_type_t type, bool *created)
{
	struct vmon_files *files = files_state(vmon);
	vmon_fobject_t *obj;
	fobject_node_t *n;

	if (!files)
		return NULL;
	obj = fobject_find(vmon, key);
	*created = false;
	if (obj) {
		obj->refcnt++;
		return obj;
	}
	n = calloc(1, sizeof(*n));
	if (!n || vhash_add(&files->index, key_hash(key), n) < 0) {
		free(n);
		return NULL;
	}
	n->key = *key;
	INIT_LIST_HEAD(&n->pub.ref_fds);
	INIT_LIST_HEAD(&n->table_link);
	n->pub.inum = key->ino;
	n->pub.dev = key->dev;
	n->pub.type = type;
	n->pub.refcnt = 1;
	list_add_tail(&n->pub.bucket, &vmon->fobjects);
	vmon->fobjects_nr++;
	*created = true;
	return &n->pub;
}

/* a new object is complete (type, dev, inum): the caller may hang its data on it now */
void fobject_created(vmon_t *vmon, vmon_fobject_t *obj)
{
	if (vmon->fobject_ctor_cb)
		vmon->fobject_ctor_cb(vmon, obj);
}

void fobject_socket_free(vmon_fobject_socket_t *s)
{
	if (!s)
		return;
	parse_free_string(&s->local);
	parse_free_string(&s->remote);
	free(s);
}

void fobject_put(vmon_t *vmon, vmon_fobject_t *obj)
{
	struct vmon_files *files = vmon->internal->files;
	fobject_node_t *n = fobject_node_of(obj);

	if (--obj->refcnt > 0)
		return;
	if (vmon->fobject_dtor_cb)
		vmon->fobject_dtor_cb(vmon, obj);
	vhash_remove(&files->index, key_hash(&n->key), n);
	list_del(&obj->bucket);
	vmon->fobjects_nr--;
	list_del(&n->table_link);
	fobject_socket_free(obj->socket);
	free(n);
}

uint64_t fobject_unique_id(vmon_t *vmon)
{
	/* above any eventfd-id + 1 the kernel hands out (they are ints) */
	return (1ull << 32) + vmon->internal->files->next_unique++;
}

/* is name one of the |-separated words of list? */
static bool in_list(const char *list, const char *name, size_t len)
{
	for (const char *p = list; *p; ) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == len && memcmp(p, name, len) == 0)
			return true;
		p += n + (bar ? 1 : 0);
	}
	return false;
}

static const struct type_match {
	vmon_fobject_type_t	type;
	vmon_fobject_type_t	class;
	const char		*match;
} type_matches[] = {
#define vmon_fobject_type(_sym, _name, _class, _match, _desc) \
	{ VMON_FOBJECT_TYPE_ ## _sym, VMON_FOBJECT_TYPE_ ## _class, _match },
#include "defs/fobject_types.def"
};

vmon_fobject_type_t fobject_type_match(vmon_fobject_type_t class, const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(type_matches) / sizeof(type_matches[0]); i++) {
		const struct type_match *m = &type_matches[i];

		if (m->class == class && *m->match && in_list(m->match, name, len))
			return m->type;
	}
	return class;
}
