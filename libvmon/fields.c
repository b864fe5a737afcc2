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

#include "internal.h"

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

/* PROC_FILES describes each open fd (vmon_proc_fd_t), not its vmon_proc_files_t */
static const vmon_field_t proc_files_fields[VMON_PROC_FILES_NR] = {
#define VMON_FIELD_TABLE
#define VMON_FIELD_STRUCT vmon_proc_fd_t
#include "defs/proc_files.def"
};

#define STORE_DESC(_name, _struct, _fields) \
	{ #_name, sizeof(_struct), _fields, (int)(sizeof(_fields) / sizeof(_fields[0])) }

const vmon_store_desc_t vmon_sys_store_descs[VMON_STORE_SYS_NR] = {
	[VMON_STORE_SYS_STAT]	= STORE_DESC(sys_stat, vmon_sys_stat_t, sys_stat_fields),
	[VMON_STORE_SYS_VM]	= STORE_DESC(sys_vm, vmon_sys_vm_t, sys_vm_fields),
};

const vmon_store_desc_t vmon_proc_store_descs[VMON_STORE_PROC_NR] = {
	[VMON_STORE_PROC_FOLLOW_CHILDREN] = { "proc_follow_children", sizeof(vmon_proc_follow_children_t), NULL, 0 },
	[VMON_STORE_PROC_FOLLOW_THREADS]  = { "proc_follow_threads", sizeof(vmon_proc_follow_threads_t), NULL, 0 },
	[VMON_STORE_PROC_FILES]	= STORE_DESC(proc_files, vmon_proc_files_t, proc_files_fields),
	[VMON_STORE_PROC_STAT]	= STORE_DESC(proc_stat, vmon_proc_stat_t, proc_stat_fields),
	[VMON_STORE_PROC_VM]	= STORE_DESC(proc_vm, vmon_proc_vm_t, proc_vm_fields),
	[VMON_STORE_PROC_IO]	= STORE_DESC(proc_io, vmon_proc_io_t, proc_io_fields),
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
