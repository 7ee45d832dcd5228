"""The official x402 MCP buyer: x402.mcp's x402MCPSession over the official MCP Python SDK's Streamable HTTP
client, paying with the official x402 client (exact EVM scheme, the buyer's key). httpx takes HTTP_PROXY from
the environment, so with HTTP_PROXY set every request goes through payguard proxy.

    python x402_mcp_buyer.py URL TOOL [--args JSON] [--mode pay|replay|forge] [--guard RULES_JSON]

Prints one JSON line: what the session returned (is_error, payment_made, payment_response, the result's
structuredContent and text) and, for replay and forge, what the second call returned.

--guard attaches the payguard Python guard (clients/python) to the x402 client with RULES_JSON: it decides
in the client's before-payment-creation hook, which x402MCPSession's create_payment_payload runs;
--approve-holds gives it an on_hold that approves (a person saying yes).
"""

import argparse
import asyncio
import json
import sys

from eth_account import Account
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from x402 import x402Client
from x402.mcp import x402MCPSession
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

BUYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # Anvil account 0
OTHER_PAY_TO = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"  # Anvil account 2


def view(result):
    """The parts of a CallToolResult (or x402MCPSession result) a test checks."""
    raw = getattr(result, "raw_result", result)
    texts = [getattr(c, "text", None) for c in (getattr(raw, "content", None) or [])]
    pr = getattr(result, "payment_response", None)
    if pr is not None and hasattr(pr, "model_dump"):
        pr = pr.model_dump(by_alias=True, exclude_none=True)
    return {
        "is_error": bool(getattr(raw, "isError", False)),
        "payment_made": getattr(result, "payment_made", None),
        "payment_response": pr,
        "structured": getattr(raw, "structuredContent", None),
        "texts": texts,
    }


async def refused_or(call) -> dict:
    """The call's result, or a JSON-RPC error answer (the MCP SDK raises McpError) as {"error": message}."""
    try:
        return view(await call)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


async def run(args) -> dict:
    client = x402Client()
    register_exact_evm_client(client, EthAccountSigner(Account.from_key(BUYER_KEY)))
    decisions = []
    if args.guard is not None:
        from payguard import Guard

        def record(d):
            decisions.append(d.get("decision") if isinstance(d, dict) else getattr(d, "decision", str(d)))

        on_hold = (lambda hold: True) if args.approve_holds else None
        Guard(json.loads(args.guard), on_decision=record, on_hold=on_hold).attach(client)
    tool_args = json.loads(args.args)
    out: dict = {}
    if args.sse:
        # x402.mcp's own client factory: the older HTTP+SSE transport (answers on the GET /sse stream).
        from x402.mcp import create_x402_mcp_client

        async with create_x402_mcp_client(client, args.url) as mcp:
            return view(await mcp.call_tool(args.tool, tool_args))
    async with streamablehttp_client(args.url) as (read, write, _):
        async with ClientSession(read, write) as session:
            mcp = x402MCPSession(session, client)
            await mcp.initialize()
            if args.mode == "pay":
                try:
                    out = view(await mcp.call_tool(args.tool, tool_args))
                except Exception as e:  # a guard's refusal raises in create_payment_payload
                    out = {"raised": f"{type(e).__name__}: {e}"}
            else:
                # The buyer pays once through the session, then sends a payment of its own making.
                first = await session.call_tool(args.tool, tool_args)
                required = mcp._extract_payment_required(first)
                if required is None:
                    return {"first": view(first), "no_terms": True}
                payload = await client.create_payment_payload(required)
                body = payload.model_dump(by_alias=True)
                if args.mode == "forge":
                    body["payload"]["authorization"]["to"] = OTHER_PAY_TO
                out = {"first_paid": await refused_or(session.call_tool(args.tool, tool_args, meta={"x402/payment": body}))}
                if args.mode == "replay":
                    out["replayed"] = await refused_or(session.call_tool(args.tool, tool_args, meta={"x402/payment": body}))
    if args.guard is not None:
        out["guard_decisions"] = decisions
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("tool")
    ap.add_argument("--args", default="{}")
    ap.add_argument("--mode", default="pay", choices=["pay", "replay", "forge"])
    ap.add_argument("--guard", default=None)
    ap.add_argument("--sse", action="store_true", help="x402.mcp's create_x402_mcp_client (HTTP+SSE transport)")
    ap.add_argument("--approve-holds", action="store_true", help="the guard's on_hold approves (a person said yes)")
    args = ap.parse_args()
    print(json.dumps(asyncio.run(run(args)), default=str), flush=True)


if __name__ == "__main__":
    sys.exit(main())
