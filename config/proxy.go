package config

// ProxyConfig is the `proxy:` section. (Skeleton: its owner fills in the fields.)
type ProxyConfig struct{}

func defaultProxy() ProxyConfig { return ProxyConfig{} }

func (c *ProxyConfig) validate() error { return nil }

// AdminConfig is the `admin:` section: the approval API listener. (Skeleton.)
type AdminConfig struct{}

func defaultAdmin() AdminConfig { return AdminConfig{} }

func (c *AdminConfig) validate() error { return nil }
