package sanctions

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

type xmlEntry struct {
	UID       int      `xml:"uid"`
	FirstName string   `xml:"firstName"`
	LastName  string   `xml:"lastName"`
	SDNType   string   `xml:"sdnType"`
	Remarks   string   `xml:"remarks"`
	Programs  []string `xml:"programList>program"`
	IDs       []struct {
		IDType   string `xml:"idType"`
		IDNumber string `xml:"idNumber"`
	} `xml:"idList>id"`
	AKAs []struct {
		Type      string `xml:"type"`
		Category  string `xml:"category"`
		FirstName string `xml:"firstName"`
		LastName  string `xml:"lastName"`
	} `xml:"akaList>aka"`
}

// ParseXML parses OFAC's SDN.XML (the legacy XML format: sdnList, publshInformation, sdnEntry). The publish
// date in publshInformation/Publish_Date becomes the list's data-as-of; when it is absent, fallback is used.
// publshInformation/Record_Count is returned in LoadStats.RecordCount; a file holding another number of
// entries loads with a warning (the Refresher refuses it as cut).
func ParseXML(r io.Reader, fallback time.Time, source string) (*List, LoadStats, error) {
	var st LoadStats
	dec := xml.NewDecoder(r)
	var entries []Entry
	var warnings []string
	dataAsOf := fallback
	sawRoot, published := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, fmt.Errorf("sanctions: parsing SDN XML: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "sdnList":
			sawRoot = true
		case "Publish_Date":
			var s string
			if err := dec.DecodeElement(&s, &se); err != nil {
				return nil, st, fmt.Errorf("sanctions: SDN XML Publish_Date: %w", err)
			}
			t, err := time.Parse("01/02/2006", strings.TrimSpace(s))
			if err != nil {
				return nil, st, fmt.Errorf("sanctions: SDN XML Publish_Date %q: %w", s, err)
			}
			dataAsOf, published = t.UTC(), true
		case "Record_Count":
			var n int
			if err := dec.DecodeElement(&n, &se); err != nil {
				return nil, st, fmt.Errorf("sanctions: SDN XML Record_Count: %w", err)
			}
			st.RecordCount = n
		case "sdnEntry":
			var x xmlEntry
			if err := dec.DecodeElement(&x, &se); err != nil {
				return nil, st, fmt.Errorf("sanctions: SDN XML entry %d: %w", len(entries)+1, err)
			}
			st.SDNRows++
			e, w := x.entry()
			if e.Name == "" {
				return nil, st, fmt.Errorf("sanctions: SDN XML entry uid %d: empty name", x.UID)
			}
			entries = append(entries, e)
			warnings = append(warnings, w...)
		}
	}
	if !sawRoot {
		return nil, st, fmt.Errorf("sanctions: not an SDN XML file (no sdnList element)")
	}
	st.XMLEntries = len(entries)
	if st.RecordCountMismatch() {
		// A cut file: the Refresher refuses it (validate); a folder given by hand is loaded with a warning.
		warnings = append(warnings, fmt.Sprintf("SDN XML states %d records but holds %d entries", st.RecordCount, len(entries)))
	}
	l := newList(entries, dataAsOf, source, warnings, true)
	l.xml = published
	if published {
		l.asOfSource = AsOfPublishDate
	}
	return l, st, nil
}

func (x *xmlEntry) entry() (Entry, []string) {
	e := Entry{UID: x.UID, Name: xmlName(x.LastName, x.FirstName), Type: strings.ToLower(strings.TrimSpace(x.SDNType))}
	if e.Type == "" {
		e.Type = TypeEntity
	}
	for _, p := range x.Programs {
		if p = strings.TrimSpace(p); p != "" {
			e.Programs = append(e.Programs, p)
		}
	}
	seen := map[DigitalAddress]bool{}
	for _, id := range x.IDs {
		cur, ok := strings.CutPrefix(strings.TrimSpace(id.IDType), "Digital Currency Address - ")
		addr := strings.TrimSpace(id.IDNumber)
		if !ok || addr == "" {
			continue
		}
		d := DigitalAddress{Currency: strings.ToUpper(strings.TrimSpace(cur)), Address: addr}
		if !seen[d] {
			seen[d] = true
			e.Addresses = append(e.Addresses, d)
		}
	}
	// XML remarks are not cut, but may still name addresses.
	addrs, inline, _, warnings := parseRemarks(x.UID, x.Remarks, nil)
	for _, d := range addrs {
		if !seen[d] {
			seen[d] = true
			e.Addresses = append(e.Addresses, d)
		}
	}
	for _, a := range x.AKAs {
		name := xmlName(a.LastName, a.FirstName)
		if name == "" {
			continue
		}
		kind := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(a.Type), ".", ""))
		e.Aliases = append(e.Aliases, Alias{Name: name, Kind: kind, Weak: strings.EqualFold(strings.TrimSpace(a.Category), "weak")})
	}
	e.Aliases = append(e.Aliases, inline...)
	return e, warnings
}

// xmlName renders an XML name the way sdn.csv does: "LAST, First" when there is a first name.
func xmlName(last, first string) string {
	last, first = strings.TrimSpace(last), strings.TrimSpace(first)
	if first == "" {
		return last
	}
	if last == "" {
		return first
	}
	return last + ", " + first
}
