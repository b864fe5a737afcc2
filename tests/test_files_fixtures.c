/*
 * test_files_fixtures.c: the open-files wants on hand-made /proc trees:
 * odd /proc/net tables, fd entries of every kind, changes between
 * snapshots, files shared between processes, and a process with 100,000
 * fds (more than this machine's fd limit lets a live process hold).
 *
 * A fixture fd is a symbolic link to the target text the kernel would show
 * ("pipe:[5000]"), with an fdinfo file beside it.  A path target points at a
 * file inside the fixture, so that stat(2) through it gives a real device
 * and inode to check against.  A fixture process "runs" when its schedstat
 * count moves (fixture_ran()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files_testlib.h"

#define FDINFO_PIPE_R	"pos:\t0\nflags:\t00\nmnt_id:\t16\nino:\t%d\n"
#define FDINFO_PIPE_W	"pos:\t0\nflags:\t01\nmnt_id:\t16\nino:\t%d\n"

static void fx_fd(fixture_t *fx, int pid, int fd, const char *target, const char *fdinfo)
{
	char path[64];

	snprintf(path, sizeof(path), "%d/fd/%d", pid, fd);
	fixture_symlink(fx, path, target);
	if (fdinfo) {
		snprintf(path, sizeof(path), "%d/fdinfo/%d", pid, fd);
		fixture_printf(fx, path, "%s", fdinfo);
	}
}

static void fx_fdinfo(fixture_t *fx, int pid, int fd, const char *fdinfo)
{
	char path[64];

	snprintf(path, sizeof(path), "%d/fdinfo/%d", pid, fd);
	fixture_printf(fx, path, "%s", fdinfo);
}

static void fx_close(fixture_t *fx, int pid, int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "%d/fd/%d", pid, fd);
	fixture_remove(fx, path);
	snprintf(path, sizeof(path), "%d/fdinfo/%d", pid, fd);
	fixture_remove(fx, path);
}

static void fx_proc(fixture_t *fx, int pid)
{
	static const char *const argv[] = { "holder", NULL };

	fixture_proc(fx, pid, 1, NULL, 'S', 100 + (unsigned long long)pid, argv);
}

/* the object of class `class` with inode ino */
static vmon_fobject_t *find_object(vmon_t *vmon, vmon_fobject_type_t class, uint64_t ino)
{
	vmon_fobject_t *obj;

	list_for_each_entry(obj, &vmon->fobjects, bucket) {
		if (obj->inum == ino && vmon_fobject_types[obj->type].type_class == class)
			return obj;
	}
	return NULL;
}

static int count_objects(vmon_t *vmon)
{
	vmon_fobject_t *obj;
	int n = 0;

	list_for_each_entry(obj, &vmon->fobjects, bucket)
		n++;
	return n;
}

static vmon_sys_sockets_t *sockets(vmon_t *vmon)
{
	return vmon->stores[VMON_STORE_SYS_SOCKETS];
}

/* --- /proc/net --- */

static void write_net_tables(fixture_t *fx)
{
	fixture_printf(fx, "net/tcp",
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		/* 127.0.0.1:631 listening, uid 0 */
		"   0: 0100007F:0277 00000000:0000 0A 00000000:00000003 00:00000000 00000000     0        0 7001 1 0000000000000000 100 0 0 10 0\n"
		/* 10.0.0.1:22 <- 10.0.0.2:40000, established, queues in hex */
		"   1: 0100000A:0016 0200000A:9C40 01 0000001F:00000002 02:000A7D5F 00000000  1000        0 7002 4 0000000000000000 20 4 31 10 -1\n"
		/* TIME_WAIT: no socket, inode 0 */
		"   2: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000\n"
		/* cut short after the addresses */
		"   3: 0100007F:1F91 00000000:0000 0A\n"
		"garbage that is not a socket at all\n"
		/* an IPv6-sized address in the IPv4 table */
		"   4: 00000000000000000000000001000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7003 1\n"
		/* an inode that overflows */
		"   5: 0100007F:0278 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99999999999999999999999 1\n");
	fixture_printf(fx, "net/tcp6",
		"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		/* [::1]:22 listening */
		"   0: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7101 1 0000000000000000 100 0 0 10 0\n"
		/* [::ffff:127.0.0.1]:8080 established to [2001:db8::1]:443 */
		"   1: 0000000000000000FFFF00000100007F:1F90 B80D0120000000000000000001000000:01BB 01 00000000:00000000 00:00000000 00000000   123        0 7102 1 0000000000000000 20 4 30 10 -1");
	fixture_printf(fx, "net/udp",
		"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
		"  100: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000   104        0 7201 2 0000000000000000 0\n"
		"  101: 0100007F:0035 0100007F:E2F1 01 00000000:00000000 00:00000000 00000000     0        0 7202 2 0000000000000000 0\n");
	/* no udp6: a kernel without IPv6 */
	fixture_printf(fx, "net/unix",
		"Num       RefCount Protocol Flags    Type St Inode Path\n"
		"0000000000000000: 00000002 00000000 00010000 0001 01  7301 /run/systemd/notify socket\n"
		"0000000000000000: 00000002 00000000 00000000 0002 01  7302 @/tmp/.X11-unix/X0\n"
		"0000000000000000: 00000003 00000000 00000000 0001 03  7303\n"
		"0000000000000000: 00000003 00000000 00000000 0005 03 7304 \n"
		"0000000000000000: 00000002 00000000\n"
		"zzzz: 00000002 00000000 00000000 0001 01  7305\n");
}

static void test_net_tables(void **state)
{
	vmon_fobject_socket_t *s;
	vmon_fobject_t *obj;
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	write_net_tables(&fx);
	assert_true(fixture_vmon(&fx, &vmon, 0, VMON_WANT_SYS_SOCKETS, 0));
	sample_checked(&vmon);
	/* malformed lines are skipped and said, the rest is there */
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_SOCKETS], EPROTO);
	assert_int_equal(sockets(&vmon)->malformed, 6);
	assert_int_equal(sockets(&vmon)->tcp_nr, 5);
	assert_int_equal(sockets(&vmon)->tcp_listen_nr, 2);
	assert_int_equal(sockets(&vmon)->udp_nr, 2);
	assert_int_equal(sockets(&vmon)->unix_nr, 4);
	assert_int_equal(vmon.fobjects_nr, 10);	/* every row with an inode */
	assert_int_equal(count_objects(&vmon), 10);

	obj = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7001);
	assert_non_null(obj);
	assert_int_equal(obj->type, VMON_FOBJECT_TYPE_TCP);
	assert_int_equal(obj->refcnt, 1);	/* the table's */
	assert_int_equal(obj->ref_fds_nr, 0);
	s = obj->socket;
	assert_string_equal(s->local.array, "127.0.0.1:631");
	assert_string_equal(s->remote.array, "0.0.0.0:0");
	assert_string_equal(s->state_name, "LISTEN");
	assert_int_equal(s->rx_queue, 3);
	assert_int_equal(s->family, AF_INET);
	assert_true(BITTEST(s->changed, VMON_FOBJECT_SOCKET_LOCAL));

	s = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7002)->socket;
	assert_string_equal(s->local.array, "10.0.0.1:22");
	assert_string_equal(s->remote.array, "10.0.0.2:40000");
	assert_string_equal(s->state_name, "ESTABLISHED");
	assert_int_equal(s->tx_queue, 31);
	assert_int_equal(s->uid, 1000);

	s = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7101)->socket;
	assert_string_equal(s->local.array, "[::1]:22");
	assert_int_equal(s->family, AF_INET6);
	s = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7102)->socket;
	assert_string_equal(s->local.array, "[::ffff:127.0.0.1]:8080");
	assert_string_equal(s->remote.array, "[2001:db8::1]:443");
	assert_int_equal(s->uid, 123);

	obj = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7201);
	assert_int_equal(obj->type, VMON_FOBJECT_TYPE_UDP);
	assert_string_equal(obj->socket->state_name, "UNCONN");
	assert_string_equal(obj->socket->local.array, "0.0.0.0:5353");
	assert_int_equal(obj->socket->sock_type, SOCK_DGRAM);

	obj = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7301);
	assert_int_equal(obj->type, VMON_FOBJECT_TYPE_UNIX);
	assert_string_equal(obj->socket->local.array, "/run/systemd/notify socket");
	assert_string_equal(obj->socket->state_name, "LISTEN");
	assert_string_equal(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7302)->socket->local.array, "@/tmp/.X11-unix/X0");
	assert_int_equal(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7302)->socket->sock_type, SOCK_DGRAM);
	assert_string_equal(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7303)->socket->local.array, "");
	assert_string_equal(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7303)->socket->state_name, "CONNECTED");
	assert_int_equal(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7304)->socket->sock_type, SOCK_SEQPACKET);
	assert_null(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7003));
	assert_null(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7305));

	/* the next snapshot: a socket closed, one changed state, the garbage fixed */
	fixture_printf(&fx, "net/tcp",
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7001 1\n"
		"   1: 0100000A:0016 0200000A:9C40 08 00000000:00000000 02:000A7D5F 00000000  1000        0 7002 4\n");
	fixture_printf(&fx, "net/unix", "Num       RefCount Protocol Flags    Type St Inode Path\n");
	fixture_remove(&fx, "net/tcp6");
	sample_checked(&vmon);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_SOCKETS], 0);
	assert_int_equal(sockets(&vmon)->malformed, 0);
	assert_int_equal(sockets(&vmon)->tcp_nr, 2);
	assert_int_equal(sockets(&vmon)->unix_nr, 0);
	assert_true(BITTEST(sockets(&vmon)->changed, VMON_SYS_SOCKETS_UNIX));
	assert_int_equal(vmon.fobjects_nr, 4);
	s = find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7002)->socket;
	assert_string_equal(s->state_name, "CLOSE_WAIT");
	assert_true(BITTEST(s->changed, VMON_FOBJECT_SOCKET_STATE));
	assert_false(BITTEST(s->changed, VMON_FOBJECT_SOCKET_LOCAL));
	assert_true(vmon.activity & VMON_WANT_SYS_SOCKETS);
	assert_null(find_object(&vmon, VMON_FOBJECT_TYPE_SOCKET, 7301));

	/* nothing moved: nothing changed */
	sample_checked(&vmon);
	assert_false(vmon.activity & VMON_WANT_SYS_SOCKETS);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* empty and missing tables, and a table that is one unterminated line */
static void test_net_tables_empty(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	fixture_printf(&fx, "net/unix", "%s", "");
	fixture_printf(&fx, "net/udp", "%s", "   0: 0100007F:0035");
	assert_true(fixture_vmon(&fx, &vmon, 0, VMON_WANT_SYS_SOCKETS, 0));
	sample_checked(&vmon);
	assert_int_equal(sockets(&vmon)->unix_nr, 0);
	assert_int_equal(sockets(&vmon)->udp_nr, 0);
	assert_int_equal(sockets(&vmon)->malformed, 1);
	assert_int_equal(vmon.fobjects_nr, 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}


/* the socket tables taken after init and dropped again: their objects come and go with them */
static void test_sys_wants_change(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	write_net_tables(&fx);
	assert_true(fixture_vmon(&fx, &vmon, 0, 0, 0));
	sample_checked(&vmon);
	assert_int_equal(vmon.fobjects_nr, 0);
	assert_null(vmon.stores[VMON_STORE_SYS_SOCKETS]);

	errno = 0;
	assert_int_equal(vmon_set_sys_wants(&vmon, (vmon_sys_wants_t)(1L << 30)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vmon_set_sys_wants(&vmon, VMON_WANT_SYS_SOCKETS), 0);
	assert_true(vmon.sys_wants & VMON_WANT_SYS_SOCKETS);
	vmon_sample(&vmon);	/* the fixture's garbage lines: EPROTO, and the good rows */
	assert_fobjects_consistent(&vmon);
	assert_int_equal(vmon.fobjects_nr, 10);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_SOCKETS], EPROTO);

	assert_int_equal(vmon_set_sys_wants(&vmon, 0), 0);
	assert_null(vmon.stores[VMON_STORE_SYS_SOCKETS]);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_SOCKETS], 0);
	assert_int_equal(vmon.fobjects_nr, 0);
	assert_true(list_empty(&vmon.fobjects));
	sample_checked(&vmon);
	assert_int_equal(vmon.fobjects_nr, 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* --- fd entries --- */

static void make_fd_fixture(fixture_t *fx, char *file, size_t size, char *file2, size_t size2)
{
	fixture_printf(fx, "data/file.txt", "%s", "0123456789");
	fixture_printf(fx, "data/other.txt", "%s", "abc");
	snprintf(file, size, "%s/data/file.txt", fx->root);
	snprintf(file2, size2, "%s/data/other.txt", fx->root);
	fixture_printf(fx, "net/unix",
		"Num       RefCount Protocol Flags    Type St Inode Path\n"
		"0000000000000000: 00000002 00000000 00010000 0001 01  6000 /run/test.sock\n");

	fx_proc(fx, 1);
	fx_proc(fx, 100);
	fx_fd(fx, 100, 0, "/dev/null", "pos:\t0\nflags:\t0100000\nmnt_id:\t24\n");
	fx_fd(fx, 100, 1, "pipe:[5000]", "pos:\t0\nflags:\t01\nmnt_id:\t16\nino:\t5000\n");
	fx_fd(fx, 100, 2, "pipe:[5000]", "pos:\t0\nflags:\t01\nmnt_id:\t16\nino:\t5000\n");
	fx_fd(fx, 100, 3, "socket:[6000]", "pos:\t0\nflags:\t02004002\nmnt_id:\t10\nino:\t6000\n");
	fx_fd(fx, 100, 4, "anon_inode:[eventfd]",
	      "pos:\t0\nflags:\t02\nmnt_id:\t17\nino:\t1038\neventfd-count:                0\neventfd-id: 7\n");
	fx_fd(fx, 100, 5, "anon_inode:inotify", "pos:\t0\nflags:\t00\nmnt_id:\t17\nino:\t1038\n");
	fx_fd(fx, 100, 6, "net:[4026531840]", "pos:\t0\nflags:\t02000000\nmnt_id:\t4\nino:\t4026531840\n");
	fx_fd(fx, 100, 7, file, "pos:\t42\nflags:\t0100002\nmnt_id:\t27\n");
	fx_fd(fx, 100, 8, "anon_inode:[eventpoll]",
	      "pos:\t0\nflags:\t02\nmnt_id:\t17\nino:\t1038\ntfd:        4 events:       19 data:                0  pos:0 ino:40e sdev:10\n");
	fx_fd(fx, 100, 9, "/dev/null", "pos:\tabc\nflags:\t01\nmnt_id:\t24\n");
	fx_fd(fx, 100, 10, "/nonexistent/file", "pos:\t0\nflags:\t00\nmnt_id:\t27\n");
	fx_fd(fx, 100, 11, "pipe:[5001]", NULL);	/* closed between listing and reading */
	fx_fd(fx, 100, 12, "anon_inode:[pidfd]", "pos:\t0\nflags:\t02000002\nmnt_id:\t4\nino:\t41654\nPid:\t1\n");
	fx_fd(fx, 100, 100, "pipe:[5002]", "pos:\t0\nflags:\t00\nmnt_id:\t16\nino:\t5002\n");

	fx_proc(fx, 200);
	fx_fd(fx, 200, 0, "pipe:[5000]", "pos:\t0\nflags:\t00\nmnt_id:\t16\nino:\t5000\n");
	fx_fd(fx, 200, 1, "anon_inode:[eventfd]", "pos:\t0\nflags:\t02\nmnt_id:\t17\nino:\t1038\neventfd-id: 7\n");
	fx_fd(fx, 200, 2, "anon_inode:[eventpoll]", "pos:\t0\nflags:\t02\nmnt_id:\t17\nino:\t1038\n");
	fx_fd(fx, 200, 3, file, "pos:\t42\nflags:\t0100000\nmnt_id:\t27\n");
}

static void test_fd_entries(void **state)
{
	char file[512], file2[512];
	vmon_proc_t *p100, *p200;
	vmon_proc_fd_t *fd;
	struct stat st, null_st;
	fixture_t fx;
	vmon_t vmon;
	int n = 0, last = -1;

	fixture_init(&fx);
	make_fd_fixture(&fx, file, sizeof(file), file2, sizeof(file2));
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(stat("/dev/null", &null_st), 0);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_SOCKETS, VMON_WANT_PROC_FILES));
	sample_checked(&vmon);
	p100 = must_find(&vmon, 100);
	p200 = must_find(&vmon, 200);

	/* in numeric order, whatever order the directory gave; fd 11 vanished */
	list_for_each_entry(fd, &files_of(p100)->fds, fds) {
		assert_true(fd->fdnum > last);
		last = fd->fdnum;
		n++;
	}
	assert_int_equal(n, 13);
	assert_int_equal(files_of(p100)->fds_nr, 13);
	assert_null(fd_find(p100, 11, false));
	assert_int_equal(last, 100);

	/* fd 9's fdinfo is garbage: said, and the fd is still there */
	assert_int_equal(p100->errors[VMON_STORE_PROC_FILES], EPROTO);
	assert_false(BITTEST(must_fd(p100, 9)->present, VMON_FILES_POS));
	assert_string_equal(must_fd(p100, 9)->type, "chr");

	fd = must_fd(p100, 0);
	assert_string_equal(fd->type, "chr");
	assert_int_equal(fd->object->inum, null_st.st_ino);
	assert_int_equal(fd->dev, null_st.st_dev);
	assert_ptr_equal(fd->object, must_fd(p100, 9)->object);
	assert_string_equal(fd->access, "r");

	fd = must_fd(p100, 1);
	assert_string_equal(fd->type, "pipe");
	assert_string_equal(fd->access, "w");
	assert_ptr_equal(fd->object, must_fd(p100, 2)->object);
	assert_ptr_equal(fd->object, must_fd(p200, 0)->object);
	assert_int_equal(fd->object->refcnt, 3);
	assert_int_equal(fd->object->ref_fds_nr, 3);
	assert_int_equal(fd->ino, 5000);
	assert_int_equal(fd->mnt_id, 16);

	fd = must_fd(p100, 3);
	assert_string_equal(fd->type, "unix");
	assert_int_equal(fd->flags, 02004002);
	assert_string_equal(fd->access, "rw");
	assert_int_equal(fd->object->refcnt, 2);	/* the fd and the socket table */
	assert_string_equal(fd->object->socket->local.array, "/run/test.sock");

	fd = must_fd(p100, 4);
	assert_string_equal(fd->type, "eventfd");
	assert_ptr_equal(fd->object, must_fd(p200, 1)->object);	/* the same eventfd-id */
	assert_int_equal(fd->object->refcnt, 2);
	assert_string_equal(must_fd(p100, 5)->type, "inotify");
	assert_string_equal(must_fd(p100, 6)->type, "ns");
	assert_int_equal(must_fd(p100, 6)->object->inum, 4026531840ull);
	assert_string_equal(must_fd(p100, 12)->type, "pidfd");

	fd = must_fd(p100, 7);
	assert_string_equal(fd->type, "file");
	assert_string_equal(fd->object_path.array, file);
	assert_int_equal(fd->pos, 42);
	assert_int_equal(fd->flags, 0100002);	/* the kernel's O_LARGEFILE | O_RDWR */
	assert_int_equal(fd->object->inum, st.st_ino);
	assert_int_equal(fd->object->dev, st.st_dev);
	assert_ptr_equal(fd->object, must_fd(p200, 3)->object);
	assert_false(BITTEST(fd->present, VMON_FILES_INO));	/* an older kernel's fdinfo */

	/* epoll has no id: its fds cannot be told to share, each is its own object */
	assert_string_equal(must_fd(p100, 8)->type, "epoll");
	assert_ptr_not_equal(must_fd(p100, 8)->object, must_fd(p200, 2)->object);
	assert_int_equal(must_fd(p100, 8)->object->refcnt, 1);

	assert_string_equal(must_fd(p100, 10)->type, "?");
	assert_int_equal(must_fd(p100, 10)->object->type, VMON_FOBJECT_TYPE_UNRECOGNIZED);

	/* vmon_field_format() shows every row of an fd */
	for (int sym = 0; sym < VMON_PROC_FILES_NR; sym++) {
		char buf[256];

		assert_true(vmon_field_format(&vmon_proc_store_descs[VMON_STORE_PROC_FILES].fields[sym],
					      must_fd(p100, 3), buf, sizeof(buf), 0) >= 0);
		if (sym == VMON_FILES_TYPE)
			assert_string_equal(buf, "unix");
		if (sym == VMON_FILES_OBJPATH)
			assert_string_equal(buf, "socket:[6000]");
	}
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_fd_changes(void **state)
{
	char file[512], file2[512], path[600];
	vmon_proc_t *p100;
	vmon_proc_fd_t *fd, *old;
	vmon_stats_t before, after;
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	make_fd_fixture(&fx, file, sizeof(file), file2, sizeof(file2));
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_FILES));
	sample_checked(&vmon);
	p100 = must_find(&vmon, 100);

	/* the fixture changes, but the process did not run: not listed */
	fx_close(&fx, 100, 5);
	vmon_get_stats(&vmon, &before);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &after);
	assert_non_null(fd_find(p100, 5, false));
	assert_true(after.reads_skipped - before.reads_skipped >= 15);

	/* it ran: fd 5 closed, 13 opened, 7 reused for another file, 0 moved, 100's file renamed */
	fx_fd(&fx, 100, 13, "pipe:[5003]", "pos:\t0\nflags:\t00\nmnt_id:\t16\nino:\t5003\n");
	fx_fd(&fx, 100, 7, file2, "pos:\t1\nflags:\t00\nmnt_id:\t27\n");
	fx_fdinfo(&fx, 100, 0, "pos:\t0\nflags:\t0104000\nmnt_id:\t24\n");
	snprintf(path, sizeof(path), "%s/data/renamed.txt", fx.root);
	assert_int_equal(rename(file, path), 0);
	fx_fd(&fx, 100, 200, path, "pos:\t5\nflags:\t00\nmnt_id:\t27\n");
	fx_fd(&fx, 200, 3, path, "pos:\t42\nflags:\t0100000\nmnt_id:\t27\n");
	fixture_ran(&fx, 100);
	fixture_ran(&fx, 200);
	sample_checked(&vmon);
	assert_true(files_of(p100)->fds_changed);
	assert_true(p100->activity & VMON_WANT_PROC_FILES);

	fd = fd_find(p100, 5, true);
	assert_non_null(fd);
	assert_null(fd_find(p100, 5, false));
	assert_true(must_fd(p100, 13)->is_new);

	old = fd_find(p100, 7, true);
	fd = must_fd(p100, 7);
	assert_non_null(old);
	assert_string_equal(old->object_path.array, file);
	assert_true(fd->is_new);
	assert_string_equal(fd->object_path.array, file2);
	assert_ptr_not_equal(fd->object, old->object);

	fd = must_fd(p100, 0);
	assert_false(fd->is_new);
	assert_true(BITTEST(fd->changed, VMON_FILES_FLAGS));
	assert_false(BITTEST(fd->changed, VMON_FILES_POS));
	assert_int_equal(fd->flags, 0104000);

	/* the rename: 200's fd 3 is the same fd on the same file, its target moved */
	fd = must_fd(must_find(&vmon, 200), 3);
	assert_false(fd->is_new);
	assert_string_equal(fd->object_path.array, path);
	assert_true(BITTEST(fd->changed, VMON_FILES_OBJPATH));
	assert_ptr_equal(fd->object, must_fd(p100, 200)->object);

	/* one sample later the stale are gone and nothing is new */
	fixture_ran(&fx, 100);
	sample_checked(&vmon);
	assert_null(fd_find(p100, 5, true));
	assert_null(fd_find(p100, 7, true));
	assert_false(must_fd(p100, 13)->is_new);
	assert_false(files_of(p100)->fds_changed);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* a description two processes share moves; the one that did not run is read again through the object */
static void test_shared_description(void **state)
{
	char file[512];
	vmon_proc_t *pa, *pb;
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	fixture_printf(&fx, "data/log", "%s", "x");
	snprintf(file, sizeof(file), "%s/data/log", fx.root);
	fx_proc(&fx, 1);
	fx_proc(&fx, 300);
	fx_proc(&fx, 301);
	fx_fd(&fx, 300, 3, file, "pos:\t10\nflags:\t02001\nmnt_id:\t27\n");
	fx_fd(&fx, 301, 3, file, "pos:\t10\nflags:\t02001\nmnt_id:\t27\n");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_FILES));
	sample_checked(&vmon);
	pa = must_find(&vmon, 300);
	pb = must_find(&vmon, 301);

	fx_fdinfo(&fx, 300, 3, "pos:\t90\nflags:\t02001\nmnt_id:\t27\n");
	fx_fdinfo(&fx, 301, 3, "pos:\t90\nflags:\t02001\nmnt_id:\t27\n");
	fixture_ran(&fx, 301);
	sample_checked(&vmon);
	assert_int_equal(must_fd(pb, 3)->pos, 90);
	assert_int_equal(must_fd(pa, 3)->pos, 90);
	assert_true(BITTEST(must_fd(pa, 3)->changed, VMON_FILES_POS));
	assert_true(pa->activity & VMON_WANT_PROC_FILES);

	/* 301 closes it after writing: 300 is read again too */
	fx_close(&fx, 301, 3);
	fx_fdinfo(&fx, 300, 3, "pos:\t95\nflags:\t02001\nmnt_id:\t27\n");
	fixture_ran(&fx, 301);
	sample_checked(&vmon);
	assert_non_null(fd_find(pb, 3, true));
	assert_int_equal(must_fd(pa, 3)->pos, 95);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static int ctors, dtors, ctor_untyped;

static void count_ctor(vmon_t *vmon, vmon_fobject_t *obj)
{
	ctors++;
	if (obj->type == VMON_FOBJECT_TYPE_SOCKET || obj->refcnt != 1)
		ctor_untyped++;
}

static void count_dtor(vmon_t *vmon, vmon_fobject_t *obj)
{
	dtors++;
	assert_int_equal(obj->refcnt, 0);
	assert_int_equal(obj->ref_fds_nr, 0);
}

/* the caller sees each object born once and die once; a process leaving takes its fds */
static void test_fobject_callbacks(void **state)
{
	char file[512], file2[512];
	fixture_t fx;
	vmon_t vmon;
	int objects;

	fixture_init(&fx);
	make_fd_fixture(&fx, file, sizeof(file), file2, sizeof(file2));
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_SOCKETS, VMON_WANT_PROC_FILES));
	ctors = dtors = ctor_untyped = 0;
	vmon.fobject_ctor_cb = count_ctor;
	vmon.fobject_dtor_cb = count_dtor;
	sample_checked(&vmon);
	objects = vmon.fobjects_nr;
	assert_int_equal(ctors, objects);
	assert_int_equal(ctor_untyped, 0);
	assert_int_equal(dtors, 0);

	/* 200 exits: stale for a sample with its fds, then they go, and the objects only it held */
	fixture_remove(&fx, "200");
	sample_checked(&vmon);
	assert_true(must_find(&vmon, 100) != NULL);
	assert_int_equal(dtors, 0);
	sample_checked(&vmon);
	assert_int_equal(dtors, 1);	/* its epoll */
	assert_int_equal(vmon.fobjects_nr, objects - 1);
	assert_int_equal(must_fd(must_find(&vmon, 100), 1)->object->refcnt, 2);
	vmon_destroy(&vmon);
	assert_int_equal(ctors, dtors);
	fixture_free(&fx);
}

/* --- 100,000 fds --- */

/*
 * NR fd entries: pipes, read end then write end.  The fdinfo files are hard
 * links to two files (the older kernels' fdinfo, without ino), so that the
 * tree costs inodes for the links only.
 */
static void make_many_fds(fixture_t *fx, int pid, int nr)
{
	char path[600], target[32];
	int fd_dir, info_dir;

	fx_proc(fx, pid);
	fixture_printf(fx, "fdinfo-r", "pos:\t0\nflags:\t00\nmnt_id:\t16\n");
	fixture_printf(fx, "fdinfo-w", "pos:\t0\nflags:\t01\nmnt_id:\t16\n");
	snprintf(path, sizeof(path), "%s/%d/fd", fx->root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	fd_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/%d/fdinfo", fx->root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	info_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd_dir >= 0 && info_dir >= 0);
	for (int fd = 0; fd < nr; fd++) {
		char name[16], info[600];

		snprintf(name, sizeof(name), "%d", fd);
		snprintf(target, sizeof(target), "pipe:[%d]", 1000000 + fd / 2);
		snprintf(info, sizeof(info), "%s/fdinfo-%c", fx->root, fd % 2 ? 'w' : 'r');
		assert_int_equal(symlinkat(target, fd_dir, name), 0);
		assert_int_equal(linkat(AT_FDCWD, info, info_dir, name, 0), 0);
	}
	close(fd_dir);
	close(info_dir);
}

static void test_hundred_thousand_fds(void **state)
{
	int nr = under_valgrind() ? 10000 : 100000, closed = 0, stale = 0, n = 0;
	vmon_stats_t s0, s1, s2, s3;
	vmon_proc_files_t *files;
	vmon_proc_fd_t *fd;
	vmon_proc_t *proc;
	fixture_t fx;
	vmon_t vmon;

	/* 200,000 entries: on tmpfs if there is one, it makes them several times faster */
	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0) {
		setenv("TMPDIR", "/dev/shm", 1);
		fixture_init(&fx);
		unsetenv("TMPDIR");
	} else {
		fixture_init(&fx);
	}
	make_many_fds(&fx, 500, nr);
	assert_true(fixture_vmon(&fx, &vmon, 0, 0, VMON_WANT_PROC_FILES));
	proc = vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_FILES, NULL, NULL);
	assert_non_null(proc);

	vmon_get_stats(&vmon, &s0);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &s1);
	files = files_of(proc);
	assert_int_equal(files->fds_nr, nr);
	assert_int_equal(vmon.fobjects_nr, nr / 2);
	list_for_each_entry(fd, &files->fds, fds) {
		assert_int_equal(fd->fdnum, n);
		assert_int_equal(fd->object->refcnt, 2);
		n++;
	}
	assert_int_equal(n, nr);
	/* the first sample: per fd its target and its fdinfo, no more (linear, not quadratic) */
	print_message("first sample of %d fds: %llu reads, %llu opens\n", nr, s1.reads - s0.reads, s1.opens - s0.opens);
	assert_true(s1.reads - s0.reads >= 2ull * nr && s1.reads - s0.reads <= 2ull * nr + 20);

	/* not run: nothing per fd */
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &s2);
	assert_true(s2.reads - s1.reads <= 10);
	assert_true(s2.reads_skipped - s1.reads_skipped >= (unsigned long long)nr);

	/* ran, every 100th fd closed: one listing, one fdinfo per fd still open */
	for (int i = 50; i < nr; i += 100) {
		fx_close(&fx, 500, i);
		closed++;
	}
	fixture_ran(&fx, 500);
	sample_checked(&vmon);
	vmon_get_stats(&vmon, &s3);
	print_message("a sample after it ran: %llu reads\n", s3.reads - s2.reads);
	assert_true(s3.reads - s2.reads >= (unsigned long long)(nr - closed) &&
		    s3.reads - s2.reads <= (unsigned long long)(nr - closed) + 20);
	list_for_each_entry(fd, &files->fds, fds)
		stale += fd->is_stale;
	assert_int_equal(stale, closed);
	assert_int_equal(files->fds_nr, nr - closed);
	assert_true(files->fds_changed);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net_tables),
		cmocka_unit_test(test_net_tables_empty),
		cmocka_unit_test(test_sys_wants_change),
		cmocka_unit_test(test_fd_entries),
		cmocka_unit_test(test_fd_changes),
		cmocka_unit_test(test_shared_description),
		cmocka_unit_test(test_fobject_callbacks),
		cmocka_unit_test(test_hundred_thousand_fds),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
