"""The parts of the fabric benchmark (`bench.fabric`): the size x workers sweep, recovery runs, the model's
calibration. A package, so `p4ina bench` does not take its modules for benchmarks of their own."""
