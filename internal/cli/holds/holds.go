// Package holds is `payguard holds`: the command-line client of a running proxy's approval API (list, show,
// approve, deny), with the admin URL and token found the way the proxy sets them up (internal/apitoken).
package holds

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/proxy/view"
)

// Command is `payguard holds`.
var Command = cli.Command{Summary: "list, show, approve or deny held payments through a proxy's admin API", Run: runHolds}

// holdsClient talks to one proxy's admin API.
type holdsClient struct {
	base   string
	token  string
	client *http.Client
}

func runHolds(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		cli.WriteUsage(stderr, "holds")
		return 2
	}
	if cli.IsHelp(args[0]) {
		cli.WriteHelp(stdout, "holds", nil)
		return 0
	}
	sub := args[0]
	fs := flag.NewFlagSet("holds "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration file, for admin.listen and the token file (default: the embedded default)")
	admin := fs.String("admin", "", "admin API base URL (e.g. http://127.0.0.1:8403)")
	tokenFile := fs.String("token-file", "", "file holding the admin token")
	token := fs.String("token", "", "the admin token (visible to other users in the process list: prefer $PAYGUARD_ADMIN_TOKEN or --token-file)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	status := fs.String("status", "", "list: only holds with this status (pending, approved, denied, used, expired; all or empty: every hold)")
	by := fs.String("by", os.Getenv("USER"), "approve/deny: who decides (default $USER)")
	note := fs.String("note", "", "approve/deny: a note for the audit record")
	// Flags may come before or after the hold id.
	var rest []string
	for tail := args[1:]; ; {
		if code, done := cli.ParseFlags(fs, tail, stdout); done {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		tail = fs.Args()[1:]
	}
	wantArgs := 1
	if sub == "list" {
		wantArgs = 0
	}
	switch sub {
	case "list", "show", "approve", "deny":
	default:
		fmt.Fprintf(stderr, "payguard holds: unknown subcommand %q\n", sub)
		cli.WriteUsage(stderr, "holds")
		return 2
	}
	if len(rest) != wantArgs {
		fmt.Fprintf(stderr, "payguard holds %s: want %d hold id(s), got %d\n", sub, wantArgs, len(rest))
		cli.WriteUsage(stderr, "holds "+sub)
		return 2
	}
	c, err := newHoldsClient(*configPath, *admin, *tokenFile, *token, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "payguard holds:", err)
		return 2
	}
	var code int
	switch sub {
	case "list":
		code = c.list(*status, *asJSON, stdout, stderr)
	case "show":
		code = c.show(rest[0], *asJSON, stdout, stderr)
	default:
		code = c.resolve(rest[0], sub, *by, *note, *asJSON, stdout, stderr)
	}
	return code
}

func newHoldsClient(configPath, admin, tokenFile, token string, stderr io.Writer) (*holdsClient, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	base := admin
	if base == "" {
		base = os.Getenv("PAYGUARD_ADMIN_URL")
	}
	if base == "" {
		base = "http://" + cfg.Admin.Listen
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("admin URL %q is not http(s)://host:port", base)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		fmt.Fprintf(stderr, "payguard holds: warning: the admin token goes to %s unencrypted; use https or a tunnel\n", u.Host)
	}
	var tok string
	switch {
	case tokenFile != "":
		tok, err = apitoken.Read(tokenFile)
	case token != "":
		tok = token
	case strings.TrimSpace(os.Getenv(apitoken.AdminEnv)) != "":
		tok = strings.TrimSpace(os.Getenv(apitoken.AdminEnv))
	case cfg.Admin.TokenFile != "":
		tok, err = apitoken.Read(cfg.Admin.TokenFile)
	default:
		tok, err = apitoken.Read(apitoken.AdminFile(cfg))
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("no admin token: set $%s, --token-file, or run where the proxy's data dir is (%s)", apitoken.AdminEnv, cfg.DataDir)
		}
	}
	if err != nil {
		return nil, err
	}
	return &holdsClient{base: u.String(), token: tok, client: &http.Client{Timeout: 30 * time.Second}}, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// call sends one API request; a non-2xx answer is returned as an error with the API's message.
func (c *holdsClient) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e errbody.Error // the admin API's error body
		if json.Unmarshal(out, &e) == nil && e.Code != "" {
			return nil, fmt.Errorf("admin API: %d %s: %s", resp.StatusCode, e.Code, e.Message)
		}
		return nil, fmt.Errorf("admin API: %s", resp.Status)
	}
	return out, nil
}

func (c *holdsClient) list(status string, asJSON bool, stdout, stderr io.Writer) int {
	path := "/v1/holds"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	out, err := c.call("GET", path, nil)
	if err != nil {
		fmt.Fprintln(stderr, "payguard holds:", err)
		return 1
	}
	if asJSON {
		stdout.Write(out)
		return 0
	}
	var resp struct{ Holds []view.Hold }
	if err := json.Unmarshal(out, &resp); err != nil {
		fmt.Fprintln(stderr, "payguard holds: unreadable answer:", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tAMOUNT\tREQUEST\tPAY TO\tEXPIRES\tREASON")
	for i := len(resp.Holds) - 1; i >= 0; i-- { // newest first
		h := resp.Holds[i]
		reason := ""
		if len(h.Reasons) > 0 {
			reason = h.Reasons[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Status, dollars(h.AmountUSD), clip(h.Method+" "+h.URL, 60),
			clip(h.PayTo, 44), h.ExpiresAt.Local().Format("2006-01-02 15:04:05"), clip(reason, 60))
	}
	tw.Flush()
	if len(resp.Holds) == 0 {
		fmt.Fprintln(stderr, "no holds")
	}
	return 0
}

func (c *holdsClient) show(id string, asJSON bool, stdout, stderr io.Writer) int {
	out, err := c.call("GET", "/v1/holds/"+url.PathEscape(id), nil)
	if err != nil {
		fmt.Fprintln(stderr, "payguard holds:", err)
		return 1
	}
	return printHold(out, asJSON, stdout, stderr)
}

func (c *holdsClient) resolve(id, action, by, note string, asJSON bool, stdout, stderr io.Writer) int {
	if strings.TrimSpace(by) == "" {
		fmt.Fprintln(stderr, "payguard holds: --by is required (who decides, for the audit record)")
		return 2
	}
	out, err := c.call("POST", "/v1/holds/"+url.PathEscape(id)+"/"+action, map[string]string{"by": by, "note": note})
	if err != nil {
		fmt.Fprintln(stderr, "payguard holds:", err)
		return 1
	}
	return printHold(out, asJSON, stdout, stderr)
}

func printHold(raw []byte, asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		stdout.Write(raw)
		return 0
	}
	var h view.Hold // the one hold view: the API sends it whole
	if err := json.Unmarshal(raw, &h); err != nil {
		fmt.Fprintln(stderr, "payguard holds: unreadable answer:", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, printable(v))
		}
	}
	line("hold", h.ID)
	line("status", h.Status)
	line("request", h.Method+" "+h.URL)
	line("amount", dollars(h.AmountUSD)+" ("+h.AmountAtomic+" atomic)")
	line("pay to", h.PayTo)
	line("network", withName(h.NetworkName, h.Network))
	line("asset", withName(h.AssetName, h.Asset))
	line("description", h.Description)
	for _, r := range h.Reasons {
		line("reason", r)
	}
	if s := h.Screening; s != nil {
		line("merchant domain", s.MerchantDomain)
		line("sanctions", s.Sanctions.Status+noteOf(s.Sanctions.Note))
		for _, m := range s.Sanctions.Matches {
			line("sanctions match", fmt.Sprintf("%s (matched %q, score %.2f)", m.Name, m.MatchedName, m.Score))
		}
		if s.Domain.AgeDays != nil {
			line("domain age", fmt.Sprintf("%d days", *s.Domain.AgeDays))
		}
	}
	line("created", h.CreatedAt.Local().Format(time.RFC3339))
	line("expires", h.ExpiresAt.Local().Format(time.RFC3339))
	line("resolved by", h.ResolvedBy)
	line("note", h.Note)
	if h.ResolvedAt != nil {
		line("resolved", h.ResolvedAt.Local().Format(time.RFC3339))
	}
	line("receipt", h.ReceiptID)
	tw.Flush()
	return 0
}

// dollars shows a USD decimal with at least two decimals ("0.5" -> "$0.50"), keeping finer digits.
func dollars(usd string) string {
	if usd == "" {
		return "$?"
	}
	i, f, _ := strings.Cut(usd, ".")
	for len(f) < 2 {
		f += "0"
	}
	return "$" + i + "." + f
}

func noteOf(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

// printable replaces control characters (ESC, CR, C1...) with '?', so a seller's URL or description cannot
// move the terminal's cursor, rewrite a line or recolor it.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// clip shortens s for a table cell, printable.
func clip(s string, n int) string {
	s = printable(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// withName is a network's or asset's known name with the raw value beside it ("Base (eip155:8453)").
func withName(name, raw string) string {
	if name == "" || raw == "" {
		return raw
	}
	return name + " (" + raw + ")"
}
