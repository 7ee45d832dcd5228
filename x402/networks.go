package x402

import (
	"strconv"
	"strings"
)

// CAIP-2 ids of the Solana clusters the SDKs know (the genesis hash prefix).
const (
	SolanaMainnet = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	SolanaDevnet  = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	SolanaTestnet = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z"
)

// v1EVMChainIDs is the v1 SDK's EVM_NETWORK_CHAIN_ID_MAP (x402@1.2.0) and the further v1 names @x402/evm
// (2.27) registers for its v1 client: the names a v1 challenge may use.
var v1EVMChainIDs = map[string]uint64{
	"abstract-testnet":   11124,
	"celo":               42220,
	"monad":              143,
	"megaeth":            4326,
	"stable":             988,
	"stable-testnet":     2201,
	"flare":              14,
	"base":               8453,
	"base-sepolia":       84532,
	"avalanche":          43114,
	"avalanche-fuji":     43113,
	"polygon":            137,
	"polygon-amoy":       80002,
	"sei":                1329,
	"sei-testnet":        1328,
	"iotex":              4689,
	"abstract":           2741,
	"peaq":               3338,
	"story":              1514,
	"educhain":           41923,
	"skale-base-sepolia": 324705682,
	"ethereum":           1,
	"sepolia":            11155111,
}

// v1NonEVM maps the v1 names of non-EVM networks to CAIP-2.
var v1NonEVM = map[string]string{
	"solana":         SolanaMainnet,
	"solana-devnet":  SolanaDevnet,
	"solana-testnet": SolanaTestnet, // @x402/svm 2.27 registers it for its v1 client
}

// caip2ToV1 is the reverse of both tables, built once.
var caip2ToV1 = func() map[string]string {
	m := make(map[string]string, len(v1EVMChainIDs)+len(v1NonEVM))
	for name, id := range v1EVMChainIDs {
		m["eip155:"+strconv.FormatUint(id, 10)] = name
	}
	for name, id := range v1NonEVM {
		m[id] = name
	}
	return m
}()

// CAIP2 returns the CAIP-2 id of a network as it appears on the wire. A v1 name ("base") is mapped with
// the v1 SDK's table; a well-formed CAIP-2 id is returned as is. Names are matched exactly (the SDKs do not
// fold case). An EVM id must be written canonically ("eip155:" and a decimal chain id without a leading
// zero) so that two spellings of one chain can never pass as two networks.
func CAIP2(network string) (string, bool) {
	if id, ok := v1EVMChainIDs[network]; ok {
		return "eip155:" + strconv.FormatUint(id, 10), true
	}
	if id, ok := v1NonEVM[network]; ok {
		return id, true
	}
	if wellFormedCAIP2(network) {
		return network, true
	}
	return "", false
}

// V1Name returns the v1 network name of a CAIP-2 id ("eip155:8453" → "base"), if v1 has one.
func V1Name(caip2 string) (string, bool) {
	name, ok := caip2ToV1[caip2]
	return name, ok
}

// IsEVMNetwork reports whether network is an EVM chain: a canonical eip155:<chain id> or a v1 EVM name.
func IsEVMNetwork(network string) bool {
	if _, ok := v1EVMChainIDs[network]; ok {
		return true
	}
	return strings.HasPrefix(network, "eip155:") && wellFormedCAIP2(network)
}

// wellFormedCAIP2 checks the CAIP-2 grammar: namespace [-a-z0-9]{3,8}, ":", reference [-_a-zA-Z0-9]{1,32}.
// For eip155 the reference must also be a canonical decimal chain id.
func wellFormedCAIP2(s string) bool {
	ns, ref, ok := strings.Cut(s, ":")
	if !ok || len(ns) < 3 || len(ns) > 8 || len(ref) < 1 || len(ref) > 32 {
		return false
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	if ns == "eip155" {
		if ref[0] == '0' {
			return false
		}
		if _, err := strconv.ParseUint(ref, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// IsSolanaNetwork reports whether network is a Solana cluster: a well-formed solana:<genesis hash prefix> or
// a v1 Solana name ("solana", "solana-devnet").
func IsSolanaNetwork(network string) bool {
	id, ok := CAIP2(network)
	return ok && strings.HasPrefix(id, "solana:")
}

// networkNames are the names people know the common networks by, for what a person reads (the console,
// hold notifications); programs use the CAIP-2 id.
var networkNames = map[string]string{
	"eip155:8453":     "Base",
	"eip155:84532":    "Base Sepolia",
	"eip155:1":        "Ethereum",
	"eip155:11155111": "Ethereum Sepolia",
	"eip155:137":      "Polygon",
	"eip155:80002":    "Polygon Amoy",
	"eip155:43114":    "Avalanche",
	"eip155:43113":    "Avalanche Fuji",
	"eip155:42161":    "Arbitrum One",
	"eip155:421614":   "Arbitrum Sepolia",
	"eip155:42220":    "Celo",
	"eip155:1329":     "Sei",
	"eip155:1328":     "Sei Testnet",
	"eip155:143":      "Monad",
	SolanaMainnet:     "Solana",
	SolanaDevnet:      "Solana Devnet",
	SolanaTestnet:     "Solana Testnet",
}

// NetworkName is the name people know network (a v1 name or CAIP-2) by: "Base" for eip155:8453 or "base".
// ok is false for a network without one (show the id itself).
func NetworkName(network string) (string, bool) {
	id, ok := CAIP2(network)
	if !ok {
		return "", false
	}
	name, ok := networkNames[id]
	return name, ok
}
