package sanctions

import (
	"os"
	"path/filepath"
	"testing"
)

// solanaSDN is an sdn.csv row in OFAC's form listing a Solana address (OFAC lists SOL digital currency
// addresses; the committed excerpts predate the first one).
const solanaSDN = `9001,"EXAMPLE SOLANA ENTITY","-0- ","CYBER2",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"Digital Currency Address - SOL 2q9Pjo4xBjRKTfveyGgVhJkxaBVaDsBsxZCqc2v21h7c; Digital Currency Address - ETH 0x7F367cC41522cE07553e823bf3be79A889DEbe1B."` + "\n"

// loadSolanaFixture writes solanaSDN to a directory and loads it.
func loadSolanaFixture(t *testing.T) *List {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileSDN), []byte(solanaSDN), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A Solana payee is screened as an EVM one is, but compared exactly: Base58 is case-sensitive, so another
// letter case is another key, never the listed one. Confusable spellings are still undone.
func TestScreenSolanaAddressExactly(t *testing.T) {
	l := loadSolanaFixture(t)
	const listed = "2q9Pjo4xBjRKTfveyGgVhJkxaBVaDsBsxZCqc2v21h7c"
	for addr, want := range map[string]bool{
		listed:              true,
		" " + listed + "\n": true, // white space trimmed
		"2q9Pjo4xBjRK\u200bTfveyGgVhJkxaBVaDsBsxZCqc2v21h7c": true, // a zero-width space removed
		"２q9Pjo4xBjRKTfveyGgVhJkxaBVaDsBsxZCqc2v21h7c":       true, // a fullwidth digit folded
		"2Q9Pjo4xBjRKTfveyGgVhJkxaBVaDsBsxZCqc2v21h7c":       false,
		"2q9pjo4xbjrktfveyggvhjkxabvadsbsxzcqc2v21h7c":       false,
		"2Q9PJO4XBJRKTFVEYGGVHJKXABVADSBSXZCQC2V21H7C":       false,
	} {
		got := l.ScreenAddress(addr)
		if want && (len(got) != 1 || got[0].UID != 9001 || got[0].Currency != "SOL") {
			t.Errorf("ScreenAddress(%q) = %+v, want the SOL entry", addr, got)
		}
		if !want && len(got) != 0 {
			t.Errorf("ScreenAddress(%q) = %+v, want none (another key)", addr, got)
		}
	}
}
