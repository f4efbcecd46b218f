/* SPDX-License-Identifier: MIT */
/**
 * \file regcost.c
 * \brief What registration costs: ibv_reg_mr() + ibv_dereg_mr() of a buffer
 *        against rex_pool_get() + rex_pool_put() of a buffer of the same size
 *        from a pool registered once, on the device it runs on.
 *
 * For each size (-s, default 4K,64K,1M,64M) and each kind of page (--pages,
 * default both normal and huge), it
 *   1. maps a buffer of that size, touches it, and times -n pairs of
 *      ibv_reg_mr() + ibv_dereg_mr() of that same buffer (the pages are
 *      already there: this is the cost of registration itself, not of
 *      faulting memory in);
 *   2. makes a pool of buffers of that size (rex_pool) and times -n samples
 *      of get + put, each sample a batch of 1000 pairs (one pair is quicker
 *      than one read of the clock);
 *   3. times -n pairs of bind + invalidate of a type 2 memory window over
 *      the same buffer, registered once with IBV_ACCESS_MW_BIND: what a
 *      narrow, revocable grant costs (regcost_mw.c);
 *   4. prints the median and 99th percentile of each, and the ratio of
 *      registration to the pool.
 * Sizes above 1 MiB get --large-count pairs (default 200) instead of -n.
 *
 *     build/bin/06-mr-pool-regcost                       # the page's table
 *     build/bin/06-mr-pool-regcost -s 4K,64K -n 200 --pages normal --json out.json
 *
 * Huge pages come from the reserved pool (vm.nr_hugepages) when there are
 * enough, else from transparent huge pages, else they are normal pages: the
 * "got" column says which each row had. Reserve them first, as root:
 * `echo 80 > /proc/sys/vm/nr_hugepages`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "regcost.h"
#include "rex_pool.h"
#include "stats.h"

/* Sizes measured unless -s says otherwise: the four. */
#define DEFAULT_SIZES "4K,64K,1M,64M"
/* Timed pairs per size (-n), and for sizes above LARGE_SIZE (--large-count):
 * one reg+dereg of 64 MiB takes milliseconds in the lab VM. */
#define DEFAULT_COUNT       1000
#define DEFAULT_LARGE_COUNT 200
#define LARGE_SIZE          (1u << 20)
#define MAX_COUNT           1000000
#define MAX_SIZES           16
/* Largest -s: 1 GiB, which is pinned in RAM while it is registered. */
#define MAX_SIZE (1ull << 30)
#define WARMUP   RC_WARMUP /* untimed pairs first (regcost.h) */
/* Pool pairs per timed sample. A get + put takes nanoseconds, far less than
 * a clock read (2.5 us under the lab's emulated CPU); 1000 of them make the
 * clock's part small. */
#define POOL_BATCH 1000
/* Bytes of buffers in each pool (at least one buffer, at most 16). */
#define POOL_BYTES       (16u << 20)
#define POOL_MAX_BUFFERS 16
/* The access of every registration: a buffer the device writes (a receive
 * buffer, an RDMA READ target), so the pages are pinned writable. */
#define ACCESS IBV_ACCESS_LOCAL_WRITE

/* The command line. */
struct rc_options {
	const char *device; /* -d, or NULL: the first device */
	uint64_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t count;       /* -n */
	uint64_t large_count; /* --large-count */
	bool normal, huge;    /* --pages */
	const char *json;     /* --json FILE, or NULL */
	bool verbose;         /* -v */
};

/* One row of the table: one size, one kind of page asked for. */
struct rc_row {
	uint64_t size;
	bool huge_asked;
	enum rex_pool_pages got;      /* what the registered buffer had */
	unsigned thp_percent;         /* for THP: how much the kernel really made huge */
	enum rex_pool_pages pool_got; /* what the pool's region had */
	uint32_t pool_buffers;
	uint64_t calls;
	struct mp_summary reg;    /* us per reg + dereg */
	struct mp_summary pool;   /* us per get + put */
	struct mp_summary window; /* us per bind + invalidate of a window over it */
};

/* The device, and what every row shares. */
struct rc_run {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rc_mw_rig rig; /* a QP to bind windows on (regcost_mw.c) */
	char device[64];
	double clock_ns; /* what one clock read costs */
	struct rc_row rows[2 * MAX_SIZES];
	int nrows;
	double *samples; /* room for the largest count */
};

static const char USAGE[] =
    "usage: 06-mr-pool-regcost [-d DEVICE] [-s SIZES] [-n COUNT] [--large-count COUNT]\n"
    "                          [--pages normal|huge|both] [--json FILE] [-v] [-h]\n"
    "Time ibv_reg_mr + ibv_dereg_mr against rex_pool_get + rex_pool_put.\n"
    "  -d DEVICE            RDMA device (default: the first one)\n"
    "  -s SIZES             buffer sizes, comma-separated, K/M/G suffix allowed, 1..1G\n"
    "                       (default " DEFAULT_SIZES ")\n"
    "  -n COUNT             timed pairs per size up to 1M, 1..1000000 (default 1000)\n"
    "  --large-count COUNT  timed pairs per size above 1M, 1..1000000 (default 200)\n"
    "  --pages KIND         normal, huge or both (default both)\n"
    "  --json FILE          also write the results as JSON to FILE\n"
    "  -v                   verbose: debug lines to stderr\n"
    "  -h, --help           this help\n"
    "  --version            the version\n";

/* One line naming the flag and the problem, then the usage; exit code 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "06-mr-pool-regcost: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", USAGE);
	return REX_EXIT_USAGE;
}

static int parse_sizes(char *list, struct rc_options *o)
{
	char *save = NULL, *tok;

	o->nsizes = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES)
			return -E2BIG;
		if (rex_parse_size(tok, 1, MAX_SIZE, &o->sizes[o->nsizes]))
			return -EINVAL;
		o->nsizes++;
	}
	return o->nsizes ? 0 : -EINVAL;
}

/* Returns -1 to go on, or the exit code. */
static int parse_options(int argc, char **argv, struct rc_options *o)
{
	static const struct option longs[] = {
	    {"large-count", required_argument, NULL, 'N'}, {"pages", required_argument, NULL, 'P'},
	    {"json", required_argument, NULL, 'J'},        {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},           {NULL, 0, NULL, 0},
	};
	char sizes[] = DEFAULT_SIZES;
	char *copy;
	int c, ret;

	*o = (struct rc_options){.count = DEFAULT_COUNT,
	                         .large_count = DEFAULT_LARGE_COUNT,
	                         .normal = true,
	                         .huge = true};
	parse_sizes(sizes, o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:s:n:vh", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 's':
			copy = strdup(optarg);
			if (!copy)
				return REX_EXIT_FAILURE;
			ret = parse_sizes(copy, o);
			free(copy);
			if (ret == -E2BIG)
				return usage_error("-s %s: more than 16 sizes", optarg);
			if (ret)
				return usage_error("-s %s: not a list of sizes in 1..1G "
				                   "(e.g. 4K,64K,1M)",
				                   optarg);
			break;
		case 'n':
		case 'N':
			if (rex_parse_uint(optarg, 1, MAX_COUNT,
			                   c == 'n' ? &o->count : &o->large_count))
				return usage_error("%s %s: out of range (1..1000000)",
				                   c == 'n' ? "-n" : "--large-count", optarg);
			break;
		case 'P':
			o->normal = !strcmp(optarg, "normal") || !strcmp(optarg, "both");
			o->huge = !strcmp(optarg, "huge") || !strcmp(optarg, "both");
			if (!o->normal && !o->huge)
				return usage_error("--pages %s: not one of normal, huge, both",
				                   optarg);
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(USAGE, stdout);
			return REX_EXIT_OK;
		case 'V':
			rex_options_version("06-mr-pool-regcost", stdout);
			return REX_EXIT_OK;
		case ':':
			return usage_error("%s: needs a value", argv[optind - 1]);
		default:
			return usage_error("%s: unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("%s: unexpected argument", argv[optind]);
	return -1;
}

double rc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* What one clock read costs here: under an emulated CPU it can be a lot. */
static double clock_cost_ns(void)
{
	double start = rc_now_us(), end;
	int i;

	for (i = 0; i < 999; i++)
		(void)rc_now_us();
	end = rc_now_us();
	return (end - start) * 1e3 / 1000;
}

static int open_device(struct rc_run *run, const char *name)
{
	struct ibv_device **list;
	int i, num = 0, ret = 0;

	list = ibv_get_device_list(&num);
	if (!list) {
		rex_report_errno("ibv_get_device_list", errno);
		return REX_EXIT_FAILURE;
	}
	for (i = 0; i < num; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == num) {
		rex_errorf("no RDMA device named %s (see `rdma link show`)", name);
		ret = REX_EXIT_FAILURE;
		goto out_free_list;
	}
	snprintf(run->device, sizeof(run->device), "%s", ibv_get_device_name(list[i]));
	run->ctx = ibv_open_device(list[i]);
	if (!run->ctx) {
		rex_report_errno("ibv_open_device", errno);
		ret = REX_EXIT_FAILURE;
		goto out_free_list;
	}
	run->pd = ibv_alloc_pd(run->ctx);
	if (!run->pd) {
		rex_report_errno("ibv_alloc_pd", errno);
		ibv_close_device(run->ctx);
		run->ctx = NULL;
		ret = REX_EXIT_FAILURE;
	}
out_free_list:
	ibv_free_device_list(list);
	return ret;
}

/* How much of [addr, addr + len) the kernel backs with transparent huge
 * pages, in percent: /proc/self/smaps has AnonHugePages for each mapping. */
static unsigned thp_percent(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, start, end;
	unsigned long kb = 0;
	bool inside = false;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
			inside = a >= start && a < end;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return len ? (unsigned)((uint64_t)kb * 1024 * 100 / len) : 0;
}

/* Time \p calls pairs of ibv_reg_mr() + ibv_dereg_mr() of one buffer. */
static int time_registration(struct rc_run *run, struct rc_row *row, bool verbose)
{
	struct rex_pool_mem mem;
	struct ibv_mr *mr;
	uint64_t i;
	double t0;
	int ret;

	ret = rex_pool_mem_map(&mem, row->size, row->huge_asked);
	if (ret)
		return ret;
	row->got = mem.pages;
	row->thp_percent = mem.pages == REX_POOL_PAGES_HUGETLB ? 0 : thp_percent(mem.addr, mem.len);
	rex_debug(verbose, "regcost", "%" PRIu64 " bytes at %p, %s pages of %zu bytes", row->size,
	          mem.addr, rex_pool_pages_name(mem.pages), mem.page_size);
	/* [time-registration] */
	/*
	 * The same buffer every time, already touched: what is timed is the
	 * registration itself (pin the pages, build the device's translation
	 * for them, make the keys) and its undoing, not the page faults of
	 * fresh memory.
	 */
	for (i = 0; i < WARMUP + row->calls; i++) {
		t0 = rc_now_us();
		mr = ibv_reg_mr(run->pd, mem.addr, row->size, ACCESS);
		if (!mr) {
			ret = -errno;
			rex_report_reg_errno("ibv_reg_mr", errno, row->size);
			goto out_unmap;
		}
		ret = ibv_dereg_mr(mr); /* an errno value */
		if (ret) {
			rex_report_errno("ibv_dereg_mr", ret);
			ret = -ret;
			goto out_unmap;
		}
		if (i >= WARMUP)
			run->samples[i - WARMUP] = rc_now_us() - t0;
	}
	/* [time-registration] */
	mp_summarize(run->samples, row->calls, &row->reg);
	/* And a narrow grant over the same pages, registered once. */
	ret = rc_time_window(&run->rig, run->pd, mem.addr, row->size, row->calls, run->samples,
	                     &row->window);
out_unmap:
	rex_pool_mem_unmap(&mem);
	return ret;
}

/* Time \p calls batches of POOL_BATCH rex_pool_get() + rex_pool_put(). */
static int time_pool(struct rc_run *run, struct rc_row *row)
{
	struct rex_pool_attr attr = {
	    .buf_size = row->size,
	    .access = ACCESS,
	    .flags = row->huge_asked ? REX_POOL_HUGE : 0,
	};
	struct rex_pool_buf *b;
	struct rex_pool *pool;
	uint64_t i;
	double t0;
	int j, ret;

	attr.count = (uint32_t)(POOL_BYTES / row->size);
	if (attr.count < 1)
		attr.count = 1;
	if (attr.count > POOL_MAX_BUFFERS)
		attr.count = POOL_MAX_BUFFERS;
	row->pool_buffers = attr.count;
	/* [time-pool] */
	pool = rex_pool_create(run->pd, &attr); /* the one registration */
	if (!pool)
		return -errno;
	row->pool_got = rex_pool_region(pool)->pages;
	for (i = 0; i < WARMUP + row->calls; i++) {
		t0 = rc_now_us();
		for (j = 0; j < POOL_BATCH; j++) {
			b = rex_pool_get(pool);
			if (!b || rex_pool_put(pool, b)) {
				rex_errorf("regcost: the pool refused a buffer it has");
				ret = -EIO;
				goto out_destroy;
			}
		}
		if (i >= WARMUP)
			run->samples[i - WARMUP] = (rc_now_us() - t0) / POOL_BATCH;
	}
	mp_summarize(run->samples, row->calls, &row->pool);
	/* [time-pool] */
	ret = 0;
out_destroy:
	if (rex_pool_destroy(pool) && !ret)
		ret = -EIO;
	return ret;
}

/* "4 KiB", "64 MiB", or bytes. */
static const char *size_text(uint64_t size, char *buf, size_t len)
{
	if (size >= (1u << 30) && size % (1u << 30) == 0)
		snprintf(buf, len, "%" PRIu64 " GiB", size >> 30);
	else if (size >= (1u << 20) && size % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", size >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", size);
	return buf;
}

/* "normal", "MAP_HUGETLB", "THP 100%". */
static const char *got_text(const struct rc_row *row, char *buf, size_t len)
{
	if (row->got == REX_POOL_PAGES_THP)
		snprintf(buf, len, "THP %u%%", row->thp_percent);
	else if (row->got == REX_POOL_PAGES_NORMAL && row->thp_percent)
		snprintf(buf, len, "normal+THP%u%%", row->thp_percent); /* should not happen */
	else
		snprintf(buf, len, "%s", rex_pool_pages_name(row->got));
	return buf;
}

static double ratio(const struct rc_row *row)
{
	return row->pool.median > 0 ? row->reg.median / row->pool.median : 0;
}

/* [print-table] */
static void print_table(const struct rc_run *run)
{
	char size[32], got[32];
	int i;

	printf("%-8s %-6s %-12s %6s  %10s %10s  %10s %10s  %10s %10s  %8s\n", "size", "pages",
	       "got", "calls", "reg+dereg", "", "pool get+put", "", "bind+inval", "", "ratio");
	printf("%-8s %-6s %-12s %6s  %10s %10s  %10s %10s  %10s %10s  %8s\n", "", "", "", "",
	       "median us", "p99 us", "median us", "p99 us", "median us", "p99 us", "medians");
	for (i = 0; i < run->nrows; i++) {
		const struct rc_row *r = &run->rows[i];

		printf("%-8s %-6s %-12s %6" PRIu64
		       "  %10.2f %10.2f  %10.4f %10.4f  %10.2f %10.2f  %8.0f\n",
		       size_text(r->size, size, sizeof(size)), r->huge_asked ? "huge" : "normal",
		       got_text(r, got, sizeof(got)), r->calls, r->reg.median, r->reg.p99,
		       r->pool.median, r->pool.p99, r->window.median, r->window.p99, ratio(r));
	}
}
/* [print-table] */

static void json_summary(FILE *f, const char *name, const struct mp_summary *s)
{
	fprintf(f,
	        "\"%s\": {\"n\": %zu, \"min\": %.4f, \"median\": %.4f, \"p99\": %.4f, "
	        "\"max\": %.4f, \"mean\": %.4f}",
	        name, s->n, s->min, s->median, s->p99, s->max, s->mean);
}

static int write_json(const struct rc_run *run, const char *path)
{
	struct utsname uts;
	char date[32];
	time_t now = time(NULL);
	FILE *f;
	int i;

	f = fopen(path, "w");
	if (!f) {
		rex_errorf("--json %s: %s", path, strerror(errno));
		return -1;
	}
	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\n  \"program\": \"06-mr-pool-regcost\",\n  \"date\": \"%s\",\n", date);
	fprintf(f, "  \"kernel\": \"%s\",\n  \"device\": \"%s\",\n", uts.release, run->device);
	fprintf(f, "  \"access\": \"IBV_ACCESS_LOCAL_WRITE\",\n  \"unit\": \"us\",\n");
	fprintf(f, "  \"pool_batch\": %d,\n  \"clock_read_ns\": %.1f,\n  \"rows\": [", POOL_BATCH,
	        run->clock_ns);
	for (i = 0; i < run->nrows; i++) {
		const struct rc_row *r = &run->rows[i];

		fprintf(f, "%s\n    {\"size\": %" PRIu64 ", \"pages\": \"%s\", \"got\": \"%s\", ",
		        i ? "," : "", r->size, r->huge_asked ? "huge" : "normal",
		        rex_pool_pages_name(r->got));
		fprintf(f, "\"thp_percent\": %u, \"pool_got\": \"%s\", \"pool_buffers\": %u, ",
		        r->thp_percent, rex_pool_pages_name(r->pool_got),
		        (unsigned)r->pool_buffers);
		fprintf(f, "\"calls\": %" PRIu64 ",\n     ", r->calls);
		json_summary(f, "reg_dereg", &r->reg);
		fprintf(f, ",\n     ");
		json_summary(f, "pool_get_put", &r->pool);
		fprintf(f, ",\n     ");
		json_summary(f, "bind_invalidate", &r->window);
		fprintf(f, ",\n     \"ratio\": %.1f}", ratio(r));
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f)) {
		rex_errorf("--json %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* One row per size and kind of page, in the order of -s. */
static int measure(struct rc_run *run, const struct rc_options *o)
{
	int i, kind;

	for (i = 0; i < o->nsizes; i++) {
		for (kind = 0; kind < 2; kind++) {
			struct rc_row *row = &run->rows[run->nrows];

			if ((kind == 0 && !o->normal) || (kind == 1 && !o->huge))
				continue;
			row->size = o->sizes[i];
			row->huge_asked = kind == 1;
			row->calls = row->size > LARGE_SIZE ? o->large_count : o->count;
			if (time_registration(run, row, o->verbose) || time_pool(run, row))
				return REX_EXIT_FAILURE;
			run->nrows++;
		}
	}
	return REX_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct rc_run run = {0};
	struct rc_options o;
	int ret, err;

	rex_error_set_hint_hook(rex_options_hint);
	/* 1. The command line: nothing is created before it is checked. */
	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	/* 2. The device, and a protection domain to register in. */
	if (rex_device_present() < 0)
		return REX_EXIT_NO_DEVICE;
	ret = open_device(&run, o.device);
	if (ret)
		return ret;
	if (rex_device_refuse_iwarp(run.ctx, "regcost binds its windows on a queue pair connected "
	                                     "to itself, which iWARP cannot make")) {
		ret = REX_EXIT_NO_DEVICE;
		goto out_close;
	}
	run.samples = calloc(o.count > o.large_count ? o.count : o.large_count, sizeof(double));
	if (!run.samples) {
		rex_report_errno("calloc", errno);
		ret = REX_EXIT_FAILURE;
		goto out_close;
	}
	/* A QP to bind windows on: connected to itself. */
	if (rc_mw_rig_create(&run.rig, run.ctx, run.pd)) {
		ret = REX_EXIT_FAILURE;
		goto out_free;
	}
	run.clock_ns = clock_cost_ns();
	printf("regcost: device %s; ibv_reg_mr + ibv_dereg_mr of one touched buffer "
	       "(access IBV_ACCESS_LOCAL_WRITE)\n"
	       "regcost: against rex_pool_get + rex_pool_put, and bind + invalidate of a type 2 "
	       "window over it\n",
	       run.device);
	printf("regcost: %" PRIu64 " pairs per size up to 1 MiB, %" PRIu64
	       " above; pool pairs timed in batches of %d; a clock read costs %.0f ns\n",
	       o.count, o.large_count, POOL_BATCH, run.clock_ns);
	fflush(stdout);
	/* 3. Measure, row by row. */
	ret = measure(&run, &o);
	/* 4. Report: the table, and the JSON file if asked for. */
	if (run.nrows)
		print_table(&run);
	if (!ret && o.json && write_json(&run, o.json))
		ret = REX_EXIT_FAILURE;
	if (!ret && o.json)
		printf("regcost: wrote %s\n", o.json);
	if (rc_mw_rig_destroy(&run.rig))
		ret = REX_EXIT_FAILURE;
out_free:
	free(run.samples);
out_close:
	/* 5. Release the protection domain and the device. */
	err = ibv_dealloc_pd(run.pd); /* an errno value */
	if (err) {
		rex_report_errno("ibv_dealloc_pd", err);
		ret = REX_EXIT_FAILURE;
	}
	ibv_close_device(run.ctx);
	return ret;
}
