package sanctions

import (
	"github.com/payguard/payguard/internal/realdata"

	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssChildEnv makes the test binary a process that only loads the benchmark list and reports its memory
// (see BenchmarkListRSS): RSS is a property of a whole process, so it is measured in one that does nothing
// else.
const rssChildEnv = "PAYGUARD_SANCTIONS_RSS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(rssChildEnv) == "1" {
		os.Exit(rssChild())
	}
	os.Exit(m.Run())
}

// rssChild prints "baseline_kb=B rss_kb=R peak_kb=P entries=N": resident memory before loading, after
// loading and indexing (after a GC that returns freed memory to the OS), and the process's peak.
func rssChild() int {
	dir, err := realdata.Extract()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtime.GC()
	debug.FreeOSMemory()
	baseline, _, err := procStatus()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sdn, err := os.Open(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	alt, err := os.Open(filepath.Join(dir, "alt_add_comments_2025-12", "alt.csv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, _, err := ParseCSV(CSVFiles{SDN: sdn, Alt: alt}, time.Time{}, "rss")
	sdn.Close()
	alt.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtime.GC()
	debug.FreeOSMemory()
	rss, peak, err := procStatus()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("baseline_kb=%d rss_kb=%d peak_kb=%d entries=%d\n", baseline, rss, peak, l.Len())
	runtime.KeepAlive(l)
	return 0
}

// procStatus reads VmRSS and VmHWM (peak RSS) of this process, in kB.
func procStatus() (rss, peak int64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/self/status %s: %v", k, err)
		}
		if k == "VmRSS" {
			rss = n
		} else {
			peak = n
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/self/status: no VmRSS")
	}
	return rss, peak, sc.Err()
}

// BenchmarkListRSS runs a process (this test binary, in rssChild mode) that only loads and indexes the
// benchmark list, and reports its resident memory: rss-MB after loading, index-MB = rss-MB minus the
// process's RSS before loading, peak-MB the high-water mark while parsing. Linux only (/proc).
func BenchmarkListRSS(b *testing.B) {
	var baseline, rss, peak float64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rssChildEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("child: %v: %s", err, out)
		}
		var bk, rk, pk, n int64
		if _, err := fmt.Sscanf(string(out), "baseline_kb=%d rss_kb=%d peak_kb=%d entries=%d", &bk, &rk, &pk, &n); err != nil || n == 0 {
			b.Fatalf("child output %q: %v", out, err)
		}
		baseline, rss, peak = float64(bk)/1024, float64(rk)/1024, float64(pk)/1024
	}
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(rss-baseline, "index-MB")
	b.ReportMetric(peak, "peak-MB")
}
