"""The pure core: facts in, values out; no environment, clock, files, network or git."""
