"""Open sockets inside a named network namespace from this process: `setns(2)` for the calling thread only.

A socket belongs to the namespace it was created in for its whole life, so a switch (or a test) can open its ports
in a namespace and run its threads anywhere. `ip netns exec` would need a second process; Python 3.11 has no
`os.setns`.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000


@contextmanager
def entered(netns: str) -> Iterator[None]:
    """Run the calling thread inside `/run/netns/<netns>` (as `ip netns add` names it), then come back."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/thread-self/ns/net") as home, open(f"/run/netns/{netns}") as target:
        if libc.setns(target.fileno(), CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        try:
            yield
        finally:
            if libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"cannot return to this thread's network namespace: {os.strerror(err)}")
