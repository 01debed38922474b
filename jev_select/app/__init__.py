"""The application layer: one plan of a change, from the settings of a run to its report.

Below the shell (:mod:`jev_select.cli`) and above the core and the edges: :mod:`.pipeline` runs
the stages (collection, metadata, evaluation, decision, report) for every mode and subcommand
that plans, and :mod:`.settings` turns a local command line and environment into the inputs and
lookups of a run. Nothing here prints; the shell says what happened.
"""
