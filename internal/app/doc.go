// Package app puts payguard's processes together from a *config.Config, in one place: build makes the parts
// the proxy and serve share once (receipt keys, store, screening, the Index cache and the preflight engine),
// and RunProxy and RunServe run each process on listeners their caller bound, so that a start that cannot
// bind fails before anything is created, and tests hand in a listener instead of racing for a free port.
//
// Each component reads its own options from the configuration (proxy.OptionsFromConfig, server.Options'
// Config, store/open.FromConfig, screening/open.Open); this package only wires them. cmd/payguard parses
// flags and calls it; nothing else imports it (internal/archtest).
package app
