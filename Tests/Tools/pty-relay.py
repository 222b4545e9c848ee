#!/usr/bin/env python3
"""Runs a command in a pseudo-terminal inside the terminal emulator this is started in, as a
person's shell would run it: what the command writes reaches the terminal (and a log file),
what the terminal answers reaches the command (its queries work), and so do the keystrokes a
test writes into a FIFO.

    pty-relay.py FIFO LOG command [arguments...]
"""
import fcntl
import os
import pty
import select
import sys
import termios
import tty

fifo, log = sys.argv[1], sys.argv[2]
command = sys.argv[3:]
size = fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8)
pid, master = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
# The command's terminal has the emulator's size, pixels included.
fcntl.ioctl(master, termios.TIOCSWINSZ, size)
tty.setraw(0)
# Read and write: the FIFO never reads as ended when a test's writer closes it.
keys = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
with open(log, "wb") as written:
    while True:
        ready, _, _ = select.select([master, 0, keys], [], [])
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            os.write(1, data)
            written.write(data)
            written.flush()
        if 0 in ready:
            os.write(master, os.read(0, 4096))
        if keys in ready:
            data = os.read(keys, 4096)
            if data:
                os.write(master, data)
os.waitpid(pid, 0)
