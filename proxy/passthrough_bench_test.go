package proxy

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/store/memory"
)

// BenchmarkPassThrough: plain HTTP GETs of a 200-byte JSON answer forwarded by payguard and, side by side
// in one run, by bare goproxy (no handlers, proxy-bench's goproxy-bare), RunParallel with 32 goroutines per
// core. Client, proxy and upstream share the process, so B/op and allocs/op are the round trip's whole;
// payguard's own cost (issue 36, goal 2: pass-through level with goproxy) is the difference between the two.
//
//	go test ./proxy -run '^$' -bench 'BenchmarkPassThrough' -benchtime 20000x -benchmem
//	go test -c -o /tmp/proxy.test ./proxy && /tmp/proxy.test -test.run '^$' -test.bench 'BenchmarkPassThrough/payguard' \
//	  -test.benchtime 50000x -test.cpuprofile /tmp/pt.cpu   # then go tool pprof -top -cum /tmp/proxy.test /tmp/pt.cpu
func BenchmarkPassThrough(b *testing.B) {
	body := `{"ok":true,"data":"` + strings.Repeat("x", 178) + `"}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer up.Close()
	p, _, _ := newTestProxy(b, memory.New(), testRules())
	defer p.Close()
	bare := goproxy.NewProxyHttpServer()
	bare.Logger = log.New(io.Discard, "", 0)
	bare.Tr = &http.Transport{MaxIdleConnsPerHost: 256}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"goproxy", bare}, {"payguard", p}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			pu, _ := url.Parse(srv.URL)
			tr := &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 256}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(up.URL + "/ok")
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || n != int64(len(body)) {
						b.Errorf("status %d, %d bytes", resp.StatusCode, n)
						return
					}
				}
			})
		})
	}
}
