package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/receipts"
)

// keys rotate with --jwks naming the key file itself would replace the private keys with the public set.
func TestKeysRotateRefusesJWKSOverTheKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	var out, errb bytes.Buffer
	if code := runMain([]string{"keys", "generate", "--out", path}, nil, &out, &errb); code != 0 {
		t.Fatalf("generate: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := runMain([]string{"keys", "rotate", "--keys", path, "--jwks", dir + "/./keys.json"}, nil, &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "key file itself") {
		t.Fatalf("rotate onto itself: exit %d, %s", code, errb.String())
	}
	if _, err := receipts.LoadKeySet(path); err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("the key file no longer loads: %v\n%s", err, data)
	}
}
