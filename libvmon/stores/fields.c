/*
 * fields.c: the description of every datum, generated from defs/: name,
 * label, description, type, offset and source, indexed by symbol.  vtop's
 * columns, its setup screen, the batch formats and vmon_dump_procs() are
 * written once over these tables, never per field.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static const vmon_field_t sys_stat_fields[VMON_SYS_STAT_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_sys_stat_t
#include "defs/sys_stat.def"
};

static const vmon_field_t sys_vm_fields[VMON_SYS_VM_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_sys_vm_t
#include "defs/sys_vm.def"
};

static const vmon_field_t sys_loadavg_fields[VMON_SYS_LOADAVG_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_sys_loadavg_t
#include "defs/sys_loadavg.def"
};

static const vmon_field_t sys_sockets_fields[VMON_SYS_SOCKETS_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_sys_sockets_t
#include "defs/sys_sockets.def"
};

static const vmon_field_t proc_stat_fields[VMON_PROC_STAT_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_stat_t
#include "defs/proc_stat.def"
};

static const vmon_field_t proc_vm_fields[VMON_PROC_VM_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_vm_t
#include "defs/proc_vm.def"
};

static const vmon_field_t proc_io_fields[VMON_PROC_IO_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_io_t
#include "defs/proc_io.def"
};

static const vmon_field_t proc_env_fields[VMON_PROC_ENV_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_env_t
#include "defs/proc_env.def"
};

static const vmon_field_t proc_sched_fields[VMON_PROC_SCHED_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_sched_t
#include "defs/proc_sched.def"
};

static const vmon_field_t proc_rollup_fields[VMON_PROC_ROLLUP_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_rollup_t
#include "defs/proc_rollup.def"
};

static const vmon_field_t proc_stat_extra_fields[VMON_PROC_STAT_EXTRA_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_stat_extra_t
#include "defs/proc_stat_extra.def"
};

static const vmon_field_t proc_vm_status_fields[VMON_PROC_VM_STATUS_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_vm_status_t
#include "defs/proc_vm_status.def"
};

/* PROC_FILES describes each open fd (vmon_proc_fd_t), not its vmon_proc_files_t */
static const vmon_field_t proc_files_fields[VMON_PROC_FILES_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_fd_t
#include "defs/proc_files.def"
};

static const vmon_field_t fobject_socket_fields[VMON_FOBJECT_SOCKET_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_fobject_socket_t
#include "defs/fobject_socket.def"
};

#define STORE_DESC(_name, _struct, _fields) \
	{ #_name, sizeof(_struct), _fields, (int)(sizeof(_fields) / sizeof(_fields[0])), offsetof(_struct, present) }

const vmon_store_desc_t vmon_sys_store_descs[VMON_STORE_SYS_NR] = {
	[VMON_STORE_SYS_STAT]	= STORE_DESC(sys_stat, vmon_sys_stat_t, sys_stat_fields),
	[VMON_STORE_SYS_VM]	= STORE_DESC(sys_vm, vmon_sys_vm_t, sys_vm_fields),
	[VMON_STORE_SYS_LOADAVG] = STORE_DESC(sys_loadavg, vmon_sys_loadavg_t, sys_loadavg_fields),
	[VMON_STORE_SYS_SOCKETS] = STORE_DESC(sys_sockets, vmon_sys_sockets_t, sys_sockets_fields),
};

const vmon_store_desc_t vmon_proc_store_descs[VMON_STORE_PROC_NR] = {
	[VMON_STORE_PROC_FOLLOW_CHILDREN] = { "proc_follow_children", sizeof(vmon_proc_follow_children_t), NULL, 0 },
	[VMON_STORE_PROC_FOLLOW_THREADS]  = { "proc_follow_threads", sizeof(vmon_proc_follow_threads_t), NULL, 0 },
	/* its fields, and the present[] they index, are each fd's (vmon_proc_fd_t) */
	[VMON_STORE_PROC_FILES]	= { "proc_files", sizeof(vmon_proc_files_t), proc_files_fields,
				    VMON_PROC_FILES_NR, offsetof(vmon_proc_fd_t, present) },
	[VMON_STORE_PROC_STAT]	= STORE_DESC(proc_stat, vmon_proc_stat_t, proc_stat_fields),
	[VMON_STORE_PROC_VM]	= STORE_DESC(proc_vm, vmon_proc_vm_t, proc_vm_fields),
	[VMON_STORE_PROC_IO]	= STORE_DESC(proc_io, vmon_proc_io_t, proc_io_fields),
	[VMON_STORE_PROC_ENV]	= STORE_DESC(proc_env, vmon_proc_env_t, proc_env_fields),
	[VMON_STORE_PROC_SCHED]	= STORE_DESC(proc_sched, vmon_proc_sched_t, proc_sched_fields),
	[VMON_STORE_PROC_ROLLUP] = STORE_DESC(proc_rollup, vmon_proc_rollup_t, proc_rollup_fields),
	[VMON_STORE_PROC_STAT_EXTRA] = STORE_DESC(proc_stat_extra, vmon_proc_stat_extra_t, proc_stat_extra_fields),
	[VMON_STORE_PROC_VM_STATUS] = STORE_DESC(proc_vm_status, vmon_proc_vm_status_t, proc_vm_status_fields),
};

/* -1, 0, 1 as a is below, equal to or above b */
static int order(int below, int above)
{
	return below ? -1 : above ? 1 : 0;
}

static int char_array_compare(const vmon_char_array_t *a, const vmon_char_array_t *b)
{
	size_t la = a->array ? a->len : 0, lb = b->array ? b->len : 0;
	int r = (la && lb) ? memcmp(a->array, b->array, la < lb ? la : lb) : 0;

	return r ? order(r < 0, r > 0) : order(la < lb, la > lb);
}

static int str_array_compare(char *const *a, char *const *b)
{
	for (size_t i = 0;; i++) {
		const char *sa = a ? a[i] : NULL, *sb = b ? b[i] : NULL;
		int r;

		if (!sa || !sb)
			return order(!sa && sb, sa && !sb);
		r = strcmp(sa, sb);
		if (r)
			return order(r < 0, r > 0);
	}
}

/*
 * Compare one field of two stores of the same kind, as its type says:
 * numbers by value (so that a sort by any column is a sort by the datum,
 * not by its text), text bytewise.  A missing store sorts first.
 */
int vmon_field_compare(const vmon_field_t *f, const void *store_a, const void *store_b)
{
	const char *a, *b;

	if (!f)
		return 0;
	if (!store_a || !store_b)
		return order(!store_a && store_b, store_a && !store_b);
	a = (const char *)store_a + f->offset;
	b = (const char *)store_b + f->offset;
	switch (f->type) {
	case VMON_TYPE_char:
		return order(*(const unsigned char *)a < *(const unsigned char *)b,
			     *(const unsigned char *)a > *(const unsigned char *)b);
	case VMON_TYPE_int:
		return order(*(const int *)a < *(const int *)b, *(const int *)a > *(const int *)b);
	case VMON_TYPE_uint:
		return order(*(const unsigned *)a < *(const unsigned *)b, *(const unsigned *)a > *(const unsigned *)b);
	case VMON_TYPE_long:
		return order(*(const long *)a < *(const long *)b, *(const long *)a > *(const long *)b);
	case VMON_TYPE_ulong:
		return order(*(const unsigned long *)a < *(const unsigned long *)b,
			     *(const unsigned long *)a > *(const unsigned long *)b);
	case VMON_TYPE_longlong:
		return order(*(const long long *)a < *(const long long *)b, *(const long long *)a > *(const long long *)b);
	case VMON_TYPE_ulonglong:
		return order(*(const unsigned long long *)a < *(const unsigned long long *)b,
			     *(const unsigned long long *)a > *(const unsigned long long *)b);
	case VMON_TYPE_char_array:
		return char_array_compare((const vmon_char_array_t *)a, (const vmon_char_array_t *)b);
	case VMON_TYPE_str_array:
		return str_array_compare(*(char *const *const *)a, *(char *const *const *)b);
	case VMON_TYPE_cstr: {
		const char *sa = *(const char *const *)a, *sb = *(const char *const *)b;
		int r = sa && sb ? strcmp(sa, sb) : 0;

		return sa && sb ? order(r < 0, r > 0) : order(!sa && sb, sa && !sb);
	}
	}
	return 0;
}

/*
 * Does the store hold a value for the field?  A key the kernel does not
 * print, a file the caller may not read (another user's io) or a line cut
 * short leave the field's present bit clear; such a value reads as zero and
 * should be shown as missing, not as 0.
 */
int vmon_field_present(const vmon_store_desc_t *desc, const vmon_field_t *f, const void *store)
{
	if (!desc || !f || !store)
		return 0;
	if (!desc->present_offset)
		return 1;
	return BITTEST((const char *)store + desc->present_offset, f->sym) != 0;
}
/* not a store: the fields of each socket fobject's object->socket */
const vmon_store_desc_t vmon_fobject_socket_desc =
	STORE_DESC(fobject_socket, vmon_fobject_socket_t, fobject_socket_fields);

const vmon_fobject_type_desc_t vmon_fobject_types[VMON_FOBJECT_TYPE_NR] = {
#define vmon_fobject_type(_sym, _name, _class, _match, _desc) \
	[VMON_FOBJECT_TYPE_ ## _sym] = { _name, VMON_FOBJECT_TYPE_ ## _class, _desc },
#include "defs/fobject_types.def"
};

/* append src escaped to buf at *len (bounded; *len counts what would be written) */
static void append_escaped(char *buf, size_t size, size_t *len, const char *src, size_t src_len, unsigned flags)
{
	size_t room = *len < size ? size - *len : 0;

	*len += vmon_escape(room ? buf + *len : NULL, room, src, src_len, flags);
}

int vmon_field_format(const vmon_field_t *f, const void *store, char *buf, size_t size, unsigned flags)
{
	const char *m;
	size_t len = 0;

	if (!f || !store || (!buf && size)) {
		if (buf && size)
			buf[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	m = (const char *)store + f->offset;
	switch (f->type) {
	case VMON_TYPE_char:
		append_escaped(buf, size, &len, m, *m ? 1 : 0, flags);
		break;
	case VMON_TYPE_int:
		return snprintf(buf, size, "%d", *(const int *)m);
	case VMON_TYPE_uint:
		return snprintf(buf, size, "%u", *(const unsigned int *)m);
	case VMON_TYPE_long:
		return snprintf(buf, size, "%ld", *(const long *)m);
	case VMON_TYPE_ulong:
		return snprintf(buf, size, "%lu", *(const unsigned long *)m);
	case VMON_TYPE_longlong:
		return snprintf(buf, size, "%lld", *(const long long *)m);
	case VMON_TYPE_ulonglong:
		return snprintf(buf, size, "%llu", *(const unsigned long long *)m);
	case VMON_TYPE_char_array: {
		const vmon_char_array_t *a = (const vmon_char_array_t *)m;
		size_t n = a->array ? a->len : 0;

		/* the NUL that ends comm (and cmdline's last argument) is not shown */
		while (n && a->array[n - 1] == '\0')
			n--;
		append_escaped(buf, size, &len, a->array, n, flags);
		break;
	}
	case VMON_TYPE_cstr: {
		const char *str = *(const char *const *)m;

		append_escaped(buf, size, &len, str ? str : "", str ? strlen(str) : 0, flags);
		break;
	}
	case VMON_TYPE_str_array: {
		char *const *argv = *(char *const *const *)m;

		for (int i = 0; argv && argv[i]; i++) {
			if (i)
				append_escaped(buf, size, &len, " ", 1, flags);
			append_escaped(buf, size, &len, argv[i], strlen(argv[i]), flags);
		}
		break;
	}
	default:
		if (size)
			buf[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return (int)len;
}
