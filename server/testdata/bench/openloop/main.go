// Command openloop is rate.sh's default load tool (LOADGEN=openloop): a constant-rate HTTP/1.1 load
// generator in wrk2's model, small enough to build from this repository. wrk2 is not packaged by Debian and
// vegeta spends twice the CPU per request (0.59 of a core at 5,000/s against 0.29), which on a two-core
// machine is taken from the server under test.
//
// Each of -c keep-alive connections owns every c-th slot of one global schedule (slot k is due at
// start + k/rate) and sends a request at its slot's time, or at once if it is already late because the
// previous answer on that connection came back late. A late request's latency is measured from its slot's
// due time, not from when it was written, so a stall counts against every request it delays (coordinated
// omission corrected, as wrk2 does); a request sent on time is measured from its write, so the sleep
// timer's own lateness (Go's timers wake up to a millisecond late) is not charged to the server. That also
// leaves out any wait for a CPU between the slot and the write, which wrk2 would count: against the floor
// server at 5,000/s, timing every request from its slot gives p99 1.6 ms instead of 0.6-0.7 ms.
//
// Every request gets its own X-Forwarded-For address, so a server that counts per client IP (the trial
// quota) never sees one client twice in a run.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:18091/v1/preflight?trial=1", "URL to POST to (GET when -body is empty)")
	bodyFile := flag.String("body", "", "file holding the request body (JSON)")
	rate := flag.Int("rate", 5000, "requests per second, offered whatever the answers do")
	conns := flag.Int("c", 16, "keep-alive connections")
	duration := flag.Duration("d", 12*time.Second, "length of the measured run")
	warmup := flag.Duration("warmup", 2*time.Second, "run at the same rate first, not measured")
	flag.Parse()
	if err := run(*target, *bodyFile, *rate, *conns, *warmup, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "openloop:", err)
		os.Exit(2)
	}
}

func run(target, bodyFile string, rate, conns int, warmup, duration time.Duration) error {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-url must be an absolute http:// URL")
	}
	if rate <= 0 || conns <= 0 || duration <= 0 {
		return fmt.Errorf("-rate, -c and -d must be positive")
	}
	if warmup < 0 {
		return fmt.Errorf("-warmup must not be negative")
	}
	var body []byte
	method := "GET"
	if bodyFile != "" {
		if body, err = os.ReadFile(bodyFile); err != nil {
			return err
		}
		method = "POST"
	}
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Forwarded-For: ",
		method, u.RequestURI(), u.Host, len(body))

	interval := time.Second / time.Duration(rate)
	total := int((warmup + duration) / interval)
	skip := int(warmup / interval)
	start := time.Now().Add(50 * time.Millisecond)
	results := make([]connResult, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = drive(u.Host, head, body, start, interval, i, conns, total, skip)
		}()
	}
	wg.Wait()

	var lat []time.Duration
	var sum connResult
	for _, r := range results {
		lat = append(lat, r.latencies...)
		sum.errors += r.errors
		sum.non2xx += r.non2xx
		if r.firstErr != nil && sum.firstErr == nil {
			sum.firstErr = r.firstErr
		}
	}
	elapsed := time.Since(start) - warmup
	report(lat, sum, total, rate, conns, duration, elapsed)
	return nil
}

type connResult struct {
	latencies      []time.Duration
	errors, non2xx int
	firstErr       error
}

// drive runs one connection's share of the schedule: slots i, i+conns, i+2*conns, ... below total.
// A failed connection is redialed; the slots it could not serve count as errors.
func drive(host, head string, body []byte, start time.Time, interval time.Duration, i, conns, total, skip int) connResult {
	var res connResult
	res.latencies = make([]time.Duration, 0, total/conns+1)
	var c net.Conn
	var br *bufio.Reader
	req := make([]byte, 0, len(head)+len(body)+64)
	for k := i; k < total; k += conns {
		due := start.Add(time.Duration(k) * interval)
		from := due // late already: the previous answer on this connection came back after this slot's time
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
			from = time.Now() // the timer's own lateness (up to a millisecond) is the tool's, not the server's
		}
		if c == nil {
			var err error
			if c, err = net.Dial("tcp", host); err != nil {
				res.fail(k >= skip, err)
				c = nil
				continue
			}
			br = bufio.NewReaderSize(c, 16<<10)
		}
		req = append(req[:0], head...)
		req = fmt.Appendf(req, "%d.%d.%d.%d\r\n\r\n", 10+k>>24&0x7f, k>>16&0xff, k>>8&0xff, k&0xff)
		req = append(req, body...)
		status, err := exchange(c, br, req)
		if err != nil {
			c.Close()
			c = nil
			res.fail(k >= skip, err)
			continue
		}
		if k < skip {
			continue
		}
		res.latencies = append(res.latencies, time.Since(from))
		if status < 200 || status > 299 {
			res.non2xx++
		}
	}
	if c != nil {
		c.Close()
	}
	return res
}

func (r *connResult) fail(counted bool, err error) {
	if counted {
		r.errors++
	}
	if r.firstErr == nil {
		r.firstErr = err
	}
}

// exchange writes one request and reads its whole answer: status line, headers, then the body by its
// Content-Length or its chunks (net/http chunks answers larger than its 2 KB buffer).
func exchange(c net.Conn, br *bufio.Reader, req []byte) (int, error) {
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := -1, false
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(h) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(bytes.TrimSpace(value), []byte("chunked"))
		}
	}
	if chunked {
		return status, discardChunks(br)
	}
	if length < 0 {
		return 0, errors.New("answer without Content-Length")
	}
	_, err = br.Discard(length)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return status, err
}

func discardChunks(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sizeHex, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		size, err := strconv.ParseInt(string(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the blank line
				t, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(t) <= 2 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return err
		}
	}
}

func report(lat []time.Duration, r connResult, sent, rate, conns int, duration, elapsed time.Duration) {
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("openloop: %d/s offered on %d connections for %v: %d answers (%.0f/s), %d non-2xx, %d errors; %d scheduled in all, warm-up included\n",
		rate, conns, duration, len(lat), float64(len(lat))/elapsed.Seconds(), r.non2xx, r.errors, sent)
	if r.firstErr != nil {
		fmt.Printf("first error: %v\n", r.firstErr)
	}
	fmt.Printf("latency p50 %v  p90 %v  p99 %v  p99.9 %v  max %v\n",
		round(q(0.50)), round(q(0.90)), round(q(0.99)), round(q(0.999)), round(q(1)))
}

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
