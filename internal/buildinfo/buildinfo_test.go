package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestReadPrefersTheStampedFacts(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v9.9.9"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "toolchainsha"}, {Key: "vcs.modified", Value: "true"}}}
	got := read("1.2.3", "stampedsha", bi)
	want := Info{Version: "1.2.3", Commit: "stampedsha", GoVersion: "go1.99"}
	if got != want {
		t.Fatalf("read = %+v, want %+v", got, want)
	}
}

func TestReadFallsBackToTheToolchain(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	got := read("", "", bi)
	want := Info{Version: "v1.4.0", Commit: "abc123", GoVersion: "go1.99", Modified: true}
	if got != want {
		t.Fatalf("read = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "payguard v1.4.0 (commit abc123+dirty, go1.99)" {
		t.Fatalf("String = %q", s)
	}
}

func TestReadSaysUnknownRatherThanGuessing(t *testing.T) {
	got := read("", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}})
	if got.Version != "devel" || got.Commit != Unknown || got.GoVersion == "" {
		t.Fatalf("read = %+v", got)
	}
	if got := read("", "", nil); got.Version != "devel" || got.Commit != Unknown {
		t.Fatalf("read(nil) = %+v", got)
	}
}

func TestCollectorExportsTheFactsAsLabels(t *testing.T) {
	oldV, oldC := Version, Commit
	Version, Commit = "7.7.7", "feedbeef"
	defer func() { Version, Commit = oldV, oldC }()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector())
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "payguard_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, %v", mfs, err)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": "7.7.7", "commit": "feedbeef", "goversion": Read().GoVersion}
	if len(labels) != len(want) || m.GetGauge().GetValue() != 1 {
		t.Fatalf("metric = %v", m)
	}
	for k, v := range want {
		if labels[k] != v {
			t.Fatalf("label %s = %q, want %q", k, labels[k], v)
		}
	}
}
