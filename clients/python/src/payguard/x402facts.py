"""The x402 facts the policy needs, as the Go engine's x402 package derives them (x402/networks.go,
x402/assets.go, x402/amount.go). The decision vectors check that these tables agree with Go's."""

from __future__ import annotations

import re

SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
SOLANA_TESTNET = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z"

_V1_EVM_CHAIN_IDS = {
    "abstract-testnet": 11124, "celo": 42220, "monad": 143, "megaeth": 4326, "stable": 988,
    "stable-testnet": 2201, "flare": 14, "base": 8453, "base-sepolia": 84532, "avalanche": 43114,
    "avalanche-fuji": 43113, "polygon": 137, "polygon-amoy": 80002, "sei": 1329, "sei-testnet": 1328,
    "iotex": 4689, "abstract": 2741, "peaq": 3338, "story": 1514, "educhain": 41923,
    "skale-base-sepolia": 324705682, "ethereum": 1, "sepolia": 11155111,
}
_V1_NON_EVM = {"solana": SOLANA_MAINNET, "solana-devnet": SOLANA_DEVNET, "solana-testnet": SOLANA_TESTNET}
_CAIP2_TO_V1 = {**{f"eip155:{i}": n for n, i in _V1_EVM_CHAIN_IDS.items()}, **{i: n for n, i in _V1_NON_EVM.items()}}

KNOWN_USDC = {
    "eip155:8453": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    "eip155:84532": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    "eip155:1": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    "eip155:137": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    "eip155:80002": "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
    "eip155:43114": "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
    "eip155:43113": "0x5425890298aed601595a70AB815c96711a31Bc65",
    "eip155:42161": "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    "eip155:421614": "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d",
    "eip155:143": "0x754704Bc059F8C67012fEd69BC8A327a5aafb603",
    "eip155:1329": "0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392",
    "eip155:1328": "0x4fCF1784B31630811181f670Aea7A7bEF803eaED",
    "eip155:42220": "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
    SOLANA_MAINNET: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    SOLANA_DEVNET: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
    SOLANA_TESTNET: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
}

MAX_ATOMIC = 1_000_000_000_000_000_000
_NS = re.compile(r"[-a-z0-9]{3,8}")
_REF = re.compile(r"[-_a-zA-Z0-9]{1,32}")
_EVM_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")


def _well_formed_caip2(s: str) -> bool:
    ns, sep, ref = s.partition(":")
    if not sep or not _NS.fullmatch(ns) or not _REF.fullmatch(ref):
        return False
    if ns == "eip155":
        return re.fullmatch(r"[1-9][0-9]*", ref) is not None and int(ref) < 1 << 64
    return True


def caip2(network: str) -> str | None:
    """The CAIP-2 id of a wire network name (a v1 name or CAIP-2), or None."""
    if network in _V1_EVM_CHAIN_IDS:
        return f"eip155:{_V1_EVM_CHAIN_IDS[network]}"
    if network in _V1_NON_EVM:
        return _V1_NON_EVM[network]
    return network if _well_formed_caip2(network) else None


def v1_name(caip2_id: str) -> str | None:
    return _CAIP2_TO_V1.get(caip2_id)


def is_evm_network(network: str) -> bool:
    return network in _V1_EVM_CHAIN_IDS or (network.startswith("eip155:") and _well_formed_caip2(network))


def is_solana_network(network: str) -> bool:
    """A well-formed solana:<cluster> or a v1 Solana name (x402.IsSolanaNetwork)."""
    i = caip2(network)
    return i is not None and i.startswith("solana:")


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def is_solana_address(s: str) -> bool:
    """Base58 text of exactly 32 bytes, at most 44 characters (x402.IsSolanaAddress)."""
    if not isinstance(s, str) or s == "" or len(s) > 44:
        return False
    n = 0
    for c in s:
        d = _BASE58.find(c)
        if d < 0:
            return False
        n = n * 58 + d
    zeros = len(s) - len(s.lstrip("1"))  # each leading '1' is a zero byte
    return zeros + (n.bit_length() + 7) // 8 == 32


def is_evm_address(s: str) -> bool:
    """ "0x" and 40 hex digits (x402.IsEVMAddress: lower-case x only)."""
    return isinstance(s, str) and _EVM_ADDRESS.fullmatch(s) is not None


def same_address(a: str, b: str) -> bool:
    return a.lower() == b.lower() if is_evm_address(a) and is_evm_address(b) else a == b


def is_known_usdc(network: str, asset: str) -> bool:
    cid = caip2(network)
    usdc = KNOWN_USDC.get(cid) if cid else None
    return usdc is not None and same_address(usdc, asset)


def parse_atomic(s: str) -> tuple[int | None, str]:
    """x402.ParseAtomic: (value, "ok") or (None, "malformed" | "oversized" | "negative")."""
    if not isinstance(s, str) or s == "":
        return None, "malformed"
    if s[0] == "-":
        return None, "negative"
    if not re.fullmatch(r"[0-9]+", s):
        return None, "malformed"
    v = int(s)
    return (None, "oversized") if v > MAX_ATOMIC else (v, "ok")
