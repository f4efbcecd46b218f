/* SPDX-License-Identifier: MIT */
#include "rex_device.h"
