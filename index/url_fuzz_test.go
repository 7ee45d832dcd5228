package index

import (
	"strings"
	"testing"
)

// The key of a key is the key: every reader re-normalizes what it is given (the admin lookup, serve's
// /v1/endpoint, the engine), so a stored key must normalize to itself, never to another endpoint's key or
// to an error. And the key is bounded and has no query, fragment, credentials or dot segment.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9001/weather", "http://127.0.0.1:9001/%77eather", "http://127.0.0.1:9001/Weather;x/",
		"http://[::ffff:127.0.0.1]:9001/weather", "HTTPS://Bücher.example:443/a/../b/%2e%2E/c?q#f", "http://x/a%2Fb/%25/%zz",
		"http://x/;;/./..//", "http://user:pw@x:080/", "http://x/\u00e9%C3%A9", "https://[fe80::1%25eth0]:8443/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key, err := NormalizeURL(raw)
		if err != nil {
			return
		}
		again, err := NormalizeURL(key)
		if err != nil || again != key {
			t.Fatalf("NormalizeURL(%q) = %q, whose key is %q, %v", raw, key, again, err)
		}
		rest := key[strings.Index(key, "//")+2:]
		authority, path, _ := strings.Cut(rest, "/")
		path = "/" + path
		if len(key) > MaxURLBytes || strings.ContainsAny(key, "?#") || strings.Contains(authority, "@") {
			t.Fatalf("key %q of %q", key, raw)
		}
		for _, seg := range strings.Split(path, "/")[1:] {
			if seg == "." || seg == ".." || strings.Contains(seg, ";") {
				t.Fatalf("key %q keeps segment %q", key, seg)
			}
		}
	})
}
