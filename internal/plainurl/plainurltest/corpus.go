// Package plainurltest makes URLs for the differential tests of plainurl's callers: each caller's fast path
// for a plain URL must give what its full parse gives.
package plainurltest

import (
	"math/rand/v2"
	"strings"
)

// Corpus is n URLs near the plain form (internal/plainurl) and across its edges: every part taken
// from spellings that are plain and spellings that are not, then some bytes changed at random.
func Corpus(n int) []string {
	schemes := []string{"http://", "https://", "HTTP://", "Https://", "ftp://", "mcp://", "http:/", "", "http:///"}
	hosts := []string{"127.0.0.1", "api.example.com", "a", "localhost", "a_b.example", "1.2.3.256", "01.2.3.4", "-a.example", "a-.example",
		"ab--cd.example", "xn--bcher-kva.example", "xn--a.example", "axn--b.example", "a..b", "a.b.", ".a", "A.example", "[::1]",
		"[::ffff:127.0.0.1]", "u@a.example", "b\u00fccher.example", "0x7f.1", "999.999.999.999", "1.2.3", "a.b.c.d.e.f.co.uk",
		"github.io", "x.github.io", "com", "_dmarc.example", strings.Repeat("a", 63) + ".example", strings.Repeat("a", 64) + ".example"}
	ports := []string{"", ":8080", ":1", ":65535", ":80", ":443", ":0", ":080", ":65536", ":", ":99999", ":8080x"}
	paths := []string{"/", "/402", "/v1/weather", "/a/b/c", "/...", "/a.b~c_d-e", "", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/.",
		"/A", "/%41", "/%2f", "/a;b", "/a b", "/a!b", "/é", "/a:b", "/a@b", "/a\\b", "/" + strings.Repeat("x", 2100)}
	queries := []string{"", "?", "?q", "?a=b&c=d", "?%zz", "?a b", "?\t", "?\x7f", "?a?b", "?é", "#f", "?q#f", "#%zz", "?q\x00"}
	r := rand.New(rand.NewPCG(36, 402))
	// Each list begins with its plain spellings (the first plainN of it), taken half the time.
	pick := func(l []string, plainN int) string {
		if r.IntN(2) == 0 {
			return l[r.IntN(plainN)]
		}
		return l[r.IntN(len(l))]
	}
	out := make([]string, 0, n)
	for len(out) < n {
		s := pick(schemes, 2) + pick(hosts, 10) + pick(ports, 4) + pick(paths, 6) + pick(queries, 5)
		if r.IntN(3) == 0 && len(s) > 0 {
			b := []byte(s)
			for k := r.IntN(3); k >= 0; k-- {
				b[r.IntN(len(b))] = "aZ09.-_~/:?#%@;[] \t\x00\x7f\xc3"[r.IntN(22)]
			}
			s = string(b)
		}
		out = append(out, s)
	}
	return out
}
