package config

// StoreConfig is the `store:` section. (Skeleton: its owner fills in the fields.)
type StoreConfig struct{}

func defaultStore() StoreConfig { return StoreConfig{} }

func (c *StoreConfig) validate() error { return nil }
