"""The ledger's reports, its top layer: what a store's rows and the registry become.

The HTML ledger and the Markdown table (:mod:`.report`, :mod:`.report_data`, the page's
``templates/``), the findings page per paper (:mod:`.findings` as data, :mod:`.margins` for
by how much a row fails and how tight it holds, :mod:`.findings_render` as text, Markdown and
HTML), which stored rows a report shows (:mod:`.provenance`), the README's generated tables
(:mod:`.readme`) and the coverage table (:mod:`.coverage`).
"""
