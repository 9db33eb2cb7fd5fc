"""The papers' published numbers (worked examples, tables, printed constants) as claims."""
