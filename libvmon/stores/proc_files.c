/*
 * proc_files.c: the PROC_FILES want (defs/proc_files.def): each process's
 * open file descriptors, and the file objects they refer to (fobject.c).
 *
 * The table is kept up to date incrementally, in time linear in the number
 * of fds.  /proc/PID/fd lists fds in increasing order (a fixture tree may
 * not: then the listing is sorted), and the table's list is kept in the same
 * order, so one merge of the two finds every fd opened, closed or still
 * there, without a search per fd.
 *
 * What can change for an fd, and so what is read when:
 *
 *  - Which numbers are open, and which file each refers to, change only
 *    when a task of the process runs: open, close, dup, exec, receiving an
 *    fd over a socket are all its own system calls.  So the fd directory is
 *    listed when the process may have run since the last sample: a
 *    single-threaded process whose schedstat says it was not on a CPU is not
 *    listed (procfs_ran()); a multi-threaded one always is, as /proc has no
 *    cheap word on whether any of its threads ran.  (Two rare ways around
 *    the rule: a process sharing its fd table without being a thread
 *    (clone(CLONE_FILES)), and an fd a seccomp supervisor adds to a blocked
 *    process; both show when the process next runs.)
 *  - The position and the status flags belong to the open file description,
 *    which other processes can share (after fork, or passed over a socket):
 *    they can move without the holder running.  fdinfo is re-read for every
 *    fd of a listed process; and when a read shows an fd's position or
 *    flags changed, or an fd closed (a sharer may write and then close),
 *    the fds of other processes on the same object are re-read at once if
 *    this pass has not read them.  Each fd is read at most once per pass.
 *    (A process that writes to a shared description and exits between two
 *    samples goes unseen: its fds were never read after the write.)
 *  - The target: a pipe's, socket's or namespace's names its inode, which
 *    an open file keeps for life, so it is read once; fdinfo's ino and
 *    mnt_id then tell a number that was closed and reused for another file
 *    (the old fd is closed, a new one opened, as with a reused pid).  A
 *    path changes when anyone renames or unlinks the file (" (deleted)"),
 *    and the kinds of anonymous inode share one inode number, so those
 *    targets are read again with every listing, and a sleeping process's
 *    paths every VMON_FILES_PATH_REFRESH_SECS.
 *
 * Threads share their process's table: a thread's store is its process's
 * vmon_proc_files_t, with one more reference (as the original header has
 * it), and sampling a thread reads nothing.
 *
 * Another user's process: opening its fd directory gives EACCES, recorded
 * in proc->errors[VMON_STORE_PROC_FILES]; it shows no fds.
 *
 * File descriptors: the table holds /proc/PID/fd and /proc/PID/fdinfo open
 * between samples while the fd budget allows (procfs.c), and opens them for
 * the pass otherwise.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "stores/fobject.h"

#define FIELD(_sym) (&vmon_proc_store_descs[VMON_STORE_PROC_FILES].fields[_sym])

/* how often the paths of a process that did not run are read again (renames by others) */
#define VMON_FILES_PATH_REFRESH_SECS 5.0

/* fdinfo is read up to here: the lines we want come first, and an epoll's can list every watched fd */
#define FDINFO_READ_MAX 4096

typedef struct files_table {
	vmon_proc_files_t	pub;		/* what callers see: first */
	proc_node_t		*owner;		/* the process whose fds these are; NULL once it is freed */
	int			fdinfo_fd;	/* /proc/PID/fdinfo, or -1 */
	bool			fd_dir_held;	/* pub.fd_dir survives the pass (counted in the budget) */
	bool			fdinfo_held;	/* fdinfo_fd survives the pass */
	bool			busy;		/* being sampled: proc_files_release() leaves it alone */
	bool			listed;		/* listed at least once */
	bool			force_list;	/* something says the fds moved: list at the next pass */
	int			changed_gen;	/* the generation of its last change (threads report it) */
	double			paths_read_at;	/* CLOCK_MONOTONIC seconds of the last read of its paths */
} files_table_t;

typedef struct fd_node {
	vmon_proc_fd_t		pub;		/* what callers see: first */
	int			pass;		/* the generation its changed[] and is_new are for */
	int			read_gen;	/* the generation of its last fdinfo read */
} fd_node_t;

/* what fdinfo says about an fd's identity and flags */
struct fdinfo {
	bool			has_ino, has_mnt_id, has_flags, has_id;
	unsigned long long	ino, mnt_id, flags, id;
};

static fd_node_t *fd_of(vmon_proc_fd_t *fd)
{
	return (fd_node_t *)fd;
}

static files_table_t *table_of(vmon_proc_fd_t *fd)
{
	return fd->process->stores[VMON_STORE_PROC_FILES];
}

/* the first touch of an fd in a pass clears what the last pass said changed */
static void fd_begin(vmon_t *vmon, fd_node_t *fd)
{
	if (fd->pass == vmon->generation)
		return;
	fd->pass = vmon->generation;
	memset(fd->pub.changed, 0, sizeof(fd->pub.changed));
	fd->pub.is_new = 0;
}

static void table_changed(vmon_t *vmon, files_table_t *t)
{
	t->changed_gen = vmon->generation;
	if (t->owner)
		t->owner->pub.activity |= VMON_WANT_PROC_FILES;
}

static int set_cstr(fd_node_t *fd, int sym, const char *value, bool first)
{
	const char **m = (const char **)((char *)&fd->pub + FIELD(sym)->offset);
	int diff = *m != value;

	*m = value;
	if (diff || first)
		BITSET(fd->pub.changed, sym);
	BITSET(fd->pub.present, sym);
	return diff;
}

static int set_ull(fd_node_t *fd, int sym, unsigned long long value, bool first)
{
	BITSET(fd->pub.present, sym);
	return parse_set_ull(FIELD(sym), &fd->pub, value, fd->pub.changed, first);
}

static const char *access_name(unsigned long long flags)
{
	if (flags & O_PATH)
		return "path";
	switch (flags & O_ACCMODE) {
	case O_RDONLY:	return "r";
	case O_WRONLY:	return "w";
	default:	return "rw";
	}
}

/* the fd's TYPE follows its object's, which SYS_SOCKETS or a later read may refine */
static int sync_type(fd_node_t *fd, bool first)
{
	return set_cstr(fd, VMON_FILES_TYPE, vmon_fobject_types[fd->pub.object->type].name, first);
}

/* --- reading --- */

static int dir_fd(files_table_t *t)
{
	return dirfd(t->pub.fd_dir);
}

/* fdinfo entry `name` of the directory dfd, up to FDINFO_READ_MAX bytes */
static int read_fdinfo(vmon_t *vmon, int dfd, const char *name, buf_t *buf)
{
	ssize_t r;
	int fd;

	if (buf_reserve(buf, FDINFO_READ_MAX) < 0)
		return -1;
	fd = procfs_openat(vmon, dfd, name, O_RDONLY);
	if (fd < 0)
		return -1;
	vmon->internal->stats.reads++;
	do {
		r = pread(fd, buf->data, FDINFO_READ_MAX, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	buf->len = (size_t)r;
	buf->data[r] = '\0';
	return 0;
}

/* the number after "key:" and blanks, in base; false if the line has none */
static bool line_number(const char *p, const char *eol, int base, unsigned long long *v)
{
	unsigned long long n = 0;
	const char *start;

	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	start = p;
	for (; p < eol && *p >= '0' && *p < '0' + base; p++) {
		if (n > (~0ull - (unsigned)(*p - '0')) / (unsigned)base)
			return false;
		n = n * (unsigned)base + (unsigned)(*p - '0');
	}
	if (p == start || (p < eol && *p != ' ' && *p != '\t'))
		return false;
	*v = n;
	return true;
}

/* the identity and flags lines of an fdinfo text; the rows are parsed by parse_store() */
static void fdinfo_scan(const char *text, size_t len, struct fdinfo *info)
{
	static const struct {
		const char	*key;
		size_t		len;
		int		base;
		size_t		has, value;
	} keys[] = {
		{ "ino:", 4, 10, offsetof(struct fdinfo, has_ino), offsetof(struct fdinfo, ino) },
		{ "mnt_id:", 7, 10, offsetof(struct fdinfo, has_mnt_id), offsetof(struct fdinfo, mnt_id) },
		{ "flags:", 6, 8, offsetof(struct fdinfo, has_flags), offsetof(struct fdinfo, flags) },
		{ "eventfd-id:", 11, 10, offsetof(struct fdinfo, has_id), offsetof(struct fdinfo, id) },
	};
	const char *line = text, *end = text + len;

	memset(info, 0, sizeof(*info));
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			unsigned long long v;

			if ((size_t)(eol - line) > keys[k].len && memcmp(line, keys[k].key, keys[k].len) == 0 &&
			    line_number(line + keys[k].len, eol, keys[k].base, &v)) {
				*(bool *)((char *)info + keys[k].has) = true;
				*(unsigned long long *)((char *)info + keys[k].value) = v;
				break;
			}
		}
		line = eol + 1;
	}
}

/* pos, mnt_id and ino by the generic key parser; flags (octal) and access here.  Returns changes or -1 */
static int apply_fdinfo(fd_node_t *fd, const buf_t *buf, const struct fdinfo *info, bool first)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_FILES];
	int changes, r;

	changes = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "fdinfo", buf->data, buf->len,
			      &fd->pub, fd->pub.changed, fd->pub.present, first);
	if (info->has_flags) {
		r = set_ull(fd, VMON_FILES_FLAGS, info->flags, first);
		set_cstr(fd, VMON_FILES_ACCESS, access_name(info->flags), first);
	} else {
		r = parse_clear(FIELD(VMON_FILES_FLAGS), &fd->pub, fd->pub.changed, fd->pub.present);
		parse_clear(FIELD(VMON_FILES_ACCESS), &fd->pub, fd->pub.changed, fd->pub.present);
	}
	if (changes < 0 || (!info->has_flags && buf->len)) {
		errno = EPROTO;
		return -1;
	}
	return changes + r;
}

/* "pipe:[123]": the number in the brackets after prefix, or 0 */
static unsigned long long bracket_ino(const char *s, size_t len, size_t prefix)
{
	const char *p = s + prefix, *end = s + len;
	unsigned long long v;

	if (len < prefix + 3 || p[-1] != ':' || *p++ != '[' || end[-1] != ']')
		return 0;
	if (!parse_ull(&p, end - 1, &v) || p != end - 1)
		return 0;
	return v;
}

/* the socket's protocol name, from the system.sockprotoname attribute of the socket inode */
static vmon_fobject_type_t socket_protocol(vmon_t *vmon, files_table_t *t, const char *name)
{
	char path[64], proto[64];
	ssize_t r;

	if (!vmon->internal->proc_is_live)
		return VMON_FOBJECT_TYPE_SOCKET;
	/* through our own fd on /proc/PID/fd: the same process whatever its pid became */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dir_fd(t), name);
	r = getxattr(path, "system.sockprotoname", proto, sizeof(proto) - 1);
	if (r <= 0)
		return VMON_FOBJECT_TYPE_SOCKET;
	while (r > 0 && proto[r - 1] == '\0')
		r--;
	return fobject_type_match(VMON_FOBJECT_TYPE_SOCKET, proto, (size_t)r);
}

static vmon_fobject_type_t mode_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:	return VMON_FOBJECT_TYPE_FILE;
	case S_IFDIR:	return VMON_FOBJECT_TYPE_DIR;
	case S_IFCHR:	return VMON_FOBJECT_TYPE_CHR;
	case S_IFBLK:	return VMON_FOBJECT_TYPE_BLK;
	case S_IFIFO:	return VMON_FOBJECT_TYPE_PIPE;
	case S_IFLNK:	return VMON_FOBJECT_TYPE_SYMLINK;
	default:	return VMON_FOBJECT_TYPE_UNRECOGNIZED;
	}
}

static bool is_anon(const char *link, size_t len)
{
	return len > 11 && memcmp(link, "anon_inode:", 11) == 0;
}

/* a namespace's target: "net:[4026531840]"; returns its inode, or 0 */
static unsigned long long namespace_ino(const char *link, size_t len)
{
	const char *colon = memchr(link, ':', len);

	if (!colon || fobject_type_match(VMON_FOBJECT_TYPE_NAMESPACE, link, (size_t)(colon - link)) !=
		      VMON_FOBJECT_TYPE_NAMESPACE)
		return 0;
	return bracket_ino(link, len, (size_t)(colon - link) + 1);
}

/* the inode a pipe's, socket's or namespace's target names, or 0 for other targets */
static unsigned long long pseudo_ino(const char *link, size_t len)
{
	if (len > 5 && memcmp(link, "pipe:", 5) == 0)
		return bracket_ino(link, len, 5);
	if (len > 7 && memcmp(link, "socket:", 7) == 0)
		return bracket_ino(link, len, 7);
	return namespace_ino(link, len);
}

/* is the target something that can change while the fd stays (a path), or that does not identify the file? */
static bool target_can_change(const vmon_fobject_t *obj)
{
	const fobject_node_t *n = (const fobject_node_t *)obj;

	switch (n->key.class) {
	case VMON_FOBJECT_TYPE_SOCKET:
	case VMON_FOBJECT_TYPE_NAMESPACE:
		return false;
	case VMON_FOBJECT_TYPE_PIPE:
		return n->key.dev != 0;	/* a FIFO opened by path */
	default:
		return true;
	}
}

/*
 * What the target, stat(2) (st, or NULL) and fdinfo say an fd refers to:
 * the key of its object, its type and inode number (fobject.h).
 */
static void classify(vmon_t *vmon, const char *link, size_t len, const struct stat *st,
		     const struct fdinfo *info, fobject_key_t *key, vmon_fobject_type_t *type)
{
	struct vmon_files *files = vmon->internal->files;
	unsigned long long ino;

	memset(key, 0, sizeof(*key));
	if (len > 5 && memcmp(link, "pipe:", 5) == 0 && (ino = bracket_ino(link, len, 5))) {
		key->class = *type = VMON_FOBJECT_TYPE_PIPE;
		key->ino = ino;
	} else if (len > 7 && memcmp(link, "socket:", 7) == 0 && (ino = bracket_ino(link, len, 7))) {
		key->class = *type = VMON_FOBJECT_TYPE_SOCKET;
		key->ino = ino;
	} else if (is_anon(link, len)) {
		const char *kind = link + 11;
		size_t klen = len - 11;
		bool shared;

		if (klen >= 2 && kind[0] == '[' && kind[klen - 1] == ']') {
			kind++;
			klen -= 2;
		}
		*type = fobject_type_match(VMON_FOBJECT_TYPE_ANON, kind, klen);
		key->class = VMON_FOBJECT_TYPE_ANON;
		if (st && files->anon_known)
			shared = (uint64_t)st->st_dev == files->anon_dev && (uint64_t)st->st_ino == files->anon_ino;
		else
			shared = !(st && *type == VMON_FOBJECT_TYPE_PIDFD);	/* pidfs gives each pid an inode */
		if (!shared) {
			key->dev = st->st_dev;
			key->ino = st->st_ino;
		} else {
			/* one inode for all: the kind and fdinfo's id, or nothing to tell two fds apart */
			key->ino = (uint64_t)*type;
			key->id = info->has_id ? info->id + 1 : fobject_unique_id(vmon);
		}
	} else if ((ino = namespace_ino(link, len))) {
		key->class = *type = VMON_FOBJECT_TYPE_NAMESPACE;
		key->ino = ino;
	} else if (st) {
		*type = mode_type(st->st_mode);
		key->class = vmon_fobject_types[*type].type_class;
		key->dev = st->st_dev;
		key->ino = st->st_ino;
	} else {
		/* no stat (a fixture's dangling link): an object of its own */
		key->class = *type = VMON_FOBJECT_TYPE_UNRECOGNIZED;
		key->id = fobject_unique_id(vmon);
	}
}

/* --- the fds of a table --- */

static void fd_free(vmon_t *vmon, files_table_t *t, fd_node_t *fd)
{
	vmon_fobject_t *obj = fd->pub.object;

	list_del(&fd->pub.fds);
	list_del(&fd->pub.ref_fds);
	obj->ref_fds_nr--;
	fobject_put(vmon, obj);
	parse_free_string(&fd->pub.object_path);
	free(fd);
}

static void refresh_sharers(vmon_t *vmon, fd_node_t *fd);

/* a stale fd was shown for one pass: it goes at the next.  Is fd stale? */
static bool fd_stale_done(vmon_t *vmon, files_table_t *t, fd_node_t *fd)
{
	if (!fd->pub.is_stale)
		return false;
	if (fd->pass != vmon->generation)
		fd_free(vmon, t, fd);
	return true;
}

/* the fd was closed: stale for this pass, freed at the next */
static void fd_closed(vmon_t *vmon, files_table_t *t, fd_node_t *fd)
{
	fd_begin(vmon, fd);
	fd->pub.is_stale = 1;
	t->pub.fds_nr--;
	t->pub.fds_changed = 1;
	table_changed(vmon, t);
	refresh_sharers(vmon, fd);
}

/*
 * A new fd: read its target, fdinfo and (for what the target does not
 * identify) stat, find its object, and link it before `before`.  Returns 1,
 * 0 if it was closed meanwhile, -1 on error.
 */
static int fd_new(vmon_t *vmon, files_table_t *t, int num, list_head_t *before)
{
	struct vmon_files *files = vmon->internal->files;
	bool live = vmon->internal->proc_is_live, created, have_st = false;
	vmon_fobject_type_t type;
	fobject_key_t key;
	struct fdinfo info;
	struct stat st;
	vmon_fobject_t *obj;
	fd_node_t *fd;
	char name[16];
	int err = 0;

	snprintf(name, sizeof(name), "%d", num);
	for (int attempt = 0; ; attempt++) {
		unsigned long long link_ino;
		bool retry;

		if (procfs_readlinkat(vmon, dir_fd(t), name, &files->link) < 0 ||
		    read_fdinfo(vmon, t->fdinfo_fd, name, &files->info) < 0)
			return errno == ENOENT ? 0 : -1;
		fdinfo_scan(files->info.data, files->info.len, &info);
		link_ino = pseudo_ino(files->link.data, files->link.len);
		if (!link_ino) {
			have_st = fstatat(dir_fd(t), name, &st, 0) == 0;
			if (!have_st && live && errno == ENOENT)
				return 0;
			retry = have_st && info.has_ino && (unsigned long long)st.st_ino != info.ino &&
				!is_anon(files->link.data, files->link.len);
		} else {
			retry = info.has_ino && link_ino != info.ino;
		}
		/* closed and reused between our reads: once more, then take what we have */
		if (!retry || attempt)
			break;
	}

	classify(vmon, files->link.data, files->link.len, have_st ? &st : NULL, &info, &key, &type);
	obj = fobject_get(vmon, &key, type, &created);
	if (!obj)
		return -1;
	if (created) {
		if (type == VMON_FOBJECT_TYPE_SOCKET)
			obj->type = socket_protocol(vmon, t, name);
		if (have_st) {
			obj->dev = st.st_dev;
			obj->inum = st.st_ino;
		} else if (!obj->inum && info.has_ino) {
			obj->inum = info.ino;
		}
		fobject_created(vmon, obj);
	}

	fd = calloc(1, sizeof(*fd));
	if (!fd) {
		fobject_put(vmon, obj);
		return -1;
	}
	fd->pub.process = &t->owner->pub;
	fd->pub.object = obj;
	list_add_tail(&fd->pub.ref_fds, &obj->ref_fds);
	obj->ref_fds_nr++;
	list_add_tail(&fd->pub.fds, before);
	fd->pub.is_new = 1;
	fd->pub.generation = vmon->generation;
	fd->pass = fd->read_gen = vmon->generation;

	set_ull(fd, VMON_FILES_FDNUM, (unsigned long long)num, true);
	if (parse_set_string(FIELD(VMON_FILES_OBJPATH), &fd->pub, files->link.data, files->link.len,
			     fd->pub.changed, true) < 0)
		err = errno;
	BITSET(fd->pub.present, VMON_FILES_OBJPATH);
	sync_type(fd, true);
	if (have_st)
		set_ull(fd, VMON_FILES_DEV, st.st_dev, true);
	if (apply_fdinfo(fd, &files->info, &info, true) < 0)
		err = errno;

	t->pub.fds_nr++;
	t->pub.fds_changed = 1;
	table_changed(vmon, t);
	if (err) {
		errno = err;
		return -1;
	}
	return 1;
}

/*
 * Does the target still name the file we know?  Only asked of paths and
 * anonymous inodes (target_can_change()).  A path that changed is the same
 * file renamed, moved or unlinked, unless its inode says otherwise (fdinfo
 * has no ino before Linux 5.14, so stat(2) tells then): the target is
 * updated.  Returns 1 same, 0 another file (or closed: *closed), -1 error.
 */
static int fd_same_target(vmon_t *vmon, files_table_t *t, fd_node_t *fd, const char *name, bool *closed)
{
	struct vmon_files *files = vmon->internal->files;
	vmon_proc_fd_t *p = &fd->pub;

	if (procfs_readlinkat(vmon, dir_fd(t), name, &files->link) < 0) {
		if (errno != ENOENT)
			return -1;
		*closed = true;
		return 0;
	}
	if (files->link.len == p->object_path.len && memcmp(files->link.data, p->object_path.array, p->object_path.len) == 0)
		return 1;
	if (is_anon(files->link.data, files->link.len) || is_anon(p->object_path.array, p->object_path.len))
		return 0;
	if (!BITTEST(p->present, VMON_FILES_INO)) {
		struct stat st;

		if (fstatat(dir_fd(t), name, &st, 0) == 0 &&
		    ((uint64_t)st.st_ino != p->object->inum || (uint64_t)st.st_dev != p->object->dev))
			return 0;
	}
	if (parse_set_string(FIELD(VMON_FILES_OBJPATH), p, files->link.data, files->link.len, p->changed, false) < 0)
		return -1;
	table_changed(vmon, t);
	return 1;
}

/*
 * Does the fd still refer to the file we know?  fdinfo's inode and mount,
 * eventfd's id, and for a path or an anonymous inode the target, tell.
 * Returns 1 same, 0 another file (or closed: *closed), -1 error.
 */
static int fd_same_file(vmon_t *vmon, files_table_t *t, fd_node_t *fd, const char *name,
			const struct fdinfo *info, bool *closed)
{
	vmon_proc_fd_t *p = &fd->pub;
	const fobject_node_t *n = fobject_node_of(p->object);

	*closed = false;
	if ((info->has_ino && BITTEST(p->present, VMON_FILES_INO) && info->ino != p->ino) ||
	    (info->has_mnt_id && BITTEST(p->present, VMON_FILES_MNT_ID) &&
	     info->mnt_id != (unsigned long long)p->mnt_id))
		return 0;
	if (n->key.class == VMON_FOBJECT_TYPE_ANON && n->key.dev == 0 && n->key.id <= 0xffffffffull &&
	    (!info->has_id || info->id + 1 != n->key.id))
		return 0;
	if (!target_can_change(p->object))
		return 1;
	return fd_same_target(vmon, t, fd, name, closed);
}

/*
 * Re-read a known fd of a listed process.  An fd whose number now holds
 * another file is closed and a new one takes its place.  Returns 0, or -1
 * with errno.
 */
static int fd_refresh(vmon_t *vmon, files_table_t *t, fd_node_t *fd)
{
	struct vmon_files *files = vmon->internal->files;
	struct fdinfo info;
	char name[16];
	bool closed = false;
	int r;

	snprintf(name, sizeof(name), "%d", fd->pub.fdnum);
	if (fd->read_gen == vmon->generation) {
		/* its fdinfo was read this pass already, for a sharer: the target is left */
		r = target_can_change(fd->pub.object) ? fd_same_target(vmon, t, fd, name, &closed) : 1;
	} else if (read_fdinfo(vmon, t->fdinfo_fd, name, &files->info) < 0) {
		if (errno != ENOENT)
			return -1;
		closed = true;
		r = 0;
	} else {
		fdinfo_scan(files->info.data, files->info.len, &info);
		r = fd_same_file(vmon, t, fd, name, &info, &closed);
		if (r > 0) {
			fd->read_gen = vmon->generation;
			r = apply_fdinfo(fd, &files->info, &info, false);
			if (r > 0 || BITTEST(fd->pub.changed, VMON_FILES_OBJPATH))
				table_changed(vmon, t);
			if (BITTEST(fd->pub.changed, VMON_FILES_POS) || BITTEST(fd->pub.changed, VMON_FILES_FLAGS))
				refresh_sharers(vmon, fd);
			return r < 0 ? -1 : 0;
		}
	}
	if (r != 0)
		return r < 0 ? -1 : 0;
	fd_closed(vmon, t, fd);
	if (closed)
		return 0;
	return fd_new(vmon, t, fd->pub.fdnum, fd->pub.fds.next) < 0 ? -1 : 0;
}

/*
 * Another process's fd on an object whose description may have moved: read
 * its fdinfo now, if this pass has not.  Only its position and flags are
 * taken; if it no longer holds the same file, its own pass will see that
 * (it ran), so it is only told to list.
 */
static void refresh_remote(vmon_t *vmon, files_table_t *t, fd_node_t *fd)
{
	struct vmon_files *files = vmon->internal->files;
	proc_node_t *owner = t->owner;
	struct fdinfo info;
	char name[32];
	int r;

	if (t->fdinfo_fd >= 0) {
		snprintf(name, sizeof(name), "%d", fd->pub.fdnum);
		r = read_fdinfo(vmon, t->fdinfo_fd, name, &files->info);
	} else {
		/* the owner's directory is in use: a budget shrink must leave it */
		proc_node_t *busy = vmon->internal->busy;
		int dir;

		vmon->internal->busy = owner;
		dir = procfs_node_dir(vmon, owner, true);
		snprintf(name, sizeof(name), "fdinfo/%d", fd->pub.fdnum);
		r = dir < 0 ? -1 : read_fdinfo(vmon, dir, name, &files->info);
		procfs_node_done(vmon, owner);
		vmon->internal->busy = busy;
	}
	if (r < 0) {
		t->force_list = true;
		return;
	}
	fdinfo_scan(files->info.data, files->info.len, &info);
	if ((info.has_ino && info.ino != fd->pub.ino) ||
	    (info.has_mnt_id && info.mnt_id != (unsigned long long)fd->pub.mnt_id)) {
		t->force_list = true;
		return;
	}
	fd_begin(vmon, fd);
	fd->read_gen = vmon->generation;
	if (apply_fdinfo(fd, &files->info, &info, false) > 0)
		table_changed(vmon, t);
}

static void refresh_sharers(vmon_t *vmon, fd_node_t *fd)
{
	vmon_fobject_t *obj = fd->pub.object;
	files_table_t *t = table_of(&fd->pub);
	vmon_proc_fd_t *other;

	if (obj->ref_fds_nr < 2)
		return;
	list_for_each_entry(other, &obj->ref_fds, ref_fds) {
		files_table_t *ot = table_of(other);

		if (ot == t || other->is_stale || fd_of(other)->read_gen == vmon->generation ||
		    !ot->owner || ot->owner->life.left)
			continue;
		refresh_remote(vmon, ot, fd_of(other));
	}
}

/* --- a table --- */

static void table_close_handles(vmon_t *vmon, files_table_t *t, bool held_too)
{
	if (t->pub.fd_dir && (held_too || !t->fd_dir_held)) {
		closedir(t->pub.fd_dir);
		t->pub.fd_dir = NULL;
		if (t->fd_dir_held)
			vmon->internal->fds_held--;
		t->fd_dir_held = false;
	}
	if (t->fdinfo_fd >= 0 && (held_too || !t->fdinfo_held)) {
		close(t->fdinfo_fd);
		t->fdinfo_fd = -1;
		if (t->fdinfo_held)
			vmon->internal->fds_held--;
		t->fdinfo_held = false;
	}
}

/* /proc/PID/fd (and with fdinfo, /proc/PID/fdinfo), held when the budget allows */
static int table_open_handles(vmon_t *vmon, files_table_t *t, bool fdinfo)
{
	proc_node_t *node = t->owner;
	int dir, fd;

	if (!t->pub.fd_dir) {
		DIR *d;

		dir = procfs_node_dir(vmon, node, true);
		if (dir < 0)
			return -1;
		fd = procfs_openat(vmon, dir, "fd", O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			if (errno == ENOENT)
				errno = ESRCH;
			return -1;
		}
		d = fdopendir(fd);
		if (!d) {
			int err = errno;

			close(fd);
			errno = err;
			return -1;
		}
		t->pub.fd_dir = d;
		t->fd_dir_held = procfs_hold(vmon);
	}
	if (fdinfo && t->fdinfo_fd < 0) {
		dir = procfs_node_dir(vmon, node, true);
		if (dir < 0)
			return -1;
		fd = procfs_openat(vmon, dir, "fdinfo", O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			if (errno == ENOENT)
				errno = ESRCH;
			return -1;
		}
		t->fdinfo_fd = fd;
		t->fdinfo_held = procfs_hold(vmon);
	}
	return 0;
}

static int num_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* the fd numbers of the listing, in increasing order, into files->nums; returns how many or -1 */
static ssize_t list_fds(vmon_t *vmon, files_table_t *t)
{
	struct vmon_files *files = vmon->internal->files;
	struct dirent *de;
	size_t nr = 0;
	bool sorted = true;

	rewinddir(t->pub.fd_dir);
	vmon->internal->stats.reads++;
	errno = 0;
	while ((de = readdir(t->pub.fd_dir))) {
		const char *p = de->d_name;
		unsigned long long v;

		if (!parse_ull(&p, p + strlen(p), &v) || *p || v > 0x7fffffff) {
			errno = 0;
			continue;	/* . and .. */
		}
		if (nr == files->nums_cap) {
			size_t cap = files->nums_cap ? files->nums_cap * 2 : 256;
			int *nums = realloc(files->nums, cap * sizeof(*nums));

			if (!nums)
				return -1;
			files->nums = nums;
			files->nums_cap = cap;
		}
		if (nr && files->nums[nr - 1] >= (int)v)
			sorted = false;
		files->nums[nr++] = (int)v;
		errno = 0;
	}
	if (errno) {
		if (errno == ENOENT)
			errno = ESRCH;
		return -1;
	}
	if (!sorted)
		qsort(files->nums, nr, sizeof(*files->nums), num_cmp);
	return (ssize_t)nr;
}

/*
 * The listing merged into the table: both are in fd order, so one walk
 * finds the closed (in the table, not listed), the new (listed, not in the
 * table) and the known (both), which are re-read.
 */
static int table_merge(vmon_t *vmon, files_table_t *t, const int *nums, size_t nr)
{
	list_head_t *head = &t->pub.fds, *pos = head->next;
	size_t i = 0;
	int err = 0;

	while (pos != head || i < nr) {
		fd_node_t *fd = pos != head ? list_entry(pos, fd_node_t, pub.fds) : NULL;
		list_head_t *next = pos->next;

		if (fd && fd_stale_done(vmon, t, fd)) {
			pos = next;
			continue;
		}
		if (i < nr && (i + 1 < nr && nums[i] == nums[i + 1])) {
			i++;	/* a duplicate in a fixture's listing */
			continue;
		}
		if (fd && (i == nr || fd->pub.fdnum < nums[i])) {
			fd_closed(vmon, t, fd);
			pos = next;
			continue;
		}
		if (fd && fd->pub.fdnum == nums[i]) {
			fd_begin(vmon, fd);
			sync_type(fd, false);
			if (fd_refresh(vmon, t, fd) < 0 && !err)
				err = errno;
			if (!fd->pub.is_stale)	/* else its number holds another file now */
				fd->pub.generation = vmon->generation;
			pos = next;
			i++;
			continue;
		}
		if (fd_new(vmon, t, nums[i], pos) < 0 && !err)
			err = errno;
		i++;
	}
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* a process not listed this pass: its fds are as they were, seen again */
static void table_carry(vmon_t *vmon, files_table_t *t)
{
	fd_node_t *fd, *tmp;

	list_for_each_entry_safe(fd, tmp, &t->pub.fds, pub.fds) {
		if (fd_stale_done(vmon, t, fd))
			continue;
		fd_begin(vmon, fd);
		fd->pub.generation = vmon->generation;
		if (sync_type(fd, false))
			table_changed(vmon, t);
	}
}

/*
 * The paths of a process that did not run, every VMON_FILES_PATH_REFRESH_SECS:
 * someone may have renamed or unlinked them.  Returns 0, 1 if an fd is
 * gone after all (list the process), -1 on error.
 */
static int table_refresh_paths(vmon_t *vmon, files_table_t *t)
{
	struct vmon_files *files = vmon->internal->files;
	fd_node_t *fd;
	char name[16];

	t->paths_read_at = vmon->internal->now;
	list_for_each_entry(fd, &t->pub.fds, pub.fds) {
		vmon_proc_fd_t *p = &fd->pub;

		if (p->is_stale || !target_can_change(p->object) || is_anon(p->object_path.array, p->object_path.len))
			continue;
		if (!t->pub.fd_dir && table_open_handles(vmon, t, false) < 0)
			return -1;
		snprintf(name, sizeof(name), "%d", p->fdnum);
		if (procfs_readlinkat(vmon, dir_fd(t), name, &files->link) < 0)
			return errno == ENOENT ? 1 : -1;
		if (parse_set_string(FIELD(VMON_FILES_OBJPATH), p, files->link.data, files->link.len,
				     p->changed, false) > 0)
			table_changed(vmon, t);
	}
	return 0;
}

/* every fd closed: the process cannot be read any more (EACCES after a setuid exec) */
static void table_close_all(vmon_t *vmon, files_table_t *t)
{
	fd_node_t *fd, *tmp;

	list_for_each_entry_safe(fd, tmp, &t->pub.fds, pub.fds) {
		if (!fd_stale_done(vmon, t, fd))
			fd_closed(vmon, t, fd);
	}
}

static int table_sample(vmon_t *vmon, proc_node_t *node, files_table_t *t)
{
	struct _vmon_internal *in = vmon->internal;
	ssize_t nr;
	int ran;

	t->pub.fds_changed = 0;
	if (node->line.num_threads > 1) {
		ran = 1;
	} else {
		/* asked on the first pass too: that read is the next one's baseline */
		ran = procfs_ran(vmon, node);
		if (!t->listed || t->force_list)
			ran = 1;
	}

	if (ran == 0) {
		int r = 0;

		table_carry(vmon, t);
		if (in->now - t->paths_read_at >= VMON_FILES_PATH_REFRESH_SECS)
			r = table_refresh_paths(vmon, t);
		if (r <= 0) {
			in->stats.reads_skipped += 1 + (unsigned long long)t->pub.fds_nr;
			return r;
		}
		/* an fd went away after all: list it */
	}

	if (table_open_handles(vmon, t, true) < 0) {
		int err = errno;

		/* a fixture tree captured without fd directories: no fds, not a vanished process */
		if (err == ESRCH && !vmon->internal->proc_is_live && t->owner->fds.dir_fd >= 0 &&
		    faccessat(t->owner->fds.dir_fd, "fd", F_OK, 0) < 0 && errno == ENOENT) {
			table_carry(vmon, t);
			table_close_all(vmon, t);
			return 0;
		}
		if (err != ESRCH)
			table_close_all(vmon, t);
		errno = err;
		return -1;
	}
	nr = list_fds(vmon, t);
	if (nr < 0)
		return -1;
	t->listed = true;
	t->force_list = false;
	t->paths_read_at = in->now;
	return table_merge(vmon, t, vmon->internal->files->nums, (size_t)nr);
}

static files_table_t *table_new(proc_node_t *node)
{
	files_table_t *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pub.refcnt = 1;
	INIT_LIST_HEAD(&t->pub.fds);
	t->owner = node;
	t->fdinfo_fd = -1;
	return t;
}

int proc_files_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	struct _vmon_internal *in = vmon->internal;
	files_table_t *t = *store;
	int r;

	if (proc->is_thread) {
		/* the process's table, sampled just before its threads */
		files_table_t *pt = proc->parent ? proc->parent->stores[VMON_STORE_PROC_FILES] : NULL;

		if (!t && pt) {
			*store = t = pt;
			pt->pub.refcnt++;
		}
		return t && t->changed_gen == vmon->generation ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}
	if (!files_state(vmon))
		return -1;
	if (!t) {
		t = table_new(node_of(proc));
		if (!t)
			return -1;
		*store = t;
	}

	t->busy = true;
	r = table_sample(vmon, node_of(proc), t);
	t->busy = false;

	/* the pass's own handles go; held ones too if the budget shrank meanwhile */
	table_close_handles(vmon, t, in->fds_held > in->fd_budget);
	if (r < 0)
		return -1;
	return t->changed_gen == vmon->generation ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

void proc_files_release(vmon_t *vmon, vmon_proc_t *proc)
{
	files_table_t *t = proc->stores[VMON_STORE_PROC_FILES];

	if (!t || proc->is_thread || t->busy)
		return;
	table_close_handles(vmon, t, true);
}

/* the node leaves: a process takes its fds with it; the memory goes with the last reference */
void proc_files_put(vmon_t *vmon, vmon_proc_t *proc)
{
	files_table_t *t = proc->stores[VMON_STORE_PROC_FILES];

	if (!t)
		return;
	proc->stores[VMON_STORE_PROC_FILES] = NULL;
	if (!proc->is_thread && t->owner == node_of(proc)) {
		fd_node_t *fd, *tmp;

		list_for_each_entry_safe(fd, tmp, &t->pub.fds, pub.fds)
			fd_free(vmon, t, fd);
		t->pub.fds_nr = 0;
		table_close_handles(vmon, t, true);
		t->owner = NULL;
	}
	if (--t->pub.refcnt == 0)
		free(t);
}
