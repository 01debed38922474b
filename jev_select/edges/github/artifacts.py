"""The report inside a downloaded artifact zip, read within fixed bounds.

Edge module. An artifact is untrusted input: the archive may hold many entries, lie about sizes,
inflate without end, be encrypted or use an unexpected method. The one report is read only from
an archive that passes every bound (docs/shadow-mode.md, "Collect the reports and the CI
results"); any doubt gives a reason code instead of bytes, and nothing in the archive is ever
echoed.
"""

from __future__ import annotations

import io
import zipfile

from ... import contracts as c

__all__ = ["report_from_zip"]

_READ_CHUNK = 65536
_ENCRYPTED_FLAG = 0x1
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def _safe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not name.startswith(("/", "\\")) and all(part not in ("", ".", "..") for part in parts)


def report_from_zip(data: bytes) -> bytes | str:
    """The bytes of the archive's only file, a ``.json`` file, or a ``ROLLOUT_DETAIL_*`` code.

    Bounds: at most ``ROLLOUT_ARTIFACT_MAX_ENTRIES`` entries, exactly one of them a file (the
    upload step archives the one report; directories are ignored), stored or deflated, not
    encrypted, with a safe relative name, and at most ``ROLLOUT_REPORT_MAX_BYTES`` once
    inflated. The size is checked against the declared size first, then while inflating, so an
    archive that lies about it stops at the bound.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            if len(entries) > c.ROLLOUT_ARTIFACT_MAX_ENTRIES:
                return c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED
            files = [entry for entry in entries if not entry.is_dir()]
            if len(files) != 1:
                return c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED
            (entry,) = files
            if (
                not _safe_name(entry.filename)
                or not entry.filename.endswith(".json")
                or entry.flag_bits & _ENCRYPTED_FLAG
                or entry.compress_type not in _METHODS
            ):
                return c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED
            if entry.file_size > c.ROLLOUT_REPORT_MAX_BYTES:
                return c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE
            chunks: list[bytes] = []
            size = 0
            with archive.open(entry) as stream:
                while chunk := stream.read(_READ_CHUNK):
                    size += len(chunk)
                    if size > c.ROLLOUT_REPORT_MAX_BYTES:
                        return c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE
                    chunks.append(chunk)
            return b"".join(chunks)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        ValueError,
        NotImplementedError,
        RuntimeError,
    ):
        # zipfile's checks (CRC, declared sizes, headers) raise these for a damaged archive.
        return c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED
