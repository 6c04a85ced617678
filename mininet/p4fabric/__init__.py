"""p4fabric: the emulation layer. Mininet nodes for P4 switches (`node`), stock fabrics (`topos`), the fabric
builder with recorded clean-up (`fabric`, `cleanup`), and `p4ina run` / `p4ina demo` (`cli`, `runner`).

The folder `mininet/` is deliberately not a package: `import mininet` must always find Mininet itself.
"""
