package sanctions

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/base58"
)

// CSVFiles holds the readers of OFAC's legacy CSV set. Only SDN is required.
type CSVFiles struct {
	SDN      io.Reader // sdn.csv: ent_num, name, type, programs, title, call sign, vessel fields, remarks
	Alt      io.Reader // alt.csv: ent_num, alt_num, alt_type, alt_name, alt_remarks
	Add      io.Reader // add.csv: ent_num, add_num, address, city/state/postal, country, add_remarks
	Comments io.Reader // sdn_comments.csv: ent_num, remarks_extended (the part of a remark past 1000 chars)
}

// LoadStats counts what a load saw, for `payguard sdn stats` and for validating a refresh.
type LoadStats struct {
	SDNRows, AltRows, AddRows, CommentRows int
	CommentsJoined                         int // comment rows appended to a cut remark
	CommentsIgnored                        int // rows whose uid is absent or whose remark was not cut
	FragmentsDropped                       int // truncated address fragments dropped
	RecordCount                            int // SDN XML: the entry count publshInformation states (0: none)
	XMLEntries                             int // SDN XML: the entries read, before duplicate uids are dropped
}

// RecordCountMismatch reports an SDN XML file whose stated Record_Count is not the number of entries it
// holds: a cut file. ParseXML warns about it; the Refresher refuses it.
func (s LoadStats) RecordCountMismatch() bool {
	return s.RecordCount > 0 && s.RecordCount != s.XMLEntries
}

// ParseCSV parses OFAC's legacy CSV set. dataAsOf is the time to report as the data's freshness (the CSV
// files carry no publish date); source names where the files came from.
//
// A remark cut at exactly 1000 characters continues in sdn_comments.csv: the continuation rows (one or more
// per uid, in file order) are appended with no separator, because the cut falls anywhere, even inside an
// address. A comment row is joined only when its uid exists and the remark was cut; an address token that
// ends exactly at a cut with nothing joined after it is a fragment and is dropped. When the join crosses
// into a Base58Check address, the joined address must pass its checksum (this catches a comment file from a
// different date than sdn.csv); otherwise it is dropped too.
func ParseCSV(files CSVFiles, dataAsOf time.Time, source string) (*List, LoadStats, error) {
	return parseCSV(files, dataAsOf, source, true)
}

// parseCSV is ParseCSV; index false skips the name index (for tests that only look at entries and
// addresses).
func parseCSV(files CSVFiles, dataAsOf time.Time, source string, withIndex bool) (*List, LoadStats, error) {
	var st LoadStats
	if files.SDN == nil {
		return nil, st, fmt.Errorf("sanctions: sdn.csv is required")
	}
	rows, err := readOFACCSV(files.SDN, "sdn.csv")
	if err != nil {
		return nil, st, err
	}
	st.SDNRows = len(rows)
	var warnings []string
	entries := make([]Entry, 0, len(rows))
	remarks := make([]string, 0, len(rows))
	index := make(map[int]int, len(rows))
	for i, r := range rows {
		if len(r) < 12 {
			return nil, st, fmt.Errorf("sanctions: sdn.csv row %d: %d fields, want 12", i+1, len(r))
		}
		uid, err := strconv.Atoi(strings.TrimSpace(r[0]))
		if err != nil {
			return nil, st, fmt.Errorf("sanctions: sdn.csv row %d: bad ent_num %q", i+1, r[0])
		}
		name := nullable(r[1])
		if name == "" {
			return nil, st, fmt.Errorf("sanctions: sdn.csv row %d (uid %d): empty name", i+1, uid)
		}
		if _, dup := index[uid]; dup {
			warnings = append(warnings, fmt.Sprintf("sdn.csv: duplicate uid %d ignored", uid))
			continue
		}
		typ := strings.ToLower(nullable(r[2]))
		if typ == "" {
			typ = TypeEntity
		}
		index[uid] = len(entries)
		entries = append(entries, Entry{UID: uid, Name: name, Type: typ, Programs: splitPrograms(nullable(r[3]))})
		// Not trimmed: a remark cut at the cap may end in a space, and its length is what marks the cut.
		remark := r[11]
		if nullable(remark) == "" {
			remark = ""
		}
		remarks = append(remarks, remark)
	}

	// Continuations are collected per entry in file order, then joined.
	cont := make(map[int][]string)
	if files.Comments != nil {
		crows, err := readOFACCSV(files.Comments, "sdn_comments.csv")
		if err != nil {
			return nil, st, err
		}
		st.CommentRows = len(crows)
		for i, r := range crows {
			if len(r) < 2 {
				return nil, st, fmt.Errorf("sanctions: sdn_comments.csv row %d: %d fields, want 2", i+1, len(r))
			}
			uid, err := strconv.Atoi(strings.TrimSpace(r[0]))
			if err != nil {
				return nil, st, fmt.Errorf("sanctions: sdn_comments.csv row %d: bad ent_num %q", i+1, r[0])
			}
			at, ok := index[uid]
			if !ok || utf8.RuneCountInString(remarks[at]) < remarkCap {
				st.CommentsIgnored++
				warnings = append(warnings, fmt.Sprintf("sdn_comments.csv: uid %d ignored (not in sdn.csv, or its remark was not cut)", uid))
				continue
			}
			cont[at] = append(cont[at], r[1])
			st.CommentsJoined++
		}
	}
	for i := range entries {
		addrs, aliases, dropped, w := parseRemarks(entries[i].UID, remarks[i], cont[i])
		entries[i].Addresses = addrs
		entries[i].Aliases = aliases
		st.FragmentsDropped += dropped
		warnings = append(warnings, w...)
	}

	if files.Alt != nil {
		arows, err := readOFACCSV(files.Alt, "alt.csv")
		if err != nil {
			return nil, st, err
		}
		st.AltRows = len(arows)
		orphans := 0
		for i, r := range arows {
			if len(r) < 4 {
				return nil, st, fmt.Errorf("sanctions: alt.csv row %d: %d fields, want 5", i+1, len(r))
			}
			uid, err := strconv.Atoi(strings.TrimSpace(r[0]))
			if err != nil {
				return nil, st, fmt.Errorf("sanctions: alt.csv row %d: bad ent_num %q", i+1, r[0])
			}
			at, ok := index[uid]
			name := nullable(r[3])
			if !ok || name == "" {
				orphans++ // an alias file of another date refers to entries this sdn.csv lacks
				continue
			}
			entries[at].Aliases = append(entries[at].Aliases, Alias{Name: name, Kind: strings.ToLower(nullable(r[2]))})
		}
		if orphans > 0 {
			warnings = append(warnings, fmt.Sprintf("alt.csv: %d rows refer to uids not in sdn.csv and were ignored", orphans))
		}
	}
	if files.Add != nil {
		drows, err := readOFACCSV(files.Add, "add.csv")
		if err != nil {
			return nil, st, err
		}
		// Physical addresses are not screened; the file is parsed so that a broken download is caught.
		st.AddRows = len(drows)
	}
	return newList(entries, dataAsOf, source, warnings, withIndex), st, nil
}

var inlineAliasRE = regexp.MustCompile(`\b([afn])\.k\.a\. '([^']+)'`)

// parseRemarks extracts the digital currency addresses and the inline weak aliases of one entry's remark,
// joining its sdn_comments.csv continuations first.
func parseRemarks(uid int, remark string, continuations []string) (addrs []DigitalAddress, aliases []Alias, dropped int, warnings []string) {
	text := remark
	boundaries := []int{len(remark)}
	for _, c := range continuations {
		text += c
		boundaries = append(boundaries, len(text))
	}
	last := remark
	if n := len(continuations); n > 0 {
		last = continuations[n-1]
	}
	cutAtEnd := utf8.RuneCountInString(last) >= remarkCap
	seen := map[DigitalAddress]bool{}
	for _, m := range findAddresses(text) {
		if cutAtEnd && m.end == len(text) {
			dropped++
			warnings = append(warnings, fmt.Sprintf("uid %d: truncated address fragment %q dropped (remark cut at %d chars)", uid, m.Address, remarkCap))
			continue
		}
		if spansJoin(m, boundaries[:len(boundaries)-1]) && looksBase58Check(m.Currency, m.Address) && !base58.Bitcoin.CheckValid(m.Address) {
			dropped++
			warnings = append(warnings, fmt.Sprintf("uid %d: address %q joined from sdn_comments.csv fails its checksum (files of different dates?); dropped", uid, m.Address))
			continue
		}
		if !seen[m.DigitalAddress] {
			seen[m.DigitalAddress] = true
			addrs = append(addrs, m.DigitalAddress)
		}
	}
	for _, m := range inlineAliasRE.FindAllStringSubmatch(text, -1) {
		aliases = append(aliases, Alias{Name: m[2], Kind: m[1] + "ka", Weak: true})
	}
	return addrs, aliases, dropped, warnings
}

// spansJoin reports whether an address touches a join point (a boundary strictly inside or at its end,
// where the next piece might have continued it).
func spansJoin(m addressMatch, joins []int) bool {
	for _, b := range joins {
		if b > m.start && b <= m.end {
			return true
		}
	}
	return false
}

// readOFACCSV reads one headerless OFAC CSV file, tolerating CRLF and the trailing 0x1A byte.
func readOFACCSV(r io.Reader, name string) ([][]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sanctions: reading %s: %w", name, err)
	}
	data = bytes.TrimRight(data, "\x1a\r\n \t")
	if !utf8.Valid(data) {
		data = latin1ToUTF8(data)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("sanctions: parsing %s: %w", name, err)
	}
	return rows, nil
}

// latin1ToUTF8 decodes bytes that are not valid UTF-8 as ISO-8859-1, which older OFAC files used.
func latin1ToUTF8(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b) + len(b)/8)
	for _, c := range b {
		out.WriteRune(rune(c))
	}
	return out.Bytes()
}

// nullable trims a field and maps OFAC's null marker "-0-" to "".
func nullable(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

// splitPrograms splits "SDGT] [IRGC" (the CSV's rendering of "[SDGT] [IRGC]") into its programs.
func splitPrograms(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, "] [") {
		p = strings.Trim(p, "[] ")
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
