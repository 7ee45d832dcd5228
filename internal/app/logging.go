package app

import (
	"io"
	"log/slog"

	"github.com/payguard/payguard/config"
)

// NewLogger is the JSON logger `proxy` and `serve` write to stderr: at flagLevel when set (--log-level),
// else at the configuration's log.level. The configuration's Deprecations are its first lines (warnings).
func NewLogger(stderr io.Writer, cfg *config.Config, flagLevel string) (*slog.Logger, error) {
	level := cfg.Log.Level
	if flagLevel != "" {
		level = flagLevel
	}
	l, err := config.ParseLogLevel(level)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: l}))
	for _, d := range cfg.Deprecations() {
		log.Warn("config: " + d)
	}
	return log, nil
}
