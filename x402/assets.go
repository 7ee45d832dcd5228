package x402

import (
	"strings"

	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/x402/svm"
)

// knownUSDC lists the USDC contracts the official SDKs pay with by default, one per network, with the
// EIP-712 domain the EIP-3009 signature uses. Sources: @x402/evm@2.27.0 defaultAssets (v2), x402@1.2.0
// evm config (v1 extras: Avalanche Fuji, Polygon Amoy) and the SVM constants (Solana mints, which have no
// EIP-712 domain). A wrong domain name still yields a valid-looking signature for another address, so
// Base mainnet ("USD Coin") and Base Sepolia ("USDC") must not be confused.
var knownUSDC = []Asset{
	{Network: "eip155:8453", Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Name: "USD Coin", Version: "2"},
	{Network: "eip155:84532", Address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", Name: "USDC", Version: "2"},
	{Network: "eip155:1", Address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", Name: "USD Coin", Version: "2"},
	{Network: "eip155:137", Address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", Name: "USD Coin", Version: "2"},
	{Network: "eip155:80002", Address: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", Name: "USDC", Version: "2"},
	{Network: "eip155:43114", Address: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", Name: "USD Coin", Version: "2"},
	{Network: "eip155:43113", Address: "0x5425890298aed601595a70AB815c96711a31Bc65", Name: "USD Coin", Version: "2"},
	{Network: "eip155:42161", Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", Name: "USD Coin", Version: "2"},
	{Network: "eip155:421614", Address: "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d", Name: "USD Coin", Version: "2"},
	{Network: "eip155:143", Address: "0x754704Bc059F8C67012fEd69BC8A327a5aafb603", Name: "USDC", Version: "2"},
	{Network: "eip155:1329", Address: "0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392", Name: "USDC", Version: "2"},
	{Network: "eip155:1328", Address: "0x4fCF1784B31630811181f670Aea7A7bEF803eaED", Name: "USDC", Version: "2"},
	{Network: "eip155:42220", Address: "0xcebA9300f2b948710d2653dD7B07f33A8B32118C", Name: "USDC", Version: "2"},
	{Network: SolanaMainnet, Address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
	{Network: SolanaDevnet, Address: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"},
	{Network: SolanaTestnet, Address: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"}, // @x402/svm: "same as devnet"
}

func init() {
	for i := range knownUSDC {
		knownUSDC[i].Symbol = "USDC"
		knownUSDC[i].Decimals = 6
	}
}

// KnownUSDC returns a copy of the USDC table, for documents and tests.
func KnownUSDC() []Asset {
	return append([]Asset(nil), knownUSDC...)
}

// USDCOn returns the known USDC contract of a network given as a v1 name or CAIP-2.
func USDCOn(network string) (Asset, bool) {
	id, ok := CAIP2(network)
	if !ok {
		return Asset{}, false
	}
	for _, a := range knownUSDC {
		if a.Network == id {
			return a, true
		}
	}
	return Asset{}, false
}

// LookupUSDC reports whether asset is the known USDC contract on network (a v1 name or CAIP-2). EVM
// addresses compare case-insensitively; Solana mints (base58) compare exactly. The same address on another
// network is not a match.
func LookupUSDC(network, asset string) (Asset, bool) {
	a, ok := USDCOn(network)
	if !ok || !SameAddress(a.Address, asset) {
		return Asset{}, false
	}
	return a, true
}

// IsEVMAddress reports whether s is "0x" followed by 40 hex digits (any case): x402's form (evmaddr.IsWire).
func IsEVMAddress(s string) bool { return evmaddr.IsWire(s) }

// IsSolanaAddress reports whether s is a Solana address: the Base58 text of exactly 32 bytes.
func IsSolanaAddress(s string) bool {
	_, err := svm.ParseKey(s)
	return err == nil
}

// SameAddress compares two addresses: case-insensitively when both are EVM addresses (the EIP-55 case is
// only a checksum), exactly otherwise (base58 is case-sensitive).
func SameAddress(a, b string) bool {
	if IsEVMAddress(a) && IsEVMAddress(b) {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// CanonicalAddress returns the form used as a key: an EVM address in lower case, anything else unchanged.
func CanonicalAddress(s string) string {
	if IsEVMAddress(s) {
		return strings.ToLower(s)
	}
	return s
}

// AppendCanonicalAddress appends CanonicalAddress(s) to dst without building the string: an EVM address
// is 42 ASCII bytes, lower-cased into evmaddr's key.
func AppendCanonicalAddress(dst []byte, s string) []byte {
	if !IsEVMAddress(s) {
		return append(dst, s...)
	}
	key := evmaddr.CanonicalKey(s)
	return append(dst, key[:]...)
}

// AssetName is the name people know asset on network by: "USDC" for a known USDC contract. ok is false
// for any other asset (show the address itself).
func AssetName(network, asset string) (string, bool) {
	a, ok := LookupUSDC(network, asset)
	if !ok {
		return "", false
	}
	return a.Symbol, true
}
