"""Claims of the FOCUS paper (``002_d5aeef3645e253f4``)."""
