package sanctions

import (
	"strings"
	"testing"
	"time"
)

// FuzzScreenName checks that no input makes name screening panic or return a malformed result.
func FuzzScreenName(f *testing.F) {
	l, err := LoadDir("testdata/basic")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Banco Nacional de Cuba", "EXAMPLE, Ivan", "\xff\xfe", "S.A. de C.V.", "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb",
		strings.Repeat("x", 300), "O'Brien-Müller GmbH", "  ,,, ..  ",
		"Example Trading Incc", "Ivan bin al Example", "Ivanpetrov Example Ltd", "Correia S/A", "LiabilityCompanyExample", "ab oy pt tnhh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		r := l.ScreenName(name)
		for _, m := range append(r.Exact, r.Possible...) {
			if m.UID == 0 || m.Name == "" || m.Score < PossibleThreshold || m.Score > 1 {
				t.Fatalf("ScreenName(%q): malformed match %+v", name, m)
			}
		}
	})
}

// FuzzParseCSV checks that no sdn.csv content makes the loader panic.
func FuzzParseCSV(f *testing.F) {
	f.Add(`1,"A",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"Digital Currency Address - XBT 1abc."` + "\r\n\x1a")
	f.Add("")
	f.Add(`x,"`)
	f.Fuzz(func(t *testing.T, sdn string) {
		l, _, err := ParseCSV(CSVFiles{SDN: strings.NewReader(sdn), Comments: strings.NewReader(sdn)}, time.Time{}, "fuzz")
		if err == nil {
			l.ScreenName(sdn)
			l.ScreenAddress(sdn)
		}
	})
}
