"""The evaluation replay: run the evaluation corpus through the production pipeline
(docs/reference.md, "Evaluation replay").

A tool, not the product. Each case of the corpus is rebuilt as two real commits (the base tree,
then the base with the case's patch applied) in a temporary bare repository, and analysed exactly
as local mode does (``pipeline.run_plan_pipeline``, head mode, base..head) once per evaluation
threshold. The only replaced part is the transport of the evaluation phase: a request is answered
from the campaign only when the SHA-256 of its body names a recording whose stored body is
byte-for-byte the same. Every other request makes the run fail as ``stale-recording`` for that case,
because a recording made for different bytes (other question texts, evidence, grouping or commits)
says nothing about what Jev would answer now.

Campaign layout (``--campaign DIR``, default ``<corpus>/recordings``)::

    campaign.json                  synthetic flag, model, case list and the recorded metrics
    <case>/<sha256>.json           one recording: request body, response body or failure code
    <case>/expected.json           observation and per-threshold plans, durations removed

Two recording modes rewrite a campaign: ``--write-synthetic`` answers from the labels (relevant
0.8, irrelevant 0.01, plus per-case overrides and deliberate faults from ``corpus.json``), and
``--live`` asks Jev over HTTPS with the key from ``JEV_API_KEY``. Recordings hold bodies only:
never a header, a key or a token.
"""
