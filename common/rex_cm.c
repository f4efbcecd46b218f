/* SPDX-License-Identifier: MIT */
#include "rex_cm.h"
