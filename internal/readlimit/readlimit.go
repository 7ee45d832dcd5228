// Package readlimit reads a body up to a limit into one buffer sized from its declared length: what
// io.ReadAll(io.LimitReader(r, limit)) reads, without io.ReadAll's growth from 512 bytes through two or
// three buffers for a body of a few KB (issue 36). The proxy reads a 402's (and an MCP answer's) body with
// it, serve a request's body.
package readlimit

import "io"

// ReadAll reads r up to limit bytes or its end, returning what it read and the reader's error (io.EOF is
// the end, not an error), as io.ReadAll(io.LimitReader(r, limit)) does. declared is the body's declared
// length (a Content-Length, or -1 for none); it only sizes the first buffer: the bytes read are what
// counts, whatever it says.
func ReadAll(r io.Reader, limit, declared int64) ([]byte, error) {
	size := int64(512)
	if declared >= 0 && declared < limit {
		size = declared + 1 // room to read the end (or a longer body than declared) without growing
	}
	b := make([]byte, 0, max(min(size, limit), 0))
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
		room := min(int64(cap(b)), limit)
		n, err := r.Read(b[len(b):room])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
