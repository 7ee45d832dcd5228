// Package buildinfo says which payguard this is: the version and commit stamped at build time with
//
//	go build -ldflags "-X github.com/payguard/payguard/internal/buildinfo.Version=0.1.0 \
//	  -X github.com/payguard/payguard/internal/buildinfo.Commit=<git sha>" ./cmd/payguard
//
// (scripts/build.sh does this, and the Dockerfile calls it), falling back to the VCS facts the Go toolchain
// embeds (runtime/debug.ReadBuildInfo) when a plain `go build` or `go install` made the binary. The same facts
// are printed by `payguard version` and exported as the payguard_build_info gauge on every metrics registry.
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Stamped by the linker (-X); empty in a plain build.
var (
	Version string
	Commit  string
)

// Unknown stands for a fact neither the linker nor the toolchain recorded.
const Unknown = "unknown"

// Info is what the binary knows about its own build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
	// Modified is true when the toolchain recorded uncommitted changes in the working tree (vcs.modified).
	Modified bool `json:"modified,omitempty"`
}

// Read returns the stamped facts, filling what the linker left empty from debug.ReadBuildInfo: the main
// module's version (set by `go install ...@v1.2.3`) and the vcs.revision / vcs.modified settings.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return read(Version, Commit, bi)
}

func read(version, commit string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.modified":
				// Only when the commit came from the toolchain too: a stamped commit says what it says.
				info.Modified = commit == "" && s.Value == "true"
			}
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}

// String is the one line `payguard version` prints.
func (i Info) String() string {
	commit := i.Commit
	if i.Modified {
		commit += "+dirty"
	}
	return "payguard " + i.Version + " (commit " + commit + ", " + i.GoVersion + ")"
}

// NewCollector is the payguard_build_info gauge: always 1, with the build's facts as labels, the Prometheus
// convention for joining a version onto other series.
func NewCollector() prometheus.Collector {
	i := Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "payguard_build_info",
		Help:        "The running payguard's version, commit and Go version (always 1).",
		ConstLabels: prometheus.Labels{"version": i.Version, "commit": i.Commit, "goversion": i.GoVersion},
	})
	g.Set(1)
	return g
}
