"""Drive `kebab mcp` (over stdio) or `kebab serve` (over Streamable HTTP)
with the official MCP Python SDK, for the end-to-end tests in
tests/e2e/mcp.rs and tests/e2e/serve.rs.

Reads a plan (JSON) on stdin:
  {"command": "/path/kebab", "args": ["mcp"], "env": {...},
   or {"url": "http://127.0.0.1:PORT/mcp", "headers": {...}},
   "steps": [{"call": "search", "arguments": {...}},
             {"signal": "/tmp/x/ready", "wait_for": "/tmp/x/go"},
             {"concurrently": [{"call": "ask", ...}, {"call": "search", "after": 1.0, ...}]},
             ...]}
Prints one JSON object on stdout:
  {"server": {...}, "tools": [{name, inputSchema, annotations}], "results": [
     {"is_error": bool, "structured": {...}, "text": "..."} | null for signals
     | for "concurrently", a list of results, each with "started" and "ended"
       (seconds since the step began; a call starts `after` seconds in)],
   and over HTTP "http": {"session_id": ..., "requests": [[method, status], ...]}}
"""

import asyncio
import json
import os
import sys
import time

from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


@asynccontextmanager
async def connect(plan, out):
    """The (read, write) streams of the plan's transport: `kebab mcp` as a
    child process, or a `kebab serve` URL (every HTTP exchange recorded)."""
    if "url" not in plan:
        params = StdioServerParameters(
            command=plan["command"], args=plan.get("args", ["mcp"]), env=plan.get("env")
        )
        async with stdio_client(params) as streams:
            yield streams[0], streams[1]
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    seen = {"session_id": None, "requests": []}
    out["http"] = seen

    async def record(response):
        sid = response.headers.get("mcp-session-id")
        if sid:
            seen["session_id"] = sid
        seen["requests"].append([response.request.method, response.status_code])

    async with httpx2.AsyncClient(
        headers=plan.get("headers", {}),
        timeout=httpx2.Timeout(30, read=300),
        event_hooks={"response": [record]},
    ) as http:
        async with streamable_http_client(plan["url"], http_client=http) as streams:
            yield streams[0], streams[1]


async def run(plan):
    out = {"results": []}
    async with connect(plan, out) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = {
                "name": init.server_info.name,
                "version": init.server_info.version,
                "protocol": init.protocol_version,
            }
            listed = await session.list_tools()
            out["tools"] = [
                {
                    "name": t.name,
                    "inputSchema": t.input_schema,
                    "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                    if t.annotations
                    else None,
                }
                for t in listed.tools
            ]
            for step in plan["steps"]:
                if "concurrently" in step:
                    origin = time.perf_counter()

                    async def one(call):
                        await asyncio.sleep(call.get("after", 0))
                        started = time.perf_counter() - origin
                        res = await call_tool(session, call)
                        res["started"] = started
                        res["ended"] = time.perf_counter() - origin
                        return res

                    out["results"].append(
                        list(await asyncio.gather(*(one(c) for c in step["concurrently"])))
                    )
                    continue
                if "signal" in step:
                    with open(step["signal"], "w") as f:
                        f.write("ready")
                    deadline = time.time() + 120
                    while not os.path.exists(step["wait_for"]):
                        if time.time() > deadline:
                            raise TimeoutError(step["wait_for"])
                        await asyncio.sleep(0.05)
                    out["results"].append(None)
                    continue
                out["results"].append(await call_tool(session, step))
    return out


async def call_tool(session, step):
    """One tool call of the plan, as the report holds it."""
    started = time.perf_counter()
    r = await session.call_tool(step["call"], step.get("arguments", {}))
    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
    return {
        "is_error": bool(r.is_error),
        "structured": r.structured_content,
        "text": text,
        "ms": (time.perf_counter() - started) * 1000.0,
    }


def main():
    plan = json.load(sys.stdin)
    print(json.dumps(asyncio.run(run(plan))))


if __name__ == "__main__":
    main()
