package screen

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/screening/sanctions"
)

// SDN is `payguard sdn`.
var SDN = cli.Command{Summary: "OFAC SDN list: download it (sdn update) or describe it (sdn stats)", Run: runSDN}

func runSDN(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && cli.IsHelp(args[0]) {
		cli.WriteHelp(stdout, "sdn", nil)
		return 0
	}
	if len(args) > 0 {
		switch args[0] {
		case "update":
			return runSDNUpdate(args[1:], stdout, stderr)
		case "stats":
			return runSDNStats(args[1:], stdout, stderr)
		}
	}
	cli.WriteUsage(stderr, "sdn")
	return 2
}

// urlList is a repeatable --url flag.
type urlList []string

func (u *urlList) String() string     { return strings.Join(*u, ",") }
func (u *urlList) Set(v string) error { *u = append(*u, v); return nil }

func runSDNUpdate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sdn update", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file (default: the embedded default)")
	dir := fs.String("dir", "", "cache directory (default: screening.sanctions.cache_dir)")
	var urls urlList
	fs.Var(&urls, "url", "a file to fetch, named by its last path element (sdn.csv, alt.csv, add.csv, sdn_comments.csv, sdn.xml): http(s) URL, file:// URL or local path; or a local directory holding such files; repeatable (default: screening.sanctions.sources)")
	progress := fs.Bool("progress", false, "show download progress on stderr even when it is not a terminal")
	minEntries := fs.Int("min-entries", sanctions.DefaultMinEntries, "refuse a list with fewer entries")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard sdn update: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "payguard sdn update:", err)
		return 2
	}
	if *dir == "" {
		*dir = cfg.Screening.Sanctions.CacheDir
	}
	if len(urls) == 0 {
		urls = cfg.Screening.Sanctions.Sources
	}
	// In the agent's shell HTTPS_PROXY is the proxy itself: never download through it (internal/egress).
	if err := cli.Egress(cfg, stderr); err != nil {
		fmt.Fprintln(stderr, "payguard sdn update:", err)
		return 2
	}
	rcfg := sanctions.RefresherConfig{
		URLs: urls, CacheDir: *dir, MinEntries: *minEntries,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if *progress || isTerminal(stderr) {
		rcfg.Progress = func(file string, done, total int64) {
			if total > 0 {
				fmt.Fprintf(stderr, "\r%s: %d/%d bytes (%d%%)", file, done, total, done*100/total)
			} else {
				fmt.Fprintf(stderr, "\r%s: %d bytes", file, done)
			}
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	screener := sanctions.NewScreener(nil)
	ref, err := sanctions.NewRefresher(screener, rcfg)
	if err != nil {
		fmt.Fprintln(stderr, "payguard sdn update:", err)
		return 2
	}
	// The cached copy makes the download conditional and is the reference for the shrink check.
	_ = ref.LoadCache()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	before := screener.List()
	if err := ref.Refresh(ctx); err != nil {
		fmt.Fprintln(stderr, "\npayguard sdn update:", err)
		writeSDNUpdateHelp(stderr, err, urls, *dir)
		return 1
	}
	l := screener.List()
	state := "updated"
	if l == before {
		state = "not modified"
	}
	fmt.Fprintf(stdout, "%s: %d entries, %d addresses, data as of %s (%s), cached in %s\n",
		state, l.Len(), len(l.Addresses()), l.DataAsOf().UTC().Format(time.RFC3339), l.DataAsOfSource(), *dir)
	if l.DataAsOfSource() == sanctions.AsOfFileModTime {
		fmt.Fprintln(stderr, "payguard sdn update: warning: "+sanctions.FileModTimeWarning)
	}
	return 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// sdnStats is the output of `payguard sdn stats`.
type sdnStats struct {
	Source               string         `json:"source"`
	DataAsOf             time.Time      `json:"data_as_of"`
	DataAsOfSource       string         `json:"data_as_of_source"`
	Entries              int            `json:"entries"`
	EntriesByType        map[string]int `json:"entries_by_type"`
	Aliases              int            `json:"aliases"`
	WeakAliases          int            `json:"weak_aliases"`
	EntriesWithAliases   int            `json:"entries_with_aliases"`
	Addresses            int            `json:"addresses"`
	AddressesByCurrency  map[string]int `json:"addresses_by_currency"`
	EntriesWithAddresses int            `json:"entries_with_addresses"`
	Warnings             int            `json:"warnings"`
}

func runSDNStats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sdn stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file (default: the embedded default)")
	dir := fs.String("sanctions-dir", "", "directory with OFAC SDN data (sdn.csv set or SDN.XML); default: screening.sanctions.cache_dir")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard sdn stats: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *dir == "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			fmt.Fprintln(stderr, "payguard sdn stats:", err)
			return 2
		}
		*dir = cfg.Screening.Sanctions.CacheDir
	}
	l, err := sanctions.LoadDir(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "payguard sdn stats:", err)
		return 1
	}
	st := sdnStats{Source: l.Source(), DataAsOf: l.DataAsOf().UTC(), DataAsOfSource: l.DataAsOfSource(), Entries: l.Len(), EntriesByType: map[string]int{},
		AddressesByCurrency: map[string]int{}, Warnings: len(l.Warnings())}
	for _, e := range l.Entries() {
		st.EntriesByType[e.Type]++
		if len(e.Aliases) > 0 {
			st.EntriesWithAliases++
		}
		for _, a := range e.Aliases {
			if a.Weak {
				st.WeakAliases++
			} else {
				st.Aliases++
			}
		}
		if len(e.Addresses) > 0 {
			st.EntriesWithAddresses++
		}
	}
	for _, a := range l.Addresses() {
		st.AddressesByCurrency[a.Currency]++
		st.Addresses++
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "source:      %s\ndata as of:  %s (%s)\nentries:     %d\n", st.Source, st.DataAsOf.Format(time.RFC3339), st.DataAsOfSource, st.Entries)
	for _, k := range sortedKeys(st.EntriesByType) {
		fmt.Fprintf(stdout, "  %-12s %d\n", k, st.EntriesByType[k])
	}
	fmt.Fprintf(stdout, "aliases:     %d strong, %d weak, on %d entries\n", st.Aliases, st.WeakAliases, st.EntriesWithAliases)
	fmt.Fprintf(stdout, "addresses:   %d on %d entries\n", st.Addresses, st.EntriesWithAddresses)
	for _, k := range sortedKeys(st.AddressesByCurrency) {
		fmt.Fprintf(stdout, "  %-12s %d\n", k, st.AddressesByCurrency[k])
	}
	fmt.Fprintf(stdout, "warnings:    %d\n", st.Warnings)
	return 0
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
