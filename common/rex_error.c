/* SPDX-License-Identifier: MIT */
#include "rex_error.h"
