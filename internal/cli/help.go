package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpDoc is one command's -h, in the one shape every command shares: what it does, how to call it, its
// flags (printed from its FlagSet), and an example that runs. TestEveryHelpHasOneShape holds every command
// and subcommand to it.
type helpDoc struct {
	what    string   // one or two sentences: what the command does
	usage   []string // "payguard ..." call forms
	notes   string   // optional: exit codes, defaults, where things come from
	flags   string   // when the command has no FlagSet of its own: what stands in the Flags section
	example []string // commands that run as written
}

// helpDocs is keyed by the command's words ("sdn update"). A dispatching command's own entry describes its
// subcommands; each subcommand has its entry too.
var helpDocs = map[string]helpDoc{
	"ca": {
		what:    "Manage the proxy's interception CA: the certificate agents trust so payguard can read a 402 inside TLS.",
		usage:   []string{"payguard ca init [--out DIR]"},
		flags:   "see 'payguard ca init -h'",
		example: []string{"payguard ca init --out ./payguard-data/ca"},
	},
	"ca init": {
		what:    "Create a new ECDSA P-256 interception CA (certificate and 0600 key). The proxy makes one on first start; use this to make it ahead of time, e.g. for a Kubernetes secret.",
		usage:   []string{"payguard ca init [--out DIR]"},
		example: []string{"payguard ca init --out ./payguard-data/ca"},
	},
	"check": {
		what: "Screen a payee (legal name, wallet address, merchant domain) against the OFAC SDN list and domain facts, and print a CheckResult JSON.",
		usage: []string{
			"payguard check [--name N] [--address A] [--domain D] [--offline] [--sanctions-dir DIR] [--config FILE]",
			"payguard check --batch FILE|- [--parallel N] [--offline] [--sanctions-dir DIR] [--config FILE]",
		},
		notes: "Batch: one result per input line, in order; a bad line gives {\"line\":N,\"error\":...}.\n" +
			"Exit 0 when every query was screened (whatever the risk), 2 for bad usage or any bad input, 1 for other failures.",
		example: []string{"payguard check --offline --address 0x8589427373D6D84E98730D7795D8f6f8731FDA16"},
	},
	"config": {
		what:    "Check a payguard configuration file, or print the default one.",
		usage:   []string{"payguard config validate FILE", "payguard config default"},
		flags:   "none",
		example: []string{"payguard config default > payguard.yaml && payguard config validate payguard.yaml"},
	},
	"config validate": {
		what:    "Check a configuration file: YAML with no unknown key, every value valid. Prints ok, or every error found with its key path.",
		usage:   []string{"payguard config validate FILE"},
		flags:   "none",
		example: []string{"payguard config validate payguard.yaml"},
	},
	"config default": {
		what:    "Print the embedded default configuration (what payguard runs with when --config is not given).",
		usage:   []string{"payguard config default"},
		flags:   "none",
		example: []string{"payguard config default > payguard.yaml"},
	},
	"healthcheck": {
		what:    "Exit 0 when a payguard health endpoint answers 200 (the container image's HEALTHCHECK: distroless has no curl).",
		usage:   []string{"payguard healthcheck [--url URL] [--timeout DURATION]"},
		example: []string{"payguard healthcheck --url http://127.0.0.1:8080/health"},
	},
	"holds": {
		what: "List, show, approve or deny held payments through a running proxy's approval API.",
		usage: []string{
			"payguard holds list [--status pending|approved|denied|used|expired|all]",
			"payguard holds show ID",
			"payguard holds approve ID [--by NAME] [--note TEXT]",
			"payguard holds deny ID [--by NAME] [--note TEXT]",
		},
		notes: "The admin API is --admin, else $PAYGUARD_ADMIN_URL, else http://<admin.listen> from --config (or the\n" +
			"default configuration). The token is --token-file, else --token, else $PAYGUARD_ADMIN_TOKEN, else\n" +
			"admin.token_file, else <data_dir>/admin-token. Output is a table; --json prints the API's JSON.",
		flags:   "see 'payguard holds list -h' (every subcommand takes the same flags)",
		example: []string{"payguard holds list --status pending"},
	},
	"holds list": {
		what:    "List the holds a running proxy knows, newest first.",
		usage:   []string{"payguard holds list [--status STATUS] [--json]"},
		example: []string{"payguard holds list --status pending"},
	},
	"holds show": {
		what:    "Show one hold: the payment it holds, why, and its state.",
		usage:   []string{"payguard holds show ID [--json]"},
		example: []string{"payguard holds show hold_01J..."},
	},
	"holds approve": {
		what:    "Approve a pending hold: the same request's next 402 is let through once.",
		usage:   []string{"payguard holds approve ID [--by NAME] [--note TEXT]"},
		example: []string{"payguard holds approve hold_01J... --note 'known vendor'"},
	},
	"holds deny": {
		what:    "Deny a pending hold: the held request is answered as a block.",
		usage:   []string{"payguard holds deny ID [--by NAME] [--note TEXT]"},
		example: []string{"payguard holds deny hold_01J... --note 'not ours'"},
	},
	"agents": {
		what:    "Make credentials for an agent behind the proxy (Proxy-Authorization), with its own daily cap if wanted.",
		usage:   []string{"payguard agents add --id NAME [--proxy URL] [--cap USD]"},
		flags:   "see 'payguard agents add -h'",
		example: []string{"payguard agents add --id research --cap 5"},
	},
	"agents add": {
		what:    "Make a random secret for an agent and print it once, with its HTTP(S)_PROXY line and the agents.list entry (which holds only the secret's SHA-256). The configuration file is not edited: paste the entry, then reload (SIGHUP or POST /v1/reload).",
		usage:   []string{"payguard agents add --id NAME [--proxy URL] [--cap USD]"},
		example: []string{"payguard agents add --id research --cap 5"},
	},
	"env": {
		what:  "Print the exports that point an agent at the proxy (HTTP_PROXY, HTTPS_PROXY) and make its TLS stacks trust payguard's CA, for a shell, for Node or for Python.",
		usage: []string{"payguard env [--for shell|node|python] [--config FILE] [--data-dir DIR] [--listen ADDR]"},
		notes: "The proxy's address and the CA path come from the configuration and the data directory, as payguard proxy\n" +
			"reads them; the CA must exist (start the proxy once). The output is shell: eval it, or source a saved copy.\n" +
			"Node and Python get the variables their runtime reads and, as comments, the code the agent needs.",
		example: []string{"payguard env --for node --data-dir ./payguard-data"},
	},
	"keys": {
		what: "Manage the receipt signing keys (JWK Sets with ES256 keys).",
		usage: []string{
			"payguard keys generate --out FILE [--jwks FILE]",
			"payguard keys rotate --keys FILE [--jwks FILE]",
			"payguard keys jwks --keys FILE",
		},
		flags:   "see 'payguard keys <subcommand> -h'",
		example: []string{"payguard keys generate --out receipt-keys.json --jwks payguard-keys.json"},
	},
	"keys generate": {
		what:    "Create a new key file (JWK Set with one private ES256 key, mode 0600). Refused if the file exists: rotate instead.",
		usage:   []string{"payguard keys generate --out FILE [--jwks FILE]"},
		example: []string{"payguard keys generate --out receipt-keys.json --jwks payguard-keys.json"},
	},
	"keys rotate": {
		what:    "Add a new key to a key file; it signs from now on, and the old keys still verify.",
		usage:   []string{"payguard keys rotate --keys FILE [--jwks FILE]"},
		example: []string{"payguard keys rotate --keys receipt-keys.json --jwks payguard-keys.json"},
	},
	"keys jwks": {
		what:    "Print a key file's public key set (what /.well-known/payguard-keys.json serves).",
		usage:   []string{"payguard keys jwks --keys FILE"},
		example: []string{"payguard keys jwks --keys receipt-keys.json"},
	},
	"preflight": {
		what:    "Decide one PreflightInput (JSON on stdin or --in) with the engine the proxy uses and print the signed PreflightResult.",
		usage:   []string{"payguard preflight [--config FILE] [--rules FILE] [--keys FILE] [--offline] [--in FILE] [--sanctions-dir DIR] < input.json"},
		notes:   "Exit 0 for any decision, 2 for bad input or usage, 1 for other failures.",
		example: []string{"payguard preflight --offline --in input.json"},
	},
	"proxy": {
		what:    "Run the forward proxy sidecar that guards an agent's x402 payments: it decides every 402 before the agent sees it and forwards a paying retry only when it matches an allowed decision.",
		usage:   []string{"payguard proxy [--config FILE] [--data-dir DIR] [--listen ADDR] [--offline] [--sanctions-dir DIR] [--log-level LEVEL]"},
		notes:   "First start creates the data directory: interception CA, receipt key, approval API token, ledger.",
		example: []string{"payguard proxy --listen 127.0.0.1:8402"},
	},
	"rules": {
		what:    "Print the default rules, or check a rules file and print the effective rules.",
		usage:   []string{"payguard rules default", "payguard rules validate FILE"},
		flags:   "none",
		example: []string{"payguard rules default > rules.json && payguard rules validate rules.json"},
	},
	"rules default": {
		what:    "Print the default rules of docs/SPEC.md §3 as JSON.",
		usage:   []string{"payguard rules default"},
		flags:   "none",
		example: []string{"payguard rules default > rules.json"},
	},
	"rules validate": {
		what: "Check a rules file (JSON or YAML) over the defaults and print the effective rules; warn (on stderr) about rules that can never fire and network names payguard does not know.",
		usage: []string{
			"payguard rules validate FILE",
		},
		flags:   "none",
		example: []string{"payguard rules validate rules.yaml"},
	},
	"sdn": {
		what:    "The OFAC SDN list: download it into the cache, or describe a list.",
		usage:   []string{"payguard sdn update [--dir CACHE] [--url URL]... [--progress] [--config FILE]", "payguard sdn stats [--sanctions-dir DIR] [--json] [--config FILE]"},
		flags:   "see 'payguard sdn update -h' and 'payguard sdn stats -h'",
		example: []string{"payguard sdn update --url ./ofac-files --dir ./payguard-data/sanctions"},
	},
	"sdn update": {
		what:    "Download OFAC's SDN list (or copy it from files or a directory) into the cache, replacing the cached list only when the new one loads.",
		usage:   []string{"payguard sdn update [--dir CACHE] [--url URL]... [--progress] [--config FILE]"},
		notes:   "Without network: copy OFAC's files from elsewhere and give --url DIR, or start payguard with --sanctions-dir DIR;\nbehind an egress proxy: set screening.egress_proxy (or HTTPS_PROXY) in the configuration.",
		example: []string{"payguard sdn update --url /media/usb/ofac --dir ./payguard-data/sanctions"},
	},
	"sdn stats": {
		what:    "Describe a sanctions list: entries, names, addresses, the publication date and where it comes from.",
		usage:   []string{"payguard sdn stats [--sanctions-dir DIR] [--json] [--config FILE]"},
		example: []string{"payguard sdn stats --json"},
	},
	"serve": {
		what:    "Run the public pay-per-call screening API (/v1/check, /v1/preflight, /v1/endpoint, /mcp), paid with x402 itself, on 127.0.0.1:8080 by default.",
		usage:   []string{"payguard serve [--config FILE] [--data-dir DIR] [--offline] [--sanctions-dir DIR] [--listen ADDR] [--log-level LEVEL]"},
		notes:   "The data directory holds serve's receipt keys, ledger (trial counters) and sanctions cache.",
		example: []string{"payguard serve --config server.yaml --listen 127.0.0.1:8080"},
	},
	"store": {
		what: "Initialize or recover the ledger store.",
		usage: []string{
			"payguard store init [--config FILE]",
			"payguard store reinit --confirm [--config FILE]",
		},
		notes: "init writes a new Redis deployment's ledger epoch (once). reinit is the recovery after payguard refused\n" +
			"to run because the ledger lost what it had recorded:\n" +
			"  redis: a new ledger epoch (the Redis was wiped or restarted without persistence); restart every replica\n" +
			"  bolt:  what can still be read of the file becomes the ledger (a damaged or rolled-back payguard.db);\n" +
			"         the damaged file is kept next to it\n" +
			"Spend recorded and lost is forgotten: the day's cap counts from what the store still holds.",
		flags:   "see 'payguard store init -h'",
		example: []string{"payguard store init --config payguard.yaml"},
	},
	"store init": {
		what:    "Write a new Redis deployment's ledger epoch (once, before the first replica starts).",
		usage:   []string{"payguard store init [--config FILE]"},
		example: []string{"payguard store init --config payguard.yaml"},
	},
	"store reinit": {
		what:    "Accept a lost or damaged ledger and start again (see 'payguard store -h').",
		usage:   []string{"payguard store reinit --confirm [--config FILE]"},
		example: []string{"payguard store reinit --confirm --config payguard.yaml"},
	},
	"verify-receipt": {
		what:    "Verify a PreflightResult or a receipt JWS offline against pinned keys: a whole result is checked field by field against its signed receipt. No network request is made.",
		usage:   []string{"payguard verify-receipt --keys JWKS_OR_KEYFILE [--archival] [--max-age D] < result.json|receipt.jws", "payguard verify-receipt --keys JWKS_OR_KEYFILE --journal FILE"},
		example: []string{"payguard verify-receipt --keys payguard-keys.json --in result.json"},
	},
	"version": {
		what:    "Print the version, commit and Go version of this binary.",
		usage:   []string{"payguard version [--json]"},
		example: []string{"payguard version --json"},
	},
}

// docFor finds a command's help: its own words, else its first word's (an unknown subcommand).
func docFor(name string) (helpDoc, string) {
	if d, ok := helpDocs[name]; ok {
		return d, name
	}
	first, _, _ := strings.Cut(name, " ")
	if d, ok := helpDocs[first]; ok {
		return d, first
	}
	return helpDoc{what: "payguard " + name, usage: []string{"payguard " + name}}, name
}

// WriteHelp prints a command's help: what, Usage, notes, Flags (from fs, else the doc's flags text),
// Example.
func WriteHelp(w io.Writer, name string, fs *flag.FlagSet) {
	d, _ := docFor(name)
	fmt.Fprintf(w, "%s\n\nUsage:\n", d.what)
	for _, u := range d.usage {
		fmt.Fprintf(w, "  %s\n", u)
	}
	if d.notes != "" {
		fmt.Fprintf(w, "\n%s\n", d.notes)
	}
	fmt.Fprintln(w)
	if fs != nil {
		writeFlags(w, fs)
	} else if d.flags != "" {
		fmt.Fprintf(w, "Flags: %s\n", d.flags)
	} else {
		fmt.Fprintln(w, "Flags: none")
	}
	fmt.Fprintln(w, "\nExample:")
	for _, e := range d.example {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// WriteUsage is what bad usage prints (on stderr): the call forms and where the full help is.
func WriteUsage(w io.Writer, name string) {
	d, key := docFor(name)
	fmt.Fprintln(w, "Usage:")
	for _, u := range d.usage {
		fmt.Fprintf(w, "  %s\n", u)
	}
	fmt.Fprintf(w, "Run 'payguard %s -h' for the flags and an example.\n", key)
}
