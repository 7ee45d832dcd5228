package config

// KeysConfig is the `keys:` section. (Skeleton: its owner fills in the fields.)
type KeysConfig struct{}

func defaultKeys() KeysConfig { return KeysConfig{} }

func (c *KeysConfig) validate() error { return nil }
