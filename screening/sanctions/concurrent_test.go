package sanctions

import (
	"reflect"
	"sync"
	"testing"
)

// TestScreenNameConcurrent: queries screened at once on several goroutines (sharing the pooled query and
// scratch state) give exactly the answers they give one at a time.
func TestScreenNameConcurrent(t *testing.T) {
	l := loadFullList(t)
	qs := readLabeled(t, "testdata/names_labeled.tsv")
	if raceEnabled {
		qs = qs[:60]
	}
	want := make([]any, len(qs))
	for i, q := range qs {
		want[i] = l.ScreenName(q.query)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range qs {
				i := (k + g*len(qs)/4) % len(qs) // each goroutine starts elsewhere
				if got := l.ScreenName(qs[i].query); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("%q: concurrent %+v, serial %+v", qs[i].query, got, want[i])
				}
			}
		}()
	}
	wg.Wait()
}
