package proxy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/elazarl/goproxy"
)

// goproxyLog adapts goproxy's Printf logger to slog. goproxy reports a failed TLS handshake with the agent
// only there ("[sess] WARN: Cannot handshake client host err"), so that line becomes a warning naming the
// client, the host and the cause (handshakeFailure); everything else goproxy says is debug.
type goproxyLog struct{ p *Proxy }

func (g goproxyLog) Printf(format string, v ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	if sess, rest, ok := cutSession(msg); ok {
		if hostErr, ok := strings.CutPrefix(rest, "WARN: Cannot handshake client "); ok {
			host, cause, _ := strings.Cut(hostErr, " ")
			client := "unknown"
			if c, ok := g.p.clients.LoadAndDelete(sess); ok {
				client = c.(string)
			}
			g.p.handshakeFailure(client, host, cause)
			return
		}
	}
	g.p.log.Debug("goproxy", "line", msg) // not "msg": that key is the record's own message
}

// cutSession splits goproxy's "[123] " prefix off a log line.
func cutSession(msg string) (int64, string, bool) {
	inner, rest, ok := strings.Cut(strings.TrimPrefix(msg, "["), "] ")
	if !ok || !strings.HasPrefix(msg, "[") {
		return 0, "", false
	}
	n, err := strconv.ParseInt(inner, 10, 64)
	return n, rest, err == nil
}

// noteClient remembers a MITM'd connection's client address under its goproxy session (as goproxy prints
// it, modulo 65536, which also bounds the map), for handshakeFailure.
func (p *Proxy) noteClient(ctx *goproxy.ProxyCtx) {
	if ctx == nil || ctx.Req == nil {
		return
	}
	p.clients.Store(ctx.Session&0xFFFF, ctx.Req.RemoteAddr)
}
