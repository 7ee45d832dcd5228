package server

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/payguard/payguard/server/core"
)

// rawAnswer sends raw bytes and waits up to d for an answer; 0 means none came.
func rawAnswer(t *testing.T, e *env, raw string, d time.Duration) int {
	conn, err := net.Dial("tcp", e.http.Listener.Addr().String())
	if err != nil {
		t.Error(err) // called from goroutines too: no Fatal
		return 0
	}
	defer conn.Close()
	conn.Write([]byte(raw))
	conn.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A declared body that never arrives must not hold the answer: an oversized one is refused at once, and one
// the handler never reads is given up after the body read deadline (SPEC §10: 10 seconds), not waited for
// forever by Go's drain of unread bodies.
func TestStalledBodiesStillGetAnswers(t *testing.T) {
	e := newEnv(t)
	if st := rawAnswer(t, e, "POST /v1/preflight HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{", 2*time.Second); st != http.StatusRequestEntityTooLarge {
		t.Errorf("declared 70,000-byte body: status %d, want 413 at once", st)
	}
	done := make(chan int, 2)
	for _, raw := range []string{
		"GET /v1/check?name=x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
		"POST /v1/preflight?trial=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
	} {
		go func() { done <- rawAnswer(t, e, raw, core.BodyReadTimeout+5*time.Second) }()
	}
	for range 2 {
		if st := <-done; st == 0 {
			t.Errorf("a request whose body stalled got no answer within %v", core.BodyReadTimeout+5*time.Second)
		}
	}
}
