"""The ledger's reports, its top layer: what a store's rows and the registry become.

The HTML ledger and the Markdown table (:mod:`.report`, :mod:`.report_data`, the page's
``templates/``), which stored rows a report shows (:mod:`.provenance`), the README's
generated counts (:mod:`.readme`) and the coverage table (:mod:`.coverage`).
"""
