package app

import (
	"log/slog"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/logout"
)

// NewBufferedLogger is the JSON logger of `proxy` and `serve`: at flagLevel when set (--log-level), else at
// the configuration's log.level, the configuration's Deprecations its first lines (warnings), written through
// out (logout: INFO lines at most logout.FlushDelay late, WARN and ERROR at once); its handler takes hand-encoded lines
// (logout.Handler.WriteLine: the proxy's decision line, serve's request line). The caller closes out when
// the process stops, which writes what waits.
func NewBufferedLogger(out *logout.Writer, cfg *config.Config, flagLevel string) (*slog.Logger, error) {
	l, err := logLevel(cfg, flagLevel)
	if err != nil {
		return nil, err
	}
	return withDeprecations(slog.New(logout.NewHandler(out, l)), cfg), nil
}

func logLevel(cfg *config.Config, flagLevel string) (slog.Level, error) {
	level := cfg.Log.Level
	if flagLevel != "" {
		level = flagLevel
	}
	return config.ParseLogLevel(level)
}

func withDeprecations(log *slog.Logger, cfg *config.Config) *slog.Logger {
	for _, d := range cfg.Deprecations() {
		log.Warn("config: " + d)
	}
	return log
}
