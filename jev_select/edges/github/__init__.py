"""GitHub's REST API: the bounded client, Actions listings and artifacts, and the metadata lookups
of a run.
"""
