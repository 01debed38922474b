"""The evaluation replay: a tool that drives the planning run over a labelled corpus."""
