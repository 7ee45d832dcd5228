package main

import (
	"errors"

	"github.com/payguard/payguard/config"
)

// serveStartProblems is every reason `payguard serve` cannot start with this configuration, at once: the
// fee terms (pay_to), the operator's contact, a facilitator for the fee network (no default on mainnet).
func serveStartProblems(termsErr error, sc config.ServerConfig) error {
	return errors.Join(termsErr, sc.ServeProblems())
}
