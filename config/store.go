package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Store drivers.
const (
	StoreBolt   = "bolt"   // the embedded default: one file that survives restarts and kill -9
	StoreMemory = "memory" // in process; forgets everything on exit (tests, throwaway runs)
	StoreRedis  = "redis"  // shared by a fleet of replicas
)

// StoreConfig is the `store:` section: where the budget ledger, holds, tickets, trial counters and endpoint
// observations live.
type StoreConfig struct {
	// Driver is bolt (default), memory or redis.
	Driver string `yaml:"driver"`
	// Path is the bolt file; its directory is created (mode 0700) when missing.
	Path string `yaml:"path"`
	// Redis is read only when Driver is redis.
	Redis RedisConfig `yaml:"redis"`
}

// RedisConfig says how to reach Redis. Exactly one of URL, URLFile, URLEnv and Addr is set; the URL forms
// may carry a password, so it can come from a file (a mounted secret) or the environment instead of this file.
type RedisConfig struct {
	URL     string `yaml:"url"`      // redis://[:password@]host:port/db or rediss://...
	URLFile string `yaml:"url_file"` // a file whose content (trimmed) is the URL
	URLEnv  string `yaml:"url_env"`  // the name of an environment variable holding the URL
	Addr    string `yaml:"addr"`     // host:port, no password, database 0
	// Prefix starts every key, so several deployments can share one Redis.
	Prefix string `yaml:"prefix"`
	// AllowVolatile accepts a Redis whose CONFIG says it keeps nothing across a restart (save "" and
	// appendonly no) or may evict keys (maxmemory-policy other than noeviction). Off, such a Redis is refused
	// at start: a restart would silently reset the day's spend.
	AllowVolatile bool `yaml:"allow_volatile"`
	// InitIfEmpty creates the ledger epoch when the prefix has none. Off, a new deployment runs
	// `payguard store init` once; on, a Redis wiped while every replica was down starts a fresh ledger.
	InitIfEmpty bool `yaml:"init_if_empty"`
}

// DefaultStorePath is the bolt file used when none is configured.
const DefaultStorePath = "./payguard-data/payguard.db"

// DefaultRedisPrefix is the key prefix used when none is configured.
const DefaultRedisPrefix = "payguard:"

func defaultStore() StoreConfig {
	return StoreConfig{Driver: StoreBolt, Path: DefaultStorePath, Redis: RedisConfig{Prefix: DefaultRedisPrefix}}
}

func (c *StoreConfig) validate() error {
	var errs []error
	r := &c.Redis
	set := 0
	for _, v := range []string{r.URL, r.URLFile, r.URLEnv, r.Addr} {
		if v != "" {
			set++
		}
	}
	switch c.Driver {
	case StoreBolt:
		if c.Path == "" {
			errs = append(errs, fmt.Errorf("store.path must not be empty for the bolt driver"))
		}
	case StoreMemory:
	case StoreRedis:
		if set != 1 {
			errs = append(errs, fmt.Errorf("store.redis: set exactly one of url, url_file, url_env and addr (%d are set)", set))
		}
		if r.URL != "" && !strings.HasPrefix(r.URL, "redis://") && !strings.HasPrefix(r.URL, "rediss://") {
			errs = append(errs, fmt.Errorf("store.redis.url must start with redis:// or rediss://"))
		}
		if r.Addr != "" && strings.Contains(r.Addr, "://") {
			errs = append(errs, fmt.Errorf("store.redis.addr is host:port; put URLs in store.redis.url"))
		}
		if r.Prefix == "" {
			errs = append(errs, fmt.Errorf("store.redis.prefix must not be empty"))
		}
	default:
		errs = append(errs, fmt.Errorf("store.driver %q: want bolt, memory or redis", c.Driver))
	}
	if c.Driver != StoreRedis && (set > 0 || r.AllowVolatile || r.InitIfEmpty) {
		errs = append(errs, fmt.Errorf("store.redis is set but store.driver is %s", c.Driver))
	}
	return errors.Join(errs...)
}

// RedisURL resolves the Redis URL from whichever of url, url_file, url_env and addr is set. It reads the
// file or the environment at call time, so a rotated secret is picked up on restart.
func (c *StoreConfig) RedisURL() (string, error) {
	r := c.Redis
	switch {
	case r.URL != "":
		return r.URL, nil
	case r.URLFile != "":
		b, err := os.ReadFile(r.URLFile)
		if err != nil {
			return "", fmt.Errorf("store.redis.url_file: %w", err)
		}
		u := strings.TrimSpace(string(b))
		if u == "" {
			return "", fmt.Errorf("store.redis.url_file %s is empty", r.URLFile)
		}
		return u, nil
	case r.URLEnv != "":
		u := strings.TrimSpace(os.Getenv(r.URLEnv))
		if u == "" {
			return "", fmt.Errorf("store.redis.url_env: environment variable %s is empty or unset", r.URLEnv)
		}
		return u, nil
	case r.Addr != "":
		return "redis://" + r.Addr + "/0", nil
	}
	return "", fmt.Errorf("store.redis: no url, url_file, url_env or addr")
}
