"""Batched packet I/O on Linux sockets, standard library only (ctypes, mmap): `sendmmsg`/`recvmmsg` (`mmsg`) and
the PACKET_MMAP TPACKET_V2 receive ring (`ring`).

Python's `socket` module costs one system call per packet; these move a whole burst per call (or, for the ring, none
per packet). Both the embedded switch's ports (`p4switch`) and the host agents' transports (`hostagent`) use it, so
it sits below both and imports neither.
"""
