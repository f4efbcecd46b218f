/* SPDX-License-Identifier: MIT */
/*
 * Is there an RDMA device, and do the queue sizes we want fit it? Both
 * questions are asked early, so the answer is one clear sentence.
 */
#include "rex_device.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rex_error.h"

static void report_no_device(const char *why, const char *detail)
{
	const char *own = rex_error_program_hint("ibv_get_device_list", ENODEV);

	rex_errorf("ibv_get_device_list: %s%s\n"
	           "  hint: add a Soft-RoCE device with `rdma link add rxe0 type rxe netdev IFACE`"
	           "%s%s",
	           why, detail, own ? "\n  hint: " : "", own ? own : "");
}

int rex_device_present(void)
{
	struct ibv_device **list;
	int num = 0;
	int err;

	errno = 0;
	list = ibv_get_device_list(&num);
	if (!list) {
		err = errno ? errno : ENOMEM;
		/* ENOSYS: the kernel has no RDMA support at all, so no device either. */
		if (err == ENOSYS) {
			report_no_device(strerror(err), " (this kernel has no RDMA support)");
			return -ENODEV;
		}
		rex_report_errno("ibv_get_device_list", err);
		return -err;
	}
	ibv_free_device_list(list);

	if (num <= 0) {
		report_no_device("no RDMA device found", "");
		return -ENODEV;
	}
	return num;
}

int rex_device_check_queues(struct ibv_context *context, int cqe, int wr, int sge)
{
	struct ibv_device_attr attr;
	const char *name;
	int ret;

	if (!context) {
		rex_errorf("rex_device_check_queues: no device context");
		return -EINVAL;
	}
	/* Returns an errno value; very old libibverbs returned -1 and set errno. */
	ret = ibv_query_device(context, &attr);
	if (ret) {
		int err = ret > 0 ? ret : (errno ? errno : EIO);

		rex_report_errno("ibv_query_device", err);
		return -err;
	}

	name = context->device ? ibv_get_device_name(context->device) : NULL;
	if (!name)
		name = "this device";

	ret = 0;
	if (cqe > attr.max_cqe) {
		rex_errorf("completion queue size %d exceeds max_cqe %d of %s", cqe, attr.max_cqe,
		           name);
		ret = -EINVAL;
	}
	if (wr > attr.max_qp_wr) {
		rex_errorf("queue depth %d exceeds max_qp_wr %d of %s", wr, attr.max_qp_wr, name);
		ret = -EINVAL;
	}
	if (sge > attr.max_sge) {
		rex_errorf("scatter/gather entries %d exceed max_sge %d of %s", sge, attr.max_sge,
		           name);
		ret = -EINVAL;
	}
	if (cqe < 0 || wr < 0 || sge < 0) {
		rex_errorf("rex_device_check_queues: negative size (cqe %d, wr %d, sge %d)", cqe, wr,
		           sge);
		ret = -EINVAL;
	}
	return ret;
}

int rex_device_refuse_iwarp(struct ibv_context *context, const char *why)
{
	const char *name;

	if (!context || !context->device || context->device->transport_type != IBV_TRANSPORT_IWARP)
		return 0;
	name = ibv_get_device_name(context->device);
	rex_errorf("%s is an iWARP device: this program cannot run on it\n"
	           "  why: %s\n"
	           "  hint: run it on InfiniBand or RoCE (Soft-RoCE: `rdma link add rxe0 type rxe"
	           " netdev IFACE`)",
	           name ? name : "this device", why);
	return -EPROTONOSUPPORT;
}
