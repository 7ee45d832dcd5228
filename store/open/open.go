// Package open picks and opens a store implementation by name. It lives apart from package store so that
// store itself imports none of its implementations (they import it).
package open

import (
	"context"
	"fmt"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/redis"
)

// open opens the store named by driver: "bolt" (path is the file), "memory", or "redis" (redisURL, and
// rc's key prefix and safety exceptions). An unknown driver or an unreachable Redis is an error.
func open(driver, path, redisURL string, rc config.RedisConfig) (store.Store, error) {
	switch driver {
	case config.StoreBolt:
		if path == "" {
			path = config.DefaultStorePath
		}
		return bolt.Open(path, bolt.Options{})
	case config.StoreMemory:
		return memory.New(), nil
	case config.StoreRedis:
		return redis.Open(context.Background(), redis.Options{URL: redisURL, Prefix: rc.Prefix,
			AllowVolatile: rc.AllowVolatile, InitIfEmpty: rc.InitIfEmpty})
	}
	return nil, fmt.Errorf("store: unknown driver %q (want bolt, memory or redis)", driver)
}

// FromConfig opens the store the `store:` section describes (the one way to open a store by name), resolving the Redis URL from its file or
// environment variable when configured so.
func FromConfig(c config.StoreConfig) (store.Store, error) {
	var redisURL string
	if c.Driver == config.StoreRedis {
		u, err := c.RedisURL()
		if err != nil {
			return nil, err
		}
		redisURL = u
	}
	return open(c.Driver, c.Path, redisURL, c.Redis)
}
