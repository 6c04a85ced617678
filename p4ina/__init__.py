"""p4ina: in-network gradient aggregation on P4 switches.

The `p4ina` package holds only what ties the layers together: the command line and the target abstraction.
The layers live in their own packages: `p4switch` (embedded v1model target), `controller`, `hostagent`,
`p4fabric` (the Mininet layer, in the `mininet/` folder) and `bench`.
"""

__version__ = "0.1.0"
