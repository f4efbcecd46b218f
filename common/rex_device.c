/* SPDX-License-Identifier: MIT */
/*
 * Is there an RDMA device, and do the queue sizes we want fit it? Both
 * questions are asked early, so the answer is one clear sentence.
 */
#include "rex_device.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void report_no_device(const char *why, const char *detail)
{
	fprintf(stderr,
	        "ibv_get_device_list: %s%s\n"
	        "  hint: add a Soft-RoCE device with `rdma link add rxe0 type rxe netdev IFACE`, "
	        "or run inside the lab with `scripts/lab run -- ...`\n",
	        why, detail);
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
		fprintf(stderr, "ibv_get_device_list: %s\n", strerror(err));
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
		fprintf(stderr, "rex_device_check_queues: no device context\n");
		return -EINVAL;
	}
	/* Returns an errno value; very old libibverbs returned -1 and set errno. */
	ret = ibv_query_device(context, &attr);
	if (ret) {
		int err = ret > 0 ? ret : (errno ? errno : EIO);

		fprintf(stderr, "ibv_query_device: %s\n", strerror(err));
		return -err;
	}

	name = context->device ? ibv_get_device_name(context->device) : NULL;
	if (!name)
		name = "this device";

	ret = 0;
	if (cqe > attr.max_cqe) {
		fprintf(stderr, "completion queue size %d exceeds max_cqe %d of %s\n", cqe,
		        attr.max_cqe, name);
		ret = -EINVAL;
	}
	if (wr > attr.max_qp_wr) {
		fprintf(stderr, "queue depth %d exceeds max_qp_wr %d of %s\n", wr, attr.max_qp_wr,
		        name);
		ret = -EINVAL;
	}
	if (sge > attr.max_sge) {
		fprintf(stderr, "scatter/gather entries %d exceed max_sge %d of %s\n", sge,
		        attr.max_sge, name);
		ret = -EINVAL;
	}
	if (cqe < 0 || wr < 0 || sge < 0) {
		fprintf(stderr, "rex_device_check_queues: negative size (cqe %d, wr %d, sge %d)\n",
		        cqe, wr, sge);
		ret = -EINVAL;
	}
	return ret;
}
