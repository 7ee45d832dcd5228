package admin_test

import (
	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
)

// The proxy is the admin listener's Core: the composition hands a *proxy.Proxy to admin.New.
var _ admin.Core = (*proxy.Proxy)(nil)
