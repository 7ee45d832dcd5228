package proxy

import (
	"bytes"
	"errors"
	"io"
)

// sseGuard passes an event stream on event by event: each event's data goes through guard (an MCP
// message decided as it passes), and an event is written whole once its closing blank line has arrived,
// so the stream stays a stream: nothing waits for more than the event it is in. An event is at most
// maxMCPMessage bytes of data; a longer one cannot be read, so it is dropped (never buffered past the
// limit) and replaced by a JSON-RPC error, and the stream goes on. Lines end in LF, CRLF or a lone CR, as
// the SSE specification (and every client parser) reads them.
type sseGuard struct {
	src   io.ReadCloser
	guard func(data []byte) []byte // the replacement of an event's data, nil to keep the event as it came

	in      []byte // read and not yet split into lines
	event   []byte // the raw lines of the event being read
	data    [][]byte
	size    int  // data bytes in the event
	skip    bool // the event is over the limit: its lines are dropped until it ends
	out     []byte
	err     error
	lastCR  bool // the previous chunk ended in CR: a following LF belongs to it
	srcDone bool
}

func newSSEGuard(src io.ReadCloser, guard func([]byte) []byte) *sseGuard {
	return &sseGuard{src: src, guard: guard}
}

func (g *sseGuard) Close() error { return g.src.Close() }

func (g *sseGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 {
		if g.srcDone {
			// An event not closed by a blank line is never dispatched by a client: it is dropped.
			if g.err == nil {
				g.err = io.EOF
			}
			return 0, g.err
		}
		buf := make([]byte, 32<<10)
		n, err := g.src.Read(buf)
		g.in = append(g.in, buf[:n]...)
		g.lines()
		if err != nil {
			g.srcDone = true
			if !errors.Is(err, io.EOF) {
				g.err = err
			}
		}
	}
	n := copy(p, g.out)
	g.out = g.out[n:]
	return n, nil
}

// lines splits what has been read into lines and feeds them to the event being read.
func (g *sseGuard) lines() {
	for {
		if g.lastCR && len(g.in) > 0 && g.in[0] == '\n' {
			g.in = g.in[1:]
			if len(g.event) > 0 || g.skip {
				g.appendRaw([]byte{'\n'})
			} else {
				g.out = append(g.out, '\n')
			}
		}
		g.lastCR = false
		i := bytes.IndexAny(g.in, "\r\n")
		if i < 0 {
			if len(g.in) > maxMCPMessage+1024 {
				// One line longer than any event may be: drop it as it comes.
				g.skip = true
				g.in = g.in[:0]
			}
			return
		}
		line, eol := g.in[:i], g.in[i:i+1]
		if g.in[i] == '\r' {
			if i+1 == len(g.in) {
				g.lastCR = true
			} else if g.in[i+1] == '\n' {
				eol = g.in[i : i+2]
			}
		}
		g.line(line, eol)
		g.in = g.in[i+len(eol):]
	}
}

// line handles one line of the event stream.
func (g *sseGuard) line(line, eol []byte) {
	if len(line) == 0 {
		g.dispatch(eol)
		return
	}
	if g.skip {
		return
	}
	if bytes.HasPrefix(line, []byte("data")) {
		v := line[4:]
		if len(v) == 0 || v[0] == ':' {
			if len(v) > 0 {
				v = bytes.TrimPrefix(v[1:], []byte(" "))
			}
			g.size += len(v) + 1
			if g.size > maxMCPMessage {
				g.skip = true
				return
			}
			g.data = append(g.data, append([]byte(nil), v...))
		}
	}
	g.appendRaw(line)
	g.appendRaw(eol)
}

// appendRaw keeps an event's raw lines (to write it as it came); an event whose other lines (comments, ids)
// pass the limit too is dropped like one with too much data.
func (g *sseGuard) appendRaw(b []byte) {
	if len(g.event)+len(b) > maxMCPMessage+4096 {
		g.skip = true
		return
	}
	g.event = append(g.event, b...)
}

// dispatch ends an event: it is written as it came, or with its data replaced.
func (g *sseGuard) dispatch(eol []byte) {
	switch {
	case g.skip:
		g.out = append(g.out, sseEvent(nil, g.guardOversized())...)
		g.out = append(g.out, eol...)
	case len(g.data) > 0:
		if repl := g.guard(bytes.Join(g.data, []byte{'\n'})); repl != nil {
			g.out = append(g.out, sseEvent(g.event, repl)...)
		} else {
			g.out = append(g.out, g.event...)
		}
		g.out = append(g.out, eol...)
	default:
		g.out = append(g.out, g.event...)
		g.out = append(g.out, eol...)
	}
	g.event, g.data, g.size, g.skip = g.event[:0], nil, 0, false
}

// guardOversized is the message that replaces an event over the limit: its request id is unknown.
func (g *sseGuard) guardOversized() []byte {
	return rpcError([]byte("null"), mcpRefusalCode, "payguard refused an MCP message over 64 KiB: it cannot be read, so any payment terms in it could not be decided",
		map[string]any{"decision": block, "reasons": []string{"block: an MCP message over 64 KiB cannot be read"}})
}

// sseEvent writes an event: the original's lines other than data (event, id, retry, comments), then the
// new data, one data line per line of it.
func sseEvent(orig, data []byte) []byte {
	var out []byte
	for len(orig) > 0 {
		line := orig
		orig = nil
		if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
			rest := line[i+1:]
			if line[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
			line, orig = line[:i], rest
		}
		if len(line) == 0 || bytes.HasPrefix(line, []byte("data")) {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		out = append(append(append(out, "data: "...), bytes.TrimRight(l, "\r")...), '\n')
	}
	return out
}
