// Package deps pins the project's third-party modules while the packages that use them are written.
// It is removed once every module is imported by real code.
package deps

import (
	_ "github.com/elazarl/goproxy"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/miekg/dns"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/redis/go-redis/v9"
	_ "go.etcd.io/bbolt"
	_ "gopkg.in/yaml.v3"
)
