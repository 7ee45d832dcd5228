package config

// ScreeningConfig is the `screening:` section. (Skeleton: its owner fills in the fields.)
type ScreeningConfig struct{}

func defaultScreening() ScreeningConfig { return ScreeningConfig{} }

func (c *ScreeningConfig) validate() error { return nil }
