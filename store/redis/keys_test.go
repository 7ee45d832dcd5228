package redis

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"testing"
	"time"
)

// sortable is the 20-digit form it was with fmt (the order of stored entries depends on it: entries written
// by an older replica sort among the new ones), and the keys made once at Open are the ones key makes.
func TestSortableAndFixedKeys(t *testing.T) {
	for _, tm := range []time.Time{time.Unix(0, 0), time.Unix(0, -1), time.Unix(1<<40, 7), time.Unix(-1<<40, 0),
		time.Date(2026, 11, 27, 15, 0, 0, 123, time.UTC), time.Unix(0, 1<<63-1), time.Unix(0, -1<<63)} {
		want := fmt.Sprintf("%020d", uint64(tm.UnixNano())^(1<<63))
		if got := sortable(tm); got != want {
			t.Fatalf("sortable(%v) = %s, want %s", tm, got, want)
		}
	}
	s := &Store{prefix: "pg:"}
	s.fixKeys()
	if s.epochKey() != "pg:epoch" || s.alarmKeys()[0] != "pg:alarms" || s.alarmKeys()[1] != "pg:alarms:at" {
		t.Fatalf("fixed keys %q %q", s.epochKey(), s.alarmKeys())
	}
	for _, id := range []string{"tkt_0", "tkt_ffff", "x"} {
		want := "pg:tids:" + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(id))%tidBuckets), 16)
		if got := s.tidBucket(id); got != want {
			t.Fatalf("tidBucket(%s) = %s, want %s", id, got, want)
		}
	}
	if got := s.key("ledger:", "2026-11-27", ":", "b"); got != "pg:ledger:2026-11-27:b" {
		t.Fatalf("key = %s", got)
	}
}
