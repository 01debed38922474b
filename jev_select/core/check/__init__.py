"""The checks of `jev-select check`: the task table's grammar with positions, and the repository's
wiring.
"""
