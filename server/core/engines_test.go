package core

import (
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/preflight"
)

// Both engines refuse input with the one type, *preflight.InputError, and inputError maps it once: the
// engine's own code, status and message (with the field at fault), nothing charged (issue 33).
func TestEngineInputErrorsMapOnce(t *testing.T) {
	deep := strings.Repeat("[", preflight.MaxDepth+2) + strings.Repeat("]", preflight.MaxDepth+2)
	_, parseErr := PreflightPort(nil).Parse([]byte(`{"challenge":` + deep + `}`))
	_, bigErr := PreflightPort(nil).Parse([]byte(`{"resource_url":"` + strings.Repeat("a", preflight.MaxBodyBytes) + `"}`))
	tests := []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"check: no field", CheckerPort(nil).Validate(CheckQuery{Name: " "}), 400, CodeMissingInput, "give at least one of name, address or domain"},
		{"check: field too long", CheckerPort(nil).Validate(CheckQuery{Domain: strings.Repeat("a", 3000)}), 400, CodeInvalidParameter, "domain: longer than"},
		{"preflight: too deep", parseErr, 400, "too_deep", ""},
		{"preflight: too large", bigErr, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, ""},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		e := inputError(tt.err, "fallback")
		if e.Status != tt.status || e.Code != tt.code || !strings.HasPrefix(e.Message, tt.msg) {
			t.Errorf("%s: %d %s %q, want %d %s %q...", tt.name, e.Status, e.Code, e.Message, tt.status, tt.code, tt.msg)
		}
	}
}
