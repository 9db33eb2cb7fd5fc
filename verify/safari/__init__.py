"""Claims of the SAFARI paper (``000_e0ee0ed9d3888010``)."""
