// Package docscheck checks that the repository's Markdown matches the repository: relative links resolve,
// file paths cited in code spans exist, cited Go test names exist, and `payguard` commands written in the docs
// name real commands and flags. scripts/test.sh runs it as its own suite ("docs"); each problem is reported
// as FILE:LINE: what is wrong, and what to do about it.
package docscheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Problem is one mismatch between a document and the repository.
type Problem struct {
	File string // relative to the repository root
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Doc is one Markdown file, read.
type Doc struct {
	Path  string   // relative to the repository root, slash-separated
	Lines []string // the file's lines
}

// Markdown lists the repository's Markdown files (relative, slash-separated), skipping dependencies,
// virtualenvs and hidden directories.
func Markdown(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" && strings.Contains(p, "node_modules")) {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Read reads a document.
func Read(root, rel string) (Doc, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return Doc{}, err
	}
	return Doc{Path: rel, Lines: strings.Split(string(b), "\n")}, nil
}

var (
	// [text](target) and ![alt](target); the target stops at whitespace or ")".
	linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// A code span.
	codeRE = regexp.MustCompile("`([^`]+)`")
	// A Go test, benchmark or fuzz target name (TestX, BenchmarkX, FuzzX), optionally with a subtest.
	testNameRE = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)\b`)
)

// fences reports, for each line, whether it is inside a fenced code block (the fence lines included).
func fences(lines []string) []bool {
	in := make([]bool, len(lines))
	open := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			in[i] = true
			open = !open
			continue
		}
		in[i] = open
	}
	return in
}

// Links checks every relative link: its file (or directory) must exist. External links, mail and
// same-page anchors are not checked.
func Links(root string, d Doc) []Problem {
	var out []Problem
	inCode := fences(d.Lines)
	for i, l := range d.Lines {
		if inCode[i] {
			continue
		}
		l = codeRE.ReplaceAllString(l, "")
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if target == "" || strings.HasPrefix(target, "#") || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			target, _, _ = strings.Cut(target, "?")
			p := filepath.Join(root, filepath.Dir(d.Path), filepath.FromSlash(target))
			if strings.HasPrefix(target, "/") {
				p = filepath.Join(root, filepath.FromSlash(target))
			}
			if _, err := os.Stat(p); err != nil {
				rel, _ := filepath.Rel(root, p)
				out = append(out, Problem{d.Path, i + 1, fmt.Sprintf("link %q: %s does not exist (links are relative to %s/)",
					m[1], filepath.ToSlash(rel), dirOf(d.Path))})
			}
		}
	}
	return out
}

func dirOf(p string) string {
	if d := filepath.ToSlash(filepath.Dir(p)); d != "." {
		return d
	}
	return "the repository root"
}

// pathRE is a code span that is a path into this repository: it starts with one of its top-level
// directories (or names a top-level file) and has no placeholder in it.
var pathRE = regexp.MustCompile(`^(?:\./)?((?:cmd|config|docs|examples|charts|clients|index|internal|interop|policy|preflight|proxy|receipts|screening|scripts|server|store|testdata|x402|docker)/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])$`)

// outsideRE is a path into the shared folder beside the repository: never a citation a reader can follow.
var outsideRE = regexp.MustCompile(`^(?:\.\./)*(?:/work/)?shared/`)

// Paths checks file paths cited in code spans (outside fenced blocks): each must exist in the repository,
// relative to its root. A span with a placeholder (<, *, {, …, ...) or a URL is not a path. A path into the
// shared folder beside the repository is refused: a fresh clone does not have it.
func Paths(root string, d Doc) []Problem {
	var out []Problem
	inCode := fences(d.Lines)
	for i, l := range d.Lines {
		if inCode[i] {
			continue
		}
		for _, m := range codeRE.FindAllStringSubmatch(l, -1) {
			span := strings.TrimSpace(m[1])
			// A PROVENANCE.md records where a copy came from: naming the shared folder is its purpose.
			if outsideRE.MatchString(span) && !strings.HasSuffix(d.Path, "PROVENANCE.md") {
				out = append(out, Problem{d.Path, i + 1, fmt.Sprintf("`%s` is in the shared folder outside the repository: cite the copy in the repository (testdata/) instead", span)})
				continue
			}
			pm := pathRE.FindStringSubmatch(span)
			if pm == nil || strings.ContainsAny(span, "<>*{}…") || strings.Contains(span, "...") {
				continue
			}
			p := pm[1]
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil && !made(root, p) {
				out = append(out, Problem{d.Path, i + 1, fmt.Sprintf("cites `%s`, which does not exist in the repository (paths in code spans are read from the repository root)", p)})
			}
		}
	}
	return out
}

// made reports whether p is a path the repository makes rather than holds (a virtualenv, node_modules): git
// ignores it, so a fresh clone lacks it until a setup step runs, and citing it is right.
func made(root, p string) bool {
	return exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p).Run() == nil
}

// GoTests returns the names of every Go test, benchmark and fuzz target in the repository.
func GoTests(root string) (map[string]bool, error) {
	names := map[string]bool{}
	decl := regexp.MustCompile(`^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			if m := decl.FindStringSubmatch(sc.Text()); m != nil {
				names[m[1]] = true
			}
		}
		return sc.Err()
	})
	return names, err
}

// TestNames checks that every Go test name a document cites (TestX, BenchmarkX, FuzzX, in code spans or
// prose) exists in some _test.go file.
func TestNames(d Doc, tests map[string]bool) []Problem {
	var out []Problem
	for i, l := range d.Lines {
		for _, m := range testNameRE.FindAllStringSubmatch(l, -1) {
			name := m[1]
			if tests[name] || strings.HasSuffix(name, "_") {
				continue
			}
			// In a -run, -bench or -fuzz pattern a name is a regular expression: a prefix of a real test is fine.
			if regexpArg.MatchString(l) && anyWithPrefix(tests, name) {
				continue
			}
			out = append(out, Problem{d.Path, i + 1, fmt.Sprintf("cites the Go test %s, which no _test.go file declares (renamed? cite its new name)", name)})
		}
	}
	return out
}

// regexpArg is a go test flag whose value is a pattern.
var regexpArg = regexp.MustCompile(`-(?:test\.)?(?:run|bench|fuzz|skip)[ =]`)

func anyWithPrefix(tests map[string]bool, prefix string) bool {
	for t := range tests {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}
