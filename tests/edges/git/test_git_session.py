"""The git edge: environment, credentials, remotes, the capped runner and local-mode queries."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.object_ids import is_sha40
from jev_select.edges.git.local import (
    default_local_base,
    is_git_repository,
    local_merge_parents,
    resolve_local_revision,
)
from jev_select.edges.git.remotes import default_remote, normalise_remote
from jev_select.edges.git.runner import (
    GitCommandFailed,
    GitOutputTooLarge,
    credential_header,
    is_object_id,
    parse_commit_parents,
    run_git,
    sanitised_environment,
)
from jev_select.edges.git.session import GitSession
from jev_select.errors import InputError

TOKEN = "ghs_SENTINEL_token_7d2e"
EXPECTED_CONFIG = [
    ("core.attributesFile", "/dev/null"),
    ("core.hooksPath", "/dev/null"),
    ("init.templateDir", "/dev/null"),
    ("diff.external", ""),
    ("http.followRedirects", "false"),
]


def config_pairs(environment: dict[str, str]) -> list[tuple[str, str]]:
    count = int(environment["GIT_CONFIG_COUNT"])
    return [
        (environment[f"GIT_CONFIG_KEY_{n}"], environment[f"GIT_CONFIG_VALUE_{n}"])
        for n in range(count)
    ]


# ---- environment ----------------------------------------------------------------------------


def test_sanitised_environment_drops_git_variables_and_adds_isolation() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/someone",
        "GIT_DIR": "/elsewhere",
        "GIT_EXTERNAL_DIFF": "evil",
        "GIT_CONFIG_COUNT": "9",
        "GIT_CONFIG_KEY_8": "core.pager",
        "GIT_TRACE": "1",
        "git_lowercase": "kept",
        "LANG": "de_DE.UTF-8",
    }
    environment = sanitised_environment(base)
    assert environment["PATH"] == "/usr/bin"
    assert environment["HOME"] == "/home/someone"
    assert environment["git_lowercase"] == "kept"
    git_names = {name for name in environment if name.startswith("GIT_")}
    assert git_names == {
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_NOGLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_ATTR_NOSYSTEM",
        "GIT_TERMINAL_PROMPT",
        "GIT_PAGER",
        "GIT_OPTIONAL_LOCKS",
        "GIT_CONFIG_COUNT",
        *(f"GIT_CONFIG_KEY_{n}" for n in range(5)),
        *(f"GIT_CONFIG_VALUE_{n}" for n in range(5)),
    }
    assert environment["GIT_CONFIG_NOSYSTEM"] == "1"
    assert environment["GIT_CONFIG_NOGLOBAL"] == "1"
    assert environment["GIT_CONFIG_SYSTEM"] == "/dev/null"
    assert environment["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert environment["GIT_ATTR_NOSYSTEM"] == "1"
    assert environment["GIT_TERMINAL_PROMPT"] == "0"
    assert environment["GIT_PAGER"] == "cat"
    assert environment["GIT_OPTIONAL_LOCKS"] == "0"
    assert (environment["LC_ALL"], environment["LANG"], environment["TZ"]) == ("C", "C", "UTC")
    assert config_pairs(environment) == EXPECTED_CONFIG
    assert "GIT_DIR" not in base or base["GIT_DIR"] == "/elsewhere"  # input untouched


def test_sanitised_environment_with_credential_header() -> None:
    environment = sanitised_environment({}, extra_header="Authorization: Basic abc")
    assert config_pairs(environment) == [
        *EXPECTED_CONFIG,
        ("http.extraheader", "Authorization: Basic abc"),
    ]


def test_credential_header_only_for_http_remotes_and_sendable_tokens() -> None:
    encoded = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    expected = f"Authorization: Basic {encoded}"
    assert credential_header("https://github.com/o/r.git", TOKEN) == expected
    assert credential_header("HTTP://127.0.0.1:8080/r.git", TOKEN) == expected
    assert credential_header("file:///tmp/repo", TOKEN) is None
    assert credential_header("https://github.com/o/r.git", "") is None
    assert credential_header("https://github.com/o/r.git", " \t\u3000") is None
    assert credential_header("https://github.com/o/r.git", "has space") is None
    assert credential_header("https://github.com/o/r.git", "tök") is None
    assert credential_header("https://github.com/o/r.git", "line\nbreak") is None


def _recording_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` logs the environment it receives, then runs real git."""
    real_git = shutil.which("git")
    assert real_git is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-env.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\necho "ARGS $*" >> "{log}"\nenv >> "{log}"\necho "--" >> "{log}"\n'
        f'exec "{real_git}" "$@"\n'
    )
    wrapper.chmod(0o755)
    environ = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return environ, log


@pytest.mark.posix
def test_git_receives_only_the_sanitised_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = GitRepo.init(tmp_path / "origin")
    sha = origin.commit({"a.txt": "a\n"})
    environ, log = _recording_git(tmp_path)
    environ["GIT_DIR"] = "/nowhere"
    environ["SSLKEYLOGFILE"] = str(tmp_path / "keys-from-environ.log")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "/bin/false")
    monkeypatch.setenv("GIT_PYTHON_TRACE", "full")
    # curl under git's https transport would write the session secrets there.
    monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys-from-process.log"))
    with GitSession(origin.url, token=TOKEN, temp_root=str(tmp_path), environ=environ) as session:
        assert session.fetch([sha])
        assert session.has_commit(sha)
    text = log.read_text()
    encoded = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert text.count("--\n") >= 3
    assert TOKEN not in text
    assert encoded not in text  # a file remote never gets the credential
    for block in text.split("--\n")[:-1]:
        names = {line.split("=", 1)[0] for line in block.splitlines() if "=" in line}
        assert "GIT_DIR" not in names
        assert "GIT_EXTERNAL_DIFF" not in names
        assert "GIT_PYTHON_TRACE" not in names
        assert "SSLKEYLOGFILE" not in names
        assert "GIT_CONFIG_GLOBAL=/dev/null" in block.splitlines()


# GitPython runs ``git version`` when it is first imported; a fresh interpreter shows what that
# run could be made to do by the process's environment.
FIRST_IMPORT = """
import os, sys
from jev_select.edges.git.runner import _gitpython
_gitpython()
print(os.environ.get("GIT_TRACE"), os.environ.get("GIT_PYTHON_GIT_EXECUTABLE"))
print("GIT_PYTHON_REFRESH" in os.environ)
"""


@pytest.mark.posix
def test_the_first_import_of_gitpython_runs_no_program_the_environment_names(
    tmp_path: Path,
) -> None:
    sentinel = tmp_path / "ran"
    planted = tmp_path / "planted-git"
    planted.write_text(f"#!/bin/sh\necho ran > {sentinel}\necho 'git version 2.40.0'\n")
    planted.chmod(0o755)
    trace = tmp_path / "trace.log"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GIT_PYTHON_GIT_EXECUTABLE": str(planted),
        "GIT_TRACE": str(trace),
    }
    completed = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert not sentinel.exists()
    assert not trace.exists()
    # Set aside for the import only: the caller's environment is as it was.
    assert completed.stdout.splitlines() == [f"{trace} {planted}", "False"]


@pytest.mark.posix
def test_http_remote_session_passes_the_credential_header(tmp_path: Path) -> None:
    environ, log = _recording_git(tmp_path)
    with GitSession(
        "http://127.0.0.1:9/none.git", token=TOKEN, temp_root=str(tmp_path), environ=environ
    ) as session:
        assert session.ready
    encoded = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert f"GIT_CONFIG_VALUE_5=Authorization: Basic {encoded}" in log.read_text()


# ---- remotes --------------------------------------------------------------------------------


def test_default_remote() -> None:
    assert default_remote("https://github.com", "octo/demo") == "https://github.com/octo/demo.git"
    assert default_remote("https://ghe.example/", "o/r") == "https://ghe.example/o/r.git"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://github.com/o/r.git", "https://github.com/o/r.git"),
        ("HTTPS://GitHub.com/o/r.git", "https://github.com/o/r.git"),
        ("  https://mirror.example:8443/git/o/r.git\n", "https://mirror.example:8443/git/o/r.git"),
        ("http://127.0.0.1:8080/r.git", "http://127.0.0.1:8080/r.git"),
        ("http://LOCALHOST/r.git", "http://localhost/r.git"),
        ("http://[::1]:3000/r", "http://[::1]:3000/r"),
        ("file:///srv/git/repo.git", "file:///srv/git/repo.git"),
        ("FILE:///srv/repo", "file:///srv/repo"),
    ],
)
def test_normalise_remote_accepts(text: str, expected: str, tmp_path: Path) -> None:
    assert normalise_remote(text, cwd=str(tmp_path)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "http://github.com/o/r.git",
        "http://127.0.0.2/r.git",
        "https://user:pw@github.com/o/r.git",
        "https://github.com/o/r.git?x=1",
        "https://github.com/o/r.git#frag",
        "https://github.com/o/r\\x.git",
        "https://github.com/o r.git",
        "https://github.com/o/\x00r.git",
        "https:github.com/o/r.git",
        "ssh://git@github.com/o/r.git",
        "git@github.com:o/r.git",
        "ext::sh -c touch% /tmp/pwned",
        "file://",
        "file:///tmp/a\nb",
        "no-such-directory",
        "http://127.0.0.1:99999/r.git",
        "https://10.0.0.256/r.git",
    ],
)
def test_normalise_remote_rejects(text: str, tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        normalise_remote(text, cwd=str(tmp_path))
    assert caught.value.field == c.FIELD_REMOTE
    assert str(caught.value) == c.FIELD_REMOTE


def test_normalise_remote_directory_becomes_absolute_file_url(tmp_path: Path) -> None:
    (tmp_path / "work" / "my repo").mkdir(parents=True)
    url = normalise_remote("my repo", cwd=str(tmp_path / "work"))
    assert url == (tmp_path / "work" / "my repo").absolute().as_uri()
    assert url.startswith("file:///")
    assert normalise_remote(str(tmp_path), cwd="/") == tmp_path.as_uri()


def test_directory_remote_with_space_can_be_fetched(tmp_path: Path) -> None:
    origin = GitRepo.init(tmp_path / "my origin")
    sha = origin.commit({"a.txt": "a\n"})
    remote = normalise_remote("my origin", cwd=str(tmp_path))
    with GitSession(remote, token="", temp_root=str(tmp_path), environ=os.environ) as session:
        assert session.fetch([sha])
        assert session.has_commit(sha)


# ---- the runner ----------------------------------------------------------------------------


def test_run_git_caps_output_and_kills(tmp_path: Path) -> None:
    origin = GitRepo.init(tmp_path / "origin")
    blob = origin.blob(b"x" * 300_000)
    environment = sanitised_environment(os.environ)
    args = ["--git-dir=" + str(tmp_path / "origin" / ".git"), "cat-file", "blob", blob]
    assert len(run_git(args, cwd=str(tmp_path), environment=environment, cap=300_000)) == 300_000
    with pytest.raises(GitOutputTooLarge):
        run_git(args, cwd=str(tmp_path), environment=environment, cap=299_999)
    with pytest.raises(GitCommandFailed):
        run_git(
            ["--git-dir=" + str(tmp_path / "origin" / ".git"), "cat-file", "blob", "0" * 40],
            cwd=str(tmp_path),
            environment=environment,
            cap=100,
        )


def test_run_git_without_git_executable(tmp_path: Path) -> None:
    environment = sanitised_environment({"PATH": str(tmp_path)})
    with pytest.raises(GitCommandFailed):
        run_git(["version"], cwd=str(tmp_path), environment=environment, cap=100)


def test_stderr_is_discarded_even_when_large(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    environment = sanitised_environment(os.environ)
    with pytest.raises(GitCommandFailed):
        run_git(
            ["rev-parse", "--verify", "no-such-thing-" + "x" * 200_000],
            cwd=str(tmp_path),
            environment=environment,
            cap=100,
        )
    captured = capfd.readouterr()
    assert captured.out == captured.err == ""


def test_object_ids() -> None:
    assert is_object_id("a" * 40)
    assert is_object_id("A" * 64)
    assert not is_object_id("a" * 41)
    assert not is_object_id("z" * 40)
    assert not is_object_id("a" * 40 + "\n")


def test_object_id_forms() -> None:
    """What each caller accepts: git's own output (lowercase), SHA-1 only (reports, events)."""
    assert is_object_id("a" * 40, lowercase=True)
    assert is_object_id("a" * 64, lowercase=True)
    assert not is_object_id("A" * 40, lowercase=True)
    assert is_object_id("A" * 40, sha1_only=True)
    assert not is_object_id("a" * 64, sha1_only=True)
    assert is_sha40("0123456789abcdef" * 2 + "01234567")
    assert not is_sha40("A" * 40)
    assert not is_sha40("a" * 64)
    # Only ASCII letters fold: the Kelvin sign is not a "k", and no letter folds onto a-f.
    assert not is_object_id("\u212a" * 40)
    assert not is_object_id("\uff21" * 40)


def test_parse_commit_parents() -> None:
    body = (
        b"tree " + b"1" * 40 + b"\nparent " + b"2" * 40 + b"\nparent " + b"3" * 40 + b"\n"
        b"author x <y> 1 +0000\n\nparent " + b"4" * 40 + b" in the message\n"
    )
    assert parse_commit_parents(body) == ("2" * 40, "3" * 40)


# ---- session queries -----------------------------------------------------------------------


def test_session_queries(tmp_path: Path) -> None:
    origin = GitRepo.init(tmp_path / "origin")
    base = origin.commit({"cfg/settings.yml": "a: 1\n", "big.txt": "y" * 5000})
    head = origin.commit({"cfg/settings.yml": "a: 2\n"}, parents=[base], branch="f")
    merge = origin.merge(base, head)
    with GitSession(origin.url, token="", temp_root=str(tmp_path), environ=os.environ) as session:
        assert not session.has_commit(base)
        assert session.ensure_commit(base)
        assert session.ensure_commit(merge)
        assert session.commit_parents(merge) == (base, head)
        assert session.read_file_at(base, "cfg/settings.yml", 100) == b"a: 1\n"
        assert session.read_file_at(base, "big.txt", 4999) is None
        assert session.read_file_at(base, "big.txt", 5000) == b"y" * 5000
        assert session.read_file_at(base, "missing.yml", 100) is None
        assert session.read_file_at(base, "cfg", 100) is None
        assert session.read_file_at("nothex", "cfg/settings.yml", 100) is None
        assert not session.ensure_commit("9" * 40)
        assert not session.has_commit("not-a-sha")
        assert not session.fetch(["--upload-pack=touch /tmp/x"])
        with pytest.raises(GitCommandFailed):
            session.commit_parents("9" * 40)
        with pytest.raises(GitCommandFailed):
            session.blob("HEAD")


def test_is_ancestor_answers_yes_only_on_fetched_history(tmp_path: Path) -> None:
    origin = GitRepo.init(tmp_path / "origin")
    base = origin.commit({"a.txt": "a\n"})
    tip = origin.linear_history(base, 5)
    beside = origin.commit({"b.txt": "b\n"}, parents=[base], branch="beside")
    with GitSession(origin.url, token="", temp_root=str(tmp_path), environ=os.environ) as session:
        assert session.fetch([base, tip, beside], depth=1)
        assert session.is_ancestor(tip, tip)
        # At depth 1 the link from the tip down to the base is not there yet: no proof.
        assert not session.is_ancestor(base, tip)
        assert session.fetch([tip], depth=10)
        assert session.is_ancestor(base, tip)
        assert not session.is_ancestor(tip, base)
        assert not session.is_ancestor(beside, tip)
        with pytest.raises(GitCommandFailed):
            session.is_ancestor("--all", tip)


@pytest.mark.posix
def test_refused_token_fails_http_fetch_without_running(tmp_path: Path) -> None:
    environ, log = _recording_git(tmp_path)
    with GitSession(
        "http://127.0.0.1:9/r.git", token="bad token", temp_root=str(tmp_path), environ=environ
    ) as session:
        assert session.ready
        assert not session.fetch(["a" * 40])
        assert not session.ensure_commit("a" * 40)
    text = log.read_text()
    invocations = [line for line in text.splitlines() if line.startswith("ARGS ")]
    assert invocations, "the repository is still created"
    assert not any(" fetch " in line for line in invocations)
    assert "bad token" not in text
    assert "http.extraheader" not in text


# ---- local mode ----------------------------------------------------------------------------


@pytest.fixture
def local_repo(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    repo = GitRepo.init(tmp_path / "local")
    root = repo.commit({"a.txt": "a\n"})
    main_tip = repo.commit({"a.txt": "main\n"}, parents=[root])
    feature = repo.commit({"b.txt": "b\n"}, parents=[root], branch="feature")
    repo.set_symbolic_ref("HEAD", "refs/heads/feature")
    return repo, {"root": root, "main": main_tip, "feature": feature}


def test_resolve_local_revision(local_repo: tuple[GitRepo, dict[str, str]]) -> None:
    repo, shas = local_repo
    path = str(repo.path)
    environ = dict(os.environ)
    assert resolve_local_revision(path, "HEAD", environ) == shas["feature"]
    assert resolve_local_revision(path, "main", environ) == shas["main"]
    assert resolve_local_revision(path, "feature~1", environ) == shas["root"]
    assert resolve_local_revision(path, shas["root"][:12], environ) == shas["root"]
    assert resolve_local_revision(path, "no-such-branch", environ) is None
    assert resolve_local_revision(path, "--all", environ) is None
    assert resolve_local_revision(path, "", environ) is None
    tree = repo.tree_of(shas["main"])
    assert resolve_local_revision(path, tree, environ) is None
    environ_with_git_dir = {**environ, "GIT_DIR": "/nowhere"}
    assert resolve_local_revision(path, "HEAD", environ_with_git_dir) == shas["feature"]


def test_is_git_repository(tmp_path: Path, local_repo: tuple[GitRepo, dict[str, str]]) -> None:
    repo, _ = local_repo
    assert is_git_repository(str(repo.path))
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not is_git_repository(str(plain), {"PATH": os.environ.get("PATH", "")})
    assert not is_git_repository(str(tmp_path / "absent"))
    bare = GitRepo.init(tmp_path / "bare.git", bare=True)
    assert is_git_repository(str(bare.path))


def test_default_local_base_prefers_origin_head(
    local_repo: tuple[GitRepo, dict[str, str]],
) -> None:
    repo, shas = local_repo
    path = str(repo.path)
    environ = dict(os.environ)
    # Without origin/HEAD, main is used.
    assert default_local_base(path, environ) == shas["root"]
    upstream = repo.commit({"c.txt": "c\n"}, parents=[shas["feature"]], branch="upstream")
    repo.set_ref("refs/remotes/origin/upstream", upstream)
    repo.set_symbolic_ref("refs/remotes/origin/HEAD", "refs/remotes/origin/upstream")
    assert default_local_base(path, environ) == shas["feature"]


def test_default_local_base_without_candidates(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r", branch="trunk")
    repo.commit({"a": "a\n"}, branch="trunk")
    assert default_local_base(str(repo.path), dict(os.environ)) is None


def test_default_local_base_requires_unique_merge_base(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    root = repo.commit({"a.txt": "a\n", "b.txt": "b\n"})
    left = repo.commit({"a.txt": "l\n"}, parents=[root], branch="left")
    right = repo.commit({"b.txt": "r\n"}, parents=[root], branch="right")
    repo.merge(left, right, branch="main")
    repo.merge(right, left, branch="feature")
    repo.set_symbolic_ref("HEAD", "refs/heads/feature")
    assert default_local_base(str(repo.path), dict(os.environ)) is None


def test_local_merge_parents(local_repo: tuple[GitRepo, dict[str, str]]) -> None:
    repo, shas = local_repo
    merge = repo.merge(shas["main"], shas["feature"])
    path = str(repo.path)
    assert local_merge_parents(path, merge) == (shas["main"], shas["feature"])
    assert local_merge_parents(path, shas["root"]) == ()
    assert local_merge_parents(path, "8" * 40) is None
    assert local_merge_parents(path, "HEAD") is None
