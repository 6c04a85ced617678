"""Run-time objects shared by generated pipeline code and the switch engine.

`context.PacketContext` is one packet in flight; `bindings.RuntimeBindings` is what generated code calls for
externs that need the switch (hash, random, log, digest, time); `state` (engineer S) holds tables and externs.
"""
