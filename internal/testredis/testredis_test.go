package testredis

import (
	"context"
	"errors"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// TestGetAnswers: whichever Redis was chosen answers PING and runs a Lua script (the store's every
// operation is one).
func TestGetAnswers(t *testing.T) {
	s, err := Get()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kind %s: %s", s.Kind, s.Notice)
	opt, err := goredis.ParseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := c.Eval(ctx, "return tonumber(ARGV[1]) + 1", nil, "41").Int()
	if err != nil || n != 42 {
		t.Fatalf("eval = %d, %v", n, err)
	}
}

// TestEmbeddedFallbackRunsTheScripts: the embedded server (used when nothing else is there) is chosen last
// and still runs Lua; it is started here directly so this test covers it on machines with a real Redis too.
func TestEmbeddedFallbackRunsTheScripts(t *testing.T) {
	t.Setenv(EnvURL, "")
	s, err := chooseEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindEmbedded {
		t.Fatalf("kind %s", s.Kind)
	}
	opt, _ := goredis.ParseURL(s.URL)
	c := goredis.NewClient(opt)
	defer c.Close()
	if n, err := c.Eval(context.Background(), "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[1])", []string{"k"}, "1").Int(); err != nil || n != 2 {
		t.Fatalf("eval = %d, %v", n, err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:s3cret@10.0.0.5:6379/1": "redis://***@10.0.0.5:6379/1",
		"redis://127.0.0.1:6379/0":        "redis://127.0.0.1:6379/0",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// The embedded stand-in for a test's own Redis restarts empty at the same address and reports the
// persistence settings its redis-server arguments name, or refuses CONFIG when they rename it away.
func TestOwnEmbeddedRestartsEmptyAndAnswersConfig(t *testing.T) {
	ctx := context.Background()
	o := startOwn(t, "", []string{"--appendonly", "yes", "--maxmemory-policy", "volatile-lru"})
	rdb := goredis.NewClient(&goredis.Options{Addr: o.Addr()})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	conf, err := rdb.ConfigGet(ctx, "appendonly").Result()
	if err != nil || conf["appendonly"] != "yes" {
		t.Fatalf("CONFIG GET appendonly: %v %v", conf, err)
	}
	if conf, _ := rdb.ConfigGet(ctx, "save").Result(); conf["save"] != "" {
		t.Errorf("save: %q, want the test default \"\"", conf["save"])
	}
	if conf, _ := rdb.ConfigGet(ctx, "maxmemory-policy").Result(); conf["maxmemory-policy"] != "volatile-lru" {
		t.Errorf("maxmemory-policy: %v", conf)
	}
	o.Restart()
	if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, goredis.Nil) {
		t.Fatalf("after a restart the key is still there (or the server is gone): %v", err)
	}
	renamed := startOwn(t, "", []string{"--rename-command", "CONFIG", ""})
	rdb2 := goredis.NewClient(&goredis.Options{Addr: renamed.Addr()})
	defer rdb2.Close()
	if err := rdb2.ConfigGet(ctx, "save").Err(); err == nil {
		t.Fatal("CONFIG answered although the arguments renamed it away")
	}
}
