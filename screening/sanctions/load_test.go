package sanctions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadDirBasicFixture(t *testing.T) {
	l, err := LoadDir("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 5 {
		t.Fatalf("entries = %d, want 5", l.Len())
	}
	e, ok := l.Entry(1001)
	if !ok {
		t.Fatal("uid 1001 missing")
	}
	if e.Type != TypeIndividual || !slices.Equal(e.Programs, []string{"CYBER2", "RUSSIA-EO14024"}) {
		t.Errorf("entry 1001 = %+v", e)
	}
	if e, _ := l.Entry(306); e.Type != TypeEntity || len(e.Aliases) != 2 || !e.Aliases[0].Weak || e.Aliases[1].Name != "NATIONAL BANK OF CUBA" {
		t.Errorf("entry 306 aliases = %+v", e.Aliases)
	}
	if e, _ := l.Entry(2001); e.Type != TypeVessel {
		t.Errorf("entry 2001 type = %q", e.Type)
	}
	if !slices.ContainsFunc(l.Warnings(), func(w string) bool { return strings.Contains(w, "alt.csv: 1 rows") }) {
		t.Errorf("orphan alias not reported: %q", l.Warnings())
	}
	fi, _ := os.Stat("testdata/basic/sdn.csv")
	if !l.DataAsOf().Equal(fi.ModTime().UTC()) {
		t.Errorf("DataAsOf = %v, want sdn.csv mtime %v", l.DataAsOf(), fi.ModTime())
	}
}

func TestScreenAddressCase(t *testing.T) {
	l, err := LoadDir("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		uid  int
		cur  string
	}{
		{"0x7F367cC41522cE07553e823bf3be79A889DEbe1B", 1001, "ETH"},
		{"0x7f367cc41522ce07553e823bf3be79a889debe1b", 1001, "ETH"}, // EVM: any case
		{"0X7F367CC41522CE07553E823BF3BE79A889DEBE1B", 1001, "ETH"},
		{"  1AjZPMsnmpdK2Rv9KQNfMurTXinscVro9V ", 1001, "XBT"},
		{"1ajzpmsnmpdk2rv9kqnfmurtxinscvro9v", 0, ""}, // Base58: case matters
		{"TFdTr9C3BqQrzKBXqSxJfAZFTh8UwBAfSg", 1002, "USDT"},
		{"tfdtr9c3bqqrzkbxqsxjfazfth8uwbafsg", 0, ""},
		{"5be5543ff73456ab9f2d207887e2af87322c651ea1a873c5b25b7ffae456c320", 1001, "XMR"},
		{"", 0, ""},
		{"0x0000000000000000000000000000000000000000", 0, ""},
	} {
		got := l.ScreenAddress(tc.addr)
		if tc.uid == 0 {
			if len(got) != 0 {
				t.Errorf("ScreenAddress(%q) = %+v, want none", tc.addr, got)
			}
			continue
		}
		if len(got) != 1 || got[0].UID != tc.uid || got[0].Currency != tc.cur || got[0].Score != 1 {
			t.Errorf("ScreenAddress(%q) = %+v, want uid %d %s", tc.addr, got, tc.uid, tc.cur)
		}
	}
}

// cutRemark builds a remark of exactly remarkCap bytes that ends in the first cut bytes of tail.
func cutRemark(t *testing.T, head, tail string, cut int) string {
	t.Helper()
	pad := remarkCap - len(head) - cut
	if pad < 0 {
		t.Fatal("head too long")
	}
	return head + strings.Repeat("x", pad) + tail[:cut]
}

func TestCommentsJoin(t *testing.T) {
	const xbt = "1AjZPMsnmpdK2Rv9KQNfMurTXinscVro9V"
	const eth = "0x7F367cC41522cE07553e823bf3be79A889DEbe1B"
	item := "; alt. Digital Currency Address - XBT " + xbt
	// Entry 1: cut in the middle of an XBT address, continued over two comment rows.
	r1 := cutRemark(t, "Digital Currency Address - ETH "+eth+"; ", item, len(item)-10)
	c1a := item[len(item)-10:] + "; Linked To: SOMEONE; " + strings.Repeat("y", 900)
	c1b := "; Digital Currency Address - LTC LWnbjLYUfqeokfbWM4FcU7uk2FP2DSxuWS."
	// Entry 2: cut inside an address, and no comment row: the fragment must be dropped.
	r2 := cutRemark(t, "", item, len(item)-5)
	// Entry 3: cut inside an address, continued by a comment row from "another date" that does not fit:
	// the joined Base58 address fails its checksum and is dropped.
	r3 := cutRemark(t, "", item, len(item)-5)
	c3 := "ZZZZZ; Linked To: X."
	// Entry 4: not cut; a comment row for it is ignored.
	sdn := strings.Join([]string{
		`1,"ONE",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"` + r1 + `"`,
		`2,"TWO",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"` + r2 + `"`,
		`3,"THREE",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"` + r3 + `"`,
		`4,"FOUR",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"short."`,
	}, "\r\n") + "\r\n\x1a"
	comments := strings.Join([]string{
		`1,"` + c1a + `"`, `3,"` + c3 + `"`, `4,"stray"`, `99,"unknown uid"`, `1,"` + c1b + `"`,
	}, "\r\n") + "\r\n\x1a"
	l, st, err := ParseCSV(CSVFiles{SDN: strings.NewReader(sdn), Comments: strings.NewReader(comments)}, time.Time{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if st.CommentsJoined != 3 || st.CommentsIgnored != 2 || st.FragmentsDropped != 2 {
		t.Errorf("stats = %+v, want 3 joined, 2 ignored, 2 fragments dropped", st)
	}
	addrs := func(uid int) []string {
		e, _ := l.Entry(uid)
		var out []string
		for _, a := range e.Addresses {
			out = append(out, a.Currency+" "+a.Address)
		}
		return out
	}
	if got, want := addrs(1), []string{"ETH " + eth, "XBT " + xbt, "LTC LWnbjLYUfqeokfbWM4FcU7uk2FP2DSxuWS"}; !slices.Equal(got, want) {
		t.Errorf("entry 1 addresses = %q, want %q", got, want)
	}
	if got := addrs(2); len(got) != 0 {
		t.Errorf("entry 2 addresses = %q, want none (fragment)", got)
	}
	if got := addrs(3); len(got) != 0 {
		t.Errorf("entry 3 addresses = %q, want none (bad checksum)", got)
	}
	if len(l.ScreenAddress(xbt)) != 1 || len(l.ScreenAddress(xbt[:len(xbt)-10])) != 0 {
		t.Error("the joined address must match and its fragment must not")
	}
}

func TestParseErrors(t *testing.T) {
	for name, sdn := range map[string]string{
		"empty":       "",
		"short row":   `1,"A",-0-` + "\r\n",
		"bad uid":     `x,"A",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n",
		"empty name":  `1,-0- ,-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n",
		"bad quoting": `1,"A"x",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n",
	} {
		l, _, err := ParseCSV(CSVFiles{SDN: strings.NewReader(sdn)}, time.Time{}, "test")
		if name == "empty" {
			if err != nil || l.Ready() {
				t.Errorf("%s: err=%v ready=%v; want an empty, not-ready list", name, err, l.Ready())
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LoadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither sdn.csv nor SDN.XML") {
		t.Errorf("empty dir: err = %v", err)
	}
	if _, err := LoadDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing dir: no error")
	}
}

func TestParseXMLExcerpt(t *testing.T) {
	dir := filepath.Join(ofacDataDir(t), "sdn_xml_excerpt_2020-10-29")
	l, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2020, 10, 29, 0, 0, 0, 0, time.UTC); !l.DataAsOf().Equal(want) {
		t.Errorf("DataAsOf = %v, want the Publish_Date %v", l.DataAsOf(), want)
	}
	if l.Len() != 2 {
		t.Fatalf("entries = %d, want 2", l.Len())
	}
	e, _ := l.Entry(173)
	if e.Name != "ANGLO-CARIBBEAN CO., LTD." || e.Type != TypeEntity || len(e.Aliases) != 1 || e.Aliases[0].Name != "AVIA IMPORT" || e.Aliases[0].Weak {
		t.Errorf("entry 173 = %+v", e)
	}
	if r := l.ScreenName("Avia Import"); len(r.Exact) != 1 || r.Exact[0].UID != 173 {
		t.Errorf("alias not matched: %+v", r)
	}
	// The excerpt keeps the real header's Record_Count (8,497) over its 2 entries: loaded by hand, with a
	// warning; the Refresher refuses such a file (TestRefresherXML).
	if !slices.ContainsFunc(l.Warnings(), func(w string) bool { return strings.Contains(w, "states 8497 records but holds 2") }) {
		t.Errorf("record count mismatch not reported: %q", l.Warnings())
	}
}

func TestParseXMLDigitalCurrency(t *testing.T) {
	const doc = `<?xml version="1.0" standalone="yes"?>
<sdnList xmlns="http://tempuri.org/sdnList.xsd">
  <publshInformation><Publish_Date>05/02/2024</Publish_Date><Record_Count>1</Record_Count></publshInformation>
  <sdnEntry>
    <uid>42</uid><firstName>Ivan</firstName><lastName>EXAMPLE</lastName><sdnType>Individual</sdnType>
    <programList><program>CYBER2</program></programList>
    <idList>
      <id><uid>1</uid><idType>Digital Currency Address - XBT</idType><idNumber>1AjZPMsnmpdK2Rv9KQNfMurTXinscVro9V</idNumber></id>
      <id><uid>2</uid><idType>Digital Currency Address - ETH</idType><idNumber>0x7F367cC41522cE07553e823bf3be79A889DEbe1B</idNumber></id>
      <id><uid>3</uid><idType>Passport</idType><idNumber>12345</idNumber></id>
    </idList>
    <akaList>
      <aka><uid>7</uid><type>a.k.a.</type><category>strong</category><lastName>EKSAMPL</lastName><firstName>Iwan</firstName></aka>
      <aka><uid>8</uid><type>a.k.a.</type><category>weak</category><lastName>Vanya</lastName></aka>
    </akaList>
  </sdnEntry>
</sdnList>`
	l, _, err := ParseXML(strings.NewReader(doc), time.Time{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := l.Entry(42)
	if e.Name != "EXAMPLE, Ivan" || e.Type != TypeIndividual || len(e.Addresses) != 2 || l.AddressCount() != 2 {
		t.Errorf("entry = %+v", e)
	}
	if len(e.Aliases) != 2 || e.Aliases[0].Name != "EKSAMPL, Iwan" || e.Aliases[0].Weak || !e.Aliases[1].Weak || e.Aliases[0].Kind != "aka" {
		t.Errorf("aliases = %+v", e.Aliases)
	}
	if got := l.ScreenAddress("0x7f367cc41522ce07553e823bf3be79a889debe1b"); len(got) != 1 || got[0].Currency != "ETH" {
		t.Errorf("ETH address: %+v", got)
	}
	if !l.DataAsOf().Equal(time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DataAsOf = %v", l.DataAsOf())
	}
	for _, bad := range []string{"<notsdn/>", "<sdnList><sdnEntry><uid>1</uid></sdnEntry></sdnList>", "<sdnList><publshInformation><Publish_Date>soon</Publish_Date></publshInformation></sdnList>", "<sdnList><sdnEntry>"} {
		if _, _, err := ParseXML(strings.NewReader(bad), time.Time{}, "test"); err == nil {
			t.Errorf("ParseXML(%q): no error", bad)
		}
	}
}

// An EVM address is looked up without its key being written (ScreenAddress's fast path): in every letter
// case and near miss it finds what addressKey's lookup finds, and screening a clear payee allocates nothing.
func TestScreenEVMAddressAsKeyed(t *testing.T) {
	l, err := LoadDir("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	listed := "0x7F367cC41522cE07553e823bf3be79A889DEbe1B"
	for _, a := range []string{listed, strings.ToLower(listed), strings.ToUpper(listed), "0X" + listed[2:], "0x" + strings.ToUpper(listed[2:]),
		listed[:41] + "C", listed[:41] + "c", " " + listed, listed + " ", "0x0000000000000000000000000000000000000000", listed[2:]} {
		if got, want := len(l.ScreenAddress(a)), len(l.addrs[addressKey(a)]); got != want {
			t.Fatalf("ScreenAddress(%q): %d matches, the key's lookup %d", a, got, want)
		}
	}
	if len(l.ScreenAddress(strings.ToUpper(listed))) == 0 {
		t.Fatal("the listed address in upper case is not found")
	}
	clear := "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	if n := testing.AllocsPerRun(100, func() { l.ScreenAddress(clear) }); n != 0 {
		t.Fatalf("screening a clear EVM payee allocates %v times", n)
	}
}
