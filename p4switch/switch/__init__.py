"""The v1model switch engine: pipeline loading, BMv2 simple_switch packet semantics, traffic manager, ports,
impairments, the file-mode runner and the threaded `Switch` used by the P4Runtime server and the CLI."""
