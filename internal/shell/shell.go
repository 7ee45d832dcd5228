// Package shell writes text a POSIX shell reads back as it was: the export lines `payguard env` prints and
// the copy-and-paste commands of the start-up banners.
package shell

import "strings"

// Quote quotes s for a shell command line: as it is when it holds only characters no shell treats
// specially, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
