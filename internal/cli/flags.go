package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ParseFlags parses args; done is true when the command should return code now: 0 after -h or
// --help, with the command's help (help.go) on stdout (asking for help is not an error, so scripts and
// `make help` targets see success), 2 after a bad flag, with flag's message and the usage lines on stderr.
func ParseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	name := strings.TrimPrefix(fs.Name(), "payguard ")
	fs.Usage = func() {} // the help is written below, to the right stream
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			WriteHelp(stdout, name, fs)
			return 0, true
		}
		WriteUsage(fs.Output(), name)
		return 2, true
	}
	return 0, false
}

// IsHelp reports whether a command's first argument asks for its usage.
func IsHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// argNames gives a flag's value a name in the help when its usage text does not back-quote one. Go's flag
// package takes the first back-quoted word of a usage text as the value's name, so usage texts here never
// back-quote anything else (a command name in back quotes became "-config payguard proxy").
var argNames = map[string]string{
	"address": "ADDRESS", "admin": "URL", "batch": "FILE", "by": "NAME", "config": "FILE", "data-dir": "DIR",
	"dir": "DIR", "domain": "DOMAIN", "for": "KIND", "in": "FILE", "jwks": "FILE", "keys": "FILE", "listen": "ADDR",
	"log-level": "LEVEL", "max-age": "DURATION", "min-entries": "N", "name": "NAME", "note": "TEXT",
	"out": "PATH", "parallel": "N", "rules": "FILE", "sanctions-dir": "DIR", "status": "STATUS",
	"timeout": "DURATION", "token": "TOKEN", "token-file": "FILE", "url": "URL",
}

// writeFlags prints fs's flags as "  --name VALUE" lines with the usage text indented below, like
// flag.PrintDefaults but with the double dash the docs use and a value name from argNames.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	some := false
	fs.VisitAll(func(f *flag.Flag) {
		if !some {
			fmt.Fprintln(w, "Flags:")
			some = true
		}
		arg, usage := flag.UnquoteUsage(f)
		if n, ok := argNames[f.Name]; ok && arg != "" {
			arg = n
		}
		arg = strings.ToUpper(arg)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintln(w, line)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "      %s\n", usage)
	})
	if !some {
		fmt.Fprintln(w, "Flags: none")
	}
}
