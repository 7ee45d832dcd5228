package slotmemo

import (
	"fmt"
	"sync"
	"testing"
)

func TestGetAfterPut(t *testing.T) {
	m := New[int](8)
	if _, ok := m.Get("a"); ok {
		t.Fatal("an empty table answered")
	}
	m.Put("a", 1)
	if v, ok := m.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v; want 1, true", v, ok)
	}
	if v, ok := m.GetBytes([]byte("a")); !ok || v != 1 {
		t.Fatalf("GetBytes(a) = %d, %v; want 1, true", v, ok)
	}
}

// A key never answers with another key's value, however many keys share the slots.
func TestNeverAnswersAnotherKey(t *testing.T) {
	m := New[string](4)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := fmt.Sprint(g, "/", i%50)
				if v, ok := m.Get(k); ok && v != "v"+k {
					t.Errorf("Get(%q) = %q", k, v)
					return
				}
				if v, ok := m.GetBytes([]byte(k)); ok && v != "v"+k {
					t.Errorf("GetBytes(%q) = %q", k, v)
					return
				}
				m.Put(k, "v"+k)
			}
		}()
	}
	wg.Wait()
	n := 0
	for i := range m.slots {
		if m.slots[i].Load() != nil {
			n++
		}
	}
	if n > 4 {
		t.Fatalf("%d entries in a table of 4 slots", n)
	}
}
