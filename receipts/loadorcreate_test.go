package receipts

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The first start generates and saves a key; the next loads the same one; a damaged file is an error,
// never silently replaced by a new key (receipts signed before would stop verifying).
func TestLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "receipt-keys.json")
	log := slog.New(slog.DiscardHandler)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	first, err := LoadOrCreate(path, now, log)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreate(path, now.Add(time.Hour), log)
	if err != nil || again.ActiveKeyID() != first.ActiveKeyID() {
		t.Fatalf("second start: %v, kid %q want %q", err, again.ActiveKeyID(), first.ActiveKeyID())
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(path, now, log); err == nil {
		t.Fatal("a damaged key file was accepted or replaced")
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Fatal("the damaged key file was overwritten")
	}
}
