package redis

import (
	"context"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// Persistence is what Redis's CONFIG says about keeping payguard's keys: across a restart (RDB snapshots,
// the append-only file) and under memory pressure (the eviction policy; the ledger's keys carry expiries,
// so any policy but noeviction may drop a day's spend to make room).
type Persistence struct {
	Known           bool   // false when CONFIG GET was refused (managed services often rename or disable it)
	Save            string // RDB snapshot schedule; empty means none
	AppendOnly      string // "yes" or "no"
	MaxmemoryPolicy string
	Refused         string // why CONFIG GET failed, when !Known
}

// Volatile reports that Redis, by its own configuration, keeps nothing across a restart.
func (p Persistence) Volatile() bool {
	return p.Known && strings.TrimSpace(p.Save) == "" && p.AppendOnly != "yes"
}

// Evicts reports an eviction policy that may drop payguard's keys under memory pressure.
func (p Persistence) Evicts() bool { return p.Known && p.MaxmemoryPolicy != "noeviction" }

func (p Persistence) String() string {
	if !p.Known {
		return "persistence unknown (CONFIG GET refused: " + p.Refused + ")"
	}
	return fmt.Sprintf("save %q, appendonly %s, maxmemory-policy %s", p.Save, p.AppendOnly, p.MaxmemoryPolicy)
}

// checkPersistence reads the settings; a refused CONFIG is reported as unknown, never as safe or unsafe.
func checkPersistence(ctx context.Context, rdb *goredis.Client) Persistence {
	var p Persistence
	for _, f := range []struct {
		name string
		dst  *string
	}{{"save", &p.Save}, {"appendonly", &p.AppendOnly}, {"maxmemory-policy", &p.MaxmemoryPolicy}} {
		m, err := rdb.ConfigGet(ctx, f.name).Result()
		if err != nil {
			return Persistence{Refused: err.Error()}
		}
		v, ok := m[f.name]
		if !ok {
			return Persistence{Refused: "no value for " + f.name}
		}
		*f.dst = v
	}
	p.Known = true
	return p
}

// persistenceProblem is Open's refusal for a Redis that may forget the ledger, or "" when it may not.
func persistenceProblem(p Persistence) string {
	switch {
	case p.Volatile():
		return "it keeps nothing across a restart (save \"\" and appendonly no): set appendonly yes (and " +
			"appendfsync everysec or always), or accept losing the day's spend on a restart with " +
			"store.redis.allow_volatile: true"
	case p.Evicts():
		return "its maxmemory-policy " + p.MaxmemoryPolicy + " may evict ledger keys under memory pressure: set " +
			"maxmemory-policy noeviction, or accept it with store.redis.allow_volatile: true"
	}
	return ""
}
