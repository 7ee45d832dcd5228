package config

import (
	"strings"
	"testing"
)

// A second YAML document would be dropped silently, with its settings and its unknown keys: refused.
func TestSecondYAMLDocumentRefused(t *testing.T) {
	_, err := Parse([]byte("proxy:\n  listen: 127.0.0.1:9000\n---\nadmin:\n  listen: 0.0.0.0:1\nnot_a_key: true\n"))
	if err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Parse([]byte("proxy:\n  listen: 127.0.0.1:9000\n")); err != nil {
		t.Fatalf("one document: %v", err)
	}
	if _, err := Parse(nil); err != nil {
		t.Fatalf("an empty file: %v", err)
	}
	if _, err := Parse([]byte("---\nproxy:\n  listen: 127.0.0.1:9000\n")); err != nil {
		t.Fatalf("one document with a leading ---: %v", err)
	}
}
