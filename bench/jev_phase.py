"""Wall time of the evaluation phase against a Jev that takes 200 ms per request, and the bytes
sent per byte of patch and questions.

The production grouping (``grouping.prepare_observation``) cuts a patch of N files of about
15 KiB (one file per group) into N requests for five tasks; the production evaluation phase
(``observe.run_observation``, at most three requests in flight) sends them over HTTPS to the
stand-in Jev of the test suite, which waits 200 ms before every answer. The ideal is
ceil(N / 3) x 200 ms. Bytes sent are the request bodies; the reference is the patch plus the
questions object sent once.

    python bench/jev_phase.py [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from common import API_KEY, median, table, write_results
from support.fakejev import FakeJev, Reply

from jev_select import contracts as c
from jev_select.core.grouping import prepare_observation
from jev_select.core.jsonutil import compact_json
from jev_select.core.models import Commits
from jev_select.core.questions import build_questions, description_only_evidence
from jev_select.edges.evaluate import run_observation

REQUEST_COUNTS = (1, 3, 9, 30)
LATENCY_S = 0.2
FILE_BYTES = 15 * 1024
TASKS = {
    f"suite{index}": description_only_evidence(f"Test suite {index}: checks module {index}.")
    for index in range(5)
}
COMMITS = Commits(base_sha="a" * 40, head_sha="b" * 40, tested_sha="b" * 40, metadata_sha="a" * 40)


def patch_of(files: int) -> str:
    sections = []
    for index in range(files):
        lines = [f"+line {number:05d} of file {index} " + "z" * 40 for number in range(240)]
        lines = lines[: max(1, FILE_BYTES // (len(lines[0]) + 1))]
        sections.append(
            f"diff --git a/m{index}/data.txt b/m{index}/data.txt\n"
            "new file mode 100644\n"
            "--- /dev/null\n"
            f"+++ b/m{index}/data.txt\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(lines) + "\n"
        )
    return "".join(sections)


def measure(jev: FakeJev, files: int, runs: int) -> dict[str, Any]:
    patch = patch_of(files)
    prepared = prepare_observation(
        patch=patch, commits=COMMITS, evidence_by_task=TASKS, hints=(), api_model=c.DEFAULT_MODEL
    )
    requests = len(prepared.requests)
    walls = []
    for _ in range(runs):
        outcome = run_observation(
            prepared,
            endpoint=jev.endpoint,
            api_key=API_KEY,
            expected_model=c.DEFAULT_MODEL,
            timeout_ms=600_000,
        )
        if outcome.error is not None:
            raise SystemExit(f"evaluation failed: {outcome.error}")
        walls.append(outcome.duration_ms)
    sent = sum(len(request.body) for request in prepared.requests)
    reference = len(patch.encode("utf-8")) + len(compact_json(build_questions(TASKS)).encode())
    ideal = math.ceil(requests / c.MAX_CONCURRENT_REQUESTS) * LATENCY_S * 1000
    return {
        "files": files,
        "requests": requests,
        "wall_ms": median(walls),
        "ideal_ms": ideal,
        "overhead_ms": median(walls) - ideal,
        "bytes_sent": sent,
        "patch_plus_questions_bytes": reference,
        "bytes_ratio": sent / reference,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = max(1, parser.parse_args().runs)
    with FakeJev(tls=True, scores=0.5, responder=lambda _: Reply.ok(delay=LATENCY_S)) as jev:
        assert jev.ca_bundle is not None
        os.environ["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
        rows = [measure(jev, files, runs) for files in REQUEST_COUNTS]
    print(f"Evaluation phase, 5 tasks, Jev latency {LATENCY_S * 1000:.0f} ms, median of {runs}")
    print(
        table(
            ["requests", "wall ms", "ideal ms", "overhead ms", "bytes sent", "ratio"],
            [
                [
                    row["requests"],
                    row["wall_ms"],
                    row["ideal_ms"],
                    row["overhead_ms"],
                    row["bytes_sent"],
                    f"{row['bytes_ratio']:.2f}",
                ]
                for row in rows
            ],
        )
    )
    path = write_results("jev_phase", {"runs": runs, "latency_ms": LATENCY_S * 1000, "rows": rows})
    print(f"results: {path}")


if __name__ == "__main__":
    main()
