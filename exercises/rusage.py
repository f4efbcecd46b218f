#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""exercises/rusage.py PROGRAM [ARGS...]: run PROGRAM, then say what it cost.

After PROGRAM ends, prints one line,
  rusage: user U s, system S s, real R s, voluntary switches V, involuntary I, minor faults F
from getrusage(RUSAGE_CHILDREN): the CPU time it used, and how often it gave
up the CPU (voluntary: it slept, in epoll_wait() or poll(); involuntary: the
scheduler took the CPU away). A program that never sleeps has few voluntary
switches, a sleeping one a switch per wait. Minor faults are pages the
kernel gave it without reading a disk: the program's own faults, and those
the kernel took on its behalf (pinning memory for a registration). Exits
with PROGRAM's status.
"""
import resource
import subprocess
import sys
import time

if len(sys.argv) < 2:
    print(__doc__.strip().splitlines()[0], file=sys.stderr)
    sys.exit(2)
start = time.monotonic()
code = subprocess.call(sys.argv[1:])
real = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f'rusage: user {r.ru_utime:.3f} s, system {r.ru_stime:.3f} s, real {real:.3f} s, '
      f'voluntary switches {r.ru_nvcsw}, involuntary {r.ru_nivcsw}, minor faults {r.ru_minflt}',
      flush=True)
sys.exit(code if code >= 0 else 128 - code)
