package app

import (
	"errors"

	"github.com/payguard/payguard/config"
)

// ServeStartProblems is every reason `payguard serve` cannot start with this configuration, at once: the
// fee terms (pay_to), the operator's contact, a facilitator for the fee network (no default on mainnet).
func ServeStartProblems(termsErr error, sc config.ServerConfig) error {
	return errors.Join(termsErr, sc.ServeProblems())
}
