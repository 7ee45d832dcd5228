// Package admin is the proxy's admin listener: the approval API (/v1/holds, /v1/budget, /v1/decisions,
// /v1/endpoints, /v1/alarms, /v1/reload), the in-process guard's decision (POST /v1/decide), health
// (/healthz, /readyz), metrics, the MITM CA certificate (/ca.pem) and the approvers' console (proxy/console)
// at /.
//
// It is not the proxy: as net/http/httputil's ReverseProxy is only the proxy, package proxy only proxies,
// and this package reaches it through Core, a narrow interface of the few things only the running proxy can
// do (decide for a guard on its ledger, resolve a hold and wake the request waiting on it, read its
// ledger, alarms and last decisions, reload its rules). What it only reads (the store's holds, the decision
// journal's files, the Endpoint Index, the CA certificate) it is given in Options. The composition
// (internal/app) builds a *proxy.Proxy and hands it to New; package proxy never imports this one.
//
// Access: every route except /healthz, /readyz, /metrics and /ca.pem needs `Authorization: Bearer <token>`
// (401 otherwise, and nothing changes); POST /v1/decide also takes the decide-only token, which no other
// route accepts; and every request must name this listener in its Host (host.go) or gets 421.
package admin
