package config

import (
	"errors"
	"fmt"
)

// KeysConfig is the `keys:` section: the receipt signing keys.
type KeysConfig struct {
	// ReceiptKeyFile is a JWK Set with private keys (mode 0600). When it does not exist at start, a fresh
	// ES256 key is generated and written there.
	ReceiptKeyFile string `yaml:"receipt_key_file"`
}

func defaultKeys() KeysConfig {
	return KeysConfig{ReceiptKeyFile: "./payguard-data/receipt-keys.json"}
}

func (c *KeysConfig) validate() error {
	var errs []error
	if c.ReceiptKeyFile == "" {
		errs = append(errs, fmt.Errorf("keys.receipt_key_file must not be empty"))
	}
	return errors.Join(errs...)
}
