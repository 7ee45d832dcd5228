package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/server/fees"
)

// The harness checks every answer against openapi.json; the home page is text/html, read as a string.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	})
}

// TestHomePageIsForPeople: GET / is an HTML page saying what the service is, whether paid calls work, and
// linking the documents, OpenAPI, MCP, terms and privacy; every link on it answers 200. (It was a JSON 404.)
func TestHomePageIsForPeople(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/", nil, map[string]string{"Accept": "text/html"})
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	page := string(r.body)
	for _, want := range []string{"pay-per-call screening service", "Paid calls right now: <span class=\"ok\">working", "mailto:ops@example.com", "eip155:84532"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	links := regexp.MustCompile(`href="(/[^"]*)"`).FindAllStringSubmatch(page, -1)
	seen := map[string]bool{}
	for _, l := range links {
		seen[l[1]] = true
		if got := e.do("GET", l[1], nil, nil); got.StatusCode != 200 {
			t.Errorf("link %s answers %d", l[1], got.StatusCode)
		}
	}
	for _, must := range []string{"/openapi.json", "/llms.txt", "/.well-known/mcp.json", "/terms", "/privacy"} {
		if !seen[must] {
			t.Errorf("the page does not link %s", must)
		}
	}
	if r := e.do("GET", "/nope", nil, nil); r.StatusCode != 404 {
		t.Errorf("GET /nope = %d, want 404", r.StatusCode)
	}
}

// TestPaidCallsFailingIsSaid: when the facilitator cannot be reached, /health and /readyz no longer say "ok"
// and "ready": paid_calls says paid calls fail and why, and the home page says it too. /status gives the API
// version and the build apart.
func TestPaidCallsFailingIsSaid(t *testing.T) {
	e := newEnv(t)
	f := fees.NewFacilitator(e.fac.Srv.URL, nil, time.Second, time.Second)
	if err := e.srv.CheckFacilitator(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/health", "/readyz", "/status"} {
		pc, _ := e.do("GET", p, nil, nil).json(t)["paid_calls"].(map[string]any)
		if pc["ok"] != true {
			t.Errorf("%s paid_calls = %v with a working facilitator", p, pc)
		}
	}
	e.fac.Srv.Close()
	if err := e.srv.CheckFacilitator(t.Context(), f); err == nil {
		t.Fatal("a closed facilitator checked ok")
	}
	for _, p := range []string{"/health", "/readyz"} {
		body := e.do("GET", p, nil, nil).json(t)
		pc, _ := body["paid_calls"].(map[string]any)
		why, _ := pc["why"].(string)
		if body["status"] != "degraded" || pc["ok"] != false || !strings.Contains(why, "facilitator_unavailable") {
			t.Errorf("%s with the facilitator down: status %v, paid_calls %v", p, body["status"], pc)
		}
	}
	if page := string(e.do("GET", "/", nil, nil).body); !strings.Contains(page, "failing: facilitator") {
		t.Errorf("the home page does not say paid calls fail")
	}
	st := e.do("GET", "/status", nil, nil).json(t)
	build, _ := st["build"].(map[string]any)
	if st["api_version"] != ServiceVersion || build["version"] == nil || build["commit"] == nil || st["version"] != nil {
		t.Errorf("/status versions: api_version %v, build %v, version %v", st["api_version"], st["build"], st["version"])
	}
}

// TestOperatorTermsAndPrivacy: server.terms_file and server.privacy_file replace the built-in texts; a file
// that cannot be read stops the server from being built.
func TestOperatorTermsAndPrivacy(t *testing.T) {
	dir := t.TempDir()
	terms, privacy := filepath.Join(dir, "terms.txt"), filepath.Join(dir, "privacy.txt")
	os.WriteFile(terms, []byte("Example Corp terms: be nice.\n"), 0o600)
	os.WriteFile(privacy, []byte("Example Corp keeps nothing.\n"), 0o600)
	o, err := readOperatorTexts(config.ServerConfig{TermsFile: terms, PrivacyFile: privacy})
	if err != nil || o.or(o.terms, "builtin") != "Example Corp terms: be nice.\n" || o.or(o.privacy, "builtin") != "Example Corp keeps nothing.\n" {
		t.Fatalf("%+v %v", o, err)
	}
	if o, _ := readOperatorTexts(config.ServerConfig{}); o.or(o.terms, "builtin") != "builtin" {
		t.Error("no file: not the built-in text")
	}
	if _, err := readOperatorTexts(config.ServerConfig{TermsFile: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "server.terms_file") {
		t.Errorf("missing terms file: %v", err)
	}
}
