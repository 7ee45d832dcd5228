package domain

import (
	"math/rand/v2"
	"net"
	"strings"
	"testing"
)

func TestNormalizeAccepts(t *testing.T) {
	tests := []struct {
		in, host, registrable, shared string
	}{
		{"example.com", "example.com", "example.com", ""},
		{"https://Shop.Example.com:443/x", "shop.example.com", "example.com", ""},
		{"http://shop.example.com/path?q=1#f", "shop.example.com", "example.com", ""},
		{"  EXAMPLE.COM.  ", "example.com", "example.com", ""},
		{"shop.example.co.uk:8443/checkout", "shop.example.co.uk", "example.co.uk", ""},
		{"//cdn.example.com/x", "cdn.example.com", "example.com", ""},
		{"https://user:pw@pay.example.com/", "pay.example.com", "example.com", ""},
		{"Bücher.de", "xn--bcher-kva.de", "xn--bcher-kva.de", ""},
		{"https://www.BÜCHER.de/", "www.xn--bcher-kva.de", "xn--bcher-kva.de", ""},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", "xn--bcher-kva.de", ""},
		{"例え.jp", "xn--r8jz45g.jp", "xn--r8jz45g.jp", ""},
		{"shop.github.io", "shop.github.io", "shop.github.io", "github.io"},
	}
	for _, tt := range tests {
		n, err := Normalize(tt.in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", tt.in, err)
			continue
		}
		if n.Host != tt.host || n.Registrable != tt.registrable || n.SharedSuffix != tt.shared {
			t.Errorf("Normalize(%q) = %+v, want host %q registrable %q shared %q", tt.in, n, tt.host, tt.registrable, tt.shared)
		}
	}
}

func TestNormalizeRejects(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"localhost", "localhost"},
		{"http://localhost:8080/", "localhost"},
		{"shop", "single label"},
		{"127.0.0.1", "IP address"},
		{"http://[::1]:443/", "IP address"},
		{"https://8.8.8.8/x", "IP address"},
		{"127.1", "top-level domain"},
		{"printer.local", "top-level domain"},
		{"api.internal", "top-level domain"},
		{"foo.localhost", "top-level domain"},
		{"co.uk", "public suffix"},
		{"com", "single label"},
		{"bad_label.example.com", "invalid domain name"},
		{"-lead.example.com", "invalid domain name"},
		{"a..example.com", "invalid domain name"},
		{strings.Repeat("a", 64) + ".com", "invalid domain name"},
		{"ftp://example.com/", "scheme"},
		{"javascript:alert(1)", "port"},
		{"exa mple.com", "white space"},
		{"example.com:80x", "port"},
		{"\xff.com", "UTF-8"},
		{strings.Repeat("a.", 1100) + "com", "longer than"},
	}
	for _, tt := range tests {
		n, err := Normalize(tt.in)
		if err == nil {
			t.Errorf("Normalize(%q) = %+v, want an error about %q", tt.in, n, tt.why)
			continue
		}
		if !strings.Contains(err.Error(), tt.why) {
			t.Errorf("Normalize(%q) error %q, want it to mention %q", tt.in, err, tt.why)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"example.com", "https://Shop.Example.com:443/x", "Bücher.de", "[::1]", "a..b", "shop.github.io"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := Normalize(in)
		if err != nil {
			return
		}
		// A normalized name is stable and has a registrable domain that it ends with.
		again, err := Normalize(n.Host)
		if err != nil || again != n {
			t.Fatalf("Normalize(%q) = %+v, but Normalize(%q) = %+v, %v", in, n, n.Host, again, err)
		}
		if !strings.HasSuffix(n.Host, n.Registrable) || !strings.Contains(n.Registrable, ".") {
			t.Fatalf("Normalize(%q) = %+v: registrable is not a suffix of host", in, n)
		}
	})
}

// hostOf takes a bare host name as it is: for every such input the full parse (hostOfParsed) gives the same.
func TestBareHostAsParsed(t *testing.T) {
	const alphabet = "aZ09.-_"
	r := rand.New(rand.NewPCG(36, 7))
	inputs := []string{"127.0.0.1", "api.example.com", "API.Example.COM", "a", ".", "..", "-", "_", "a..b", ".a", "a.", "1.2.3.256", "0x7f"}
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+r.IntN(12))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		if !bareHost(s) {
			t.Fatalf("%q is not a bare host", s)
		}
		if got, err := hostOfParsed(s); err != nil || got != s {
			t.Fatalf("hostOfParsed(%q) = %q, %v; hostOf takes it as it is", s, got, err)
		}
	}
	for _, s := range []string{"", "a:1", "a/b", "a b", "[::1]", "a%41", "a@b", "é.example"} {
		if bareHost(s) {
			t.Fatalf("%q is taken as a bare host", s)
		}
	}
}

// mayBeIP is false only for what net.ParseIP refuses: Normalize skips the parse (and its allocations) for
// a name, never for an address.
func TestMayBeIP(t *testing.T) {
	const alphabet = "0123456789.:abcdefxX%"
	r := rand.New(rand.NewPCG(36, 8))
	inputs := []string{"127.0.0.1", "::1", "::ffff:127.0.0.1", "1.2.3.4", "www.example.com", "1.2.3.4a", "fe80::1%eth0", "", "0x7f.1"}
	for i := 0; i < 100_000; i++ {
		b := make([]byte, 1+r.IntN(16))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	ips := 0
	for _, s := range inputs {
		ip := net.ParseIP(s) != nil
		if ip && !mayBeIP(s) {
			t.Fatalf("%q is an IP address, and mayBeIP says it cannot be", s)
		}
		if ip {
			ips++
		}
	}
	if ips < 100 {
		t.Fatalf("only %d addresses among the inputs", ips)
	}
}
