/* SPDX-License-Identifier: MIT */
/*
 * rex_device_present() agrees with its message, whatever the machine has:
 * a count and silence with devices, or -ENODEV and a how-to without (this
 * includes a kernel without RDMA support, where ibv_get_device_list() fails
 * with ENOSYS).
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "rex_device.h"

int main(void)
{
	struct capture cap;
	char *text;
	int ret;

	capture_begin(&cap);
	ret = rex_device_present();
	text = capture_end(&cap);
	printf("rex_device_present() = %d; stderr: \"%s\"\n", ret, text);

	if (ret > 0) {
		CHECK_STR_EQ(text, "");
	} else if (ret == -ENODEV) {
		CHECK_STR_CONTAINS(text, "ibv_get_device_list: ");
		CHECK_STR_CONTAINS(text, "rdma link add rxe0 type rxe netdev IFACE");
		CHECK_STR_LACKS(text, "scripts/lab"); /* no program hint installed */
	} else {
		CHECK_TRUE(ret < 0);
		CHECK_STR_CONTAINS(text, "ibv_get_device_list: ");
	}
	CHECK_TRUE(ret != 0);
	free(text);
	return check_finish();
}
