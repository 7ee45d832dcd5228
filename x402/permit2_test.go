package x402

import (
	"errors"
	"strings"
	"testing"
)

// uptoPayload is the payload @x402/evm 2.27's upto client signs (specs/schemes/upto/scheme_upto_evm.md).
const uptoPayload = `{"signature":"0x2d6a","permit2Authorization":{"from":"0x857b06519E91e3A54538791bDbb0E22373e36b66",` +
	`"permitted":{"token":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","amount":"5000000"},` +
	`"spender":"0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002","nonce":"110048498126286470298134432154839806473296474946357330462939050397003870926464",` +
	`"deadline":"1740672154","witness":{"to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C",` +
	`"facilitator":"0x1111111111111111111111111111111111111111","validAfter":"0"}}}`

func TestPermit2Upto(t *testing.T) {
	e, err := (&PaymentPayload{X402Version: 2, Payload: []byte(uptoPayload)}).EVM()
	if err != nil {
		t.Fatal(err)
	}
	a := e.Permit2
	if a == nil || e.Authorization != nil {
		t.Fatalf("%+v", e)
	}
	want := Permit2Authorization{From: "0x857b06519E91e3A54538791bDbb0E22373e36b66", Spender: UptoPermit2ProxyAddress,
		Nonce:     "110048498126286470298134432154839806473296474946357330462939050397003870926464",
		Deadline:  "1740672154",
		Permitted: Permit2Permitted{Token: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", Amount: "5000000"},
		Witness: Permit2Witness{To: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
			Facilitator: "0x1111111111111111111111111111111111111111", ValidAfter: "0"}}
	if *a != want {
		t.Errorf("got %+v\nwant %+v", *a, want)
	}
}

// Every member the signature covers must be read as the facilitator reads it, or the payment is refused.
func TestPermit2Refused(t *testing.T) {
	cases := map[string][2]string{
		"no spender":         {`"spender":"0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002",`, ``},
		"no nonce":           {`"nonce":"110048498126286470298134432154839806473296474946357330462939050397003870926464",`, ``},
		"numeric deadline":   {`"deadline":"1740672154"`, `"deadline":1740672154`},
		"shadowing To":       {`"witness":{"to":`, `"witness":{"To":`},
		"no validAfter":      {`,"validAfter":"0"`, ``},
		"numeric amount":     {`"amount":"5000000"`, `"amount":5000000`},
		"permitted not obj":  {`"permitted":{"token":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","amount":"5000000"}`, `"permitted":[]`},
		"empty token":        {`"token":"0x036CbD53842c5426634e7929541eC2318f3dCF7e"`, `"token":""`},
		"facilitator number": {`"facilitator":"0x1111111111111111111111111111111111111111"`, `"facilitator":1`},
		"witness missing":    {`,"witness":{"to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","facilitator":"0x1111111111111111111111111111111111111111","validAfter":"0"}`, ``},
	}
	for name, c := range cases {
		if !strings.Contains(uptoPayload, c[0]) {
			t.Fatalf("%s: fixture lacks %s", name, c[0])
		}
		payload := strings.Replace(uptoPayload, c[0], c[1], 1)
		e, err := (&PaymentPayload{X402Version: 2, Payload: []byte(payload)}).EVM()
		if err == nil || !errors.Is(err, ErrNotExactEVM) {
			t.Errorf("%s: got %+v, %v; want ErrNotExactEVM", name, e, err)
		}
	}
}

func TestUint256(t *testing.T) {
	good := map[string]string{"0": "0", "007": "7", "0x10": "16", "0XfF": "255",
		"115792089237316195423570985008687907853269984665640564039457584007913129639935": "115792089237316195423570985008687907853269984665640564039457584007913129639935"}
	for in, want := range good {
		n, ok := Uint256(in)
		if !ok || n.String() != want {
			t.Errorf("Uint256(%q) = %v, %v; want %s", in, n, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "+1", " 1", "1 ", "0x", "1e6", "0b1", "0o7", "1.0", "0x-1",
		"115792089237316195423570985008687907853269984665640564039457584007913129639936", strings.Repeat("9", 81)} {
		if n, ok := Uint256(in); ok {
			t.Errorf("Uint256(%q) = %v, want refused", in, n)
		}
	}
}
