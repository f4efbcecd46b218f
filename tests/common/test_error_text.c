/* SPDX-License-Identifier: MIT */
/* rex_format_errno(): "call: strerror" and, for well-known causes, a hint line. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "rex_error.h"

int main(void)
{
	char buf[512];
	char expected[512];
	const char *nl;
	int n;

	/* Registration failing for lack of memory: the memlock limit. */
	n = rex_format_errno(buf, sizeof(buf), "ibv_reg_mr", ENOMEM);
	CHECK_INT_EQ(n, strlen(buf));
	snprintf(expected, sizeof(expected), "ibv_reg_mr: %s\n  hint: ", strerror(ENOMEM));
	CHECK_TRUE(strncmp(buf, expected, strlen(expected)) == 0);
	CHECK_STR_CONTAINS(buf, "ulimit -l");
	CHECK_STR_CONTAINS(buf, "RLIMIT_MEMLOCK");
	nl = strchr(buf, '\n');
	CHECK_TRUE(nl != NULL);
	if (nl)
		CHECK_STR_LACKS(nl + 1, "\n"); /* the hint is one line */

	/* The same hint for the other calls that pin memory, and for EAGAIN. */
	rex_format_errno(buf, sizeof(buf), "ibv_create_cq", EAGAIN);
	CHECK_STR_CONTAINS(buf, "ulimit -l");
	rex_format_errno(buf, sizeof(buf), "rdma_create_qp", ENOMEM);
	CHECK_STR_CONTAINS(buf, "ulimit -l");
	rex_format_errno(buf, sizeof(buf), "ibv_alloc_pd", ENOMEM);
	CHECK_STR_CONTAINS(buf, "ulimit -l");

	/* ENOMEM from a call that pins nothing: no hint line. */
	n = rex_format_errno(buf, sizeof(buf), "malloc", ENOMEM);
	snprintf(expected, sizeof(expected), "malloc: %s", strerror(ENOMEM));
	CHECK_STR_EQ(buf, expected);
	CHECK_INT_EQ(n, strlen(expected));
	CHECK_STR_LACKS(buf, "hint:");

	/* Connection refused: start the server first. */
	rex_format_errno(buf, sizeof(buf), "rdma_connect", ECONNREFUSED);
	snprintf(expected, sizeof(expected), "rdma_connect: %s\n  hint: ", strerror(ECONNREFUSED));
	CHECK_TRUE(strncmp(buf, expected, strlen(expected)) == 0);
	CHECK_STR_CONTAINS(buf, "start the server first");

	/* No device: how to get one. The generic hints name nothing of this
	 * project (its flags, its scripts): a copier's program has neither. */
	rex_format_errno(buf, sizeof(buf), "rdma_bind_addr", ENODEV);
	CHECK_STR_CONTAINS(buf, "rdma link add rxe0 type rxe netdev IFACE");
	CHECK_STR_LACKS(buf, "scripts/");
	CHECK_STR_CONTAINS(buf, "serves this address");
	/* Opening the CM involves no address: the hint does not speak of one. */
	rex_format_errno(buf, sizeof(buf), "rdma_create_event_channel", ENODEV);
	CHECK_STR_CONTAINS(buf, "this machine has no RDMA device");
	CHECK_STR_CONTAINS(buf, "rdma link add rxe0 type rxe netdev IFACE");
	CHECK_STR_LACKS(buf, "address");

	/* Unreachable: use the RDMA interface's address. */
	rex_format_errno(buf, sizeof(buf), "rdma_resolve_addr", EADDRNOTAVAIL);
	CHECK_STR_CONTAINS(buf, "unreachable or not on an RDMA interface");
	CHECK_STR_LACKS(buf, "RDMA_LAB_ADDR");
	rex_format_errno(buf, sizeof(buf), "rdma_resolve_route", ETIMEDOUT);
	CHECK_STR_CONTAINS(buf, "unreachable or not on an RDMA interface");

	/* Binding: EADDRNOTAVAIL is the CM's answer for a port another id holds
	 * on an overlapping address, not an unreachable peer. */
	rex_format_errno(buf, sizeof(buf), "rdma_bind_addr", EADDRNOTAVAIL);
	CHECK_STR_CONTAINS(buf, "another RDMA program holds the port");
	CHECK_STR_LACKS(buf, "unreachable");

	rex_format_errno(buf, sizeof(buf), "rdma_bind_addr", EADDRINUSE);
	CHECK_STR_CONTAINS(buf, "choose another port");
	CHECK_STR_LACKS(buf, "-p");

	/* EPROTO has a CM hint only for CM calls. */
	CHECK_TRUE(rex_errno_hint("rdma_get_cm_event", EPROTO) != NULL);
	CHECK_TRUE(rex_errno_hint("read", EPROTO) == NULL);

	/* EINVAL from rdma_create_qp: the QP's sizes, or a request given up. */
	rex_format_errno(buf, sizeof(buf), "rdma_create_qp", EINVAL);
	CHECK_STR_CONTAINS(buf, "ibv_devinfo -v");
	CHECK_STR_CONTAINS(buf, "no longer pending");

	/* A negative errno is read as its positive value. */
	rex_format_errno(buf, sizeof(buf), "ibv_post_send", -EINVAL);
	snprintf(expected, sizeof(expected), "ibv_post_send: %s", strerror(EINVAL));
	CHECK_STR_EQ(buf, expected);

	CHECK_TRUE(rex_errno_hint("ibv_post_send", EINVAL) == NULL);
	CHECK_TRUE(rex_errno_hint(NULL, ENOMEM) == NULL);

	return check_finish();
}
