package screen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/cli"
	screenopen "github.com/payguard/payguard/screening/open"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/x402"
)

// Check is `payguard check`.
var Check = cli.Command{Summary: "screen a payee (--name, --address, --domain) or a batch of them and print CheckResult JSON", Run: runCheck}

const (
	// checkTimeout bounds one check; the RDAP and DNS lookups have their own, shorter timeouts.
	checkTimeout = 15 * time.Second
	// maxBatchLine is the longest batch line read, SPEC §10's request body limit.
	maxBatchLine = x402.MaxBodyBytes
)

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("payguard check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "merchant or payee legal name")
	address := fs.String("address", "", "payee wallet address")
	domainArg := fs.String("domain", "", "merchant domain or URL")
	batch := fs.String("batch", "", "read one JSON query per line ({\"name\":..,\"address\":..,\"domain\":..}) from FILE, or - for stdin")
	parallel := fs.Int("parallel", 8, "batch queries screened at once (output keeps input order)")
	offline := fs.Bool("offline", false, "no network lookups: domain age and DNS are reported unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC SDN data (sdn.csv set or SDN.XML); default: the cached list in screening.sanctions.cache_dir, if any")
	configPath := fs.String("config", "", "configuration file (default: the built-in defaults)")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "payguard check: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	single := screening.Query{Name: *name, Address: *address, Domain: *domainArg}
	if *batch != "" && single != (screening.Query{}) {
		fmt.Fprintln(stderr, "payguard check: --batch reads its queries from the file; do not combine it with --name, --address or --domain")
		return 2
	}
	if *batch == "" {
		if err := single.Validate(); err != nil {
			fmt.Fprintf(stderr, "payguard check: %v\n", err)
			return 2
		}
	}
	if *parallel < 1 || *parallel > 64 {
		fmt.Fprintf(stderr, "payguard check: --parallel %d is outside 1..64\n", *parallel)
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "payguard check: --config: %v\n", err)
		return 2
	}
	// RDAP lookups never go through the proxy that HTTPS_PROXY names in the agent's shell (internal/egress).
	if err := cli.Egress(cfg, stderr); err != nil {
		fmt.Fprintf(stderr, "payguard check: %v\n", err)
		return 2
	}
	list, err := checkSanctions("check", cfg.Screening.Sanctions, *sanctionsDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "payguard check: --sanctions-dir: %v\n", err)
		return 2
	}
	dc := cfg.Screening.Domain
	if *offline {
		dc.Enabled = false
	}
	checker := screening.NewChecker(screening.CheckerOptions{
		Sanctions:     list,
		Domains:       domain.NewFromConfig(dc),
		NewDomainDays: dc.NewDomainDays,
	})

	if *batch != "" {
		return runCheckBatch(checker, *batch, *parallel, stdin, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	res, err := checker.Check(ctx, single)
	if err != nil {
		fmt.Fprintf(stderr, "payguard check: %v\n", err)
		return 2
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "payguard check: encode result: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}

// checkSanctions is a one-shot command's list (screening/screenopen.LoadOnce): nil, with a notice on stderr, when
// there is none (sanctions are then reported unknown); an error only for a --sanctions-dir that cannot be read.
func checkSanctions(cmd string, c config.SanctionsConfig, dir string, stderr io.Writer) (screening.Sanctions, error) {
	list, notice, err := screenopen.LoadOnce(c, dir)
	if err != nil {
		return nil, err
	}
	if list == nil {
		fmt.Fprintf(stderr, "payguard %s: %s\n", cmd, notice)
		return nil, nil // an untyped nil: no list at all
	}
	return list, nil
}

// batchLineError is the output line for an input line that could not be screened.
type batchLineError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// runCheckBatch screens one JSON query per input line and writes exactly one JSON line per input line, in
// input order: a CheckResult, or {"line":N,"error":"..."} for a line that is not a valid query. Up to
// parallel queries are screened at once. Exit 2 when any line was bad (all lines are still answered), 1
// when the input could not be read, else 0.
func runCheckBatch(checker *screening.Checker, path string, parallel int, stdin io.Reader, stdout, stderr io.Writer) int {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "payguard check: --batch: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	type pending struct {
		out chan []byte
		bad bool
	}
	// queue holds each line's future output in input order; its capacity bounds the lines in flight.
	queue := make(chan pending, parallel)
	readErr := make(chan error, 1)
	go func() {
		defer close(queue)
		r := bufio.NewReaderSize(in, maxBatchLine+1)
		for n := 1; ; n++ {
			line, tooLong, err := readBatchLine(r)
			if err == io.EOF && line == nil {
				readErr <- nil
				return
			}
			if err != nil && err != io.EOF {
				readErr <- err
				return
			}
			p := pending{out: make(chan []byte, 1)}
			q, qerr := parseBatchLine(line, tooLong)
			if qerr != nil {
				p.bad = true
				p.out <- mustJSON(batchLineError{Line: n, Error: qerr.Error()})
				queue <- p
				continue
			}
			queue <- p
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
				defer cancel()
				res, err := checker.Check(ctx, q)
				if err != nil { // Validate passed, so this does not happen; never drop a line if it does
					p.out <- mustJSON(batchLineError{Line: n, Error: err.Error()})
					return
				}
				p.out <- mustJSON(res)
			}()
		}
	}()
	code := 0
	w := bufio.NewWriter(stdout)
	for p := range queue {
		line := <-p.out
		if p.bad {
			code = 2
		}
		w.Write(line)
		w.WriteByte('\n')
		if len(queue) == 0 {
			w.Flush() // nothing else ready: let a reader of a pipe see what is done
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "payguard check: writing results: %v\n", err)
		return 1
	}
	if err := <-readErr; err != nil {
		fmt.Fprintf(stderr, "payguard check: --batch: reading input: %v\n", err)
		return 1
	}
	return code
}

// readBatchLine returns the next line without its line ending. A line longer than maxBatchLine is
// consumed to its end and reported as tooLong. At the end of input it returns (nil, false, io.EOF).
func readBatchLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	chunk, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = r.ReadSlice('\n')
		}
		if err == io.EOF {
			err = nil
		}
		return []byte{}, true, err
	}
	if err == io.EOF && len(chunk) == 0 {
		return nil, false, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	return bytes.Clone(bytes.TrimRight(chunk, "\r\n")), false, nil
}

// parseBatchLine reads one query: a single JSON object with only the fields name, address and domain.
func parseBatchLine(line []byte, tooLong bool) (screening.Query, error) {
	var q screening.Query
	switch {
	case tooLong:
		return q, fmt.Errorf("line longer than %d bytes", maxBatchLine)
	case !utf8.Valid(line):
		return q, errors.New("not valid UTF-8")
	case len(bytes.TrimSpace(line)) == 0:
		return q, errors.New("empty line: want a JSON object with name, address or domain")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, fmt.Errorf("not a query object: %v", err)
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return q, errors.New("text after the JSON object")
	}
	return q, q.Validate()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// CheckResult and batchLineError have no types that fail to encode.
		panic("payguard check: encode: " + err.Error())
	}
	return b
}
