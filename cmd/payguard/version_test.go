package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/buildinfo"
)

func TestVersionCommandAndFlag(t *testing.T) {
	want := buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errb bytes.Buffer
		if code := runMain(args, nil, &out, &errb); code != 0 || out.String() != want {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want %q", args, code, out.String(), errb.String(), want)
		}
	}
	var out bytes.Buffer
	if code := runMain([]string{"version", "-h"}, nil, &out, &out); code != 0 {
		t.Errorf("version -h: code %d", code)
	}
}

// The linker stamp is the path the Dockerfile and scripts/build.sh take: build the binary with their -X flags and
// ask it. Without their -trimpath, so the compile is the one the fleet test's build already cached (only the link
// differs): a -trimpath build recompiles every package, minutes on a busy 2-core machine.
func TestVersionIsStampedByTheLinker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "payguard")
	pkg := "github.com/payguard/payguard/internal/buildinfo"
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X "+pkg+".Version=9.8.7 -X "+pkg+".Commit=0123abcd", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got buildinfo.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Version != "9.8.7" || got.Commit != "0123abcd" || got.GoVersion != runtime.Version() {
		t.Fatalf("stamped binary says %+v", got)
	}
	line, _ := exec.Command(bin, "--version").Output()
	if !strings.HasPrefix(string(line), "payguard 9.8.7 (commit 0123abcd, go") {
		t.Fatalf("--version = %q", line)
	}
}
