/* SPDX-License-Identifier: MIT */
/**
 * \file capture.h
 * \brief Capture what a helper prints to stderr, for tests of its messages.
 *
 *     struct capture cap;
 *     capture_begin(&cap);
 *     rex_report_errno("ibv_post_send", ENOMEM);
 *     char *text = capture_end(&cap);   // malloc'ed, NUL-terminated; free() it
 */
#ifndef REX_CAPTURE_H
#define REX_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

struct capture {
	FILE *file;   /**< where fd 2 points meanwhile */
	int saved_fd; /**< the real stderr */
};

static inline void capture_begin(struct capture *cap)
{
	fflush(stderr);
	cap->file = tmpfile();
	CHECK_TRUE(cap->file != NULL);
	if (!cap->file)
		abort();
	cap->saved_fd = dup(STDERR_FILENO);
	CHECK_TRUE(cap->saved_fd >= 0);
	CHECK_TRUE(dup2(fileno(cap->file), STDERR_FILENO) == STDERR_FILENO);
}

static inline char *capture_end(struct capture *cap)
{
	char *text;
	long size;

	fflush(stderr);
	CHECK_TRUE(dup2(cap->saved_fd, STDERR_FILENO) == STDERR_FILENO);
	CHECK_INT_EQ(close(cap->saved_fd), 0);
	CHECK_INT_EQ(fseek(cap->file, 0, SEEK_END), 0);
	size = ftell(cap->file);
	CHECK_TRUE(size >= 0);
	rewind(cap->file);
	text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
	if (!text)
		abort();
	if (size > 0)
		CHECK_INT_EQ(fread(text, 1, (size_t)size, cap->file), size);
	CHECK_INT_EQ(fclose(cap->file), 0);
	return text;
}

#endif /* REX_CAPTURE_H */
