/* SPDX-License-Identifier: MIT */
/*
 * rex_srq.c: a shared receive queue fed from a memory pool (see rex_srq.h).
 */
#include "rex_srq.h"

#include <errno.h>
#include <stdlib.h>

#include "rex_error.h"

/* Receives posted in one call, at most: one doorbell for a refill's worth
 * on most devices, and a chain short enough to build on the stack. */
#define REX_SRQ_CHAIN 32
/* srq_context of an SRQ this file made: an event of another is left alone. */
#define REX_SRQ_MAGIC 0x53525131u

struct rex_srq {
	uint32_t magic;
	struct ibv_srq *srq;
	struct rex_pool *pool;
	uint32_t depth, low_water;
	uint64_t tag; /* the high bits of every receive's wr_id */
	bool armed;   /* the device will raise the limit event */
	bool *posted; /* per pool buffer: posted in the SRQ now */
	struct rex_srq_stats stats;
};

/* Post up to \p n buffers of the pool in one chain. Those the device
 * refused go back to the pool. \return how many went, or a negative errno. */
static int post_chain(struct rex_srq *s, uint32_t n)
{
	struct ibv_recv_wr wr[REX_SRQ_CHAIN], *bad = NULL;
	struct ibv_sge sge[REX_SRQ_CHAIN];
	struct rex_pool_buf *buf;
	uint32_t i, got = 0;
	int ret;

	for (i = 0; i < n && i < REX_SRQ_CHAIN && (buf = rex_pool_get(s->pool)); i++, got++) {
		sge[i] = (struct ibv_sge){
		    .addr = (uintptr_t)buf->addr, .length = (uint32_t)buf->size, .lkey = buf->lkey};
		wr[i] = (struct ibv_recv_wr){
		    .wr_id = s->tag | buf->index, .sg_list = &sge[i], .num_sge = 1};
		if (i > 0)
			wr[i - 1].next = &wr[i];
	}
	if (got == 0)
		return 0;
	ret = ibv_post_srq_recv(s->srq, wr, &bad);
	for (i = 0; i < got; i++) {
		uint32_t index = (uint32_t)wr[i].wr_id;

		/* Those from the refused one on did not go (a provider that
		 * did not say which: none went). */
		if (ret && (!bad || &wr[i] >= bad)) {
			rex_pool_put(s->pool, rex_pool_buf_at(s->pool, index));
			continue;
		}
		s->posted[index] = true;
		s->stats.posted++;
	}
	if (ret) {
		rex_report_errno("ibv_post_srq_recv", ret);
		return -ret;
	}
	return (int)got;
}

static int arm(struct rex_srq *s)
{
	struct ibv_srq_attr attr = {.srq_limit = s->low_water};
	int ret;

	if (!s->low_water || s->armed)
		return 0;
	ret = ibv_modify_srq(s->srq, &attr, IBV_SRQ_LIMIT);
	if (ret) {
		rex_report_errno("ibv_modify_srq(IBV_SRQ_LIMIT)", ret);
		return -ret;
	}
	s->armed = true;
	return 0;
}

/* [refill] */
int rex_srq_refill(struct rex_srq *s)
{
	uint32_t before = s->stats.posted;
	int ret = 0;

	while (s->stats.posted < s->depth) {
		ret = post_chain(s, s->depth - s->stats.posted);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		return ret;
	if (s->stats.posted > before)
		s->stats.refills++;
	if (s->stats.posted < s->depth)
		s->stats.dry++;
	/* Armed below the mark, a device may raise it at once, and again
	 * after each refill a dry pool leaves short: wait for a buffer. */
	if (s->stats.posted >= s->low_water) {
		ret = arm(s);
		if (ret)
			return ret;
	}
	return (int)(s->stats.posted - before);
}
/* [refill] */

struct rex_srq *rex_srq_create(struct ibv_pd *pd, struct rex_pool *pool,
                               const struct rex_srq_attr *attr)
{
	struct ibv_srq_init_attr init = {.attr = {.max_wr = attr->depth, .max_sge = 1}};
	struct rex_pool_stats ps;
	struct rex_srq *s;
	int err;

	rex_pool_stats(pool, &ps);
	if (attr->depth == 0 || attr->low_water >= attr->depth || (uint32_t)attr->wr_id_tag) {
		rex_errorf("rex_srq_create: depth %u and low water %u: need 0 <= low water < depth "
		           "(and a wr_id tag in the high 32 bits only)",
		           attr->depth, attr->low_water);
		errno = EINVAL;
		return NULL;
	}
	if (ps.count - ps.in_use < attr->depth) {
		rex_errorf("rex_srq_create: depth %u, but the pool has %u buffers free",
		           attr->depth, ps.count - ps.in_use);
		errno = ENOBUFS;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->posted = calloc(ps.count, sizeof(*s->posted));
	if (!s || !s->posted) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out_free;
	}
	*s = (struct rex_srq){.magic = REX_SRQ_MAGIC,
	                      .pool = pool,
	                      .depth = attr->depth,
	                      .low_water = attr->low_water,
	                      .tag = attr->wr_id_tag,
	                      .posted = s->posted};
	s->stats.depth = attr->depth;
	s->srq = ibv_create_srq(pd, &init);
	if (!s->srq) {
		err = errno;
		rex_report_errno("ibv_create_srq", err);
		goto out_free;
	}
	s->srq->srq_context = s;
	err = rex_srq_refill(s);
	if (err < 0) {
		err = -err;
		goto out_destroy;
	}
	s->stats.min_posted = s->stats.posted;
	s->stats.refills = 0; /* the first fill is no refill */
	return s;

out_destroy:
	if (ibv_destroy_srq(s->srq) == 0) /* else the memory must stay: leave it */
		for (uint32_t i = 0; i < ps.count; i++)
			if (s->posted[i])
				rex_pool_put(pool, rex_pool_buf_at(pool, i));
out_free:
	if (s)
		free(s->posted);
	free(s);
	errno = err;
	return NULL;
}

int rex_srq_destroy(struct rex_srq *s)
{
	struct rex_pool_stats ps;
	int ret;

	if (!s)
		return 0;
	ret = ibv_destroy_srq(s->srq);
	if (ret) {
		rex_report_errno("ibv_destroy_srq", ret);
		return -ret;
	}
	/* The device touches none of them now. */
	rex_pool_stats(s->pool, &ps);
	for (uint32_t i = 0; i < ps.count; i++)
		if (s->posted[i])
			rex_pool_put(s->pool, rex_pool_buf_at(s->pool, i));
	free(s->posted);
	free(s);
	return 0;
}

struct ibv_srq *rex_srq_ibv(const struct rex_srq *s)
{
	return s->srq;
}

struct rex_pool *rex_srq_pool(const struct rex_srq *s)
{
	return s->pool;
}

struct rex_pool_buf *rex_srq_take(struct rex_srq *s, const struct ibv_wc *wc)
{
	uint32_t index = (uint32_t)wc->wr_id;
	struct rex_pool_buf *buf = rex_pool_buf_at(s->pool, index);

	if ((wc->wr_id & ~(uint64_t)UINT32_MAX) != s->tag || !buf || !s->posted[index]) {
		rex_errorf("rex_srq_take: wr_id %llu is no receive posted in this SRQ",
		           (unsigned long long)wc->wr_id);
		return NULL;
	}
	s->posted[index] = false;
	s->stats.posted--;
	s->stats.taken++;
	if (s->stats.posted < s->stats.min_posted)
		s->stats.min_posted = s->stats.posted;
	return buf;
}

int rex_srq_repost(struct rex_srq *s, struct rex_pool_buf *buf)
{
	struct ibv_sge sge = {
	    .addr = (uintptr_t)buf->addr, .length = (uint32_t)buf->size, .lkey = buf->lkey};
	struct ibv_recv_wr wr = {.wr_id = s->tag | buf->index, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;
	int ret;

	if (s->posted[buf->index]) {
		rex_errorf("rex_srq_repost: buffer %u is posted already", buf->index);
		return -EINVAL;
	}
	ret = ibv_post_srq_recv(s->srq, &wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_srq_recv", ret);
		rex_pool_put(s->pool, buf);
		return -ret;
	}
	s->posted[buf->index] = true;
	s->stats.posted++;
	s->stats.reposted++;
	/* Short (an earlier post failed, or the pool was dry at the event):
	 * what the pool has goes too, and the limit is armed again. */
	if (s->low_water && !s->armed && s->stats.posted < s->depth) {
		ret = rex_srq_refill(s);
		return ret < 0 ? ret : 0;
	}
	return 0;
}

int rex_srq_release(struct rex_srq *s, struct rex_pool_buf *buf)
{
	int ret = rex_pool_put(s->pool, buf);

	if (ret)
		return ret;
	/* Disarmed and short: the pool was dry at the last refill. */
	if (s->low_water && !s->armed && s->stats.posted < s->depth) {
		ret = rex_srq_refill(s);
		return ret < 0 ? ret : 0;
	}
	return 0;
}

int rex_srq_async_event(const struct ibv_async_event *event)
{
	struct rex_srq *s;
	int ret;

	if (event->event_type != IBV_EVENT_SRQ_LIMIT_REACHED &&
	    event->event_type != IBV_EVENT_SRQ_ERR)
		return 0;
	s = event->element.srq ? event->element.srq->srq_context : NULL;
	if (!s || s->magic != REX_SRQ_MAGIC)
		return 0;
	if (event->event_type == IBV_EVENT_SRQ_ERR) {
		rex_errorf("a shared receive queue failed (IBV_EVENT_SRQ_ERR): %u receives posted",
		           s->stats.posted);
		return -EIO;
	}
	/* [limit-event] */
	s->armed = false; /* the device disarmed it */
	s->stats.limit_events++;
	ret = rex_srq_refill(s);
	return ret < 0 ? ret : 1;
	/* [limit-event] */
}

void rex_srq_stats(const struct rex_srq *s, struct rex_srq_stats *st)
{
	*st = s->stats;
}
