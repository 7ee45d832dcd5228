package testreport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Suite is one row of the summary: what scripts/test.sh recorded for one suite.
type Suite struct {
	Name     string
	ExitCode int
	Counts
	Elapsed time.Duration
	Note    string // e.g. "suite skipped: python3 is not on PATH"
}

// Failed reports whether the suite failed: its runner exited non-zero or counted a failure. Either alone
// is enough, so a runner that exits 0 after printing failures, or one that dies before counting, fails.
func (s Suite) Failed() bool { return s.ExitCode != 0 || s.Counts.Failed > 0 }

// ReadSuites reads scripts/test.sh's results file: one tab-separated line per suite,
// "name exit passed failed skipped seconds [note]".
func ReadSuites(r io.Reader) ([]Suite, error) {
	var out []Suite
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.SplitN(sc.Text(), "\t", 7)
		if len(f) < 6 {
			return nil, fmt.Errorf("results line %d: want at least 6 tab-separated fields, got %d: %q", n, len(f), sc.Text())
		}
		var nums [5]int
		for i := range nums {
			v, err := strconv.Atoi(f[i+1])
			if err != nil {
				return nil, fmt.Errorf("results line %d, field %d: %v", n, i+2, err)
			}
			nums[i] = v
		}
		s := Suite{Name: f[0], ExitCode: nums[0], Counts: Counts{nums[1], nums[2], nums[3]}, Elapsed: time.Duration(nums[4]) * time.Second}
		if len(f) == 7 {
			s.Note = f[6]
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Summary writes the table that ends the run, then the names of the failed suites (if any) and, last and
// alone on its line, "N passed, N failed": the closing line CI reads. It returns the process exit code:
// 1 when any suite failed (or none ran), else 0.
func Summary(w io.Writer, suites []Suite) int {
	rule := strings.Repeat("─", 72)
	fmt.Fprintf(w, "\n%s\nsummary of scripts/test.sh\n%s\n", rule, rule)
	fmt.Fprintf(w, "%-16s %-6s %8s %8s %8s %9s\n", "suite", "result", "passed", "failed", "skipped", "time")
	var total Counts
	var elapsed time.Duration
	var failed []string
	for _, s := range suites {
		result := "ok"
		if s.Failed() {
			result = "FAIL"
			failed = append(failed, s.Name)
		}
		note := s.Note
		if s.ExitCode != 0 && s.Counts.Failed == 0 {
			note = strings.TrimSpace(fmt.Sprintf("exit status %d %s", s.ExitCode, note))
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-16s %-6s %8d %8d %8d %9s  %s", s.Name, result, s.Passed, s.Counts.Failed, s.Skipped, fmtDuration(s.Elapsed), note), " "))
		total.Passed += s.Passed
		total.Failed += s.Counts.Failed
		total.Skipped += s.Skipped
		elapsed += s.Elapsed
	}
	// A suite that failed without counting a failed test still fails the total.
	if len(failed) > 0 && total.Failed == 0 {
		total.Failed = len(failed)
	}
	result := "ok"
	if len(failed) > 0 || len(suites) == 0 {
		result = "FAIL"
	}
	fmt.Fprintf(w, "%s\n%-16s %-6s %8d %8d %8d %9s\n%s\n", rule, "total", result, total.Passed, total.Failed, total.Skipped, fmtDuration(elapsed), rule)
	if len(suites) == 0 {
		fmt.Fprintln(w, "no suite ran")
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "FAILED suites: %s\n", strings.Join(failed, " "))
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", total.Passed, total.Failed)
	if result != "ok" {
		return 1
	}
	return 0
}

func fmtDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
