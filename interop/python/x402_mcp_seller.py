"""An MCP server built with the official x402 MCP server helpers on the official MCP Python SDK (FastMCP,
Streamable HTTP, answers as event streams), paid through the local facilitator.

Tools: weather ($0.01), forecast ($0.012), premium ($0.02), all to --pay-to on eip155:8453 USDC.
--transport sse serves the older HTTP+SSE transport instead (GET /sse, POST /messages/), which x402.mcp's
create_x402_mcp_client speaks.

    python x402_mcp_seller.py --port 0 --facilitator http://127.0.0.1:4020 --pay-to 0x...

Prints "ready <port>" once it listens.
"""

import argparse
import json
import socket
import sys

import uvicorn
from mcp.server.fastmcp import FastMCP
from x402 import x402ResourceServer
from x402.http import FacilitatorConfig, HTTPFacilitatorClient
from x402.mcp import create_payment_wrapper
from x402.mechanisms.evm.exact import register_exact_evm_server
from x402.schemas import ResourceConfig

PRICES = {"weather": "$0.01", "forecast": "$0.012", "premium": "$0.02"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--facilitator", required=True)
    ap.add_argument("--pay-to", required=True)
    ap.add_argument("--transport", default="streamable", choices=["streamable", "sse"],
                    help="streamable: Streamable HTTP at /mcp; sse: the older HTTP+SSE transport at /sse")
    args = ap.parse_args()

    server = x402ResourceServer(HTTPFacilitatorClient(FacilitatorConfig(url=args.facilitator)))
    register_exact_evm_server(server, "eip155:8453")
    server.initialize()

    mcp = FastMCP("x402-python-seller", stateless_http=True, streamable_http_path="/mcp")

    def paid(name: str):
        accepts = server.build_payment_requirements(
            ResourceConfig(scheme="exact", pay_to=args.pay_to, price=PRICES[name], network="eip155:8453")
        )
        return create_payment_wrapper(server, accepts=accepts)

    @mcp.tool(name="weather", description="Weather for a city ($0.01)")
    @paid("weather")
    async def weather(city: str) -> str:
        return json.dumps({"city": city, "weather": "foggy"})

    @mcp.tool(name="forecast", description="Forecast for a city ($0.012)")
    @paid("forecast")
    async def forecast(city: str) -> str:
        return json.dumps({"city": city, "forecast": "foggy, then sunny"})

    @mcp.tool(name="premium", description="Premium report ($0.02)")
    @paid("premium")
    async def premium(city: str) -> str:
        return json.dumps({"city": city, "report": "premium"})

    sock = socket.socket()
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    app = mcp.streamable_http_app() if args.transport == "streamable" else mcp.sse_app()
    config = uvicorn.Config(app, log_level="warning")
    srv = uvicorn.Server(config)
    print(f"ready {port}", flush=True)
    srv.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
