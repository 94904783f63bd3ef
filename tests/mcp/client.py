"""Drive `kebab mcp` with the official MCP Python SDK (a real client over
stdio), for the end-to-end tests in tests/e2e/mcp.rs.

Reads a plan (JSON) on stdin:
  {"command": "/path/kebab", "args": ["mcp"], "env": {...},
   "steps": [{"call": "search", "arguments": {...}},
             {"signal": "/tmp/x/ready", "wait_for": "/tmp/x/go"},
             {"concurrently": [{"call": "ask", ...}, {"call": "search", "after": 1.0, ...}]},
             ...]}
Prints one JSON object on stdout:
  {"server": {...}, "tools": [{name, inputSchema}], "results": [
     {"is_error": bool, "structured": {...}, "text": "..."} | null for signals
     | for "concurrently", a list of results, each with "started" and "ended"
       (seconds since the step began; a call starts `after` seconds in)]}
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def run(plan):
    params = StdioServerParameters(
        command=plan["command"], args=plan.get("args", ["mcp"]), env=plan.get("env")
    )
    out = {"results": []}
    async with stdio_client(params) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = {
                "name": init.server_info.name,
                "version": init.server_info.version,
                "protocol": init.protocol_version,
            }
            listed = await session.list_tools()
            out["tools"] = [
                {"name": t.name, "inputSchema": t.input_schema} for t in listed.tools
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
