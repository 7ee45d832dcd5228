package main

import (
	"io"
	"log/slog"

	"github.com/payguard/payguard/config"
)

// newLogger is the JSON logger `proxy` and `serve` write to stderr: at flagLevel when set (--log-level),
// else at the configuration's log.level.
func newLogger(stderr io.Writer, cfg *config.Config, flagLevel string) (*slog.Logger, error) {
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
