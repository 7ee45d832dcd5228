package app

import (
	"io"
	"log/slog"

	"github.com/payguard/payguard/config"
)

// NewLogger is the JSON logger `proxy` and `serve` write to stderr: at flagLevel when set (--log-level),
// else at the configuration's log.level.
func NewLogger(stderr io.Writer, cfg *config.Config, flagLevel string) (*slog.Logger, error) {
	level := cfg.Log.Level
	if flagLevel != "" {
		level = flagLevel
	}
	l, err := config.ParseLogLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}
