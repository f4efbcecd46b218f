/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn_priv.h: what the files of rex_aconn (rex_aconn.c,
 * rex_aconn_devs.c, rex_aconn_books.c) share among themselves. Not part of
 * its interface: a program includes rex_aconn.h only. Copy it with them.
 */
#ifndef REX_ACONN_PRIV_H
#define REX_ACONN_PRIV_H

#include <stdint.h>

#include "rex_aconn.h"

#define REX_ACONN_MS 1000000u /* nanoseconds in a millisecond */

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t rex_aconn_clock_ns(void);

/* The connection a CQ's record belongs to: the record is inside it. */
struct rex_aconn *rex_aconn_of_lcq(struct rex_loop_cq *lcq);

/* A draining connection whose work requests are all done and whose
 * disconnect was answered: post its release. */
void rex_aconn_check_drained(struct rex_aconn *c);

/* The device is gone (DEVICE_FATAL, a CM DEVICE_REMOVAL, an fd that fails):
 * stop watching it, say so once, close its connections; its entry goes
 * when the last of them is released (rex_aconn_dev_conn_gone()). */
void rex_aconn_dev_lost(struct rex_aconn_dev *dev, const char *why);

/* A connection of \p dev was released: a lost device with none left goes. */
void rex_aconn_dev_conn_gone(struct rex_aconn_dev *dev);

#endif /* REX_ACONN_PRIV_H */
