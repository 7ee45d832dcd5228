package sanctions

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// indexBytes counts the bytes of the name index's arrays (lengths times element sizes, headers aside): an
// exact figure that does not depend on the garbage collector or the machine.
func (ix *nameIndex) indexBytes() int {
	strs := func(x *strIndex) int { return len(x.data) + 4*len(x.off) + 4*len(x.slots) }
	u32 := func(g *groups[uint32]) int { return 4*len(g.start) + 4*len(g.data) }
	n := strs(&ix.vocab) + strs(&ix.skelIx) + 8*len(ix.exactHash)
	n += 4*len(ix.skelOf) + len(ix.isToken) + 4*len(ix.idf) + 4*len(ix.unitMaxW) + 4*len(ix.nameW)
	n += u32(&ix.postings) + u32(&ix.bySkel)
	n += 4*len(ix.exact.start) + int(unsafe.Sizeof(exactRef{}))*len(ix.exact.data)
	n += 2*len(ix.delKeys) + 4*len(ix.delVocab) + 4*len(ix.delStart) + 4*len(ix.particleIDs)
	n += int(unsafe.Sizeof(nameRec{}))*len(ix.names) + int(unsafe.Sizeof(storedUnit{}))*len(ix.units) + len(ix.ustart)
	for _, ns := range ix.common {
		n += 4 + int(unsafe.Sizeof(neighbor{}))*len(ns)
	}
	return n
}

// BenchmarkIndexFootprint reports the memory of the indexed benchmark list (2024-05-03 sdn.csv, 2025-12
// alt.csv), the figure behind issue 36's proxy RSS goal: heap-B, the live heap the list keeps (HeapAlloc
// after a collection with the list alive, minus the same before loading; the files are read from disk and
// released), and index-B, the name index's arrays counted exactly (indexBytes). Run it with -benchtime 1x.
func BenchmarkIndexFootprint(b *testing.B) {
	dir := ofacDataDir(b)
	var heap, index float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sdn, err := os.Open(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv"))
		if err != nil {
			b.Fatal(err)
		}
		alt, err := os.Open(filepath.Join(dir, "alt_add_comments_2025-12", "alt.csv"))
		if err != nil {
			b.Fatal(err)
		}
		l, _, err := ParseCSV(CSVFiles{SDN: sdn, Alt: alt}, time.Time{}, "bench")
		sdn.Close()
		alt.Close()
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
		index = float64(l.names.indexBytes())
		if l.Len() == 0 || len(l.ScreenName("Banco Nacional de Cuba").Exact) == 0 {
			b.Fatal("the benchmark list does not screen")
		}
		runtime.KeepAlive(l)
	}
	b.ReportMetric(heap, "heap-B")
	b.ReportMetric(index, "index-B")
}
