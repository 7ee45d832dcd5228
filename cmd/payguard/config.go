package main

import (
	"fmt"
	"io"

	"github.com/payguard/payguard/config"
)

func init() {
	register("config", command{summary: "check a configuration file (config validate FILE) or print the default (config default)", run: runConfig})
}

func runConfig(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && isHelp(args[0]):
		writeHelp(stdout, "config", nil)
		return 0
	case len(args) > 1 && isHelp(args[len(args)-1]):
		writeHelp(stdout, "config "+args[0], nil)
		return 0
	case len(args) == 2 && args[0] == "validate":
		if _, err := config.Load(args[1]); err != nil {
			fmt.Fprintln(stderr, "payguard config validate:", err)
			return 2
		}
		fmt.Fprintln(stdout, "ok")
		return 0
	case len(args) == 1 && args[0] == "default":
		_, _ = stdout.Write(config.DefaultYAML())
		return 0
	}
	writeUsage(stderr, "config")
	return 2
}
