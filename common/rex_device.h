/* SPDX-License-Identifier: MIT */
/**
 * \file rex_device.h
 * \brief Is there an RDMA device at all, and are the queue sizes we want within its limits?
 *
 * Programs call rex_device_present() first thing after parsing the command
 * line, so that a machine with no RDMA device gets one clear sentence and the
 * exit code 77 instead of a puzzling failure deep inside the CM. Queue sizes
 * are checked against ibv_query_device() instead of trusting constants:
 * Soft-RoCE, for example, has limits of its own.
 *
 * Copy rex_device.c and rex_device.h with rex_error.c and rex_error.h; they
 * need only libibverbs.
 */
#ifndef REX_DEVICE_H
#define REX_DEVICE_H

#include <infiniband/verbs.h>

/**
 * \brief Count the RDMA devices; when there are none, print why to stderr.
 *
 * The message names ibv_get_device_list() and says how to add a Soft-RoCE
 * device (`rdma link add rxe0 type rxe netdev IFACE`), then gives the
 * program's own hint, if it has one (rex_error_set_hint_hook()).
 *
 * \return the number of devices (> 0), or -ENODEV when there are none
 *         (including a kernel without RDMA support, where
 *         ibv_get_device_list() fails with ENOSYS), or another negative errno
 *         when ibv_get_device_list() failed otherwise.
 */
int rex_device_present(void);

/**
 * \brief Check queue sizes against the limits of the device behind \p context.
 *
 * \param context  an open device (for example `cm_id->verbs`).
 * \param cqe      completion queue entries wanted.
 * \param wr       work requests per send or receive queue wanted.
 * \param sge      scatter/gather entries per work request wanted.
 * \return 0 when all fit; -EINVAL after printing every limit exceeded
 *         (e.g. "queue depth 4096 exceeds max_qp_wr 1024 of rxe0"), or when a
 *         size is negative or \p context is NULL; or the negative errno of a
 *         failing ibv_query_device(), after printing it.
 */
int rex_device_check_queues(struct ibv_context *context, int cqe, int wr, int sge);

/**
 * \brief Refuse an iWARP device, for a program that needs what only
 *        InfiniBand and RoCE have.
 *
 * iWARP (RDMA over TCP: Soft-iWARP's `siw0`, iWARP NICs) carries no
 * immediate data in its base protocol (RFC 5040), connects queue pairs only
 * through rdma_cm, and Soft-iWARP has no atomics and no memory windows. A
 * program built on one of those calls this once the device is known (after
 * rdma_bind_addr() or rdma_resolve_addr()), so that the user reads why at
 * start, not a bare `ibv_post_send: Invalid argument` later.
 *
 * \param context  the device (for example `cm_id->verbs`); NULL (an id bound
 *                 to no address yet) passes, to be checked again later.
 * \param why      the reason, for the message, e.g. "iWARP carries no
 *                 immediate data, and every message here is a WRITE WITH IMM".
 * \return 0 when the device is not iWARP; -EPROTONOSUPPORT after printing
 *         "siw0 is an iWARP device: this program cannot run on it", then
 *         "  why: WHY" and a hint. Programs exit with #REX_EXIT_NO_DEVICE then.
 */
int rex_device_refuse_iwarp(struct ibv_context *context, const char *why);

#endif /* REX_DEVICE_H */
