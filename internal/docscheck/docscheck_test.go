package docscheck

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the repository this file is in.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func allDocs(t *testing.T) []Doc {
	t.Helper()
	root := repoRoot()
	names, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, n := range names {
		d, err := Read(root, n)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if len(docs) < 10 {
		t.Fatalf("only %d Markdown files found under %s", len(docs), root)
	}
	return docs
}

func report(t *testing.T, what string, ps []Problem) {
	t.Helper()
	if len(ps) == 0 {
		return
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  " + p.String())
	}
	t.Errorf("%d %s:%s", len(ps), what, b.String())
}

// TestDocsLinks: every relative link in every Markdown file resolves.
func TestDocsLinks(t *testing.T) {
	var ps []Problem
	for _, d := range allDocs(t) {
		ps = append(ps, Links(repoRoot(), d)...)
	}
	report(t, "broken relative links", ps)
}

// TestDocsCitedPaths: every repository path cited in a code span exists, and none is in the shared folder
// beside the repository.
func TestDocsCitedPaths(t *testing.T) {
	var ps []Problem
	for _, d := range allDocs(t) {
		ps = append(ps, Paths(repoRoot(), d)...)
	}
	report(t, "cited paths that do not exist", ps)
}

// TestDocsCitedTests: every Go test name the docs cite exists.
func TestDocsCitedTests(t *testing.T) {
	tests, err := GoTests(repoRoot())
	if err != nil {
		t.Fatal(err)
	}
	var ps []Problem
	for _, d := range allDocs(t) {
		ps = append(ps, TestNames(d, tests)...)
	}
	report(t, "cited Go tests that do not exist", ps)
}

// TestDocsCommands: every `payguard ...` command written in the docs names a real command, subcommand and
// flags, as the binary built from this tree reports them in its help.
func TestDocsCommands(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payguard")
	build := exec.Command("go", "build", "-o", bin, "./cmd/payguard")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cli, err := ReadCLI(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !cli.Flags["proxy"]["listen"] || !cli.Subs["sdn"]["update"] || !cli.Flags["sdn update"]["url"] {
		t.Fatalf("the binary's help was not read: %+v", cli)
	}
	var ps []Problem
	for _, d := range allDocs(t) {
		ps = append(ps, Commands(d, cli)...)
	}
	report(t, "payguard commands in the docs that the binary does not have", ps)
}

// TestCheckerFindsDrift: the checks themselves, on a document with one of each kind of drift (a check that
// finds nothing proves nothing).
func TestCheckerFindsDrift(t *testing.T) {
	d := Doc{Path: "docs/drift.md", Lines: []string{
		"See [the store figures](benchmarks/stor.md) and [the spec](SPEC.md#3-rules).",
		"Written in `x402/usdc.go`; the list is `shared/data/ofac/sdn.csv`; real: `x402/assets.go`.",
		"Proved by `TestNoSuchThing` and TestEveryHelpHasOneShape.",
		"```sh",
		"payguard preflight --config payguard.yaml --no-such-flag < in.json",
		"PAYGUARD_DATA_DIR=/x payguard sdn updat",
		"$ payguard nosuch",
		"payguard 710 1.2 ms   (a table row)",
		"go test ./proxy -run 'TestFleet' -bench 'BenchmarkNope'",
		"```",
		"Run `payguard proxy --listen 127.0.0.1:0` or `payguard proxy --lisen x`.",
	}}
	root := repoRoot()
	links := Links(root, d)
	if len(links) != 1 || !strings.Contains(links[0].Msg, "docs/benchmarks/stor.md does not exist") {
		t.Errorf("links: %v", links)
	}
	paths := Paths(root, d)
	if len(paths) != 2 || !strings.Contains(paths[0].Msg, "`x402/usdc.go`") || !strings.Contains(paths[1].Msg, "shared folder") {
		t.Errorf("paths: %v", paths)
	}
	tests := map[string]bool{"TestEveryHelpHasOneShape": true, "TestFleetSharesObservations": true}
	names := TestNames(d, tests)
	if len(names) != 2 || !strings.Contains(names[0].Msg, "TestNoSuchThing") || !strings.Contains(names[1].Msg, "BenchmarkNope") {
		t.Errorf("test names: %v", names)
	}
	cli := &CLI{
		Flags: map[string]map[string]bool{"preflight": {"config": true}, "sdn": {}, "sdn update": {"url": true}, "proxy": {"listen": true}},
		Subs:  map[string]map[string]bool{"sdn": {"update": true}},
	}
	cmds := Commands(d, cli)
	var got []string
	for _, p := range cmds {
		got = append(got, p.String())
	}
	want := []string{"--no-such-flag", `no subcommand "updat"`, "`payguard nosuch`", "no flag --lisen"}
	if len(cmds) != len(want) {
		t.Fatalf("commands: %d problems, want %d:\n%s", len(cmds), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %d = %s, want %q", i, got[i], w)
		}
	}
}

// A path the repository makes (git ignores it: a virtualenv a setup step creates) may be cited before it
// exists; a path that is neither there nor ignored is still drift.
func TestMadePathsMayBeCited(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	d := Doc{Path: "x.md", Lines: []string{"made by setup: `interop/.venv/bin/python`", "drift: `interop/no-such-file.mjs`"}}
	got := Paths(root, d)
	if len(got) != 1 || got[0].Line != 2 {
		t.Fatalf("want only line 2 refused, got %+v", got)
	}
}
