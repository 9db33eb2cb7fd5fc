"""Speed and scale measurements, each against a baseline timed in the same run (not tests).

``python -m benchmarks [NAME ...] [--out DIR] [--profile quick|full]`` runs every module
``benchmarks/<name>.py`` that defines ``main(argv)`` and collects their Markdown tables into
``<out>/BENCHMARKS.md`` under a date and machine line.
"""
