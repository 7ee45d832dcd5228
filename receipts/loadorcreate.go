package receipts

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// LoadOrCreate loads the key file at path, or on first run (no file) generates a key dated now, saves it
// there (creating the directory, mode 0700) and logs its kid. Any other load error is returned: a damaged
// key file is never replaced silently.
func LoadOrCreate(path string, now time.Time, log *slog.Logger) (*KeySet, error) {
	keys, err := LoadKeySet(path)
	if err == nil {
		return keys, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("receipt keys: %w", err)
	}
	keys, err = GenerateKey(now)
	if err != nil {
		return nil, fmt.Errorf("receipt keys: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("receipt keys: %w", err)
	}
	if err := keys.Save(path); err != nil {
		return nil, fmt.Errorf("receipt keys: %w", err)
	}
	log.Info("generated a receipt signing key", "file", path, "kid", keys.ActiveKeyID())
	return keys, nil
}
