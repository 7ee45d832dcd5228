package svm_test

import (
	"bytes"
	"github.com/payguard/payguard/x402/svm"
	"github.com/payguard/payguard/x402/svm/svmtest"
	"strings"
	"testing"
)

// The official client's payments pass, and svm.CheckExact reports what they do.
func TestCheckExactOfficialPayments(t *testing.T) {
	o := svmtest.Load(t)
	for i, c := range svmtest.Cases(t) {
		want := o.Payments[i].Want
		p, err := svm.CheckExact(c.Tx, c.Terms)
		if err != nil {
			t.Fatalf("%s: official payment refused: %v", c.Name, err)
		}
		if p.Payer.String() != want.Payer || p.Destination.String() != want.Destination || p.TokenProgram.String() != want.TokenProgram {
			t.Errorf("%s: got payer %s destination %s program %s, want %+v", c.Name, p.Payer, p.Destination, p.TokenProgram, want)
		}
		if p.Amount != c.Terms.Amount || p.Decimals != 6 {
			t.Errorf("%s: amount %d decimals %d", c.Name, p.Amount, p.Decimals)
		}
		if c.Tx.Version != 0 || len(c.Tx.Instructions) != 4 {
			t.Errorf("%s: version %d with %d instructions; the official client sends v0 with 4", c.Name, c.Tx.Version, len(c.Tx.Instructions))
		}
	}
}

func TestAssociatedTokenAddressVectors(t *testing.T) {
	for _, v := range svmtest.Load(t).ATAs {
		got, err := svm.AssociatedTokenAddress(svmtest.Key(t, v.Owner), svmtest.Key(t, v.Mint), svmtest.Key(t, v.Program))
		if err != nil || got.String() != v.ATA {
			t.Errorf("ATA(%s, %s, %s) = %s, %v; @solana/kit says %s", v.Owner, v.Mint, v.Program, got, err, v.ATA)
		}
	}
}

// Each way a transaction can pay something other than what was approved is refused, with a reason naming it.
// Every changed transaction is signed again by the buyer, so only the change itself can be the cause.
func TestCheckExactRefusesWhatWasNotApproved(t *testing.T) {
	base := svmtest.Cases(t)[0] // devnet USDC, Token program, one memo
	other := svmtest.Key(t, "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
	mainnetUSDC := svmtest.Key(t, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	stranger := svmtest.Key(t, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	const transfer = 2
	// addKey appends a read-only unsigned key and returns its index.
	addKey := func(tx *svm.Transaction, k svm.Key) int {
		tx.Keys = append(tx.Keys, k)
		tx.Header.ReadonlyUnsigned++
		return len(tx.Keys) - 1
	}
	cases := []struct {
		name   string
		change func(tx *svm.Transaction, terms *svm.Terms)
		reason string
	}{
		{"amount one unit more", func(tx *svm.Transaction, _ *svm.Terms) {
			copy(tx.Instructions[transfer].Data[1:9], svmtest.LE64(10001))
		}, "moves 10001 atomic units, not the requirement's amount 10000"},
		{"amount one unit less", func(tx *svm.Transaction, _ *svm.Terms) {
			copy(tx.Instructions[transfer].Data[1:9], svmtest.LE64(9999))
		}, "not the requirement's amount"},
		{"requirement asks another amount", func(_ *svm.Transaction, terms *svm.Terms) { terms.Amount = 20000 }, "not the requirement's amount 20000"},
		{"another mint", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions[transfer].Accounts[1] = addKey(tx, mainnetUSDC)
		}, "transfer moves mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
		{"requirement names another mint", func(_ *svm.Transaction, terms *svm.Terms) { terms.Mint = mainnetUSDC }, "not the requirement's asset"},
		{"another destination", func(tx *svm.Transaction, _ *svm.Terms) {
			ata, _ := svm.AssociatedTokenAddress(stranger, other, svm.TokenProgram)
			tx.Keys[tx.Instructions[transfer].Accounts[2]] = ata
		}, "transfer pays token account"},
		{"payTo itself instead of its token account", func(tx *svm.Transaction, terms *svm.Terms) {
			tx.Keys[tx.Instructions[transfer].Accounts[2]] = terms.PayTo
		}, "transfer pays token account"},
		{"requirement names another payTo", func(_ *svm.Transaction, terms *svm.Terms) { terms.PayTo = stranger }, "transfer pays token account"},
		{"payTo's account under Token-2022 while the program is Token", func(tx *svm.Transaction, terms *svm.Terms) {
			ata, _ := svm.AssociatedTokenAddress(terms.PayTo, terms.Mint, svm.Token2022Program)
			tx.Keys[tx.Instructions[transfer].Accounts[2]] = ata
		}, "transfer pays token account"},
		{"a second transfer", func(tx *svm.Transaction, _ *svm.Terms) {
			second := tx.Instructions[transfer]
			second.Accounts = append([]int(nil), second.Accounts...)
			second.Data = bytes.Clone(second.Data)
			tx.Instructions = append(tx.Instructions, second)
		}, "instruction 4 calls program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA; after the transfer only Memo is allowed"},
		{"the transfer moved after a memo", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions[2], tx.Instructions[3] = tx.Instructions[3], tx.Instructions[2]
		}, "instruction 2 calls program MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"},
		{"a plain Transfer (no mint check)", func(tx *svm.Transaction, _ *svm.Terms) {
			in := &tx.Instructions[transfer]
			in.Data = append([]byte{3}, in.Data[1:9]...)
			in.Accounts = []int{in.Accounts[0], in.Accounts[2], in.Accounts[3]}
		}, "is not a TransferChecked"},
		{"a multisig signer added to the transfer", func(tx *svm.Transaction, _ *svm.Terms) {
			in := &tx.Instructions[transfer]
			in.Accounts = append(in.Accounts, in.Accounts[3])
		}, "is not a TransferChecked"},
		{"another fee payer", func(_ *svm.Transaction, terms *svm.Terms) { terms.FeePayer = stranger }, "fee payer is"},
		{"the fee payer as transfer authority", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions[transfer].Accounts[3] = 0
		}, "names the fee payer as an account"},
		{"compute price above the bound", func(tx *svm.Transaction, _ *svm.Terms) {
			copy(tx.Instructions[1].Data[1:], svmtest.LE64(svm.MaxComputeUnitPrice+1))
		}, "above the facilitator's bound"},
		{"compute limit replaced by a heap request", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions[0].Data = []byte{1, 0, 0, 1, 0}
		}, "not a ComputeBudget SetComputeUnitLimit"},
		{"no compute price", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions = append(tx.Instructions[:1], tx.Instructions[2:]...)
		}, "not a ComputeBudget SetComputeUnitPrice"},
		{"a Lighthouse instruction", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions = append(tx.Instructions, svm.Instruction{ProgramIndex: addKey(tx, svm.LighthouseProgram), Data: []byte{1}})
		}, "Lighthouse"},
		{"a system transfer after the payment", func(tx *svm.Transaction, _ *svm.Terms) {
			tx.Instructions = append(tx.Instructions, svm.Instruction{ProgramIndex: addKey(tx, svm.Key{}), Accounts: []int{1, 1}, Data: append([]byte{2, 0, 0, 0}, svmtest.LE64(1e9)...)})
		}, "calls program 11111111111111111111111111111111"},
		{"too many instructions", func(tx *svm.Transaction, _ *svm.Terms) {
			memo := tx.Instructions[3]
			tx.Instructions = append(tx.Instructions, memo, memo, memo, memo)
		}, "has 8 instructions"},
		{"memo the requirement did not name", func(_ *svm.Transaction, terms *svm.Terms) { terms.Memo, terms.HasMemo = "invoice-1", true }, "differs from the requirement's memo"},
		{"requirement's memo missing", func(tx *svm.Transaction, terms *svm.Terms) {
			terms.Memo, terms.HasMemo = "x", true
			tx.Instructions = tx.Instructions[:3]
		}, "carries 0 memos"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tx, err := svm.Decode(bytes.Clone(base.Raw))
			if err != nil {
				t.Fatal(err)
			}
			terms := base.Terms
			c.change(tx, &terms)
			tx = resignTx(t, tx)
			_, err = svm.CheckExact(tx, terms)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("CheckExact = %v; want a refusal containing %q", err, c.reason)
			}
		})
	}
	// The unchanged transaction, signed again the same way, still passes: the refusals come from the changes.
	tx, _ := svm.Decode(bytes.Clone(base.Raw))
	if _, err := svm.CheckExact(resignTx(t, tx), base.Terms); err != nil {
		t.Fatalf("re-signed official payment refused: %v", err)
	}
}

func TestCheckExactSignatures(t *testing.T) {
	base := svmtest.Cases(t)[0]
	payerSlot := 1
	t.Run("missing", func(t *testing.T) {
		tx, _ := svm.Decode(bytes.Clone(base.Raw))
		tx.Signatures[payerSlot] = [64]byte{}
		if _, err := svm.CheckExact(tx, base.Terms); err == nil || !strings.Contains(err.Error(), "has not signed") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("over another message", func(t *testing.T) {
		raw := bytes.Clone(base.Raw)
		raw[len(raw)-3] ^= 1 // inside the memo: the payer's signature no longer covers the message
		tx, err := svm.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svm.CheckExact(tx, base.Terms); err == nil || !strings.Contains(err.Error(), "does not verify") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the fee payer's slot is not checked", func(t *testing.T) {
		tx, _ := svm.Decode(bytes.Clone(base.Raw))
		tx.Signatures[0][0] = 7
		if _, err := svm.CheckExact(tx, base.Terms); err != nil {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("authority not a signer", func(t *testing.T) {
		tx, _ := svm.Decode(bytes.Clone(base.Raw))
		in := &tx.Instructions[2]
		in.Accounts[3] = in.Accounts[2] // a writable, unsigned key
		if _, err := svm.CheckExact(resignTx(t, tx), base.Terms); err == nil || !strings.Contains(err.Error(), "does not sign") {
			t.Fatalf("err = %v", err)
		}
	})
}

// Two payments differ in their message hash even with the same terms (the client's random memo); the same
// transaction has one hash however often it is checked.
func TestMessageHashIdentifiesThePayment(t *testing.T) {
	cs := svmtest.Cases(t)
	a, _ := svm.CheckExact(cs[0].Tx, cs[0].Terms)
	b, _ := svm.CheckExact(cs[0].Tx, cs[0].Terms)
	c, _ := svm.CheckExact(cs[1].Tx, cs[1].Terms)
	if a.MessageHash != b.MessageHash || a.MessageHash == c.MessageHash {
		t.Fatal("message hash is not a stable, distinct identity")
	}
}

// resignTx signs a changed transaction again with the buyer's key.
func resignTx(t *testing.T, tx *svm.Transaction) *svm.Transaction {
	_, out := svmtest.Resign(t, tx)
	return out
}

// ReadTransfer finds a v1 payment's approval by its mint and amount, and reads nothing that is not a
// TransferChecked where the exact scheme puts it.
func TestReadTransfer(t *testing.T) {
	c := svmtest.Cases(t)[0]
	tr, err := svm.ReadTransfer(c.Tx)
	if err != nil || tr.Mint != c.Terms.Mint || tr.Amount != c.Terms.Amount || tr.Authority.String() != c.Want.Payer {
		t.Fatalf("ReadTransfer = %+v %v", tr, err)
	}
	tx, _ := svm.Decode(bytes.Clone(c.Raw))
	tx.Instructions[2], tx.Instructions[3] = tx.Instructions[3], tx.Instructions[2]
	if _, err := svm.ReadTransfer(tx); err == nil {
		t.Fatal("a memo where the transfer goes was read as a transfer")
	}
	tx.Instructions = tx.Instructions[:2]
	if _, err := svm.ReadTransfer(tx); err == nil {
		t.Fatal("two instructions read as a transfer")
	}
}

// A seller's lie: extra.feePayer names the paying wallet itself, so that the agent, signing as fee payer,
// would pay the fees (up to the compute limit at the priority price) beside the approved transfer, in a
// transaction the seller can submit alone. The transfer's authority is then the fee payer, which no
// instruction may name: refused, though the fee payer is the one the requirement names.
func TestCheckExactRefusesThePayerAsFeePayer(t *testing.T) {
	c := svmtest.Cases(t)[0]
	tx, _ := svm.Decode(bytes.Clone(c.Raw))
	buyer := tx.Keys[tx.Instructions[2].Accounts[3]]
	// Rebuild the message with the buyer as key 0 and sole signer (the official client with feePayer = buyer).
	remap := func(i int) int {
		if i == 0 {
			t.Fatal("the official transaction names the fee payer")
		}
		return i - 1
	}
	tx.Keys = append([]svm.Key{buyer}, tx.Keys[2:]...)
	tx.Header.RequiredSignatures, tx.Header.ReadonlySigned = 1, 0 // the fee payer is writable
	tx.Signatures = tx.Signatures[:1]
	for i := range tx.Instructions {
		in := &tx.Instructions[i]
		in.ProgramIndex = remap(in.ProgramIndex)
		for j := range in.Accounts {
			in.Accounts[j] = remap(in.Accounts[j])
		}
	}
	tx = resignTx(t, tx)
	terms := c.Terms
	terms.FeePayer = buyer
	if _, err := svm.CheckExact(tx, terms); err == nil || !strings.Contains(err.Error(), "names the fee payer as an account") {
		t.Fatalf("CheckExact = %v", err)
	}
}
