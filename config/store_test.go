package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreDefault(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if c.Store.Driver != StoreBolt || c.Store.Path != DefaultStorePath || c.Store.Redis.Prefix != DefaultRedisPrefix {
		t.Fatalf("default store = %+v", c.Store)
	}
}

func TestStoreParse(t *testing.T) {
	for _, c := range []struct {
		name, yaml, wantErr string
	}{
		{"memory", "store: {driver: memory}", ""},
		{"bolt path", "store: {driver: bolt, path: /var/lib/payguard/p.db}", ""},
		{"redis url", "store: {driver: redis, redis: {url: 'redis://:pw@127.0.0.1:6379/2', prefix: 'team-a:'}}", ""}, // not dialed
		{"redis addr", "store: {driver: redis, redis: {addr: '127.0.0.1:6379'}}", ""},                                // not dialed
		{"redis env", "store: {driver: redis, redis: {url_env: REDIS_URL}}", ""},
		{"unknown driver", "store: {driver: sqlite}", `store.driver "sqlite"`},
		{"empty path", "store: {driver: bolt, path: ''}", "store.path must not be empty"},
		{"redis without address", "store: {driver: redis}", "exactly one of"},
		{"redis with two addresses", "store: {driver: redis, redis: {url: 'redis://a:1', addr: 'a:1'}}", "exactly one of"},
		{"redis bad scheme", "store: {driver: redis, redis: {url: 'http://a:1'}}", "redis:// or rediss://"},
		{"redis addr as url", "store: {driver: redis, redis: {addr: 'redis://a:1'}}", "host:port"},
		{"redis empty prefix", "store: {driver: redis, redis: {addr: 'a:1', prefix: ''}}", "prefix must not be empty"},
		{"redis settings on bolt", "store: {driver: bolt, redis: {addr: 'a:1'}}", "store.driver is bolt"},
		{"redis safety switches", "store: {driver: redis, redis: {addr: 'a:1', allow_volatile: true, init_if_empty: true}}", ""},
		{"allow_volatile on bolt does nothing", "store: {driver: bolt, redis: {allow_volatile: true}}", "store.driver is bolt"},
		{"init_if_empty on memory does nothing", "store: {driver: memory, redis: {init_if_empty: true}}", "store.driver is memory"},
		{"unknown key", "store: {driver: bolt, dir: x}", "store.dir: unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if c.wantErr == "" && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("Parse error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestStoreRedisURL(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "redis-url")
	if err := os.WriteFile(secret, []byte("redis://:s3cret@10.0.0.5:6379/1\n"), 0o600); err != nil { // not dialed
		t.Fatal(err)
	}
	t.Setenv("PAYGUARD_TEST_STORE_URL", " redis://127.0.0.1:6379/3 ") // not dialed
	for _, c := range []struct {
		r       RedisConfig
		want    string
		wantErr bool
	}{
		{RedisConfig{URL: "redis://127.0.0.1:6379/0"}, "redis://127.0.0.1:6379/0", false},   // not dialed
		{RedisConfig{URLFile: secret}, "redis://:s3cret@10.0.0.5:6379/1", false},            // not dialed
		{RedisConfig{URLEnv: "PAYGUARD_TEST_STORE_URL"}, "redis://127.0.0.1:6379/3", false}, // not dialed
		{RedisConfig{Addr: "127.0.0.1:6380"}, "redis://127.0.0.1:6380/0", false},
		{RedisConfig{URLFile: filepath.Join(dir, "missing")}, "", true},
		{RedisConfig{URLEnv: "PAYGUARD_TEST_STORE_UNSET"}, "", true},
		{RedisConfig{}, "", true},
	} {
		sc := StoreConfig{Driver: StoreRedis, Redis: c.r}
		got, err := sc.RedisURL()
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("RedisURL(%+v) = %q, %v; want %q (error %v)", c.r, got, err, c.want, c.wantErr)
		}
	}
}
