"""The at-scale fabric model (`p4ina model`): all-reduce time for 1k..100k GPUs, calibrated from emulated runs."""
