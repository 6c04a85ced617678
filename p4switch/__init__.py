"""The embedded v1model target: a P4_16 compiler to Python, a behavioural switch and a P4Runtime server.

It stands in for p4c + BMv2 (`simple_switch_grpc`), which this project cannot install, and reproduces their
observable behaviour byte for byte (see tests/conformance and docs/targets.md).
"""
