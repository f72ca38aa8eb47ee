"""Types Ctrl+C at a terminal running `memlens record -- python PROGRAM`: a pseudo-terminal whose
line discipline signals the foreground process group, as a real one does. Prints everything the
terminal showed, then `exit N`. Usage: ctrl_c.py CLI OUT PROGRAM (from the repository root)."""

import os
import pty
import sys
import time

cli, out_dir, program = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("node", ["node", "--no-concurrent-recompilation", cli, "record", "--out", out_dir, "--",
                       "/usr/bin/python3", program])
shown = b""
deadline = time.time() + 60
while b"ready" not in shown and time.time() < deadline:
    shown += os.read(fd, 1024)
time.sleep(0.5)  # the program is now in its sleep
os.write(fd, b"\x03")
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:  # the terminal is gone: every process on it has ended
        break
    if not chunk:
        break
    shown += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode().replace("\r", ""))
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
sys.stdout.write("exit %d\n" % code)
