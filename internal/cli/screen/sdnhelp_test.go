package screen

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/testutil"
)

// TestSDNUpdateWithoutNetworkSaysWhatToDo: a download that cannot connect says what failed and what to do
// (--url DIR, --sanctions-dir, egress.proxy), and leaves no empty cache directory behind (it left
// ./payguard-data/sanctions, empty, and a raw dial error).
func TestSDNUpdateWithoutNetworkSaysWhatToDo(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "payguard-data", "sanctions")
	url := "http://127.0.0.1:" + closedPort(t) + "/sdn.csv"
	var out, errb bytes.Buffer
	if code := SDN.Run([]string{"update", "--url", url, "--dir", cache}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{"connection refused", "payguard sdn update --url DIR", "--sanctions-dir DIR", "egress.proxy", "Nothing was written"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(root, "payguard-data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed update left its cache directory behind (stat: %v)", err)
	}
}

// closedPort is a port nothing listens on: a listener's, closed again (a connection to it is refused).
func closedPort(t *testing.T) string {
	t.Helper()
	ln := testutil.Listen(t)
	ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
