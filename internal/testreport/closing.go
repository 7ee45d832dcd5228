package testreport

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Node's test runner closes with "# pass N" lines (TAP) or "ℹ pass N" (spec reporter).
var nodeLine = regexp.MustCompile(`^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$`)

// Node reads a node --test log and returns the counts of its last closing block. A cancelled test (a
// timeout, a hook that threw) counts as failed; todo counts as skipped. ok is false when there was none.
func Node(r io.Reader) (c Counts, ok bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		m := nodeLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "tests":
			c, ok = Counts{}, true // a new closing block starts
		case "pass":
			c.Passed = n
		case "fail", "cancelled":
			c.Failed += n
		case "skipped", "todo":
			c.Skipped += n
		}
	}
	return c, ok
}

// pytest closes with "===== 12 passed, 1 skipped, 2 warnings in 3.21s =====" (with -q, without the rules).
var pytestLine = regexp.MustCompile(`^(?:=+ )?(\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected).*) in [\d.]+s(?: \([^)]*\))?(?: =+)?$`)
var pytestPart = regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)`)

// Pytest reads a pytest log and returns the counts of its last closing line: errors count as failed, an
// expected failure as passed and an unexpected pass (xpassed) as failed.
func Pytest(r io.Reader) (c Counts, ok bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		m := pytestLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		c, ok = Counts{}, true
		for _, p := range pytestPart.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(p[1])
			switch p[2] {
			case "passed", "xfailed":
				c.Passed += n
			case "failed", "error", "errors", "xpassed":
				c.Failed += n
			case "skipped":
				c.Skipped += n
			}
		}
	}
	return c, ok
}
