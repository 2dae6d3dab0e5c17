"""MCP client driving `patchloop mcp` with the official Python SDK (`mcp` on PyPI).

Usage: client.py MODE SERVER [SERVER_ARGS...]
  demo  initialize, list tools, fix the demo bug, run the tests, verify, try a test edit, bad calls
  hold  start the sandbox (bash hostname), print it, wait for a line on stdin, disconnect
  idle  start the sandbox, print its hostname, sleep IDLE_WAIT seconds, call bash again
Every observation is printed as one JSON line on stdout for the Rust test to assert on.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def emit(kind, **kw):
    print(json.dumps({"kind": kind, **kw}), flush=True)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(session, name, args=None, progress=None):
    r = await session.call_tool(name, args or {}, progress_callback=progress)
    out = {"tool": name, "is_error": bool(r.is_error), "text": text_of(r)}
    emit("call", **out)
    return out


async def demo(session):
    tools = await session.list_tools()
    emit("tools", names=[t.name for t in tools.tools],
         schemas={t.name: t.input_schema for t in tools.tools})
    progress_lines = []

    async def on_progress(progress, total, message):
        progress_lines.append(message or "")

    await call(session, "view_file", {"path": "stats/median.py"}, progress=on_progress)
    emit("progress", count=len(progress_lines))
    await call(session, "run_tests")
    await call(session, "str_replace", {
        "path": "stats/median.py",
        "old_str": "    return ordered[mid]\n",
        "new_str": "    if len(ordered) % 2 == 0:\n"
                   "        return (ordered[mid - 1] + ordered[mid]) / 2\n"
                   "    return ordered[mid]\n",
    })
    await call(session, "run_tests")
    await call(session, "diff")
    await call(session, "verify_patch", {"reruns": 1})
    await call(session, "str_replace", {
        "path": "tests/test_median.py",
        "old_str": "assert median([7]) == 7", "new_str": "assert True",
    })
    await call(session, "no_such_tool", {"x": 1})
    await call(session, "view_file", {"start_line": 3})


async def hostname(session):
    r = await call(session, "bash", {"command": "hostname"})
    lines = [l for l in r["text"].splitlines() if l.strip() and not l.startswith("[exit")]
    return lines[-1] if lines else ""


async def main():
    mode, server = sys.argv[1], sys.argv[2]
    params = StdioServerParameters(command=server, args=sys.argv[3:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit("initialized", server=init.server_info.name)
            if mode == "demo":
                await demo(session)
            elif mode == "hold":
                emit("hostname", value=await hostname(session))
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            elif mode == "idle":
                emit("hostname", value=await hostname(session))
                await asyncio.sleep(float(os.environ.get("IDLE_WAIT", "4")))
                emit("after_idle")
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
                emit("hostname", value=await hostname(session))
    emit("closed")


asyncio.run(main())
