package screen

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// writeSDNUpdateHelp follows a failed `payguard sdn update` with what the person can do about it: a raw dial
// error alone leaves someone without network stuck. Nothing was changed: the cached list (if any) stays.
func writeSDNUpdateHelp(w io.Writer, err error, sources []string, dir string) {
	var uerr *url.Error
	var nerr net.Error
	network := errors.As(err, &uerr) || errors.As(err, &nerr)
	remote := false
	for _, s := range sources {
		if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
			remote = true
		}
	}
	if _, statErr := os.Stat(dir); statErr != nil {
		fmt.Fprintf(w, "Nothing was written (%s was not created).\n", dir)
	} else {
		fmt.Fprintf(w, "The list cached in %s (if any) is unchanged.\n", dir)
	}
	if network || remote {
		fmt.Fprintf(w, `The list could not be downloaded from %s.
What to do:
  - without network here: fetch OFAC's files (sdn.csv with alt.csv, add.csv, sdn_comments.csv; or SDN.XML) on a
    machine that has it, copy them into a directory, and run
        payguard sdn update --url DIR
    or start payguard with --sanctions-dir DIR (that list is used as it is, never refreshed);
  - behind an egress proxy: set egress.proxy: http://HOST:PORT in the configuration (--config FILE), or
    HTTPS_PROXY (ignored when it points at payguard itself: that is the agent's setting, not payguard's).
`, strings.Join(sources, ", "))
		return
	}
	fmt.Fprintln(w, "Check the files given with --url (or screening.sanctions.sources): OFAC's sdn.csv set or SDN.XML.")
}
