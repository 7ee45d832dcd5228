package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy/console"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
)

// Options configure the admin listener. Holds is required.
type Options struct {
	// Token is the admin bearer token; "" refuses every route that needs one (401).
	Token string
	// DecideToken, when set, is the in-process guard's bearer token (the sidecar option): it may call
	// POST /v1/decide and nothing else, so that an agent holding it cannot approve its own holds, read the
	// queue or sign in to the console. The admin token may call /v1/decide too.
	DecideToken string
	// Hosts are the host names the listener answers to besides "localhost" and IP addresses (config
	// admin.hosts, plus the host of admin.notify.console_url): any other is refused with 421 (host.go).
	Hosts []string
	// Ready reports whether the proxy can decide (e.g. the sanctions list is loaded); nil means ready.
	Ready func() error
	// SanctionsStatus, when set, describes the sanctions list for /readyz.
	SanctionsStatus func() any
	// Holds is the store's holds, read for the API and the console (changes go through Core.ResolveHold).
	Holds HoldReader
	// Journal, when set, is the decision journal GET /v1/decisions reads (*proxy.Journal).
	Journal Journal
	// Index, when set, serves GET /v1/endpoints?url= (observations older than IndexMaxAge are left out of
	// its derived facts; 0 keeps all).
	Index       preflight.IndexReader
	IndexMaxAge time.Duration
	// Metrics serves GET /metrics (the proxy's registry: proxy.Metrics.Handler); nil answers 404.
	Metrics http.Handler
	// CACert is the MITM CA's certificate (DER) served at /ca.pem; nil answers 404.
	CACert []byte
	// ConsoleSessionTTL is the console's idle session expiry (default 30 min).
	ConsoleSessionTTL time.Duration
	Logger            *slog.Logger
	Now               func() time.Time
}

// HoldReader is the part of store.Holds the admin side reads.
type HoldReader interface {
	GetHold(ctx context.Context, id string) (store.Hold, error)
	ListHolds(ctx context.Context, status string) ([]store.Hold, error) // "" = all
}

// Journal is the decision journal as GET /v1/decisions reads it: Flush writes what is buffered, Files are
// its files, oldest first, each of JSON lines.
type Journal interface {
	Flush() error
	Files() []string
}

// maxAdminBody bounds approval request bodies.
const maxAdminBody = 16 << 10

type handler struct {
	core Core
	o    Options
	log  *slog.Logger
}

// New is the admin listener's handler over core.
func New(core Core, o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{core: core, o: o, log: o.Logger}
	want := sha256.Sum256([]byte(o.Token))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", h.readyz)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics)
	}
	// The MITM CA's certificate, for agents to trust: public (no token), but behind the Host check like
	// every route. Only the certificate is written; the key never reaches this package.
	mux.HandleFunc("GET /ca.pem", h.caPEM)

	api := http.NewServeMux()
	api.HandleFunc("GET /v1/holds", h.listHolds)
	api.HandleFunc("GET /v1/holds/{id}", h.getHold)
	api.HandleFunc("POST /v1/holds/{id}/approve", h.resolveHoldAPI(store.HoldApproved))
	api.HandleFunc("POST /v1/holds/{id}/deny", h.resolveHoldAPI(store.HoldDenied))
	api.HandleFunc("GET /v1/budget", h.budget)
	api.HandleFunc("POST /v1/reload", h.reload)
	api.HandleFunc("GET /v1/decisions", h.decisions) // decisions.go
	api.HandleFunc("GET /v1/endpoints", h.endpoints) // endpoints.go
	api.HandleFunc("GET /v1/alarms", h.listAlarms)   // alarms.go
	api.HandleFunc("DELETE /v1/alarms/{host}", h.clearAlarm)
	mux.Handle("/v1/", requireToken(want, o.Token != "", errbody.Routes(api)))
	// The guard's decision takes the admin token or the decide-only token; every other route refuses the
	// decide-only token (401 above), so an agent cannot approve what it asked.
	decide := http.HandlerFunc(h.decideForGuard)
	var decider http.Handler = decide
	if o.DecideToken != "" {
		decider = requireToken(sha256.Sum256([]byte(o.DecideToken)), true, decide)
	}
	mux.Handle("POST /v1/decide", eitherToken(requireToken(want, o.Token != "", decide), decider, o.DecideToken))
	mux.Handle("/", console.New(console.Options{Token: o.Token, Backend: consoleBackend{h}, Logger: o.Logger, Now: o.Now,
		SessionTTL: o.ConsoleSessionTTL})) // the approvers' console (proxy/console)
	return hostGuard(o.Hosts, errbody.Routes(mux))
}

// readyz is ready unless the caller's Ready, the store or the ledger says otherwise.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ready"}
	if m := h.core.ModeStatus(); m != nil {
		body["mode"] = m // report mode is loud
	}
	if h.o.SanctionsStatus != nil {
		body["sanctions"] = h.o.SanctionsStatus()
	}
	code := http.StatusOK
	if h.o.Ready != nil {
		if err := h.o.Ready(); err != nil {
			body["status"], body["error"], code = "not ready", err.Error(), http.StatusServiceUnavailable
		}
	}
	// The store's own health: a journal that cannot be written or a wiped ledger refuses every payment,
	// so the proxy is not ready while it lasts.
	if code == http.StatusOK {
		if err := h.core.StoreReady(r.Context()); err != nil {
			body["status"], body["error"], code = "not ready", "store: "+err.Error(), http.StatusServiceUnavailable
		}
	}
	writeJSON(w, code, body)
}

// caPEM writes the CA certificate agents trust, PEM-encoded.
func (h *handler) caPEM(w http.ResponseWriter, _ *http.Request) {
	if len(h.o.CACert) == 0 {
		writeJSON(w, http.StatusNotFound, apiError("no_ca_certificate", "this admin listener was started without a CA certificate to serve"))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="payguard-ca.pem"`)
	_ = pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: h.o.CACert})
}

func requireToken(want [32]byte, configured bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !configured || !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="payguard"`)
			writeJSON(w, http.StatusUnauthorized, apiError("unauthorized", "a valid bearer token is required"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// eitherToken serves with admin when the request's bearer token is not the decide-only token, else with
// decider (both check their token again, in constant time).
func eitherToken(admin, decider http.Handler, decideToken string) http.Handler {
	want := sha256.Sum256([]byte(decideToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if decideToken != "" && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
			decider.ServeHTTP(w, r)
			return
		}
		admin.ServeHTTP(w, r)
	})
}

// reload is POST /v1/reload.
func (h *handler) reload(w http.ResponseWriter, _ *http.Request) {
	hash, err := h.core.ReloadNow()
	switch {
	case err == view.ErrReloadUnavailable:
		writeJSON(w, http.StatusNotImplemented, apiError("reload_unavailable", "this proxy was started without a configuration file to reload"))
	case err != nil:
		writeJSON(w, http.StatusUnprocessableEntity, apiError("invalid_config", "the previous rules stay active: "+err.Error()))
	default:
		writeJSON(w, http.StatusOK, map[string]string{"config_sha256": hash})
	}
}

// budget is GET /v1/budget.
func (h *handler) budget(w http.ResponseWriter, r *http.Request) {
	b, err := h.core.Budget(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("store_unavailable", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, budgetView{BudgetName: b.Name, Budget: b})
}

// budgetView is GET /v1/budget's body: view.Budget with its name under the key this route has always used
// ("budget", where the console and webhooks say "name"), first, as before.
type budgetView struct {
	BudgetName string `json:"budget"`
	// Name, always empty, hides the embedded view.Budget's "name" (a shallower field of the same JSON name
	// wins, and omitempty leaves it out): the route states the name once, as "budget".
	Name string `json:"name,omitempty"`
	view.Budget
}

// apiError is an error body of the admin API: payguard's one error (internal/errbody), flat.
func apiError(code, message string) errbody.Error { return errbody.Error{Code: code, Message: message} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
