"""Workspaces are found and expanded as pnpm, npm, yarn and bun document them."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from jev_select.core.evidence.workspaces import (
    PROBLEM_FILE_INVALID,
    PROBLEM_FILE_UNREADABLE,
    PROBLEM_GLOB_NOT_STRING,
    PROBLEM_GLOB_UNUSABLE,
    PROBLEM_LISTING_MISSING,
    PROBLEM_MEMBER_INVALID,
    PROBLEM_PACKAGES_MALFORMED,
    Workspace,
    WorkspaceIndex,
    WorkspacePackage,
    WorkspaceProblem,
    manifest_path,
)


def manifest(
    name: str | None = None,
    *,
    dependencies: tuple[str, ...] = (),
    dev: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    peer: tuple[str, ...] = (),
    workspaces: object = None,
) -> str:
    data: dict[str, object] = {}
    if name is not None:
        data["name"] = name
    for field, names in (
        ("dependencies", dependencies),
        ("devDependencies", dev),
        ("optionalDependencies", optional),
        ("peerDependencies", peer),
    ):
        if names:
            data[field] = {dependency: "workspace:*" for dependency in names}
    if workspaces is not None:
        data["workspaces"] = workspaces
    return json.dumps(data)


class Repo:
    """An in-memory repository whose reads are counted."""

    def __init__(self, files: Mapping[str, str], *, listed: bool = True) -> None:
        self.files = dict(files)
        self.reads: list[str] = []
        self.index = WorkspaceIndex(self.read, list(self.files) if listed else None)

    def read(self, path: str) -> str | None:
        self.reads.append(path)
        return self.files.get(path)

    def workspace(self, directory: str = ".", tool: str = "pnpm") -> Workspace:
        found = self.index.for_directory(directory, tool)
        assert isinstance(found, Workspace), found
        return found

    def problem(self, directory: str = ".", tool: str = "pnpm") -> str:
        found = self.index.for_directory(directory, tool)
        assert isinstance(found, WorkspaceProblem), found
        return found.reason


PNPM_FILES = {
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - playgrounds/*/\n  - '!**/private-*'\n",
    "package.json": manifest("kit-monorepo", dev=("@sveltejs/kit",)),
    "packages/kit/package.json": manifest("@sveltejs/kit"),
    "packages/kit/src/index.js": "",
    "packages/adapter-node/package.json": manifest(
        "@sveltejs/adapter-node", dependencies=("@sveltejs/kit", "rollup")
    ),
    "packages/create/package.json": manifest("create-svelte", dev=("@sveltejs/kit",)),
    "packages/private-tool/package.json": manifest("private-tool"),
    "packages/.hidden/package.json": manifest("hidden"),
    "packages/kit/test/apps/basics/package.json": manifest("test-basics"),
    "playgrounds/basic/package.json": manifest(
        "playground-basic", dependencies=("@sveltejs/adapter-node",), peer=("svelte",)
    ),
    "playgrounds/basic/node_modules/dep/package.json": manifest("dep"),
    "node_modules/vite/package.json": manifest("vite"),
    "docs/package.json": manifest("docs"),
}


def directories(workspace: Workspace) -> list[str]:
    return [member.directory for member in workspace.members]


def test_pnpm_members_come_from_the_workspace_file_globs() -> None:
    workspace = Repo(PNPM_FILES).workspace()
    assert workspace.root == WorkspacePackage(
        ".",
        "kit-monorepo",
        "package.json",
        frozenset({"@sveltejs/kit"}),
        frozenset(),
    )
    # Sorted by directory; "!" excludes; "*" skips hidden names; node_modules, test
    # directories and directories no glob names are never members.
    assert directories(workspace) == [
        "packages/adapter-node",
        "packages/create",
        "packages/kit",
        "playgrounds/basic",
    ]
    assert workspace.members[0] == WorkspacePackage(
        "packages/adapter-node",
        "@sveltejs/adapter-node",
        "packages/adapter-node/package.json",
        frozenset({"@sveltejs/kit", "rollup"}),
        frozenset({"@sveltejs/kit", "rollup"}),
    )
    basic = workspace.by_name("playground-basic")
    assert basic is not None
    assert basic.dependencies == frozenset({"@sveltejs/adapter-node", "svelte"})
    create = workspace.by_name("create-svelte")
    assert create is not None
    assert create.dependencies == frozenset({"@sveltejs/kit"})
    assert create.production_dependencies == frozenset()


def test_pnpm_never_reads_package_json_workspaces() -> None:
    files = {
        "package.json": manifest("root", workspaces=["packages/*"]),
        "packages/a/package.json": manifest("a"),
    }
    repo = Repo(files)
    assert repo.index.for_directory(".", "pnpm") is None
    assert directories(repo.workspace(tool="npm")) == ["packages/a"]


@pytest.mark.parametrize(
    ("globs", "expected"),
    [
        (["packages/*"], ["packages/a", "packages/b"]),
        # "**" includes the directory itself and every depth below it.
        (["packages/**"], ["packages", "packages/a", "packages/a/inner", "packages/b"]),
        (["./packages/b"], ["packages/b"]),
        (["packages/a/"], ["packages/a"]),
        (["apps/*/"], ["apps/web"]),
        (["packages/{a,b}"], ["packages/a", "packages/b"]),
        (["packages/**", "!packages/a/**"], ["packages", "packages/b"]),
        (["!packages/a"], []),
        (["packages/.config"], ["packages/.config"]),
        (["."], []),
        (["missing/*"], []),
    ],
)
def test_glob_forms(globs: list[str], expected: list[str]) -> None:
    files = {
        "package.json": manifest("root", workspaces=globs),
        "packages/package.json": manifest("packages"),
        "packages/a/package.json": manifest("a"),
        "packages/a/inner/package.json": manifest("inner"),
        "packages/b/package.json": manifest("b"),
        "packages/.config/package.json": manifest("config"),
        "packages/a/node_modules/x/package.json": manifest("x"),
        "apps/web/package.json": manifest("web"),
        "apps/web/index.html": "",
    }
    assert directories(Repo(files).workspace(tool="npm")) == expected


def test_npm_yarn_and_bun_do_not_skip_test_directories() -> None:
    files = {
        "package.json": manifest("root", workspaces=["**"]),
        "test/e2e/package.json": manifest("e2e"),
        "tests/package.json": manifest("tests"),
    }
    assert directories(Repo(files).workspace(tool="yarn")) == ["test/e2e", "tests"]
    pnpm = dict(files, **{"pnpm-workspace.yaml": "packages: ['**']\n"})
    assert directories(Repo(pnpm).workspace(tool="pnpm")) == []


def test_yarn_classic_object_form() -> None:
    files = {
        "package.json": manifest(
            "root", workspaces={"packages": ["packages/*"], "nohoist": ["**/react-native"]}
        ),
        "packages/mobile/package.json": manifest("mobile"),
    }
    assert directories(Repo(files).workspace(tool="yarn")) == ["packages/mobile"]
    nohoist_only = {"package.json": manifest("root", workspaces={"nohoist": ["**"]})}
    assert Repo(nohoist_only).workspace(tool="yarn").members == ()


@pytest.mark.parametrize("tool", ["npm", "yarn", "bun"])
def test_the_nearest_manifest_with_workspaces_is_the_root(tool: str) -> None:
    files = {
        "package.json": manifest("outer", workspaces=["apps/*"]),
        "apps/site/package.json": manifest("site", workspaces=["plugins/*"]),
        "apps/site/plugins/seo/package.json": manifest("seo"),
        "apps/site/plugins/seo/src/x.ts": "",
        "lib/package.json": manifest("lib"),
    }
    repo = Repo(files)
    inner = repo.workspace("apps/site/plugins/seo/src", tool)
    assert inner.root.directory == "apps/site"
    assert inner.root.manifest == "apps/site/package.json"
    assert directories(inner) == ["apps/site/plugins/seo"]
    # A manifest without "workspaces" on the way up is passed over.
    assert repo.workspace("lib", tool).root.directory == "."
    assert repo.index.for_directory("lib", "pnpm") is None


def test_the_nearest_pnpm_workspace_file_is_the_root() -> None:
    files = {
        "pnpm-workspace.yaml": "packages: [apps/*]\n",
        "package.json": manifest("outer"),
        "apps/site/pnpm-workspace.yaml": "packages: [plugins/*]\n",
        "apps/site/package.json": manifest("site"),
        "apps/site/plugins/seo/package.json": manifest("seo"),
    }
    repo = Repo(files)
    assert repo.workspace("apps/site/plugins/seo").root.directory == "apps/site"
    assert directories(repo.workspace("apps")) == ["apps/site"]


def test_no_workspace_anywhere_above_is_none() -> None:
    files = {"package.json": manifest("single"), "src/index.js": ""}
    repo = Repo(files)
    for tool in ("npm", "pnpm", "yarn", "bun"):
        assert repo.index.for_directory("src", tool) is None


def test_pnpm_without_a_package_list_is_the_root_alone() -> None:
    files = {
        "pnpm-workspace.yaml": "onlyBuiltDependencies:\n  - esbuild\n",
        "package.json": manifest("single"),
        "examples/a/package.json": manifest("a"),
    }
    workspace = Repo(files).workspace()
    assert workspace.members == ()
    assert workspace.root_only
    assert Repo({**files, "pnpm-workspace.yaml": "packages: ['.']\n"}).workspace().root_only
    assert Repo({**files, "pnpm-workspace.yaml": ""}).workspace().root_only


def test_pnpm_root_without_a_manifest_is_no_package() -> None:
    files = {"pnpm-workspace.yaml": "packages: [a]\n", "a/package.json": manifest("a")}
    workspace = Repo(files).workspace("a")
    assert not workspace.root_is_package
    assert workspace.root == WorkspacePackage(".", None, "package.json", frozenset(), frozenset())
    assert [package.directory for package in workspace.packages] == ["a"]


@pytest.mark.parametrize(
    ("files", "tool", "listed", "reason"),
    [
        ({"pnpm-workspace.yaml": "packages: [unclosed\n"}, "pnpm", True, PROBLEM_FILE_INVALID),
        ({"pnpm-workspace.yaml": "- a\n- b\n"}, "pnpm", True, PROBLEM_FILE_INVALID),
        ({"pnpm-workspace.yaml": "packages: a/*\n"}, "pnpm", True, PROBLEM_PACKAGES_MALFORMED),
        ({"pnpm-workspace.yaml": "packages: [1]\n"}, "pnpm", True, PROBLEM_GLOB_NOT_STRING),
        ({"pnpm-workspace.yaml": "packages: ['{1..5000}']\n"}, "pnpm", True, PROBLEM_GLOB_UNUSABLE),
        ({"pnpm-workspace.yaml": "packages: [a/*]\n"}, "pnpm", False, PROBLEM_LISTING_MISSING),
        (
            {"pnpm-workspace.yaml": "packages: [a/*]\n", "a/b/package.json": "{"},
            "pnpm",
            True,
            PROBLEM_MEMBER_INVALID,
        ),
        (
            {"pnpm-workspace.yaml": "packages: [a/*]\n", "a/b/package.json": "[]"},
            "pnpm",
            True,
            PROBLEM_MEMBER_INVALID,
        ),
        (
            {"pnpm-workspace.yaml": "packages: [a/*]\n", "package.json": "{,}"},
            "pnpm",
            True,
            PROBLEM_MEMBER_INVALID,
        ),
        ({"package.json": '{"workspaces": 1}'}, "npm", True, PROBLEM_PACKAGES_MALFORMED),
        ({"package.json": '{"workspaces": [null]}'}, "yarn", True, PROBLEM_GLOB_NOT_STRING),
        (
            {"package.json": '{"workspaces": {"packages": "a"}}'},
            "yarn",
            True,
            PROBLEM_PACKAGES_MALFORMED,
        ),
        ({"package.json": '{"workspaces": ["a/*"]}'}, "bun", False, PROBLEM_LISTING_MISSING),
        ({"package.json": '{"name": "x",}'}, "npm", True, PROBLEM_FILE_INVALID),
        ({"package.json": '"just a string"'}, "npm", True, PROBLEM_FILE_INVALID),
    ],
)
def test_workspace_problems(files: dict[str, str], tool: str, listed: bool, reason: str) -> None:
    assert Repo(files, listed=listed).problem(tool=tool) == reason


def test_a_listed_but_unreadable_workspace_file_is_a_problem() -> None:
    repo = Repo({"pnpm-workspace.yaml": "packages: []\n"})
    del repo.files["pnpm-workspace.yaml"]
    assert repo.problem() == PROBLEM_FILE_UNREADABLE


def test_problem_reasons_never_echo_file_content() -> None:
    secret = "packages: [ghp_SECRETVALUE\n"
    reason = Repo({"pnpm-workspace.yaml": secret}).problem()
    assert "SECRET" not in reason


def test_without_a_listing_literal_files_are_still_read() -> None:
    files = {"pnpm-workspace.yaml": "catalog: {}\n", "package.json": manifest("only")}
    workspace = Repo(files, listed=False).workspace("src")
    assert workspace.root.name == "only"
    assert workspace.members == ()


def test_a_failing_reader_is_a_missing_file() -> None:
    def explode(path: str) -> str | None:
        raise OSError(path)

    index = WorkspaceIndex(explode, None)
    assert index.for_directory(".", "pnpm") is None
    assert index.package_directory("a/b") == "a/b"


def test_workspaces_are_cached_per_root() -> None:
    repo = Repo(PNPM_FILES)
    first = repo.workspace("packages/kit/src")
    reads = len(repo.reads)
    assert repo.workspace("playgrounds/basic") is first
    assert repo.workspace(".") is first
    assert repo.reads.count("pnpm-workspace.yaml") == 1
    assert len(repo.reads) == reads


def test_only_matched_manifests_are_read_over_a_huge_tree() -> None:
    files = {"pnpm-workspace.yaml": "packages: ['packages/*']\n", "package.json": manifest()}
    for number in range(20_000):
        files[f"vendor/lib{number}/package.json"] = manifest(f"lib{number}")
        files[f"vendor/lib{number}/index.js"] = ""
    for number in range(30):
        files[f"packages/p{number:02}/package.json"] = manifest(f"p{number:02}")
    repo = Repo(files)
    workspace = repo.workspace()
    assert len(workspace.members) == 30
    assert set(repo.reads) == {"pnpm-workspace.yaml", "package.json"} | {
        member.manifest for member in workspace.members
    }


def test_package_directory_walks_up_to_the_nearest_manifest() -> None:
    repo = Repo(PNPM_FILES)
    assert repo.index.package_directory("packages/kit/src/lib") == "packages/kit"
    assert repo.index.package_directory("packages/kit") == "packages/kit"
    assert repo.index.package_directory("scripts") == "."
    bare = Repo({"src/index.js": ""})
    assert bare.index.package_directory("src") == "src"
    assert manifest_path("src") == "src/package.json"
    assert manifest_path(".") == "package.json"


def test_dependency_walks() -> None:
    workspace = Repo(PNPM_FILES).workspace()
    kit = workspace.by_name("@sveltejs/kit")
    basic = workspace.by_name("playground-basic")
    assert kit is not None
    assert basic is not None
    assert [p.directory for p in workspace.reachable([basic])] == [
        "packages/adapter-node",
        "packages/kit",
    ]
    assert [p.directory for p in workspace.reachable([kit], dependents=True)] == [
        ".",
        "packages/adapter-node",
        "packages/create",
        "playgrounds/basic",
    ]
    assert [p.directory for p in workspace.reachable([kit], dependents=True, production=True)] == [
        "packages/adapter-node",
        "playgrounds/basic",
    ]
    assert workspace.by_name("vite") is None
    assert workspace.by_directory("packages/kit") is kit
    assert workspace.package_containing("packages/kit/src") is kit
    assert workspace.package_containing("scripts") is workspace.root
    assert workspace.relative_directory(kit) == "packages/kit"


def test_subtree_takes_every_package_below_a_directory() -> None:
    files = {
        "package.json": manifest("root"),
        "a/package.json": manifest("a"),
        "a/b/package.json": manifest("b"),
        "a/test/package.json": manifest("t"),
        "a/node_modules/x/package.json": manifest("x"),
        "c/package.json": manifest("c"),
    }
    index = Repo(files).index
    pnpm = index.subtree("a", "pnpm")
    assert isinstance(pnpm, Workspace)
    assert pnpm.root.directory == "a"
    assert directories(pnpm) == ["a/b"]
    bun = index.subtree("a", "bun")
    assert isinstance(bun, Workspace)
    assert directories(bun) == ["a/b", "a/test"]
    assert index.subtree("a", "pnpm") is pnpm
    assert Repo(files, listed=False).index.subtree(".", "pnpm") == WorkspaceProblem(
        PROBLEM_LISTING_MISSING
    )
