package plainurl

import "testing"

func TestParse(t *testing.T) {
	plain := map[string]URL{
		"http://127.0.0.1:18080/402":                 {"http://127.0.0.1:18080/402", "127.0.0.1"},
		"https://api.example.com/v1/weather?city=x":  {"https://api.example.com/v1/weather", "api.example.com"},
		"https://api.example.com/":                   {"https://api.example.com/", "api.example.com"},
		"https://api.example.com/?q":                 {"https://api.example.com/", "api.example.com"},
		"https://a_b.example/x.y/~z/...?":            {"https://a_b.example/x.y/~z/...", "a_b.example"},
		"http://localhost:8080/a?%zz&x=%C3%A9 y":     {"http://localhost:8080/a", "localhost"},
		"https://example.com:80/a":                   {"https://example.com:80/a", "example.com"},
		"http://example.com:65535/a":                 {"http://example.com:65535/a", "example.com"},
		"http://1.2.3.256/a":                         {"http://1.2.3.256/a", "1.2.3.256"},
		"http://axn--b.example/a":                    {"http://axn--b.example/a", "axn--b.example"},
		"https://api.example.com/v1/weather?a=b?c=d": {"https://api.example.com/v1/weather", "api.example.com"},
	}
	for s, want := range plain {
		if got, ok := Parse(s); !ok || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{
		"", "http://", "http:///a", "HTTP://a/b", "ftp://a/b", "mcp://a/tool/x", "http:/a/b", "//a/b", " http://a/b", "http://a/b ",
		"http://a", "http://a?q", "http://A/b", "http://a/B", "http://a/b/", "http://a//b", "http://a/./b", "http://a/b/..", "http://a/%41",
		"http://a/b;c", "http://a/b#f", "http://a/b?q#f", "http://a/b?q\x7f", "http://a/b?\t", "http://a.b./c", "http://.a/c", "http://a..b/c",
		"http://u@a/b", "http://u:p@a/b", "http://[::1]/a", "http://a:80/b", "https://a:443/b", "http://a:/b", "http://a:0/b", "http://a:080/b",
		"http://a:65536/b", "http://a:123456/b", "http://xn--bcher-kva.example/a", "http://b\u00fccher.example/a", "http://a/\u00e9",
		"http://a:8080x/b", "http://a/b\\c", "http://a/b c", "http://a/b!c", "http://a/b:c", "http://a/b@c",
		"http://" + string(make([]byte, 64)) + "/a",
	} {
		if got, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %+v, want not plain", s, got)
		}
	}
	long := "http://"
	for i := 0; i < 5; i++ {
		long += "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij."
	}
	if _, ok := Parse(long + "com/a"); ok { // 258 bytes of host
		t.Errorf("a host over 253 bytes is plain")
	}
	label := "http://" + string(repeat('a', 64)) + ".example/a"
	if _, ok := Parse(label); ok {
		t.Errorf("a label over 63 bytes is plain")
	}
	if _, ok := Parse("http://" + string(repeat('a', 63)) + ".example/" + string(repeat('b', MaxKey))); ok {
		t.Errorf("a key over MaxKey is plain")
	}
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestParseDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { parsedSink, _ = Parse("https://api.example.com/v1/weather?city=x") }); n != 0 {
		t.Fatalf("Parse allocates %v times", n)
	}
}

// parsedSink keeps TestParseDoesNotAllocate's result alive, so the call is not optimised away.
var parsedSink URL
