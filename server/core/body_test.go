package core

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readAll reads what io.ReadAll of a LimitReader reads, whatever the declared length says (true, too small,
// too large, unknown), for bodies around the limit, in whole or one byte at a time, and passes a read error
// on.
func TestReadAllIsLimitedReadAll(t *testing.T) {
	const limit = 65
	for _, size := range []int{0, 1, 63, 64, 65, 66, 200, 1000} {
		body := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
		want, _ := io.ReadAll(io.LimitReader(bytes.NewReader(body), limit))
		for _, declared := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, limit - 1, limit, 1 << 40} {
			for name, r := range map[string]io.Reader{"whole": bytes.NewReader(body), "bytewise": iotest.OneByteReader(bytes.NewReader(body))} {
				got, err := readAll(r, declared, limit)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d bytes, declared %d, %s: %q, %v; want %q", size, declared, name, got, err, want)
				}
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readAll(iotest.ErrReader(boom), 10, limit); !errors.Is(err, boom) {
		t.Fatalf("a read error: %v", err)
	}
	if got, err := readAll(iotest.TimeoutReader(bytes.NewReader([]byte("abcdef"))), 6, limit); !errors.Is(err, iotest.ErrTimeout) || string(got) != "abcdef" {
		t.Fatalf("an error after some bytes: %q, %v", got, err)
	}
}
