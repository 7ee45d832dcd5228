package readlimit

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// ReadAll reads what io.ReadAll(io.LimitReader(r, limit)) reads, whatever the declared length says (right,
// wrong, absent) and however the reader cuts its reads.
func FuzzReadAll(f *testing.F) {
	for _, s := range []string{"", "{}", strings.Repeat("x", 511), strings.Repeat("y", 513), strings.Repeat("z", 5000)} {
		f.Add([]byte(s), int64(len(s)), uint16(64), uint8(0))
		f.Add([]byte(s), int64(-1), uint16(4096), uint8(1))
		f.Add([]byte(s), int64(3), uint16(10), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, declared int64, limit uint16, how uint8) {
		reader := func() io.Reader {
			r := io.Reader(bytes.NewReader(data))
			switch how % 4 {
			case 1:
				r = iotest.OneByteReader(r)
			case 2:
				r = iotest.HalfReader(r)
			case 3:
				r = iotest.DataErrReader(r)
			}
			return r
		}
		want, wantErr := io.ReadAll(io.LimitReader(reader(), int64(limit)))
		got, err := ReadAll(reader(), int64(limit), declared)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("ReadAll(%d bytes, limit %d, declared %d) = %d bytes, %v; io.ReadAll %d, %v",
				len(data), limit, declared, len(got), err, len(want), wantErr)
		}
	})
}

// Bodies around the limit, with every kind of declared length (true, too small, too large, unknown), in
// whole or one byte at a time.
func TestReadAllIsLimitedReadAll(t *testing.T) {
	const limit = 65
	for _, size := range []int{0, 1, 63, 64, 65, 66, 200, 1000} {
		body := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
		want, _ := io.ReadAll(io.LimitReader(bytes.NewReader(body), limit))
		for _, declared := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, limit - 1, limit, 1 << 40} {
			for name, r := range map[string]io.Reader{"whole": bytes.NewReader(body), "bytewise": iotest.OneByteReader(bytes.NewReader(body))} {
				got, err := ReadAll(r, limit, declared)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d bytes, declared %d, %s: %q, %v; want %q", size, declared, name, got, err, want)
				}
			}
		}
	}
}

// A reader's error is passed on as io.ReadAll passes it, with the bytes read before it.
func TestReadAllError(t *testing.T) {
	boom := errors.New("boom")
	if _, err := ReadAll(iotest.ErrReader(boom), 100, -1); !errors.Is(err, boom) {
		t.Fatalf("a read error: %v", err)
	}
	if got, err := ReadAll(iotest.TimeoutReader(bytes.NewReader([]byte("abcdef"))), 65, 6); !errors.Is(err, iotest.ErrTimeout) || string(got) != "abcdef" {
		t.Fatalf("an error after some bytes: %q, %v", got, err)
	}
}
