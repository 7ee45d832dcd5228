// Package cli is what every payguard subcommand shares: the Command a subcommand is, its flags (ParseFlags:
// -h prints the help and exits 0, a bad flag prints the usage and exits 2), its help in one shape (help.go,
// WriteHelp and WriteUsage), --data-dir, the quiet logger and the egress of a command-line tool. Exit codes:
// 0 success, 1 failure, 2 bad usage or bad input.
//
// The subcommands live in the packages below it (cli/holds, cli/screen, cli/keys, cli/audit, cli/setup);
// cmd/payguard lists them and dispatches.
package cli

import (
	"io"
	"log/slog"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/egress"
)

// Command is one subcommand. Run gets the arguments after the subcommand's name and returns the exit code.
type Command struct {
	Summary string
	Run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// Logger is a command-line tool's logger: warnings and errors only, as text on stderr.
func Logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Egress configures the outbound requests of a command-line tool (list download, RDAP): the config's
// egress.proxy, and never the proxy that HTTPS_PROXY names in the agent's shell when it is payguard itself
// (internal/egress).
func Egress(cfg *config.Config, stderr io.Writer) error {
	return egress.Default.Setup(cfg.Egress.Proxy, Logger(stderr), cfg.Proxy.Listen, cfg.Admin.Listen, cfg.Server.Listen)
}
