/*
 * list.h: circular doubly linked lists whose nodes are embedded in the
 * structures they link (the Linux kernel's idiom).  A list_head_t is either
 * a list's head or a node in one; list_entry() gets from a node back to the
 * structure that holds it.
 *
 *	list_for_each_entry(child, &proc->children, siblings) ...
 *
 * The guard is the original libvmon's (__LIST_H) and every name its list.h
 * defines is here, so a client that carries its own copy of that file,
 * included before or after vmon.h, gets one definition of each and finds
 * the names it uses whichever copy came first.
 */
#ifndef __LIST_H
#define __LIST_H

#include <stddef.h>

typedef struct list_head {
	struct list_head *next, *prev;
} list_head_t;

#define LIST_HEAD_INIT(_name)	{ &(_name), &(_name) }
#define LIST_HEAD(_name)	list_head_t _name = LIST_HEAD_INIT(_name)

static inline void INIT_LIST_HEAD(list_head_t *head)
{
	head->next = head;
	head->prev = head;
}

static inline void list_link_between(list_head_t *node, list_head_t *prev, list_head_t *next)
{
	next->prev = node;
	node->next = next;
	node->prev = prev;
	prev->next = node;
}

/* insert node right after head (at the front of the list) */
static inline void list_add(list_head_t *node, list_head_t *head)
{
	list_link_between(node, head, head->next);
}

/* insert node right before head (at the back of the list) */
static inline void list_add_tail(list_head_t *node, list_head_t *head)
{
	list_link_between(node, head->prev, head);
}

static inline void list_unlink(list_head_t *node)
{
	node->next->prev = node->prev;
	node->prev->next = node->next;
}

/* the original header's names for the two primitives above */
static inline void __list_add(list_head_t *node, list_head_t *prev, list_head_t *next)
{
	list_link_between(node, prev, next);
}

static inline void __list_del(list_head_t *prev, list_head_t *next)
{
	next->prev = prev;
	prev->next = next;
}

/* remove node from its list; node is left pointing nowhere useful */
static inline void list_del(list_head_t *node)
{
	list_unlink(node);
	node->next = NULL;
	node->prev = NULL;
}

/* remove node from its list and make it an empty list of its own */
static inline void list_del_init(list_head_t *node)
{
	list_unlink(node);
	INIT_LIST_HEAD(node);
}

static inline void list_move(list_head_t *node, list_head_t *head)
{
	list_unlink(node);
	list_add(node, head);
}

static inline void list_move_tail(list_head_t *node, list_head_t *head)
{
	list_unlink(node);
	list_add_tail(node, head);
}

static inline int list_empty(const list_head_t *head)
{
	return head->next == head;
}

static inline int list_is_last(const list_head_t *node, const list_head_t *head)
{
	return node->next == head;
}

/* link every node of list in at the front of head; list's own head is left as it was */
static inline void list_splice(list_head_t *list, list_head_t *head)
{
	if (list_empty(list))
		return;
	list->next->prev = head;
	list->prev->next = head->next;
	head->next->prev = list->prev;
	head->next = list->next;
}

/* the same, and list is left empty */
static inline void list_splice_init(list_head_t *list, list_head_t *head)
{
	if (list_empty(list))
		return;
	list_splice(list, head);
	INIT_LIST_HEAD(list);
}

#define list_entry(_node, _type, _member) \
	((_type *)((char *)(_node) - offsetof(_type, _member)))
#define list_first_entry(_head, _type, _member)	list_entry((_head)->next, _type, _member)
#define list_last_entry(_head, _type, _member)	list_entry((_head)->prev, _type, _member)

#define list_for_each(_pos, _head) \
	for ((_pos) = (_head)->next; (_pos) != (_head); (_pos) = (_pos)->next)
#define list_for_each_prev(_pos, _head) \
	for ((_pos) = (_head)->prev; (_pos) != (_head); (_pos) = (_pos)->prev)
#define list_for_each_safe(_pos, _tmp, _head) \
	for ((_pos) = (_head)->next, (_tmp) = (_pos)->next; (_pos) != (_head); \
	     (_pos) = (_tmp), (_tmp) = (_pos)->next)

#define list_for_each_entry(_pos, _head, _member) \
	for ((_pos) = list_entry((_head)->next, __typeof__(*(_pos)), _member); \
	     &(_pos)->_member != (_head); \
	     (_pos) = list_entry((_pos)->_member.next, __typeof__(*(_pos)), _member))
#define list_for_each_entry_prev(_pos, _head, _member) \
	for ((_pos) = list_entry((_head)->prev, __typeof__(*(_pos)), _member); \
	     &(_pos)->_member != (_head); \
	     (_pos) = list_entry((_pos)->_member.prev, __typeof__(*(_pos)), _member))
#define list_for_each_entry_reverse(_pos, _head, _member) \
	list_for_each_entry_prev(_pos, _head, _member)
#define list_for_each_entry_safe(_pos, _tmp, _head, _member) \
	for ((_pos) = list_entry((_head)->next, __typeof__(*(_pos)), _member), \
	     (_tmp) = list_entry((_pos)->_member.next, __typeof__(*(_pos)), _member); \
	     &(_pos)->_member != (_head); \
	     (_pos) = (_tmp), (_tmp) = list_entry((_tmp)->_member.next, __typeof__(*(_tmp)), _member))

#endif
