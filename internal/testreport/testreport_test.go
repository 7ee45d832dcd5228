package testreport

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestGoRendersFailuresWithoutRedisNoise: a failing test's output (its subtest's message included) is shown,
// go-redis's dial line is not, and a skipped test is listed with its reason.
func TestGoRendersFailuresWithoutRedisNoise(t *testing.T) {
	var out bytes.Buffer
	c, err := Go(open(t, "fail.json"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counts{Passed: 1, Failed: 1, Skipped: 1}) {
		t.Errorf("counts %+v, want 1 passed, 1 failed, 1 skipped", c)
	}
	s := out.String()
	for _, want := range []string{"FAIL example.com/gt", "--- TestBad", "want 1, got 2", "TestSkip: a_test.go:4: no chromium here", "1 lines of go-redis dial errors"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "connection refused") {
		t.Errorf("go-redis's dial error was shown:\n%s", s)
	}
	if strings.Contains(s, "TestOK") {
		t.Errorf("a passing test's output was shown:\n%s", s)
	}
}

// TestGoCountsABuildFailure: a package that does not compile has no failing test but fails the suite, with
// the compiler's message shown.
func TestGoCountsABuildFailure(t *testing.T) {
	var out bytes.Buffer
	c, err := Go(open(t, "buildfail.json"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Failed != 1 {
		t.Errorf("counts %+v, want 1 failed", c)
	}
	if !strings.Contains(out.String(), "cannot use \"s\"") {
		t.Errorf("compiler message not shown:\n%s", out.String())
	}
}

// TestGoCountsAnUnfinishedPackage: when go test dies mid-package (killed, a timeout that lost its events)
// the package counts as failed and its running tests are named.
func TestGoCountsAnUnfinishedPackage(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestHang"}
`
	var out bytes.Buffer
	c, _ := Go(strings.NewReader(in), &out)
	if c.Failed != 1 || c.Passed != 1 {
		t.Errorf("counts %+v, want 1 passed 1 failed", c)
	}
	if !strings.Contains(out.String(), "still running: TestHang") {
		t.Errorf("output: %s", out.String())
	}
}

func TestNodeAndPytestClosingLines(t *testing.T) {
	tap := "ok 1 - a\n# tests 5\n# suites 0\n# pass 3\n# fail 1\n# cancelled 1\n# skipped 0\n# todo 0\n"
	if c, ok := Node(strings.NewReader(tap)); !ok || c != (Counts{3, 2, 0}) {
		t.Errorf("TAP: %+v %v", c, ok)
	}
	spec := "✔ a (1ms)\nℹ tests 2\nℹ pass 1\nℹ fail 0\nℹ cancelled 0\nℹ skipped 1\nℹ todo 0\n"
	if c, ok := Node(strings.NewReader(spec)); !ok || c != (Counts{1, 0, 1}) {
		t.Errorf("spec: %+v %v", c, ok)
	}
	if _, ok := Node(strings.NewReader("npm ERR! missing script: test\n")); ok {
		t.Error("counts found in a log without a closing block")
	}
	py := "....s.F\n=== FAILURES ===\n==== 1 failed, 5 passed, 1 skipped, 2 warnings, 1 error in 3.21s ====\n"
	if c, ok := Pytest(strings.NewReader(py)); !ok || c != (Counts{5, 2, 1}) {
		t.Errorf("pytest: %+v %v", c, ok)
	}
	if c, ok := Pytest(strings.NewReader("........\n8 passed in 0.52s\n")); !ok || c != (Counts{8, 0, 0}) {
		t.Errorf("pytest -q: %+v %v", c, ok)
	}
}

// TestSummaryFailsOnAnyFailure: the table's last line is the plain "N passed, N failed" CI reads, and the
// exit code is 1 when a suite failed, even one that exited non-zero without counting a failed test.
func TestSummaryFailsOnAnyFailure(t *testing.T) {
	var out bytes.Buffer
	ok := Summary(&out, []Suite{{Name: "go", Counts: Counts{Passed: 10, Skipped: 1}, Elapsed: 75 * time.Second}, {Name: "js", Counts: Counts{Passed: 4}}})
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if ok != 0 || lines[len(lines)-1] != "14 passed, 0 failed" {
		t.Errorf("exit %d, output:\n%s", ok, out.String())
	}
	out.Reset()
	bad := Summary(&out, []Suite{{Name: "go", Counts: Counts{Passed: 10}}, {Name: "chart", ExitCode: 1}})
	lines = strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if bad != 1 || lines[len(lines)-1] != "10 passed, 1 failed" || !strings.Contains(out.String(), "FAILED suites: chart") {
		t.Errorf("exit %d, output:\n%s", bad, out.String())
	}
	if Summary(&out, nil) != 1 {
		t.Error("a run with no suite passed")
	}
}

// TestTestScriptEndsWithTheTable runs scripts/test.sh on its cheapest suite: the last screen is the summary
// table and the very last line is "N passed, N failed" alone (what CI reads).
func TestTestScriptEndsWithTheTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds testreport and runs scripts/test.sh (-short)")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	cmd := exec.Command("bash", "scripts/test.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PAYGUARD_TEST_SUITES=standalone", "PAYGUARD_TEST_LOGS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 8 {
		t.Fatalf("output too short:\n%s", out)
	}
	tail := strings.Join(lines[len(lines)-8:], "\n")
	if !regexp.MustCompile(`(?m)^suite +result +passed +failed +skipped +time$`).MatchString(tail) ||
		!regexp.MustCompile(`(?m)^standalone +ok +1 +0 +0 +\d+s$`).MatchString(tail) {
		t.Errorf("the run does not end with the summary table:\n%s", tail)
	}
	if last := lines[len(lines)-1]; last != "1 passed, 0 failed" {
		t.Errorf("last line %q, want %q", last, "1 passed, 0 failed")
	}
}
