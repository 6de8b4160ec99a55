"""An MCP client of Purko's gateway built on the official Python SDK (`mcp` 2.3.0).

The Rust end-to-end tests run it with the virtualenv `.ci/run` makes. It connects, runs the
operations given as JSON on the command line, and prints one JSON line per event on standard
output, flushed, so the test can act (approve a call) while a call is still waiting:

    client.py stdio '<ops>' <purko> <agent> <manifest>...
    client.py http  '<ops>' <url> <token>

ops: [{"op": "list"}, {"op": "call", "name": ..., "arguments": {...}, "meta": {...}},
      {"op": "listen", "resources": [uri, ...], "then": [ops...], "changes": n}, ...]
      (listen: opens a 2026-07-28 `subscriptions/listen` stream for those resources, runs `then`,
      and reports the stream's first n changes)
Environment: PURKO_ELICIT=accept|decline declares the elicitation capability and answers so.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client


def say(event):
    print(json.dumps(event), flush=True)


async def elicit(context, params):
    answer = os.environ.get("PURKO_ELICIT", "")
    say({"event": "elicitation", "params": dump(params)})
    if answer == "accept":
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="decline")


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_ops(client, ops):
    for op in ops:
        if op["op"] == "list":
            result = await client.list_tools()
            say({"event": "list", "tools": [dump(t) for t in result.tools]})
        elif op["op"] == "call":
            say({"event": "calling", "name": op["name"]})
            result = await client.call_tool(op["name"], op.get("arguments", {}), meta=op.get("meta"))
            say({"event": "result", "name": op["name"], "result": dump(result)})
        elif op["op"] == "listen":
            async with client.listen(resource_subscriptions=op["resources"]) as stream:
                say({"event": "listening", "honored": dump(stream.honored)})
                await run_ops(client, op.get("then", []))
                left = op.get("changes", 1)
                async for change in stream:
                    say({"event": "change", "kind": type(change).__name__,
                         "uri": getattr(change, "uri", None)})
                    left -= 1
                    if left == 0:
                        break


async def run(server, ops):
    kwargs = {}
    if os.environ.get("PURKO_ELICIT"):
        kwargs["elicitation_callback"] = elicit
    mode = os.environ.get("PURKO_MCP_MODE", "auto")
    async with Client(server, mode=mode, read_timeout_seconds=120, **kwargs) as client:
        info = client.server_info
        say({"event": "connected", "protocol": client.protocol_version,
             "server": dump(info) if info is not None else None, "instructions": client.instructions})
        await run_ops(client, ops)


def main():
    transport, ops = sys.argv[1], json.loads(sys.argv[2])
    if transport == "stdio":
        purko, agent, manifests = sys.argv[3], sys.argv[4], sys.argv[5:]
        server = StdioServerParameters(
            command=purko,
            args=["gateway", "--stdio", "--agent", agent, *manifests],
            env={k: v for k, v in os.environ.items() if k.startswith("PURKO_") or k == "PATH"},
        )
        asyncio.run(run(server, ops))
    else:
        url, token = sys.argv[3], sys.argv[4]

        async def over_http():
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
                await run(streamable_http_client(url, http_client=http), ops)

        asyncio.run(over_http())


if __name__ == "__main__":
    main()
