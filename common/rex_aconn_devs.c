/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn_devs.c: the devices of a program's connections, the CM
 * channel read in the loop, and the devices' asynchronous events (see
 * rex_aconn.h). One connection's life is rex_aconn.c; its books of work
 * requests are rex_aconn_books.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo() under -std=c11 */
#endif
#include "rex_aconn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <sys/epoll.h>

#include "rex_aconn_priv.h"
#include "rex_error.h"

void rex_aconn_attr_default(struct rex_aconn_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->setup_timeout_ms = 15000;
	attr->idle_timeout_ms = 60000; /* every wait on a peer ends: rex_aconn.h */
	attr->drain_timeout_ms = 10000; /* two tries of the CM's DREQ: rex_aconn.h */
	attr->resolve_timeout_ms = 2000;
	attr->ack_timeout = 17;
	attr->retry_count = 6;
	attr->rnr_retry_count = 6;
	attr->min_rnr_timer = 12;
}

/* --- the devices and the CM channel ------------------------------------- */

void rex_aconn_devs_init(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                         struct rdma_event_channel *channel, const struct rex_aconn_attr *attr,
                         rex_aconn_cm_fn cm_fn, void *cm_arg)
{
	memset(devs, 0, sizeof(*devs));
	devs->loop = loop;
	devs->who = who;
	devs->channel = channel;
	if (attr)
		devs->attr = *attr;
	else
		rex_aconn_attr_default(&devs->attr);
	devs->cm_fn = cm_fn;
	devs->cm_arg = cm_arg;
}

/* The clock after an event that began at since, in a round that began at
 * start: the longest event, and the latest one began into its round. */
static uint64_t note_cm_event(struct rex_aconn_devs *devs, uint64_t start, uint64_t since)
{
	uint64_t now = rex_aconn_clock_ns();

	if (now - since > devs->cm_stats.longest_event_ns)
		devs->cm_stats.longest_event_ns = now - since;
	if (since - start > devs->cm_stats.latest_begin_ns)
		devs->cm_stats.latest_begin_ns = since - start;
	return now;
}

static void note_cm_round(struct rex_aconn_devs *devs, int events, uint64_t ns)
{
	if ((unsigned)events > devs->cm_stats.most_events)
		devs->cm_stats.most_events = (unsigned)events;
	if (ns > devs->cm_stats.longest_round_ns)
		devs->cm_stats.longest_round_ns = ns;
}

/* [cm-read] */
int rex_aconn_devs_read_cm(struct rex_aconn_devs *devs)
{
	uint64_t start = rex_aconn_clock_ns(), now = start;
	uint64_t until = start + (uint64_t)REX_ACONN_CM_BUDGET_MS * REX_ACONN_MS;
	struct rex_cm_event ev;
	int n, ret = 1;

	/* Until the channel is empty, but within a budget of events and of
	 * time: a connect request creates a CQ, a QP and memory, and the
	 * completions of the connections already up must not wait behind a
	 * burst of them. What is left waits for the next round. */
	for (n = 0; n < REX_ACONN_CM_BUDGET; n++) {
		if (n > 0 && now >= until)
			break;
		ret = rex_cm_next(devs->channel, &ev); /* copied and acknowledged */
		if (ret <= 0)
			break;
		/* Every event of every connection comes through this one channel;
		 * id->context says whose it is. A connect request's id is new. */
		if (ev.type != RDMA_CM_EVENT_CONNECT_REQUEST && ev.id && ev.id->context)
			rex_aconn_cm_event(ev.id->context, &ev);
		else
			devs->cm_fn(devs, &ev, devs->cm_arg);
		now = note_cm_event(devs, start, now);
	}
	note_cm_round(devs, n, now - start);
	return ret;
}
/* [cm-read] */

/* [devs-create] */
int rex_aconn_devs_create(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                          const struct rex_aconn_attr *attr, rex_aconn_cm_fn cm_fn, void *cm_arg)
{
	struct rdma_event_channel *channel = rdma_create_event_channel();
	int ret;

	memset(devs, 0, sizeof(*devs));
	if (!channel) {
		ret = -errno;
		rex_report_errno("rdma_create_event_channel", errno);
		return ret;
	}
	/* Non-blocking: the loop reads it until EAGAIN, and never sleeps in it. */
	ret = rex_cm_channel_nonblocking(channel);
	if (ret)
		goto out_destroy_channel;
	rex_aconn_devs_init(devs, loop, who, channel, attr, cm_fn, cm_arg);
	ret = rex_aconn_devs_watch(devs);
	if (ret)
		goto out_destroy_channel;
	devs->own_channel = true;
	return 0;

out_destroy_channel:
	rdma_destroy_event_channel(channel);
	devs->channel = NULL;
	return ret;
}
/* [devs-create] */

int rex_aconn_devs_destroy(struct rex_aconn_devs *devs)
{
	int ret;

	if (devs->watching_cm) {
		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
	}
	/* A device still used by a connection cannot go (its PD is busy), nor
	 * the channel: a connection's CM id sends its commands through the
	 * channel's fd, and rdma_destroy_id() on a closed channel would use
	 * freed memory. Both stay; the process's end releases them. */
	if (devs->conns > 0)
		return -EBUSY;
	ret = rex_aconn_devs_release(devs);
	if (devs->own_channel && devs->channel)
		rdma_destroy_event_channel(devs->channel);
	devs->channel = NULL;
	devs->own_channel = false;
	return ret;
}

/* [listen] */
int rex_aconn_listen(struct rex_aconn_devs *devs, const char *addr, uint16_t port, int backlog,
                     struct rdma_cm_id **listener)
{
	/* An address given may be IPv4 or IPv6; none means every IPv4 one
	 * (0.0.0.0, as chapter 01's server; give "::" for IPv6). */
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	                         .ai_family = addr ? AF_UNSPEC : AF_INET,
	                         .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	struct rdma_cm_id *id = NULL;
	char service[8];
	int ret;

	snprintf(service, sizeof(service), "%u", (unsigned)port);
	ret = getaddrinfo(addr, service, &hints, &res);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", addr ? addr : "(any)", gai_strerror(ret));
		return -EINVAL;
	}
	/* Chapter 01's listener, on the non-blocking channel: its connect
	 * requests are events of the loop. */
	if (rdma_create_id(devs->channel, &id, NULL, RDMA_PS_TCP)) {
		ret = -errno;
		rex_report_errno("rdma_create_id", errno);
		goto out_free;
	}
	if (rdma_bind_addr(id, res->ai_addr)) {
		ret = -errno;
		rex_report_errno("rdma_bind_addr", errno);
		goto out_destroy_id;
	}
	if (rdma_listen(id, backlog)) {
		ret = -errno;
		rex_report_errno("rdma_listen", errno);
		goto out_destroy_id;
	}
	*listener = id;
	goto out_free;

out_destroy_id:
	rdma_destroy_id(id);
out_free:
	freeaddrinfo(res);
	return ret;
}
/* [listen] */

static void cm_ready(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct rex_aconn_devs *devs = arg;

	(void)loop;
	(void)events;
	if (rex_aconn_devs_read_cm(devs) < 0) {
		/* The channel is broken: nothing more will come through it. Tell
		 * the program as an event of no id. */
		struct rex_cm_event ev = {.type = RDMA_CM_EVENT_DEVICE_REMOVAL, .status = -EIO};

		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
		devs->cm_fn(devs, &ev, devs->cm_arg);
	}
}

int rex_aconn_devs_watch(struct rex_aconn_devs *devs)
{
	int ret = rex_loop_add_fd(devs->loop, devs->channel->fd, EPOLLIN, cm_ready, devs);

	if (ret == 0)
		devs->watching_cm = true;
	return ret;
}

/* Stop watching a device and release it; returns 0 or the first negative
 * errno (printed). */
static int device_release(struct rex_aconn_devs *devs, struct rex_aconn_dev *dev)
{
	int first = 0, ret;

	if (dev->watching_async)
		rex_loop_remove_fd(devs->loop, dev->verbs->async_fd);
	if (dev->watching_channel)
		rex_loop_remove_fd(devs->loop, dev->comp_channel->fd);
	/* The program's memory in the PD first (06: its pool). */
	if (devs->dev_release && (dev->user || dev->helper))
		first = devs->dev_release(dev);
	/* EBUSY while a CQ still uses the channel. */
	if (dev->comp_channel) {
		ret = ibv_destroy_comp_channel(dev->comp_channel);
		if (ret) {
			rex_report_errno("ibv_destroy_comp_channel", ret);
			first = first ? first : -ret;
		}
	}
	/* EBUSY while a QP or a memory region still uses the PD. */
	if (dev->pd && !first) {
		ret = ibv_dealloc_pd(dev->pd);
		if (ret) {
			rex_report_errno("ibv_dealloc_pd", ret);
			first = -ret;
		}
	}
	free(dev);
	return first;
}

/* [device] */
struct rex_aconn_dev *rex_aconn_dev_get(struct rex_aconn_devs *devs, struct ibv_context *verbs)
{
	struct rex_aconn_dev *dev;
	int ret;

	for (dev = devs->first; dev; dev = dev->next)
		if (dev->verbs == verbs && !dev->lost)
			return dev;
	/* First connection on this device: one PD for all its memory, one
	 * completion channel for all its CQs, and its asynchronous events;
	 * the loop watches both fds. */
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	dev->verbs = verbs;
	dev->devs = devs;
	/* Its limits, asked once: every connection's queues are checked
	 * against them, without a system call per connection. */
	ret = ibv_query_device(verbs, &dev->attr); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_query_device", ret);
		goto out_release;
	}
	dev->pd = ibv_alloc_pd(verbs);
	if (!dev->pd) {
		rex_report_errno("ibv_alloc_pd", errno);
		goto out_release;
	}
	dev->comp_channel = ibv_create_comp_channel(verbs);
	if (!dev->comp_channel) {
		rex_report_errno("ibv_create_comp_channel", errno);
		goto out_release;
	}
	if (rex_loop_add_comp_channel(devs->loop, dev->comp_channel))
		goto out_release;
	dev->watching_channel = true;
	if (rex_loop_add_async(devs->loop, verbs, rex_aconn_async_event, dev))
		goto out_release;
	dev->watching_async = true;
	dev->next = devs->first;
	devs->first = dev;
	return dev;

out_release:
	device_release(devs, dev);
	return NULL;
}
/* [device] */

int rex_aconn_devs_release(struct rex_aconn_devs *devs)
{
	struct rex_aconn_dev *dev, *next;
	int first = 0, ret;

	if (devs->watching_cm) {
		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
	}
	for (dev = devs->first; dev; dev = next) {
		next = dev->next;
		ret = device_release(devs, dev);
		first = first ? first : ret;
	}
	devs->first = NULL;
	return first;
}

/* --- device events --------------------------------------------------------- */

/* [device-lost] */
void rex_aconn_dev_lost(struct rex_aconn_dev *dev, const char *why)
{
	struct rex_aconn_devs *devs = dev->devs;
	struct rex_aconn *c, *next;
	unsigned n = 0;

	if (dev->lost)
		return; /* said once; its connections are closing already */
	dev->lost = true;
	/* Its fds may now report an error at every look, for ever: stop
	 * watching them, or the loop spins. */
	if (dev->watching_async)
		rex_loop_remove_fd(devs->loop, dev->verbs->async_fd);
	if (dev->watching_channel)
		rex_loop_remove_fd(devs->loop, dev->comp_channel->fd);
	dev->watching_async = dev->watching_channel = false;
	for (c = dev->conns; c; c = c->dev_next)
		n++;
	if (n)
		rex_errorf(
		    "%s: device %s lost (%s): closing its %u connection%s, then releasing it",
		    devs->who, ibv_get_device_name(dev->verbs->device), why, n, n == 1 ? "" : "s");
	else
		rex_errorf("%s: device %s lost (%s): releasing it", devs->who,
		           ibv_get_device_name(dev->verbs->device), why);
	/* Nothing will flush on it, nor answer a disconnect: release each
	 * without waiting (a connection draining already too). */
	for (c = dev->conns; c; c = next) {
		next = c->dev_next;
		c->cq_dead = true;
		rex_aconn_close(c, true);
		c->await_disconnect = false;
		rex_aconn_check_drained(c);
	}
	if (!dev->conns)
		rex_aconn_dev_conn_gone(dev);
}

/* Whether the device is still in the system's list. Soft-RoCE's removal
 * says nothing to an id already destroyed, nor on the async fd: a server
 * whose clients left first (their own device went) hears of it only so. */
static bool device_listed(const struct ibv_device *device)
{
	struct ibv_device **list;
	bool found = false;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return true; /* cannot tell: keep it */
	for (i = 0; i < n && !found; i++)
		found = list[i] == device; /* a device added again is a new one */
	ibv_free_device_list(list);
	return found;
}

void rex_aconn_dev_conn_gone(struct rex_aconn_dev *dev)
{
	struct rex_aconn_devs *devs = dev->devs;
	struct rex_aconn_dev **p;
	struct ibv_context **list;
	char name[IBV_SYSFS_NAME_MAX];

	if (dev->conns)
		return;
	/* Its last connection went: is the device itself still there? If not,
	 * rex_aconn_dev_lost() says so and comes back here to release it. */
	if (!dev->lost) {
		if (!device_listed(dev->verbs->device))
			rex_aconn_dev_lost(dev, "no longer listed");
		return;
	}
	for (p = &devs->first; *p && *p != dev; p = &(*p)->next)
		;
	if (*p)
		*p = dev->next;
	snprintf(name, sizeof(name), "%s", ibv_get_device_name(dev->verbs->device));
	/* The program's memory on it (06: its pool), its channel, its PD. */
	if (device_release(devs, dev) == 0)
		rex_errorf("%s: device %s released: no connection, memory or PD of ours left on it",
		           devs->who, name);
	/* librdmacm holds the device open until it notices, on its next look
	 * at the device list, that the device is gone and no id uses it; the
	 * kernel's removal waits for that close. Look now. (With no device
	 * left at all, librdmacm keeps it until one appears.) */
	list = rdma_get_devices(NULL);
	if (list)
		rdma_free_devices(list);
}
/* [device-lost] */

/* [async-event] */
void rex_aconn_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg)
{
	struct rex_aconn_dev *dev = arg;
	const char *who = dev->devs->who;
	const char *name = ibv_event_type_str(event->event_type);
	struct rex_aconn *c;

	(void)loop;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* The QP is in the error state already: its work flushes. */
		c = event->element.qp->qp_context;
		rex_aconn_say(c, "%s: closing it", name);
		rex_aconn_close(c, true);
		break;
	case IBV_EVENT_CQ_ERR:
		/* The CQ overran and is dead: no flush will ever come out of it. */
		c = rex_aconn_of_lcq(event->element.cq->cq_context);
		rex_aconn_say(c, "%s: closing it", name);
		c->cq_dead = true;
		rex_aconn_close(c, true);
		rex_aconn_check_drained(c);
		break;
	case IBV_EVENT_COMM_EST:
		/* A message came before the CM's ESTABLISHED (a server may see the
		 * client's first message first): the CM event follows. */
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		break;
	case IBV_EVENT_PORT_ERR:
		rex_errorf("%s: %s: port %d: its connections will fail", who, name,
		           event->element.port_num);
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		if (dev->devs->srq_event) {
			dev->devs->srq_event(dev, event);
			break;
		}
		rex_errorf("%s: %s on %s", who, name, ibv_get_device_name(dev->verbs->device));
		break;
	case IBV_EVENT_DEVICE_FATAL:
		/* Nothing on this device works any more, nothing will flush
		 * (also what rex_loop says when reading the async fd fails). */
		rex_aconn_dev_lost(dev, name);
		break;
	default:
		rex_errorf("%s: %s on %s", who, name, ibv_get_device_name(dev->verbs->device));
		break;
	}
}
/* [async-event] */
