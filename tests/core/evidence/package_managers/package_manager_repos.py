"""The repositories and helpers the package-manager tests share: workspaces shaped like real
ones, for each tool, and a parse that splits a command as the shell would.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping

from jev_select.core.evidence.package_managers import Invocation, ScriptTarget, parse_invocation
from jev_select.core.evidence.workspaces import WorkspaceIndex, manifest_path


def manifest(
    name: str | None,
    *,
    dependencies: tuple[str, ...] = (),
    dev: tuple[str, ...] = (),
    workspaces: object = None,
) -> str:
    data: dict[str, object] = {} if name is None else {"name": name}
    if dependencies:
        data["dependencies"] = {dependency: "workspace:^" for dependency in dependencies}
    if dev:
        data["devDependencies"] = {dependency: "workspace:*" for dependency in dev}
    if workspaces is not None:
        data["workspaces"] = workspaces
    return json.dumps(data)


# A pnpm workspace shaped like SvelteKit's. Dependencies: adapter-node -> kit; create -(dev)->
# kit; basic -> adapter-node; hn -(dev)-> kit. Test directories are no pnpm packages.
PNPM_REPO = {
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n  - playgrounds/*\n",
    "package.json": manifest("kit-monorepo"),
    "packages/kit/package.json": manifest("@sveltejs/kit"),
    "packages/kit/src/runtime/index.js": "",
    "packages/kit/test/apps/basics/package.json": manifest("test-basics"),
    "packages/adapter-node/package.json": manifest(
        "@sveltejs/adapter-node", dependencies=("@sveltejs/kit",)
    ),
    "packages/create/package.json": manifest("create-svelte", dev=("@sveltejs/kit",)),
    "playgrounds/basic/package.json": manifest(
        "playground-basic", dependencies=("@sveltejs/adapter-node",)
    ),
    "playgrounds/hn/package.json": manifest("playground-hn", dev=("@sveltejs/kit",)),
    "scripts/release.js": "",
}
ROOT = "."
KIT = "packages/kit"
ADAPTER = "packages/adapter-node"
CREATE = "packages/create"
BASIC = "playgrounds/basic"
HN = "playgrounds/hn"
MEMBERS = [ADAPTER, CREATE, KIT, BASIC, HN]

# A yarn berry workspace: app -> ui -> core, cli -(dev)-> core.
YARN_REPO = {
    "package.json": manifest("monorepo", workspaces=["packages/*", "tools/cli"]),
    ".yarnrc.yml": "nodeLinker: node-modules\n",
    "packages/core/package.json": manifest("@acme/core"),
    "packages/ui/package.json": manifest("@acme/ui", dependencies=("@acme/core",)),
    "packages/ui/src/index.ts": "",
    "packages/app/package.json": manifest("@acme/app", dependencies=("@acme/ui",)),
    "tools/cli/package.json": manifest("acme-cli", dev=("@acme/core",)),
    "examples/demo/package.json": manifest("demo"),
}
CORE = "packages/core"
UI = "packages/ui"
APP = "packages/app"
CLI = "tools/cli"

NPM_REPO = {
    "package.json": manifest("ledger", workspaces=["packages/*"]),
    "packages/a/package.json": manifest("a"),
    "packages/a/src/index.ts": "",
    "packages/b/package.json": manifest("@scope/b"),
    "packages/c/package.json": manifest("c"),
}
A = "packages/a"
B = "packages/b"
C = "packages/c"

CLASSIC_REPO = {
    "package.json": manifest(
        "classic", workspaces={"packages": ["packages/*"], "nohoist": ["**/react-native"]}
    ),
    "packages/mobile/package.json": manifest("mobile"),
    "packages/web/package.json": manifest("web"),
}

BUN_REPO = {
    "package.json": manifest("bun-mono", workspaces=["packages/*"]),
    "packages/pkg-a/package.json": manifest("pkg-a"),
    "packages/pkg-b/package.json": manifest("pkg-b"),
    "packages/other/package.json": manifest("other"),
}

SINGLE_REPO = {
    "package.json": manifest("single"),
    "src/index.ts": "",
    "tools/gen/package.json": manifest("gen"),
}


def index_of(repo: Mapping[str, str]) -> WorkspaceIndex:
    return WorkspaceIndex(repo.get, list(repo))


def parse(repo: Mapping[str, str], command: str, directory: str = ".") -> Invocation:
    invocation = parse_invocation(shlex.split(command), directory, index_of(repo))
    assert invocation is not None
    return invocation


def target(directory: str, name: str, required: bool) -> ScriptTarget:
    return ScriptTarget(manifest_path(directory), directory, name, required)


def targets(directories: list[str], name: str, required: bool = False) -> tuple[ScriptTarget, ...]:
    return tuple(target(directory, name, required) for directory in directories)


def script_targets(invocation: Invocation) -> list[tuple[str, str, bool]]:
    assert invocation.unresolved is None, invocation.unresolved
    assert invocation.over_bound is None
    return [(t.directory, t.name, t.required) for t in invocation.targets]
