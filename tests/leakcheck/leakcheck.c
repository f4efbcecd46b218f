// SPDX-License-Identifier: MIT
/**
 * \file
 * Leaks caught where they happen: a shared object that every end-to-end test
 * preloads into its processes (LD_PRELOAD, set by rex_rdma_test() in
 * cmake/rex.cmake). When one of our programs exits normally (returns from
 * main() or calls exit()), it asks the kernel what that process still holds:
 * `rdma resource show` for QPs, CQs, memory regions, protection domains and
 * CM ids, filtered on the process's pid. Once a process has exited the kernel
 * has released everything it held, so this is the last moment a leak can be
 * seen, and seen in the test that caused it. Anything still held is printed,
 * one line an object, and the process exits with status 1 instead:
 *
 *     leakcheck: /work/main/build/tests/leaker (pid 149) still holds at exit:
 *     leakcheck:   cm_id link rxe0/1 cm-idn 0 state ADDR_BOUND ps TCP pid 149 comm leaker ...
 *     leakcheck:   qp    link rxe0/1 lqpn 17 rqpn 0 type RC state INIT ... pid 149 comm leaker
 *
 * The rdma tool runs once a check, in batch mode, started directly (no
 * shell): about 0.85 s a checked exit in the lab's emulated VM under load.
 *
 * Only processes whose executable lies below REX_LEAKCHECK_ROOT (the build
 * tree) and that still have a file of /dev/infiniband open at exit are
 * checked: shells, Python, ctest, the `rdma` tool and perftest's programs are
 * left alone, and cost one readlink() at their exit. A process killed by
 * a signal has no exit to check; the kernel frees what it held.
 *
 * Environment: REX_LEAKCHECK_ROOT (required: without it nothing is checked),
 * REX_LEAKCHECK=0 (check nothing: to measure what the check costs, or to run
 * a leaking program on), REX_LEAKCHECK_RDMA (the rdma tool; default "rdma",
 * found on PATH).
 */
#define _GNU_SOURCE /* pipe2, readlinkat under -std=c11 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What one run of the rdma tool is asked (its batch mode, on stdin): the kinds
 * of object a process can leak. */
static const char batch[] = "resource show cm_id\nresource show qp\nresource show mr\n"
			    "resource show cq\nresource show pd\n";

/* Which kind a line of `rdma resource show` is about, by the number it names
 * first among these (a CM id's line may name its QP, a QP's or MR's its PD). */
static const char *kind_of(const char *line)
{
	if (strstr(line, " cm-idn "))
		return "cm_id";
	if (strstr(line, " lqpn "))
		return "qp";
	if (strstr(line, " mrn "))
		return "mr";
	if (strstr(line, " cqn "))
		return "cq";
	if (strstr(line, " pdn "))
		return "pd";
	return "?";
}

/* Has this process a file of the RDMA subsystem open (/dev/infiniband/uverbsN,
 * /dev/infiniband/rdma_cm)? Every QP, CQ, MR, PD and CM id belongs to such an
 * open file and goes with it, so a process without one holds nothing: it is
 * not checked, and the rdma tool is not run (where there is no RDMA at all,
 * a program that exits 77 stays skipped). */
static bool has_rdma_file(void)
{
	static const char prefix[] = "/dev/infiniband/";
	char target[PATH_MAX];
	bool found = false;
	struct dirent *e;
	DIR *fds = opendir("/proc/self/fd");

	if (!fds)
		return true; /* cannot tell: check */
	while (!found && (e = readdir(fds)) != NULL) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(fds), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = strncmp(target, prefix, sizeof(prefix) - 1) == 0;
	}
	closedir(fds);
	return found;
}

/* Is \p exe below the directory \p root? */
static bool below(const char *exe, const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	return strncmp(exe, root, n) == 0 && exe[n] == '/';
}

/* Does this line of `rdma resource show` name \p pid? ("... pid 812 comm x") */
static bool names_pid(const char *line, long pid)
{
	char field[32];
	size_t n = (size_t)snprintf(field, sizeof(field), " pid %ld", pid);
	const char *at = line;

	while ((at = strstr(at, field)) != NULL) {
		char next = at[n];

		if (next == ' ' || next == '\n' || next == '\0')
			return true;
		at += n;
	}
	return false;
}

extern char **environ;

/* Starts the rdma tool in batch mode, without the preload (it must not check
 * itself), its stdin fed the batch, its stdout and stderr to the pipe whose
 * read end is returned in *out. One exec: no shell. Returns its pid, or -1. */
static pid_t start_tool(const char *tool, int *out)
{
	char *argv[] = {(char *)tool, "-b", "-", NULL};
	char *envp[256];
	size_t n = 0;
	int in_pipe[2], out_pipe[2];
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	char **e;

	for (e = environ; *e && n < sizeof(envp) / sizeof(envp[0]) - 1; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			envp[n++] = *e;
	envp[n] = NULL;
	if (pipe2(in_pipe, O_CLOEXEC))
		return -1;
	if (pipe2(out_pipe, O_CLOEXEC)) {
		close(in_pipe[0]);
		close(in_pipe[1]);
		return -1;
	}
	/* The batch is far smaller than a pipe's buffer: written before the start. */
	if (write(in_pipe[1], batch, sizeof(batch) - 1) == (ssize_t)(sizeof(batch) - 1) &&
	    posix_spawn_file_actions_init(&fa) == 0) {
		if (posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0) == 0 &&
		    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1) == 0 &&
		    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 2) == 0 &&
		    posix_spawnp(&pid, tool, &fa, NULL, argv, envp) != 0)
			pid = -1;
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in_pipe[0]);
	close(in_pipe[1]);
	close(out_pipe[1]);
	if (pid < 0)
		close(out_pipe[0]);
	else
		*out = out_pipe[0];
	return pid;
}

/* Prints what this pid still holds; returns how many objects, -1 when the
 * rdma tool could not tell. */
static int report_held(const char *exe)
{
	const char *tool = getenv("REX_LEAKCHECK_RDMA");
	long pid = (long)getpid();
	char line[1024];
	int held = 0, fd = -1, status;
	pid_t child;
	FILE *out;

	if (!tool || !*tool)
		tool = "rdma";
	child = start_tool(tool, &fd);
	if (child < 0) {
		fprintf(stderr, "leakcheck: cannot run '%s -b -': %s\n", tool, strerror(errno));
		return -1;
	}
	out = fdopen(fd, "r");
	if (!out) {
		close(fd);
		waitpid(child, &status, 0);
		return -1;
	}
	while (fgets(line, sizeof(line), out)) {
		if (!names_pid(line, pid))
			continue;
		if (held++ == 0)
			fprintf(stderr, "leakcheck: %s (pid %ld) still holds at exit:\n", exe, pid);
		fprintf(stderr, "leakcheck:   %-5s %s", kind_of(line), line);
		if (!strchr(line, '\n'))
			fputc('\n', stderr);
	}
	fclose(out);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "leakcheck: '%s -b -' (resource show cm_id, qp, mr, cq, pd) failed\n",
			tool);
		return -1;
	}
	return held;
}

static void check_at_exit(void)
{
	const char *root = getenv("REX_LEAKCHECK_ROOT");
	const char *on = getenv("REX_LEAKCHECK");
	char exe[PATH_MAX];
	ssize_t n;
	int held;

	if (!root || !*root || (on && strcmp(on, "0") == 0))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	if (!below(exe, root) || !has_rdma_file())
		return;
	fflush(NULL); /* the program's own lines first */
	held = report_held(exe);
	if (held != 0) {
		if (held < 0)
			fprintf(stderr, "leakcheck: could not check %s for leaks\n", exe);
		fflush(stderr);
		_exit(1); /* a leak, or no way to tell: the test fails here */
	}
}

/* Registered before main() runs, so it runs after every atexit handler the
 * program registers, and before the libraries' destructors. */
__attribute__((constructor)) static void leakcheck_init(void)
{
	if (atexit(check_at_exit) != 0)
		fprintf(stderr, "leakcheck: atexit failed: leaks go unchecked\n");
}
