package sanctions

import (
	"strings"
	"testing"
)

func TestAddressKeyFoldsCaseInsensitiveFormats(t *testing.T) {
	for in, want := range map[string]string{
		"0xAbCdEf0123456789abcdef0123456789ABCDEF01":             "0xabcdef0123456789abcdef0123456789abcdef01",
		"BC1QV7K70U2ZYNVEM59U88CTDLAW7HC735D8XEP9RQ":             "bc1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rq",
		" bc1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rq ":           "bc1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rq",
		"QPF2CPHC5DKUCLKQUR7LHJ2YUQQ9PK3HMUKLE77VHQ":             "qpf2cphc5dkuclkqur7lhj2yuqq9pk3hmukle77vhq",
		"bitcoincash:qpf2cphc5dkuclkqur7lhj2yuqq9pk3hmukle77vhq": "qpf2cphc5dkuclkqur7lhj2yuqq9pk3hmukle77vhq",
		"BITCOINCASH:QPF2CPHC5DKUCLKQUR7LHJ2YUQQ9PK3HMUKLE77VHQ": "qpf2cphc5dkuclkqur7lhj2yuqq9pk3hmukle77vhq",
		// Mixed case is kept: Base58 is case-sensitive, and mixed-case bech32 is not an address.
		"1BoatSLRHtKNngkdXEeobR76b53LETtpyT":         "1BoatSLRHtKNngkdXEeobR76b53LETtpyT",
		"bC1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rq": "bC1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rq",
		"TNaRAoLUyYEV2uF7GUrzSjRQTU8v5ZJ5VR":         "TNaRAoLUyYEV2uF7GUrzSjRQTU8v5ZJ5VR",
	} {
		if got := addressKey(in); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every bech32 and CashAddr address on the real list is found in upper case too (QR codes use it), and a
// CashAddr with its bitcoincash: prefix.
func TestListedBech32FoundInUpperCase(t *testing.T) {
	l := loadFullList(t)
	n := 0
	for key := range l.addrs {
		if _, ok := foldBech32(key); !ok || strings.HasPrefix(key, "0x") {
			continue
		}
		n++
		if len(l.ScreenAddress(strings.ToUpper(key))) == 0 {
			t.Errorf("%s is listed, its upper-case form is not found", key)
		}
		if (key[0] == 'q' || key[0] == 'p') && len(key) == 42 && len(l.ScreenAddress("bitcoincash:"+key)) == 0 {
			t.Errorf("%s is listed, bitcoincash:%s is not found", key, key)
		}
	}
	if n < 20 {
		t.Fatalf("only %d bech32 or CashAddr addresses on the full list; the test is not looking at them", n)
	}
}
