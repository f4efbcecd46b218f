/* SPDX-License-Identifier: MIT */
/**
 * \file rex_options.h
 * \brief The one command line every chapter shares, and the exit codes.
 *
 * Every program takes the same flags with the same meaning:
 *
 * | flag       | server                          | client                     |
 * |------------|---------------------------------|----------------------------|
 * | -a ADDR    | address to bind (all if omitted)| server to connect to (required) |
 * | -p PORT    | port to listen on               | port to connect to         |
 * | -s SIZE    | message or buffer size in bytes, with an optional K, M or G (binary) suffix ||
 * | -n COUNT   | how many messages or operations ||
 * | -w WINDOW  | messages in flight at once      ||
 * | -k SLOTS   | slots in a ring of buffers      ||
 * | -c CLIENTS | clients to serve, one after another (0: no limit) | - |
 * | -q CONNECTIONS | - | connections (queue pairs) to drive at once |
 * | -v         | verbose: debug lines to stderr  ||
 * | -h         | print usage with the defaults and exit 0 ||
 *
 * A program enables only the flags it uses (`-a -p -v -h` are always on).
 * Numbers are checked: no sign, no trailing characters, within the program's
 * range. Bad input prints one line naming the flag and the problem, then the
 * usage, and the caller exits with #REX_EXIT_USAGE before creating anything:
 *
 *     01-connect-client: -p 70000: out of range (1..65535)
 *     01-connect-client: -s 12Q: not a size (digits and an optional K, M or G)
 *     01-connect-client: missing -a ADDR (the server to connect to)
 *
 * The programs take no positional arguments. A repeated flag keeps its last
 * value.
 *
 * A zero-initialised spec is usable: every maximum left at 0 means "no
 * upper limit", every minimum 0 means no lower one.
 *
 * Copy rex_options.c and rex_options.h together; they need only libc.
 */
#ifndef REX_OPTIONS_H
#define REX_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** \name Exit codes shared by every program
 * @{ */
#define REX_EXIT_OK 0         /**< success */
#define REX_EXIT_FAILURE 1    /**< a runtime failure or a failing peer */
#define REX_EXIT_USAGE 2      /**< bad command line; nothing was created */
/** no usable RDMA device: none at all, or an iWARP device where the program needs
 *  what iWARP lacks (rex_device_refuse_iwarp()); test runners report "skipped" */
#define REX_EXIT_NO_DEVICE 77
/** @} */

/** The TCP-style port the chapters use when -p is not given. */
#define REX_DEFAULT_PORT 20886

/** Optional flags a program can enable (see rex_options_spec::flags). */
enum rex_option_flag {
	REX_OPT_SIZE = 1u << 0,    /**< -s SIZE */
	REX_OPT_COUNT = 1u << 1,   /**< -n COUNT */
	REX_OPT_WINDOW = 1u << 2,  /**< -w WINDOW */
	REX_OPT_CLIENTS = 1u << 3, /**< -c CLIENTS (servers) */
	REX_OPT_SLOTS = 1u << 4,   /**< -k SLOTS: buffers in a ring (chapter 04 on) */
	REX_OPT_QPS = 1u << 5,     /**< -q CONNECTIONS (clients, chapter 05 on) */
	REX_OPT_SRQ = 1u << 6,     /**< -S RECVS: a shared receive queue (servers, chapter 06 on) */
};

/** The values of a parsed command line. */
struct rex_options {
	const char *addr; /**< -a: points into argv, or NULL (server: bind all) */
	uint16_t port;    /**< -p */
	uint64_t size;    /**< -s, bytes */
	uint64_t count;   /**< -n */
	uint32_t window;  /**< -w */
	uint32_t clients; /**< -c; 0 means no limit */
	uint32_t slots;   /**< -k */
	bool verbose;     /**< -v */
	uint32_t qps;     /**< -q: connections at once */
	uint32_t srq;     /**< -S: receives of a shared receive queue; 0: none */
};

/** What a program accepts: its flags, defaults and ranges. */
struct rex_options_spec {
	const char *program;  /**< name shown in usage, e.g. "01-connect-client" */
	const char *summary;  /**< one line saying what the program does */
	bool is_server;       /**< -a is optional for servers, required for clients */
	unsigned flags;       /**< OR of ::rex_option_flag for the optional flags */
	struct rex_options defaults; /**< values when a flag is absent (port 0 means REX_DEFAULT_PORT) */
	uint64_t min_size;    /**< smallest -s accepted */
	uint64_t max_size;    /**< largest -s accepted; 0: no upper limit */
	uint64_t min_count;   /**< smallest -n accepted */
	uint64_t max_count;   /**< largest -n accepted; 0: no upper limit */
	uint32_t max_window;  /**< -w ranges over 1..max_window; 0: no upper limit */
	uint32_t max_clients; /**< -c ranges over 0..max_clients; 0: no upper limit */
	uint32_t min_slots;   /**< smallest -k accepted */
	uint32_t max_slots;   /**< largest -k accepted; 0: no upper limit */
	uint32_t max_qps;     /**< -q ranges over 1..max_qps; 0: no upper limit */
	uint32_t max_srq;     /**< -S ranges over 0..max_srq; 0: no upper limit */
};

/** What rex_options_parse() found. */
enum rex_options_result {
	REX_OPTIONS_OK = 0,   /**< \p out holds the values: go on */
	REX_OPTIONS_HELP = 1, /**< -h, --help or --version: printed to \p out_stream; exit #REX_EXIT_OK */
	REX_OPTIONS_BAD = -1, /**< an error and the usage were printed to \p err_stream; exit #REX_EXIT_USAGE */
};

/**
 * \brief Parse \p argv according to \p spec.
 *
 * Allocates nothing and does not reorder \p argv; \p out->addr points into
 * \p argv. May be called more than once in a process (it resets getopt()).
 * Arguments are read in order and -h stops the parse: "-h -p 0" is help,
 * "-p 0 -h" is an error. Every program also takes --help (as -h) and
 * --version; an unknown long option is named whole ("unknown option
 * --frobnicate").
 *
 * \param spec        what the program accepts.
 * \param argc, argv  as given to main().
 * \param out         receives the values (defaults where a flag is absent).
 * \param out_stream  where -h prints the usage (normally stdout).
 * \param err_stream  where errors and the usage go (normally stderr).
 * \return one of ::rex_options_result.
 */
enum rex_options_result rex_options_parse(const struct rex_options_spec *spec, int argc,
					  char **argv, struct rex_options *out, FILE *out_stream,
					  FILE *err_stream);

/** The collection's version, printed by --version: the project()'s VERSION in CMakeLists.txt (a test compares them). */
#define REX_VERSION "0.1"

/** \brief Print "PROGRAM (RDMA by Example) VERSION" to \p stream: what --version prints. */
void rex_options_version(const char *program, FILE *stream);

/** \brief Print the usage text for \p spec, showing every default, to \p stream. */
void rex_options_usage(const struct rex_options_spec *spec, FILE *stream);

/**
 * \brief Parse a size such as "4096", "64K", "1M" or "2G" (binary units, either case).
 * \return 0, or -EINVAL (not a number, sign, space, hex, bad suffix) or -ERANGE
 *         (outside [min, max], or too big for 64 bits); \p value is set only on success.
 */
int rex_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *value);

/**
 * \brief Parse a plain unsigned decimal number within [min, max].
 * \return 0, -EINVAL or -ERANGE as rex_parse_size().
 */
int rex_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *value);

/**
 * \brief Print one debug line, "WHO: debug: ...", to stderr when -v was given.
 *
 * Debug lines go to stderr so that stdout carries only the stable progress
 * lines that the walkthroughs document and the tests match.
 *
 * \param verbose  rex_options::verbose: nothing is printed when it is false.
 * \param who      what prefixes the line, e.g. "server" or "client".
 * \param fmt      a printf() format for the rest of the line; the newline is added.
 */
void rex_debug(bool verbose, const char *who, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * \brief This project's own hints, for rex_error_set_hint_hook(): they speak of
 *        the flags defined here (-a, -p) and of the project's Soft-RoCE lab
 *        (scripts/lab, $RDMA_LAB_ADDR).
 *
 * Every program of the project installs it while parsing its command line,
 * so its error messages end with advice that fits this project. (rex_error's
 * own hints stay generic.) A program of your own writes its own, or none.
 *
 * \param call  name of the failing call.
 * \param err   positive errno value.
 * \return a string literal, or NULL.
 */
const char *rex_options_hint(const char *call, int err);

#endif /* REX_OPTIONS_H */
