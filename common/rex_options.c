/* SPDX-License-Identifier: MIT */
#include "rex_options.h"
