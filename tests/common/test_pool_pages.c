/* SPDX-License-Identifier: MIT */
/*
 * rex_pool_mem_map(): normal pages are page aligned, whole pages, zeroed.
 * Asked for huge pages, it gets one of the three kinds, is aligned to the
 * page size it got, and when it is not MAP_HUGETLB it says so in exactly
 * one line naming what it got. (Which kind depends on the machine: this
 * test accepts each, and prints which.) A zero length is refused.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "rex_pool.h"

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct rex_pool_mem m;
	struct capture cap;
	char *text;
	size_t i;

	CHECK_STR_EQ(rex_pool_pages_name(REX_POOL_PAGES_NORMAL), "normal");
	CHECK_STR_EQ(rex_pool_pages_name(REX_POOL_PAGES_THP), "THP");
	CHECK_STR_EQ(rex_pool_pages_name(REX_POOL_PAGES_HUGETLB), "MAP_HUGETLB");

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_mem_map(&m, 10000, false), 0);
	text = capture_end(&cap);
	CHECK_STR_EQ(text, ""); /* normal pages asked, normal pages got: nothing to say */
	free(text);
	CHECK_INT_EQ(m.pages, REX_POOL_PAGES_NORMAL);
	CHECK_U64_EQ(m.page_size, page);
	CHECK_U64_EQ((uintptr_t)m.addr % page, 0);
	CHECK_U64_EQ(m.len, (10000 + page - 1) / page * page);
	for (i = 0; i < m.len; i += 512)
		CHECK_INT_EQ(((unsigned char *)m.addr)[i], 0);
	rex_pool_mem_unmap(&m);
	CHECK_TRUE(m.addr == NULL);
	rex_pool_mem_unmap(&m); /* twice is harmless */

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_mem_map(&m, 3u << 20, true), 0);
	text = capture_end(&cap);
	printf("asked for huge pages, got %s (%zu-byte pages, %zu bytes)\n",
	       rex_pool_pages_name(m.pages), m.page_size, m.len);
	printf("it said: %s", text[0] ? text : "nothing\n");
	CHECK_U64_EQ((uintptr_t)m.addr % m.page_size, 0);
	CHECK_U64_EQ(m.len % m.page_size, 0);
	CHECK_TRUE(m.len >= 3u << 20);
	if (m.pages == REX_POOL_PAGES_HUGETLB) {
		CHECK_STR_EQ(text, "");
	} else {
		CHECK_INT_EQ(count_lines(text), 1);
		CHECK_STR_CONTAINS(text, "MAP_HUGETLB: ");
		CHECK_STR_CONTAINS(text, m.pages == REX_POOL_PAGES_THP
		                             ? "; got transparent huge pages instead\n"
		                             : "; got normal pages instead\n");
	}
	free(text);
	((unsigned char *)m.addr)[m.len - 1] = 1; /* all of it is ours */
	rex_pool_mem_unmap(&m);

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_mem_map(&m, 0, false), -EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_pool_mem_map: 0 bytes: not a size");
	free(text);
	return check_finish();
}
