/*
 * sys_sockets.c: the SYS_SOCKETS want (defs/sys_sockets.def): the socket
 * tables of /proc/net, and through them the addresses and state of every
 * socket fobject (defs/fobject_socket.def).
 *
 * This is how a caller asks for socket addresses: reading the tables costs
 * in proportion to the sockets of the whole system, so it is a system want
 * of its own, not a part of PROC_FILES.  System wants are sampled before
 * processes, so when PROC_FILES meets a socket in a process's fds, its row
 * is already on its object.  Each listed socket's object is held by the
 * table (a reference not on ref_fds, as the original header foresaw for
 * /proc/net/unix), so a socket no sampled process holds is still an object,
 * and it goes when its row does.
 *
 * The tables are text the kernel formats, but a fixture or a future kernel
 * can give anything: every line is checked field by field, and one that
 * does not parse is skipped and counted (the store's `malformed`), never
 * guessed at.  The addresses are printed by the kernel as 32-bit words in
 * the host's byte order, so they are decoded in it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stores/fobject.h"

#define SOCKET_FIELD(_sym) (&vmon_fobject_socket_desc.fields[_sym])
#define STORE_FIELD(_sym) (&vmon_sys_store_descs[VMON_STORE_SYS_SOCKETS].fields[_sym])

/* the listening flag of a unix socket's Flags column (__SO_ACCEPTCON) */
#define UNIX_FLAG_LISTENING 0x10000

static const struct net_table {
	const char		*name;		/* under the proc root */
	int			family;
	vmon_fobject_type_t	type;
	size_t			fd_offset;	/* of its held fd in vmon_sys_sockets_t */
} net_tables[] = {
	{ "net/unix", AF_UNIX, VMON_FOBJECT_TYPE_UNIX, offsetof(vmon_sys_sockets_t, unix_fd) },
	{ "net/tcp", AF_INET, VMON_FOBJECT_TYPE_TCP, offsetof(vmon_sys_sockets_t, tcp_fd) },
	{ "net/tcp6", AF_INET6, VMON_FOBJECT_TYPE_TCP, offsetof(vmon_sys_sockets_t, tcp6_fd) },
	{ "net/udp", AF_INET, VMON_FOBJECT_TYPE_UDP, offsetof(vmon_sys_sockets_t, udp_fd) },
	{ "net/udp6", AF_INET6, VMON_FOBJECT_TYPE_UDP, offsetof(vmon_sys_sockets_t, udp6_fd) },
};

/* one row, as parsed */
struct socket_row {
	unsigned long long	ino;
	int			sock_type;
	int			state;
	const char		*state_name;
	char			local[INET6_ADDRSTRLEN + 8];	/* inet; a unix path points into the line */
	char			remote[INET6_ADDRSTRLEN + 8];
	const char		*path;
	size_t			path_len;
	unsigned long long	tx_queue, rx_queue, uid;
};

static const char *const tcp_states[] = {
	[1] = "ESTABLISHED", [2] = "SYN_SENT", [3] = "SYN_RECV", [4] = "FIN_WAIT1", [5] = "FIN_WAIT2",
	[6] = "TIME_WAIT", [7] = "CLOSE", [8] = "CLOSE_WAIT", [9] = "LAST_ACK", [10] = "LISTEN",
	[11] = "CLOSING", [12] = "NEW_SYN_RECV", [13] = "BOUND_INACTIVE",
};

static const char *const unix_states[] = {
	[1] = "UNCONNECTED", [2] = "CONNECTING", [3] = "CONNECTED", [4] = "DISCONNECTING",
};

static const char *state_name(vmon_fobject_type_t type, int state, unsigned long long flags)
{
	if (type == VMON_FOBJECT_TYPE_UNIX) {
		if (flags & UNIX_FLAG_LISTENING)
			return "LISTEN";
		if (state > 0 && state < (int)(sizeof(unix_states) / sizeof(unix_states[0])) && unix_states[state])
			return unix_states[state];
		return "?";
	}
	if (type == VMON_FOBJECT_TYPE_UDP && state == 7)
		return "UNCONN";	/* an unconnected udp socket is TCP_CLOSE to the kernel */
	if (state > 0 && state < (int)(sizeof(tcp_states) / sizeof(tcp_states[0])) && tcp_states[state])
		return tcp_states[state];
	return "?";
}

/* a hexadecimal number of 1 to max digits; *p moves past it */
static bool parse_hex(const char **p, const char *end, int max, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long n = 0;
	int digits = 0;

	for (; s < end && digits < max; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		n = n << 4 | (unsigned)d;
	}
	if (!digits)
		return false;
	*p = s;
	*v = n;
	return true;
}

static bool skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* the token at *p must end here: a blank or the end of the line */
static bool at_break(const char *p, const char *end)
{
	return p == end || *p == ' ';
}

/* "0100007F:0277" or 32 hex digits and a port, as "127.0.0.1:631" or "[::1]:631" */
static bool parse_address(const char **p, const char *end, int family, char *out, size_t size)
{
	unsigned char addr[16];
	char text[INET6_ADDRSTRLEN];
	unsigned long long port;
	int words = family == AF_INET ? 1 : 4;

	for (int i = 0; i < words; i++) {
		const char *start = *p;
		unsigned long long w;
		uint32_t word;

		if (!parse_hex(p, end, 8, &w) || *p - start != 8)
			return false;
		word = (uint32_t)w;
		memcpy(addr + 4 * i, &word, 4);	/* the kernel printed the word in host order */
	}
	if (*p >= end || **p != ':')
		return false;
	(*p)++;
	if (!parse_hex(p, end, 4, &port) || !at_break(*p, end))
		return false;
	if (!inet_ntop(family, addr, text, sizeof(text)))
		return false;
	snprintf(out, size, family == AF_INET ? "%s:%llu" : "[%s]:%llu", text, port);
	return true;
}

/*
 * A tcp or udp line: "sl: local remote st tx:rx tr:when retrnsmt uid timeout
 * inode ...".  Columns after the inode differ between tcp and udp and are
 * not needed.
 */
static bool parse_inet_line(const char *p, const char *end, const struct net_table *tab, struct socket_row *row)
{
	unsigned long long v, state;
	long long timeout;

	skip_blanks(&p, end);
	if (!parse_ull(&p, end, &v) || p >= end || *p++ != ':' || !skip_blanks(&p, end))
		return false;
	if (!parse_address(&p, end, tab->family, row->local, sizeof(row->local)) || !skip_blanks(&p, end) ||
	    !parse_address(&p, end, tab->family, row->remote, sizeof(row->remote)) || !skip_blanks(&p, end))
		return false;
	if (!parse_hex(&p, end, 2, &state) || !at_break(p, end) || !skip_blanks(&p, end))
		return false;
	if (!parse_hex(&p, end, 8, &row->tx_queue) || p >= end || *p++ != ':' ||
	    !parse_hex(&p, end, 8, &row->rx_queue) || !skip_blanks(&p, end))
		return false;
	/* tr:tm->when and retrnsmt */
	if (!parse_hex(&p, end, 2, &v) || p >= end || *p++ != ':' || !parse_hex(&p, end, 16, &v) ||
	    !skip_blanks(&p, end) || !parse_hex(&p, end, 8, &v) || !skip_blanks(&p, end))
		return false;
	if (!parse_ull(&p, end, &row->uid) || row->uid > 0xffffffffull || !skip_blanks(&p, end) ||
	    !parse_ll(&p, end, &timeout) || !skip_blanks(&p, end) ||
	    !parse_ull(&p, end, &row->ino) || !at_break(p, end))
		return false;
	row->state = (int)state;
	row->sock_type = tab->type == VMON_FOBJECT_TYPE_TCP ? SOCK_STREAM : SOCK_DGRAM;
	row->state_name = state_name(tab->type, row->state, 0);
	row->path = NULL;
	row->path_len = 0;
	return true;
}

/* "Num: RefCount Protocol Flags Type St Inode[ Path]" */
static bool parse_unix_line(const char *p, const char *end, struct socket_row *row)
{
	unsigned long long v, flags, type, state;

	if (!parse_hex(&p, end, 16, &v) || p >= end || *p++ != ':' || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, 8, &v) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, 8, &v) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, 8, &flags) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, 4, &type) || !skip_blanks(&p, end) ||
	    !parse_hex(&p, end, 2, &state) || !skip_blanks(&p, end) ||
	    !parse_ull(&p, end, &row->ino) || !at_break(p, end))
		return false;
	row->sock_type = (int)type;
	row->state = (int)state;
	row->state_name = state_name(VMON_FOBJECT_TYPE_UNIX, row->state, flags);
	/* the path is the rest of the line, spaces and all */
	row->path = p < end ? p + 1 : p;
	row->path_len = (size_t)(end - row->path);
	row->tx_queue = row->rx_queue = row->uid = 0;
	return true;
}

static int set_socket_field(vmon_fobject_socket_t *s, int sym, unsigned long long v, bool first)
{
	BITSET(s->present, sym);
	return parse_set_ull(SOCKET_FIELD(sym), s, v, s->changed, first);
}

/* the row's socket: its object held by the table, its row on object->socket */
static int socket_row_apply(vmon_t *vmon, const struct net_table *tab, const struct socket_row *row)
{
	fobject_key_t key = { .class = VMON_FOBJECT_TYPE_SOCKET, .ino = row->ino };
	vmon_fobject_t *obj = fobject_find(vmon, &key);
	vmon_fobject_socket_t *s;
	const char **name;
	fobject_node_t *n;
	bool created = false, first;

	if (!obj || !fobject_node_of(obj)->table_held) {
		obj = fobject_get(vmon, &key, tab->type, &created);
		if (!obj)
			return -1;
		n = fobject_node_of(obj);
		n->table_held = true;
		list_add_tail(&n->table_link, &vmon->internal->files->table_objs);
	}
	n = fobject_node_of(obj);
	obj->type = tab->type;
	if (!obj->socket) {
		obj->socket = calloc(1, sizeof(*obj->socket));
		if (!obj->socket)
			return -1;
	}
	s = obj->socket;
	first = !BITTEST(s->present, VMON_FOBJECT_SOCKET_FAMILY);
	if (n->table_seen != vmon->generation)
		memset(s->changed, 0, sizeof(s->changed));
	n->table_seen = vmon->generation;

	set_socket_field(s, VMON_FOBJECT_SOCKET_FAMILY, (unsigned long long)tab->family, first);
	set_socket_field(s, VMON_FOBJECT_SOCKET_TYPE, (unsigned long long)row->sock_type, first);
	set_socket_field(s, VMON_FOBJECT_SOCKET_STATE, (unsigned long long)row->state, first);
	set_socket_field(s, VMON_FOBJECT_SOCKET_TX_QUEUE, row->tx_queue, first);
	set_socket_field(s, VMON_FOBJECT_SOCKET_RX_QUEUE, row->rx_queue, first);
	set_socket_field(s, VMON_FOBJECT_SOCKET_UID, row->uid, first);
	name = (const char **)((char *)s + SOCKET_FIELD(VMON_FOBJECT_SOCKET_STATE_NAME)->offset);
	if (*name != row->state_name || first)
		BITSET(s->changed, VMON_FOBJECT_SOCKET_STATE_NAME);
	*name = row->state_name;
	BITSET(s->present, VMON_FOBJECT_SOCKET_STATE_NAME);
	if (row->path) {
		if (parse_set_string(SOCKET_FIELD(VMON_FOBJECT_SOCKET_LOCAL), s, row->path, row->path_len, s->changed, first) < 0 ||
		    parse_set_string(SOCKET_FIELD(VMON_FOBJECT_SOCKET_REMOTE), s, "", 0, s->changed, first) < 0)
			return -1;
	} else if (parse_set_string(SOCKET_FIELD(VMON_FOBJECT_SOCKET_LOCAL), s, row->local, strlen(row->local), s->changed, first) < 0 ||
		   parse_set_string(SOCKET_FIELD(VMON_FOBJECT_SOCKET_REMOTE), s, row->remote, strlen(row->remote), s->changed, first) < 0) {
		return -1;
	}
	BITSET(s->present, VMON_FOBJECT_SOCKET_LOCAL);
	BITSET(s->present, VMON_FOBJECT_SOCKET_REMOTE);
	if (created)
		fobject_created(vmon, obj);
	return 0;
}

/* the table no longer lists it: its row and the table's reference go */
static void socket_unlist(vmon_t *vmon, fobject_node_t *n)
{
	n->table_held = false;
	list_del_init(&n->table_link);
	fobject_socket_free(n->pub.socket);
	n->pub.socket = NULL;
	fobject_put(vmon, &n->pub);
}

static bool is_header(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return (size_t)(end - p) >= 3 && (memcmp(p, "sl ", 3) == 0 || memcmp(p, "Num", 3) == 0);
}

/* counts[] by type: unix, tcp, listening tcp, udp */
struct counts {
	int	unix_nr, tcp_nr, tcp_listen_nr, udp_nr, malformed;
};

static int parse_table(vmon_t *vmon, const struct net_table *tab, const buf_t *buf, struct counts *c)
{
	const char *line = buf->data, *end = buf->data + buf->len;
	int err = 0;

	for (bool first_line = true; line < end; first_line = false) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		struct socket_row row;
		bool ok;

		if (!eol)
			eol = end;
		if ((first_line && is_header(line, eol)) || eol == line) {
			line = eol + 1;
			continue;
		}
		ok = tab->family == AF_UNIX ? parse_unix_line(line, eol, &row) : parse_inet_line(line, eol, tab, &row);
		line = eol + 1;
		if (!ok) {
			c->malformed++;
			continue;
		}
		if (tab->type == VMON_FOBJECT_TYPE_UNIX) {
			c->unix_nr++;
		} else if (tab->type == VMON_FOBJECT_TYPE_TCP) {
			c->tcp_nr++;
			c->tcp_listen_nr += row.state == 10;
		} else {
			c->udp_nr++;
		}
		/* sockets without an inode (TIME_WAIT, SYN_RECV requests) are rows, not open files */
		if (row.ino && socket_row_apply(vmon, tab, &row) < 0 && !err)
			err = errno;
	}
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int sys_sockets_sample(vmon_t *vmon, void **store)
{
	struct vmon_files *files = files_state(vmon);
	buf_t *buf = &vmon->internal->buf;
	vmon_sys_sockets_t *s = *store;
	struct counts c = { 0 };
	fobject_node_t *n, *tmp;
	int changes = 0, err = 0;
	bool first;

	if (!files)
		return -1;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->unix_fd = s->tcp_fd = s->tcp6_fd = s->udp_fd = s->udp6_fd = -1;
		*store = s;
	}
	first = !BITTEST(s->present, VMON_SYS_SOCKETS_UNIX);
	memset(s->changed, 0, sizeof(s->changed));

	for (size_t i = 0; i < sizeof(net_tables) / sizeof(net_tables[0]); i++) {
		const struct net_table *tab = &net_tables[i];
		int *fd = (int *)((char *)s + tab->fd_offset);

		if (procfs_read_root(vmon, tab->name, fd, buf) < 0) {
			/* no such table (IPv6 off, an older fixture): no sockets of that kind */
			if (errno != ENOENT && !err)
				err = errno;
			continue;
		}
		if (parse_table(vmon, tab, buf, &c) < 0 && !err)
			err = errno;
	}

	list_for_each_entry_safe(n, tmp, &files->table_objs, table_link) {
		if (n->table_seen != vmon->generation) {
			socket_unlist(vmon, n);
			changes++;
		} else if (n->pub.socket) {
			for (size_t b = 0; b < sizeof(n->pub.socket->changed); b++)
				changes += n->pub.socket->changed[b] != 0;
		}
	}

	changes += parse_set_ull(STORE_FIELD(VMON_SYS_SOCKETS_UNIX), s, (unsigned long long)c.unix_nr, s->changed, first);
	changes += parse_set_ull(STORE_FIELD(VMON_SYS_SOCKETS_TCP), s, (unsigned long long)c.tcp_nr, s->changed, first);
	changes += parse_set_ull(STORE_FIELD(VMON_SYS_SOCKETS_TCP_LISTEN), s, (unsigned long long)c.tcp_listen_nr, s->changed, first);
	changes += parse_set_ull(STORE_FIELD(VMON_SYS_SOCKETS_UDP), s, (unsigned long long)c.udp_nr, s->changed, first);
	changes += parse_set_ull(STORE_FIELD(VMON_SYS_SOCKETS_MALFORMED), s, (unsigned long long)c.malformed, s->changed, first);
	for (int sym = 0; sym < VMON_SYS_SOCKETS_NR; sym++)
		BITSET(s->present, sym);

	if (!err && c.malformed)
		err = EPROTO;
	if (err) {
		errno = err;
		return -1;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

void sys_sockets_free(vmon_t *vmon, vmon_sys_sockets_t *s)
{
	struct vmon_files *files = vmon->internal ? vmon->internal->files : NULL;
	fobject_node_t *n, *tmp;

	if (files) {
		list_for_each_entry_safe(n, tmp, &files->table_objs, table_link)
			socket_unlist(vmon, n);
	}
	if (!s)
		return;
	for (size_t i = 0; i < sizeof(net_tables) / sizeof(net_tables[0]); i++) {
		int *fd = (int *)((char *)s + net_tables[i].fd_offset);

		if (*fd >= 0)
			close(*fd);
	}
	free(s);
}
