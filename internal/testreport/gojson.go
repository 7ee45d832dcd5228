// Package testreport turns scripts/test.sh's run into something a person can read: `go test -json` rendered
// as one line per package with only the failing tests' output (go-redis's dial errors left out of it), the
// counts each other runner prints in its closing lines, and the summary table that ends the run.
package testreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Counts is one suite's tally.
type Counts struct {
	Passed, Failed, Skipped int
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64
	Output     string
}

// noise matches the lines go-redis's standard logger writes when a test points it at a Redis that is not
// there on purpose (the fail-closed tests): "redis: 2026/11/27 09:00:00 pool.go:...: ... dial tcp ...".
var noise = regexp.MustCompile(`^redis: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d .*(dial|connect|connection refused|i/o timeout|EOF)`)

// IsNoise reports whether a line of test output is go-redis's dial chatter.
func IsNoise(line string) bool { return noise.MatchString(strings.TrimRight(line, "\n")) }

type testState struct {
	output []string
	done   bool
}

type testLine struct{ test, text string }

type pkgState struct {
	name    string
	tests   map[string]*testState
	order   []string
	output  []string   // output not attributed to a test (package level)
	lines   []testLine // every test's output in the order it came
	counts  Counts
	elapsed float64
}

// Go reads `go test -json` from r and writes, as each package finishes, one line for it ("ok"/"FAIL", the
// package, its time and counts), followed for a failing package by the output of each failing test (or the
// package's own output when no test failed: a build error, a panic outside a test, a timeout). Top-level
// tests are counted; subtests are shown only inside a failing test's output. Skipped tests are listed with
// their reason at the end, so a skip is never silent. Lines that are not JSON (go vet's or the toolchain's)
// are passed through.
func Go(r io.Reader, w io.Writer) (Counts, error) {
	pkgs := map[string]*pkgState{}
	get := func(name string) *pkgState {
		p := pkgs[name]
		if p == nil {
			p = &pkgState{name: name, tests: map[string]*testState{}}
			pkgs[name] = p
		}
		return p
	}
	var total Counts
	var skips []string
	hidden := 0
	builds := map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch e.Action {
		case "build-output":
			builds[e.ImportPath] = append(builds[e.ImportPath], e.Output)
			continue
		case "build-fail":
			fmt.Fprintf(w, "FAIL build %s\n", e.ImportPath)
			for _, o := range builds[e.ImportPath] {
				fmt.Fprintf(w, "    %s", o)
			}
			continue
		}
		if e.Package == "" {
			continue
		}
		p := get(e.Package)
		if e.Test == "" {
			switch e.Action {
			case "output":
				if IsNoise(e.Output) {
					hidden++
				} else {
					p.output = append(p.output, e.Output)
				}
			case "pass", "fail", "skip":
				p.elapsed = e.Elapsed
				failedTests := p.render(w, e.Action, &hidden)
				if e.Action == "fail" && failedTests == 0 {
					p.counts.Failed++ // the package failed outside any test: count it once
				}
				for _, name := range p.order {
					if st := p.tests[name]; st.done && strings.HasPrefix(lastAction(st), "skip") {
						skips = append(skips, fmt.Sprintf("%s %s: %s", e.Package, name, skipReason(st.output)))
					}
				}
				total.Passed += p.counts.Passed
				total.Failed += p.counts.Failed
				total.Skipped += p.counts.Skipped
				delete(pkgs, e.Package)
			}
			continue
		}
		st := p.tests[e.Test]
		if st == nil {
			st = &testState{}
			p.tests[e.Test] = st
			p.order = append(p.order, e.Test)
		}
		switch e.Action {
		case "output":
			st.output = append(st.output, e.Output)
			p.lines = append(p.lines, testLine{e.Test, e.Output})
		case "pass", "fail", "skip":
			st.output = append(st.output, "\x00"+e.Action)
			st.done = true
			if strings.Contains(e.Test, "/") {
				continue
			}
			switch e.Action {
			case "pass":
				p.counts.Passed++
			case "fail":
				p.counts.Failed++
			case "skip":
				p.counts.Skipped++
			}
		}
	}
	// Packages that never finished (go test was killed): say so, they count as failed.
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := pkgs[n]
		fmt.Fprintf(w, "FAIL %s (no result: the run ended before the package finished)\n", n)
		for _, name := range p.order {
			if !p.tests[name].done {
				fmt.Fprintf(w, "    still running: %s\n", name)
			}
		}
		p.counts.Failed++
		total.Passed += p.counts.Passed
		total.Failed += p.counts.Failed
		total.Skipped += p.counts.Skipped
	}
	if len(skips) > 0 {
		fmt.Fprintf(w, "skipped Go tests (%d):\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d lines of go-redis dial errors from tests that point it at an absent Redis on purpose were left out)\n", hidden)
	}
	return total, sc.Err()
}

func lastAction(st *testState) string {
	for i := len(st.output) - 1; i >= 0; i-- {
		if strings.HasPrefix(st.output[i], "\x00") {
			return st.output[i][1:]
		}
	}
	return ""
}

// render prints the package line and, when it failed, what explains the failure; it returns the number of
// failed top-level tests.
func (p *pkgState) render(w io.Writer, action string, hidden *int) int {
	status := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "ok  "}[action]
	c := p.counts
	detail := fmt.Sprintf("%d passed", c.Passed)
	if c.Failed > 0 {
		detail += fmt.Sprintf(", %d failed", c.Failed)
	}
	if c.Skipped > 0 {
		detail += fmt.Sprintf(", %d skipped", c.Skipped)
	}
	if c.Passed+c.Failed+c.Skipped == 0 {
		detail = "no tests"
	}
	fmt.Fprintf(w, "%s %-48s %7s  %s\n", status, p.name, (time.Duration(p.elapsed * float64(time.Second))).Round(10*time.Millisecond), detail)
	if action != "fail" {
		return 0
	}
	failed := 0
	for _, n := range p.order {
		st := p.tests[n]
		if strings.Contains(n, "/") || lastAction(st) != "fail" {
			continue
		}
		failed++
		fmt.Fprintf(w, "  --- %s\n", n)
		writeOutput(w, p.subtestOutput(n), hidden)
	}
	if failed == 0 {
		writeOutput(w, p.output, hidden)
	}
	return failed
}

// subtestOutput is a test's output with its subtests' output in the order the events came (go test -json
// attributes a subtest's lines to the subtest).
func (p *pkgState) subtestOutput(top string) []string {
	var out []string
	for _, l := range p.lines {
		if l.test == top || strings.HasPrefix(l.test, top+"/") {
			out = append(out, l.text)
		}
	}
	return out
}

func writeOutput(w io.Writer, lines []string, hidden *int) {
	for _, l := range lines {
		if strings.HasPrefix(l, "\x00") {
			continue
		}
		if IsNoise(l) {
			*hidden++
			continue
		}
		fmt.Fprintf(w, "    %s", l)
		if !strings.HasSuffix(l, "\n") {
			fmt.Fprintln(w)
		}
	}
}

// skipReason is the line a skipped test logged just before its "--- SKIP" line.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "\x00") || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		return l
	}
	return "(no reason given)"
}
