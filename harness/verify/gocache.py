"""The Go build cache the hidden tests read: warm, shared between trials, never theirs.

Go's build cache is content-addressed but not verified on read: whoever can write it can
replace the compiled ``testing`` package (or any dependency) that a *later* trial links
its tests against. So when the controller is root the test user never gets a cache it
can write. Before a Go target runs, the cache's owner, a builder user of its own
(``uid + 1`` of the test user), compiles it with ``go test -exec true`` (compile, vet
and link; nothing of the tree is executed) into the shared cache; then the tests run
as the test user with that cache read-only (Go reads an initialised cache it cannot
write; every entry the run needs was just built; Go 1.19's package index, which it
would try to store, is switched off with ``GODEBUG=goindex=0``). The builder only
ever stores what the Go toolchain produced from the sources, so an entry can be no
more than an honest build output. Without root nothing is enforced (as before).
"""

from __future__ import annotations

from pathlib import Path

from harness.verify.testuser import TestUser, owned_dir, run_reaped, test_home

BUILDER_OFFSET = 1  # the cache's owner is the test user's uid + 1


def builder_of(user: TestUser) -> TestUser:
    return TestUser(user.uid + BUILDER_OFFSET, user.read_all)


def warm_command(cmd: list[str]) -> list[str]:
    """The test command as a build that executes nothing: the same flags (``-json``
    builds ``test2json`` too), with ``-exec true`` in place of running the binary."""
    return [*cmd[:2], "-exec", "true", *cmd[2:]]


def read_only_cache(
    cmd: list[str], tree: Path, go_env: dict[str, str], timeout: float, user: TestUser
) -> dict[str, str]:
    """Warm the shared cache as its builder; the env for the test user's run (its
    ``GOCACHE`` the builder's, which it may read and not write)."""
    builder = builder_of(user)
    cache = owned_dir(Path(go_env["GOCACHE"]), builder.uid)
    gopath = owned_dir(Path(go_env["GOPATH"]), builder.uid)
    # Go 1.19 indexes the tree's packages into the cache keyed by file times and fails
    # when it cannot store an index the builder skipped (files too new): no index
    debug = ",".join(filter(None, [go_env.get("GODEBUG", ""), "goindex=0"]))
    go_env = {**go_env, "GODEBUG": debug}
    with test_home(builder.uid) as home:
        tmp = str(home / "tmp")
        env = {**go_env, "GOCACHE": str(cache), "GOPATH": str(gopath), "HOME": str(home)}
        env.update(TMPDIR=tmp, GOTMPDIR=tmp)
        run_reaped(warm_command(cmd), tree, env, timeout, builder)  # its failure: the run's
    return {**go_env, "GOCACHE": str(cache), "GOPATH": str(gopath)}
