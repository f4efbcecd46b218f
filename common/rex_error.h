/* SPDX-License-Identifier: MIT */
/**
 * \file rex_error.h
 * \brief Error messages that name the failing call, the reason, and a hint.
 *
 * Verbs and the RDMA connection manager report failure in three ways:
 * `ibv_post_*` and `ibv_modify_qp` return an errno value, `ibv_reg_mr` and the
 * other constructors return NULL and set `errno`, and `rdma_*` calls return -1
 * and set `errno`. Callers turn each into a positive errno value and hand it to
 * rex_report_errno(), so every message has the same shape:
 *
 *     rdma_resolve_addr: No route to host
 *       hint: ...
 *
 * Failed work completions go to rex_report_wc(), which prints the status text
 * (`ibv_wc_status_str()`), the status's name and number, `wr_id` and
 * `vendor_err`.
 *
 * Every line the helpers of common/ print starts with the program's name
 * (glibc's `program_invocation_short_name`), so a message in a log that many
 * programs share says whose it is:
 *
 *     02-send-recv-client: rdma_resolve_addr: No route to host
 *       hint: ...
 *
 * The hints are generic: true for any program on any RDMA device. A program
 * adds hints of its own (its flags, its lab) with rex_error_set_hint_hook().
 *
 * Copy rex_error.c and rex_error.h together; they need only libibverbs and glibc.
 */
#ifndef REX_ERROR_H
#define REX_ERROR_H

#include <stddef.h>
#include <infiniband/verbs.h>

/**
 * \brief A program's own hint for \p err from \p call, or NULL for none.
 *
 * \param call  name of the failing call, as given to rex_report_errno().
 * \param err   positive errno value.
 * \return a string that stays valid (a literal), or NULL.
 */
typedef const char *(*rex_hint_fn)(const char *call, int err);

/**
 * \brief Add the program's own hints to every message of rex_report_errno()
 *        and rex_format_errno(): printed as one more "  hint: " line after the
 *        generic one.
 *
 * This is the one process-wide setting of the helpers: set it once, early in
 * main(), before other threads start. NULL removes the hook.
 */
void rex_error_set_hint_hook(rex_hint_fn hook);

/**
 * \brief The program's own hint for \p err from \p call (through the hook of
 *        rex_error_set_hint_hook()), or NULL when there is no hook or no hint.
 *
 * For helpers that print messages of their own shape and want the program's
 * hint under them.
 */
const char *rex_error_program_hint(const char *call, int err);

/**
 * \brief Print "PROGRAM: " and the printf()-style message, then a newline, to stderr.
 *
 * The helpers print every message through this function. \p fmt has no
 * trailing newline.
 */
void rex_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * \brief A one-line hint for a well-known cause of \p err, or NULL.
 *
 * \param call  name of the failing call, e.g. "ibv_reg_mr"; some hints depend
 *              on it (ENOMEM from a registration means the memlock limit).
 * \param err   positive errno value.
 * \return a static string (never free it), or NULL when there is no hint.
 */
const char *rex_errno_hint(const char *call, int err);

/**
 * \brief Format "call: reason" and, when there are some, "\n  hint: ..."
 *        lines (the generic hint, then the program's) into \p buf.
 *
 * The program's name is not part of it: rex_report_errno() adds it.
 * \return the length the full message has (as snprintf()); the text in \p buf
 *         is cut to fit \p len and always NUL-terminated when \p len > 0.
 */
int rex_format_errno(char *buf, size_t len, const char *call, int err);

/**
 * \brief Print the program's name, rex_format_errno()'s message and a newline to stderr.
 *
 * \param call  name of the failing call.
 * \param err   positive errno value (a negative one is accepted and negated).
 */
void rex_report_errno(const char *call, int err);

/**
 * \brief Write into \p buf the message for a registration of \p bytes that
 *        failed with \p err. When the cause may be the locked-memory limit
 *        (ENOMEM or EAGAIN, and the limit is finite), the hint names the
 *        limit, what this registration asked to pin, and how to raise it:
 *
 *            ibv_reg_mr of 1048576 bytes: Cannot allocate memory
 *              hint: registered memory is pinned, and counts against the
 *              locked-memory limit (RLIMIT_MEMLOCK, `ulimit -l`): 64 KiB for
 *              this process, and this registration asked for 1024 KiB more ...
 *
 *        Otherwise it is rex_format_errno()'s message for "CALL of N bytes".
 * \param buf    where the message goes.
 * \param len    room in \p buf.
 * \param call   "ibv_reg_mr", or the call that pinned the memory.
 * \param err    positive errno value (a negative one is accepted and negated).
 * \param bytes  what the registration asked for.
 * \return as snprintf().
 */
int rex_format_reg_errno(char *buf, size_t len, const char *call, int err, size_t bytes);

/** \brief Print rex_format_reg_errno()'s message, as rex_report_errno() does. */
void rex_report_reg_errno(const char *call, int err, size_t bytes);

/**
 * \brief A one-line hint for a well-known work-completion status, or NULL.
 * \return a static string (never free it), or NULL.
 */
const char *rex_wc_hint(enum ibv_wc_status status);

/**
 * \brief Format a failed work completion into \p buf:
 *        "what: work completion failed: <status text> (NAME N, wr_id W, vendor_err 0xV)"
 *        and, when there is one, "\n  hint: ...".
 *
 * NAME is the status's name in enum ibv_wc_status, such as
 * IBV_WC_RETRY_EXC_ERR ("status" for one this file does not know); N its
 * number; W is decimal. ibv_poll_cq(3) guarantees only wr_id, status,
 * qp_num and vendor_err of a failed completion, so the opcode is left out
 * (keep which operation it was in wr_id). A successful completion the
 * caller did not expect gets ", opcode O" after W: a name such as
 * IBV_WC_SEND, or a number.
 *
 * \return as rex_format_errno().
 */
int rex_format_wc(char *buf, size_t len, const char *what, const struct ibv_wc *wc);

/** \brief Print the program's name, rex_format_wc()'s message and a newline to stderr. */
void rex_report_wc(const char *what, const struct ibv_wc *wc);

/**
 * \brief A one-line hint for a failed completion of a \b receive, or NULL:
 *        the view from the responder's side.
 * rex_wc_hint() speaks to the requester, whose operation failed: "check
 * your rkey". A receive fails because of what the peer sent: there the peer
 * was the requester and this side the responder that refused it, or that
 * stopped because of it. A flushed receive with no failed completion of
 * ours before it is how a refused WRITE or READ shows on the responder:
 * those take no receive, so nothing else shows there.
 */
const char *rex_wc_responder_hint(enum ibv_wc_status status);

/**
 * \brief Format a failed completion of a receive as rex_format_wc() does,
 *        with the responder's hint, and "\n  granted: " \p granted when it
 *        is not NULL: what this side gave the peer (memory, its rights,
 *        receives), so that the reader can hold the peer's request against it.
 * \return as rex_format_errno().
 */
int rex_format_peer_wc(char *buf, size_t len, const char *what, const struct ibv_wc *wc,
                       const char *granted);

/** \brief Print the program's name, rex_format_peer_wc()'s message and a newline to stderr. */
void rex_report_peer_wc(const char *what, const struct ibv_wc *wc, const char *granted);

/**
 * \brief Say in a few words what a completion was, for messages about one
 *        that arrived where none should: "IBV_WC_RECV_RDMA_WITH_IMM of 64
 *        bytes, immediate 0x01000040" for a successful one (the immediate
 *        only with IBV_WC_WITH_IMM), "failed: IBV_WC_LOC_LEN_ERR" otherwise.
 * \return as snprintf().
 */
int rex_format_wc_brief(char *buf, size_t len, const struct ibv_wc *wc);

#endif /* REX_ERROR_H */
