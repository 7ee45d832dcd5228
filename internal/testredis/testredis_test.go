package testredis

import (
	"context"
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
