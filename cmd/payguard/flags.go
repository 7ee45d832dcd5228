package main

import (
	"errors"
	"flag"
)

// parseSubcommandFlags parses args; done is true when the command should return code now: 0 after -h or
// --help (asking for help is not an error, so scripts and `make help` targets see success), 2 after a bad flag.
func parseSubcommandFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, true
		}
		return 2, true
	}
	return 0, false
}

// isHelp reports whether a command's first argument asks for its usage.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}
