package config

// ServerConfig is the `server:` section. (Skeleton: its owner fills in the fields.)
type ServerConfig struct{}

func defaultServer() ServerConfig { return ServerConfig{} }

func (c *ServerConfig) validate() error { return nil }
