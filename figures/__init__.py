"""Figure scripts: ``figures/<name>.py`` with ``compute()``, ``plot()`` and ``main(argv)``.

This package is registered in ``pyproject.toml`` under the entry-point group
``flbounds.figures``; every public module of it is a figure named after the module, and
``flbounds figures`` selects them by name or prefix (``flbounds figures focus`` draws every
``focus_*`` figure) through :func:`flbounds.ledger.api.figures.select_figures`.
"""
