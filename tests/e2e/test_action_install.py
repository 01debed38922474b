"""action/install.py fetching the installer: the pinned URL over HTTPS, the digest, no redirect.

The install step's tests (test_action_shell.py) stay offline through ``JEV_SELECT_WHEELHOUSE``;
here the download path itself runs against a local HTTPS server with a throwaway CA.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import stat
import sys
import urllib.error
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support.fakegithub import FakeGitHub, FakeResponse

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = b"#!/bin/sh\necho stand-in installer\n"


def load_installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jev_action_install", ROOT / "action/install.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stand_in_wheel() -> bytes:
    buffer = io.BytesIO()
    program = "uv.exe" if os.name == "nt" else "uv"
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr(f"uv-9.9.9.data/scripts/{program}", PROGRAM)
        wheel.writestr("uv-9.9.9.dist-info/METADATA", "Name: uv\nVersion: 9.9.9\n")
    return buffer.getvalue()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as fake:
        assert fake.ca_bundle is not None
        monkeypatch.setenv("SSL_CERT_FILE", fake.ca_bundle)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(proxy, raising=False)
        yield fake


def pin(installer: ModuleType, tmp_path: Path, url: str, digest: str) -> None:
    lock = tmp_path / "installer.lock"
    name = "uv-9.9.9-py3-none-any.whl"
    lock.write_text(f"# test\n{installer.platform_key()} {name} sha256:{digest} {url}\n")
    installer.__dict__["INSTALLER_LOCK"] = lock  # a fresh module per test


def test_the_pinned_wheel_is_downloaded_checked_and_its_program_extracted(
    server: FakeGitHub, tmp_path: Path
) -> None:
    installer = load_installer()
    wheel = stand_in_wheel()
    server.route("/uv.whl", FakeResponse(200, wheel))
    pin(installer, tmp_path, server.url + "/uv.whl", hashlib.sha256(wheel).hexdigest())
    program = installer.fetch_installer(tmp_path, None)
    assert program == tmp_path / "jev-select-uv" / ("uv.exe" if os.name == "nt" else "uv")
    assert program.read_bytes() == PROGRAM
    assert os.access(program, os.X_OK)
    assert [request.path for request in server.requests] == ["/uv.whl"]


def test_a_download_that_differs_from_the_pin_is_refused(
    server: FakeGitHub, tmp_path: Path
) -> None:
    installer = load_installer()
    wheel = stand_in_wheel()
    server.route("/uv.whl", FakeResponse(200, wheel + b"\0"))
    pin(installer, tmp_path, server.url + "/uv.whl", hashlib.sha256(wheel).hexdigest())
    with pytest.raises(installer.InstallError, match=r"does not match installer\.lock"):
        installer.fetch_installer(tmp_path, None)
    assert not (tmp_path / "jev-select-uv").exists()


def test_a_redirect_is_not_followed(server: FakeGitHub, tmp_path: Path) -> None:
    installer = load_installer()
    wheel = stand_in_wheel()
    server.route("/uv.whl", FakeResponse.redirect(server.url + "/elsewhere.whl"))
    server.route("/elsewhere.whl", FakeResponse(200, wheel))
    pin(installer, tmp_path, server.url + "/uv.whl", hashlib.sha256(wheel).hexdigest())
    with pytest.raises(urllib.error.HTTPError):
        installer.fetch_installer(tmp_path, None)
    assert [request.path for request in server.requests] == ["/uv.whl"]


def test_only_https_urls_are_fetched(tmp_path: Path) -> None:
    installer = load_installer()
    pin(installer, tmp_path, "http://127.0.0.1:9/uv.whl", "0" * 64)
    with pytest.raises(installer.InstallError, match="not HTTPS"):
        installer.fetch_installer(tmp_path, None)


def test_the_wheelhouse_must_be_an_absolute_directory(tmp_path: Path) -> None:
    installer = load_installer()
    with pytest.raises(installer.InstallError, match="JEV_SELECT_WHEELHOUSE"):
        installer.install(tmp_path, {"JEV_SELECT_WHEELHOUSE": "relative/wheels"})
    assert not (tmp_path / "jev-select-venv").exists()


def member(name: str, mode: int = 0o100644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


@pytest.mark.parametrize(
    "name",
    [
        "../x.py",
        "a/../../x.py",
        "a/./x.py",
        "a//x.py",
        "/etc/x.py",
        "C:/x.py",
        "C:x.py",
        "a\\..\\x.py",
        "a/x.py:stream",
        "",
    ],
)
def test_a_bundle_member_name_that_could_leave_the_target_is_refused(name: str) -> None:
    installer = load_installer()
    with pytest.raises(installer.InstallError, match="unsafe name"):
        installer.member_parts(member(name))


@pytest.mark.parametrize("kind", [stat.S_IFLNK, stat.S_IFCHR, stat.S_IFIFO, stat.S_IFSOCK])
def test_a_bundle_member_that_is_not_a_plain_file_is_refused(kind: int) -> None:
    installer = load_installer()
    with pytest.raises(installer.InstallError, match="not a plain file"):
        installer.member_parts(member("yaml/x.py", kind | 0o777))


def test_plain_members_keep_their_parts_and_directories_are_skipped() -> None:
    installer = load_installer()
    assert installer.member_parts(member("yaml/x.py")) == ("yaml", "x.py")
    assert installer.member_parts(member("yaml/x.py", 0)) == ("yaml", "x.py")
    assert installer.member_parts(member("yaml/", stat.S_IFDIR | 0o755)) is None
    assert installer.member_parts(member("yaml/sub/")) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "cpython-311-x jev-select-runtime-cpython-311-x.zip sha256:" + "0" * 64 + "\n",
            "names no requirements.lock",
        ),
        ("requirements sha256:" + "0" * 64 + "\nkey other.zip sha256:" + "0" * 64, "malformed"),
        ("requirements sha256:" + "0" * 63 + "\n", "malformed digest"),
        ("requirements md5:" + "0" * 64 + "\n", "malformed digest"),
    ],
)
def test_a_malformed_bundle_lock_stops_the_install(tmp_path: Path, text: str, message: str) -> None:
    installer = load_installer()
    lock = tmp_path / "bundles.lock"
    lock.write_text(text, encoding="utf-8")
    with pytest.raises(installer.InstallError, match=message):
        installer.parse_bundle_lock(lock)


def test_a_bundle_lock_names_each_key_s_own_file(tmp_path: Path) -> None:
    installer = load_installer()
    lock = tmp_path / "bundles.lock"
    digest = "ab" * 32
    key = installer.bundle_key()
    name = installer.bundle_file_name(key)
    lock.write_text(
        f"# comment\nrequirements sha256:{'0' * 64}\n{key} {name} sha256:{digest}\n",
        encoding="utf-8",
    )
    assert installer.parse_bundle_lock(lock) == ("0" * 64, {key: (name, digest)})
    assert key.startswith(sys.implementation.cache_tag + "-")
    assert key.endswith(installer.platform_key())
