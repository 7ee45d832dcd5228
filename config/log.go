package config

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// LogConfig is the `log:` section: payguard's JSON log on stderr.
type LogConfig struct {
	// Level is the lowest level written: debug, info, warn or error. `--log-level` overrides it.
	Level string `yaml:"level"`
}

func defaultLog() LogConfig { return LogConfig{Level: "info"} }

func (c *LogConfig) validate() error {
	var errs []error
	if _, err := ParseLogLevel(c.Level); err != nil {
		errs = append(errs, fmt.Errorf("log.level: %w", err))
	}
	return errors.Join(errs...)
}

// ParseLogLevel reads debug, info, warn (or warning) or error, in any case.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not a log level (debug, info, warn, error)", s)
}
