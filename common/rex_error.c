/* SPDX-License-Identifier: MIT */
/*
 * Error messages: "program: call: reason", then a hint for the causes people
 * meet again and again. The hints are written for someone running RDMA on
 * Soft-RoCE or a real NIC, so they say what to type, not what the spec says;
 * they name nothing of any one program (its flags, its scripts): a program
 * adds those through rex_error_set_hint_hook().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#include "rex_error.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

/* Room for one message; the longest call name plus hint fits many times over. */
#define REPORT_BUF_LEN 1024

static const char UNREACHABLE_HINT[] =
    "the address is unreachable or not on an RDMA interface: use an address of the server's "
    "RDMA interface (`rdma link show`, `ip address`)";

/* The program's own hints (rex_error_set_hint_hook()); NULL: none. The one
 * piece of process-wide state in common/, set once at start. */
static rex_hint_fn program_hint;

void rex_error_set_hint_hook(rex_hint_fn hook)
{
	program_hint = hook;
}

const char *rex_error_program_hint(const char *call, int err)
{
	return program_hint ? program_hint(call, err < 0 ? -err : err) : NULL;
}

void rex_errorf(const char *fmt, ...)
{
	char line[REPORT_BUF_LEN + 64];
	size_t len;
	va_list ap;
	int n;

	/* One line, one write(): two programs writing to one terminal (a
	 * server and its client, say) then never mix their lines mid-line. */
	n = snprintf(line, sizeof(line), "%s: ", program_invocation_short_name);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	len = strlen(line);
	line[len++] = '\n';
	fflush(stderr);
	if (write(STDERR_FILENO, line, len) < 0)
		return; /* nowhere left to say so */
}

static bool call_is(const char *call, const char *name)
{
	return call && strcmp(call, name) == 0;
}

static bool call_starts_with(const char *call, const char *prefix)
{
	return call && strncmp(call, prefix, strlen(prefix)) == 0;
}

/*
 * Calls that pin memory or allocate device resources. When they fail with
 * ENOMEM or EAGAIN, the usual cause is RLIMIT_MEMLOCK: registered memory is
 * locked in RAM and counts against that limit (often only 64 KiB or 8 MiB).
 */
static bool call_pins_memory(const char *call)
{
	return call_starts_with(call, "ibv_reg_mr") || call_is(call, "ibv_create_cq") ||
	       call_is(call, "ibv_create_qp") || call_is(call, "rdma_create_qp") ||
	       call_is(call, "ibv_alloc_pd");
}

const char *rex_errno_hint(const char *call, int err)
{
	switch (err) {
	case ENODEV:
		/* Opening the CM involves no address: librdmacm found no device. */
		if (call_is(call, "rdma_create_event_channel") || call_is(call, "rdma_create_id"))
			return "this machine has no RDMA device: list devices with "
			       "`rdma link show`; add Soft-RoCE with "
			       "`rdma link add rxe0 type rxe netdev IFACE`";
		return "no RDMA device serves this address: list devices with `rdma link show`; "
		       "add Soft-RoCE with `rdma link add rxe0 type rxe netdev IFACE`";
	case ENOMEM:
	case EAGAIN:
		if (call_pins_memory(call))
			return "registered memory is locked in RAM and counts against "
			       "RLIMIT_MEMLOCK: check `ulimit -l` and raise the locked-memory "
			       "limit (e.g. `ulimit -l unlimited` as root, or limits.conf)";
		return NULL;
	case ECONNREFUSED:
		return "nobody is listening at that address and port: start the server first, "
		       "and check the address and port";
	case EADDRNOTAVAIL:
		/* Binding: the CM says EADDRNOTAVAIL for a port that another id
		 * holds on an address that overlaps ours (a wildcard bind, say). */
		if (call_is(call, "rdma_bind_addr") || call_is(call, "rdma_listen"))
			return "this machine has no such address, or another RDMA program holds "
			       "the port: check the address, or choose another port";
		return UNREACHABLE_HINT; /* resolving an address that is not there */
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ETIMEDOUT:
		return UNREACHABLE_HINT;
	case EADDRINUSE:
		return "another program already uses this port: stop it, or choose another "
		       "port";
	case ECONNRESET:
		return "the peer disconnected or died: look at its output";
	case EINVAL:
		/* The CM moves a new QP to INIT with attributes it takes from the
		 * id's connection (the kernel's cm_init_qp_init_attr()), and has
		 * them only while the id's request or reply is pending or the
		 * connection is up: a request whose client has given up meanwhile
		 * (timed out, rejected, exited) gets EINVAL. */
		if (call_is(call, "rdma_create_qp"))
			return "either the QP asks for more than the device allows (work requests, "
			       "SGEs, inline data: see `ibv_devinfo -v`), or, taking a connect "
			       "request, the request is no longer pending: its client gave up "
			       "(timed out, or exited) before this side got to it";
		return NULL;
	case EPROTO:
		if (call_starts_with(call, "rdma") || call_starts_with(call, "rex_cm"))
			return "the peer sent a CM event this step did not expect: are both "
			       "sides the same program version, and did the peer fail?";
		return NULL;
	default:
		return NULL;
	}
}

int rex_format_errno(char *buf, size_t len, const char *call, int err)
{
	const char *hint, *own;

	if (err < 0)
		err = -err;
	if (!call)
		call = "(unknown call)";
	hint = rex_errno_hint(call, err);
	own = rex_error_program_hint(call, err);
	return snprintf(buf, len, "%s: %s%s%s%s%s", call, strerror(err), hint ? "\n  hint: " : "",
	                hint ? hint : "", own ? "\n  hint: " : "", own ? own : "");
}

void rex_report_errno(const char *call, int err)
{
	char msg[REPORT_BUF_LEN];

	rex_format_errno(msg, sizeof(msg), call, err);
	rex_errorf("%s", msg);
}

/* [memlock] */
int rex_format_reg_errno(char *buf, size_t len, const char *call, int err, size_t bytes)
{
	char what[160];
	struct rlimit lim;

	if (err < 0)
		err = -err;
	snprintf(what, sizeof(what), "%s of %zu bytes", call ? call : "(unknown call)", bytes);
	if ((err != ENOMEM && err != EAGAIN) || getrlimit(RLIMIT_MEMLOCK, &lim) ||
	    lim.rlim_cur == RLIM_INFINITY)
		return rex_format_errno(buf, len, what, err);
	return snprintf(buf, len,
	                "%s: %s\n  hint: registered memory is pinned, and counts against the "
	                "locked-memory limit (RLIMIT_MEMLOCK, `ulimit -l`): %llu KiB for this "
	                "process, and this registration asked for %zu KiB more (memory it "
	                "registered before counts too)%s\n  hint: raise the limit for this user: "
	                "`memlock` in /etc/security/limits.conf (then log in again), "
	                "LimitMEMLOCK=infinity for a systemd service, `--ulimit memlock=-1` for a "
	                "container, `ulimit -l unlimited` in a shell where root allows it; or "
	                "register less",
	                what, strerror(err), (unsigned long long)(lim.rlim_cur / 1024),
	                (bytes + 1023) / 1024,
	                geteuid() == 0 ? " (root with CAP_IPC_LOCK is not held to it, except on "
	                                 "Soft-iWARP: elsewhere the memory itself ran short)"
	                               : "");
}

void rex_report_reg_errno(const char *call, int err, size_t bytes)
{
	char msg[REPORT_BUF_LEN];

	rex_format_reg_errno(msg, sizeof(msg), call, err, bytes);
	rex_errorf("%s", msg);
}
/* [memlock] */

const char *rex_wc_hint(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "receiver not ready: the peer had no receive posted; post receives "
		       "before the peer can send, or grant credits per posted receive";
	case IBV_WC_RETRY_EXC_ERR:
		return "the peer stopped acknowledging: it died, its queue pair went to error, "
		       "or the link is down";
	case IBV_WC_REM_ACCESS_ERR:
		return "the peer, as responder, refused the access: check the rkey, address and "
		       "length, and that its memory was registered with the remote access flags "
		       "this operation needs";
	case IBV_WC_LOC_PROT_ERR:
		return "the lkey does not cover the local buffer: check each SGE's address, "
		       "length and lkey against the registered memory region";
	case IBV_WC_LOC_LEN_ERR:
		return "the receive buffer is smaller than the incoming message: post larger "
		       "receives or send less";
	case IBV_WC_LOC_ACCESS_ERR:
		return "the local memory region lacks an access flag this operation needs "
		       "(a receive or RDMA READ target needs IBV_ACCESS_LOCAL_WRITE)";
	case IBV_WC_LOC_QP_OP_ERR:
		return "this side's device could not carry out the request: a receive with "
		       "no room for what arrived, or (Soft-RoCE) a send with no route to the "
		       "peer, its network interface down";
	case IBV_WC_WR_FLUSH_ERR:
		return "the queue pair went to the error state: an earlier failure or a "
		       "disconnect flushed this request; the first failed completion says why "
		       "(none of ours: the peer's request was refused here, see its error)";
	case IBV_WC_REM_INV_REQ_ERR:
		return "the peer found the request invalid: a message larger than its receive "
		       "buffer, or an operation its queue pair does not allow";
	default:
		return NULL;
	}
}

const char *rex_wc_responder_hint(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_WR_FLUSH_ERR:
		return "our queue pair went to the error state while this receive waited. With no "
		       "failed completion of ours before it, the peer caused it: as responder, we "
		       "refused a WRITE or READ of the peer's that reached outside what we granted "
		       "(it takes no receive, so only this flush shows here; the peer's completion "
		       "names the error)";
	case IBV_WC_REM_ACCESS_ERR:
		return "as responder, we refused the peer's WRITE WITH IMM: it reached outside the "
		       "memory we granted, or used a right we did not grant; the peer's completion "
		       "fails with the same status";
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
		return "the peer's message did not fit this receive: more bytes than its buffer "
		       "holds (Soft-RoCE reports IBV_WC_LOC_QP_OP_ERR, hardware "
		       "IBV_WC_LOC_LEN_ERR); the peer's SEND fails too";
	default:
		return rex_wc_hint(status);
	}
}

/* Names of the opcodes a plain RC/UD program sees; others print as numbers. */
static const char *wc_opcode_name(enum ibv_wc_opcode opcode)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return "IBV_WC_SEND";
	case IBV_WC_RDMA_WRITE:
		return "IBV_WC_RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "IBV_WC_RDMA_READ";
	case IBV_WC_COMP_SWAP:
		return "IBV_WC_COMP_SWAP";
	case IBV_WC_FETCH_ADD:
		return "IBV_WC_FETCH_ADD";
	case IBV_WC_BIND_MW:
		return "IBV_WC_BIND_MW";
	case IBV_WC_LOCAL_INV:
		return "IBV_WC_LOCAL_INV";
	case IBV_WC_TSO:
		return "IBV_WC_TSO";
	case IBV_WC_RECV:
		return "IBV_WC_RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "IBV_WC_RECV_RDMA_WITH_IMM";
	default:
		return NULL;
	}
}

/* The enum's names of the statuses (ibv_wc_status_str() gives the prose). */
static const char *wc_status_name(enum ibv_wc_status status)
{
	static const char *const names[] = {
	    [IBV_WC_SUCCESS] = "IBV_WC_SUCCESS",
	    [IBV_WC_LOC_LEN_ERR] = "IBV_WC_LOC_LEN_ERR",
	    [IBV_WC_LOC_QP_OP_ERR] = "IBV_WC_LOC_QP_OP_ERR",
	    [IBV_WC_LOC_EEC_OP_ERR] = "IBV_WC_LOC_EEC_OP_ERR",
	    [IBV_WC_LOC_PROT_ERR] = "IBV_WC_LOC_PROT_ERR",
	    [IBV_WC_WR_FLUSH_ERR] = "IBV_WC_WR_FLUSH_ERR",
	    [IBV_WC_MW_BIND_ERR] = "IBV_WC_MW_BIND_ERR",
	    [IBV_WC_BAD_RESP_ERR] = "IBV_WC_BAD_RESP_ERR",
	    [IBV_WC_LOC_ACCESS_ERR] = "IBV_WC_LOC_ACCESS_ERR",
	    [IBV_WC_REM_INV_REQ_ERR] = "IBV_WC_REM_INV_REQ_ERR",
	    [IBV_WC_REM_ACCESS_ERR] = "IBV_WC_REM_ACCESS_ERR",
	    [IBV_WC_REM_OP_ERR] = "IBV_WC_REM_OP_ERR",
	    [IBV_WC_RETRY_EXC_ERR] = "IBV_WC_RETRY_EXC_ERR",
	    [IBV_WC_RNR_RETRY_EXC_ERR] = "IBV_WC_RNR_RETRY_EXC_ERR",
	    [IBV_WC_LOC_RDD_VIOL_ERR] = "IBV_WC_LOC_RDD_VIOL_ERR",
	    [IBV_WC_REM_INV_RD_REQ_ERR] = "IBV_WC_REM_INV_RD_REQ_ERR",
	    [IBV_WC_REM_ABORT_ERR] = "IBV_WC_REM_ABORT_ERR",
	    [IBV_WC_INV_EECN_ERR] = "IBV_WC_INV_EECN_ERR",
	    [IBV_WC_INV_EEC_STATE_ERR] = "IBV_WC_INV_EEC_STATE_ERR",
	    [IBV_WC_FATAL_ERR] = "IBV_WC_FATAL_ERR",
	    [IBV_WC_RESP_TIMEOUT_ERR] = "IBV_WC_RESP_TIMEOUT_ERR",
	    [IBV_WC_GENERAL_ERR] = "IBV_WC_GENERAL_ERR",
	};

	if ((unsigned)status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status];
	return "status";
}

static int format_wc(char *buf, size_t len, const char *what, const struct ibv_wc *wc,
                     bool responder, const char *granted)
{
	char opcode_text[48] = ""; /* ", opcode " and the longest name */
	const char *opcode;
	const char *hint;
	int n;

	if (!what)
		what = "(unknown operation)";
	if (!wc)
		return snprintf(buf, len, "%s: work completion failed: (no work completion)", what);

	/* The opcode is valid only in a successful completion (ibv_poll_cq(3)):
	 * a failed one names its work request by wr_id alone. */
	if (wc->status == IBV_WC_SUCCESS) {
		opcode = wc_opcode_name(wc->opcode);
		if (opcode)
			snprintf(opcode_text, sizeof(opcode_text), ", opcode %s", opcode);
		else
			snprintf(opcode_text, sizeof(opcode_text), ", opcode %d", (int)wc->opcode);
	}
	hint = responder ? rex_wc_responder_hint(wc->status) : rex_wc_hint(wc->status);
	n = snprintf(buf, len,
	             "%s: work completion failed: %s (%s %d, wr_id %" PRIu64
	             "%s, vendor_err 0x%" PRIx32 ")%s%s%s%s",
	             what, ibv_wc_status_str(wc->status), wc_status_name(wc->status),
	             (int)wc->status, wc->wr_id, opcode_text, wc->vendor_err,
	             hint ? "\n  hint: " : "", hint ? hint : "", granted ? "\n  granted: " : "",
	             granted ? granted : "");
	return n;
}

int rex_format_wc(char *buf, size_t len, const char *what, const struct ibv_wc *wc)
{
	return format_wc(buf, len, what, wc, false, NULL);
}

int rex_format_peer_wc(char *buf, size_t len, const char *what, const struct ibv_wc *wc,
                       const char *granted)
{
	return format_wc(buf, len, what, wc, true, granted);
}

void rex_report_peer_wc(const char *what, const struct ibv_wc *wc, const char *granted)
{
	char msg[REPORT_BUF_LEN];

	rex_format_peer_wc(msg, sizeof(msg), what, wc, granted);
	rex_errorf("%s", msg);
}

int rex_format_wc_brief(char *buf, size_t len, const struct ibv_wc *wc)
{
	char number[24];
	const char *name;

	if (wc->status != IBV_WC_SUCCESS)
		return snprintf(buf, len, "failed: %s", wc_status_name(wc->status));
	name = wc_opcode_name(wc->opcode);
	if (!name) {
		snprintf(number, sizeof(number), "opcode %d", (int)wc->opcode);
		name = number;
	}
	if (!(wc->wc_flags & IBV_WC_WITH_IMM))
		return snprintf(buf, len, "%s of %" PRIu32 " bytes", name, wc->byte_len);
	return snprintf(buf, len, "%s of %" PRIu32 " bytes, immediate 0x%08" PRIx32, name,
	                wc->byte_len, be32toh(wc->imm_data));
}

void rex_report_wc(const char *what, const struct ibv_wc *wc)
{
	char msg[REPORT_BUF_LEN];

	rex_format_wc(msg, sizeof(msg), what, wc);
	rex_errorf("%s", msg);
}
