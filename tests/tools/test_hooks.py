"""before_tool / after_tool hooks see each tool call as dispatched (eval, functions, xargs,
pipelines, variables, timeout), can deny (126) or replace its parameters; plan() lists the calls
a script makes with dry-run answers."""
import asyncio


from scripted_kernel import BashTool, Deny, MemoryFs, ScriptedTool, ToolCall, tool


@tool
def get_user(id: int, verbose: bool = False) -> dict:
    """Fetch a user by id."""
    return {"id": id, "name": f"user{id}", "verbose": verbose}


@tool
def delete_user(id: int) -> str:
    """Delete a user."""
    return f"deleted {id}\n"


def _api(*hooks, after=None):
    builder = ScriptedTool.builder("api").function(get_user).function(delete_user)
    for hook in hooks:
        builder.before_tool(hook)
    if after is not None:
        builder.after_tool(after)
    return builder.build()


def test_every_way_of_reaching_a_tool_is_seen_with_its_real_flags():
    seen = []
    api = _api(lambda call: seen.append((call.name, call.params, call.argv)))
    r = api.execute("""
eval 'get_user --id 1'
f() { "$@"; }
f get_user --id 2 --verbose
name=get_user; flag=--id
$name $flag 3
printf '%s\\n' 4 5 | xargs -n1 get_user --id
echo 6 | xargs -I{} sh -c 'get_user --id {}' 2>/dev/null || true
get_user --id 7 | jq -r .name | cat
x=$(get_user --id=8); timeout 5 get_user --id 9
""")
    assert r.exit_code == 0, r.stderr
    assert [(n, p["id"]) for n, p, _ in seen] == [("get_user", i) for i in range(1, 10)]
    assert seen[1] == ("get_user", {"id": 2, "verbose": True}, ["get_user", "--id", "2", "--verbose"])
    assert seen[2][2] == ["get_user", "--id", "3"]
    assert seen[5][2] == ["get_user", "--id", "6"]       # through xargs and sh -c
    assert seen[7][2] == ["get_user", "--id=8"]


def test_deny_fails_the_command_with_126_and_a_reason():
    api = _api(lambda call: Deny("deleting is not allowed") if call.name == "delete_user" else None)
    r = api.execute("delete_user --id 1; echo status=$?; get_user --id 2 | jq -r .name")
    assert r.stdout == "status=126\nuser2\n"
    assert r.stderr == "delete_user: denied: deleting is not allowed\n"
    assert [(e.name, e.exit_code) for e in r.trace] == [("delete_user", 126), ("get_user", 0)]
    r = api.execute("set -e; delete_user --id 1; echo not reached")
    assert r.exit_code == 126 and r.stdout == ""


def test_replacement_params_are_validated_and_used():
    def cap(call):
        if call.name == "get_user" and call.params["id"] > 10:
            return {"id": 10}
        if call.name == "delete_user":
            return {"id": "not a number"}
    api = _api(cap)
    r = api.execute("get_user --id 99 | jq .id; delete_user --id 1; echo status=$?")
    assert r.stdout == "10\nstatus=126\n"
    assert r.stderr.startswith("delete_user: denied: before_tool gave invalid parameters:")


def test_hooks_run_in_order_and_a_raising_hook_denies():
    order = []

    def first(call):
        order.append("first")
        return {**call.params, "id": call.params["id"] + 1}

    def second(call):
        order.append(("second", call.params["id"]))
    api = _api(first, second)
    assert api.execute("get_user --id 1 | jq .id").stdout == "2\n"
    assert order == ["first", ("second", 2)]

    def broken(call):
        raise RuntimeError("policy store unreachable at /etc/policy.db")
    r = _api(broken).execute("get_user --id 1; echo $?")
    assert r.stdout == "126\n"
    assert r.stderr == "get_user: denied: before_tool failed: policy store unreachable at <path>\n"


def test_after_tool_sees_status_and_sizes():
    results = []
    api = _api(lambda c: Deny("no") if c.params.get("id") == 3 else None,
               after=lambda call, result: results.append((call.params["id"], result.exit_code,
                                                          result.stdout_bytes, result.denied)))
    api.execute("get_user --id 1 >/dev/null; get_user --id 3; delete_user --id 12")
    assert results == [(1, 0, len('{"id": 1, "name": "user1", "verbose": false}\n'), None),
                       (3, 126, 0, "no"), (12, 0, len("deleted 12\n"), None)]


def test_stdin_size_is_reported_without_being_read():
    sizes = []
    api = _api(lambda call: sizes.append(call.stdin_size))
    r = api.execute("printf 'a\\nb\\n' | { get_user --id 1 >/dev/null; cat; }")
    assert sizes == [4] and r.stdout == "a\nb\n"         # the tool did not read it: cat still can


def test_async_hooks_sync_and_under_execute_async():
    async def deny_two(call):
        await asyncio.sleep(0)
        return Deny("two") if call.params["id"] == 2 else None
    api = _api(deny_two)
    assert api.execute("get_user --id 1 | jq .id; get_user --id 2; echo $?").stdout == "1\n126\n"

    async def main():
        return await api.execute_async("get_user --id 2; echo $?; get_user --id 5 | jq .id")
    assert asyncio.run(main()).stdout == "126\n5\n"


def test_bash_tool_builtins_have_hooks_too():
    calls = []

    def policy(call):
        calls.append(call)
        if call.params["args"][:1] == ["rm"]:
            return Deny("rm is not for you")
        if call.params["args"][:1] == ["upper"]:
            return {"args": ["UPPER"]}
    bash = (BashTool.builder().builtin("deploy", lambda args, stdin: f"deploying {' '.join(args)}\n")
            .before_tool(policy).build())
    r = bash.execute("deploy web; deploy rm -rf; echo $?; eval 'deploy upper'")
    assert r.stdout == "deploying web\n126\ndeploying UPPER\n"
    assert r.stderr == "deploy: denied: rm is not for you\n"
    assert calls[0] == ToolCall("deploy", {"args": ["web"]}, ["deploy", "web"], 0, "builtin")
    r = bash.execute("echo hi | cat")      # no builtin, no hook
    assert r.stdout == "hi\n" and len(calls) == 3


def test_plan_lists_the_calls_with_dry_run_answers_and_calls_nothing():
    called, hooked = [], []

    def counting(id: int) -> dict:
        """Count."""
        called.append(id)
        return {"id": id}
    api = (ScriptedTool.builder("api").function(counting).function(delete_user)
           .before_tool(lambda c: hooked.append(c)).build())
    plan = api.plan("""
for i in 1 2; do counting --id $i | jq -e .dry_run >/dev/null && echo planned; done
counting --id 3 | jq -e '.params.id == 3' >/dev/null && delete_user --id 3
counting --id nope
""")
    assert [(c.name, c.params) for c in plan] == [("counting", {"id": 1}), ("counting", {"id": 2}),
                                                  ("counting", {"id": 3}), ("delete_user", {"id": 3})]
    assert called == [] and hooked == []
    assert api.execute("counting --id 4").stdout == '{"id": 4}\n' and called == [4]


def test_plan_changes_no_file_of_a_shared_filesystem():
    fs = MemoryFs(files={"/tmp/keep": "kept\n"})
    api = ScriptedTool.builder("api").function(get_user).filesystem(fs).build()
    plan = api.plan("get_user --id 1 > /tmp/u.json; rm -f /tmp/keep; get_user --id 2")
    assert [c.params["id"] for c in plan] == [1, 2]
    assert sorted(p for p in fs.tree() if p.startswith("/tmp/")) == ["/tmp/keep"]


def test_plan_calls_nothing_whatever_route_reaches_a_tool():
    # every route by which a script reaches a tool (eval, a function, xargs, timeout, a
    # pipeline stage, command, a variable holding the name, a job, a substitution) is a dry run
    called, hooked = [], []

    def counting(id: int) -> dict:
        """Count."""
        called.append(id)
        return {"id": id}
    api = (ScriptedTool.builder("api").function(counting)
           .before_tool(lambda c: hooked.append(c)).after_tool(lambda c, r: hooked.append(c)).build())
    plan = api.plan("""
eval 'counting --id 1'
f() { counting --id 2; }; f
echo 3 | xargs -I{} counting --id {}
timeout 5 counting --id 4
counting --id 5 | cat
command counting --id 6
t=counting; $t --id 7
counting --id 8 & wait
x=$(counting --id 9); cat <(counting --id 10)
""")
    assert [c.params["id"] for c in plan] == list(range(1, 11))
    assert called == [] and hooked == []


def test_a_bash_tool_plan_changes_nothing_and_lists_what_it_would():
    deployed, hooked = [], []
    bash = (BashTool.builder().builtin("deploy", lambda args, stdin: deployed.append(args) or "ok\n")
            .files({"keep.txt": "k\n", "old.txt": "o\n"}).before_tool(lambda c: hooked.append(c)).build())
    bash.execute("x=5; cd /tmp")
    plan = bash.plan("echo new > new.txt; rm ~/old.txt; deploy --env prod && echo deployed; "
                     "echo $x $PWD > seen; chmod 600 ~/keep.txt")
    assert [(c.name, c.kind, c.params) for c in plan] == [("deploy", "builtin", {"args": ["--env", "prod"]})]
    assert plan.files == ["/home/user/keep.txt", "/home/user/old.txt", "/tmp/new.txt", "/tmp/seen"]
    assert deployed == [] and hooked == []
    after = bash.execute("ls ~; ls /tmp; echo $x $PWD; stat -c %a ~/keep.txt")
    assert after.stdout == "keep.txt\nold.txt\n5 /tmp\n644\n"
