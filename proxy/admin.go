package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/payguard/payguard/store"
)

// maxAdminBody bounds approval request bodies.
const maxAdminBody = 16 << 10

// AdminHandler serves the approval API, health, metrics and the CA certificate. Every route except /healthz,
// /readyz, /metrics and /ca.pem needs `Authorization: Bearer <token>`; a missing or wrong token gets 401 and changes nothing.
// Every request, whatever its route, must name this listener in its Host (adminHostGuard) or gets 421.
// ready reports whether the proxy can decide (e.g. the sanctions list is loaded); nil means always ready.
func (p *Proxy) AdminHandler(token string, ready func() error) http.Handler {
	want := sha256.Sum256([]byte(token))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"status": "ready"}
		if m := p.ruleSet().ModeStatus(); m != nil {
			body["mode"] = m // shadow.go: report mode is loud
		}
		if p.opts.SanctionsStatus != nil {
			body["sanctions"] = p.opts.SanctionsStatus()
		}
		code := http.StatusOK
		if ready != nil {
			if err := ready(); err != nil {
				body["status"], body["error"], code = "not ready", err.Error(), http.StatusServiceUnavailable
			}
		}
		// The store's own health: a journal that cannot be written or a wiped ledger refuses every payment,
		// so the proxy is not ready while it lasts.
		if code == http.StatusOK {
			if err := store.Healthy(r.Context(), p.opts.Store); err != nil {
				body["status"], body["error"], code = "not ready", "store: "+err.Error(), http.StatusServiceUnavailable
			}
		}
		if code == http.StatusOK {
			if _, err := p.opts.Store.State(r.Context(), p.opts.Budget, p.day()); err != nil {
				body["status"], body["error"], code = "not ready", "store: "+err.Error(), http.StatusServiceUnavailable
			}
		}
		writeJSON(w, code, body)
	})
	mux.Handle("GET /metrics", p.metrics.Handler())
	// The MITM CA's certificate, for agents to trust: public (no token), but behind the Host check like
	// every route. Only the certificate is written; the key never leaves Options.CA.
	mux.HandleFunc("GET /ca.pem", p.caPEM)

	api := http.NewServeMux()
	api.HandleFunc("GET /v1/holds", p.listHolds)
	api.HandleFunc("GET /v1/holds/{id}", p.getHold)
	api.HandleFunc("POST /v1/holds/{id}/approve", p.resolveHoldAPI(store.HoldApproved))
	api.HandleFunc("POST /v1/holds/{id}/deny", p.resolveHoldAPI(store.HoldDenied))
	api.HandleFunc("GET /v1/budget", p.budget)
	api.HandleFunc("POST /v1/reload", p.reloadAPI)           // reload.go
	api.HandleFunc("GET /v1/decisions", p.decisionsAPI)      // decisions.go
	api.HandleFunc("GET /v1/endpoints", p.endpointsAPI)      // admin_index.go
	api.HandleFunc("GET /v1/alarms", p.listAlarms)           // alarms.go
	api.HandleFunc("DELETE /v1/alarms/{host}", p.clearAlarm) // alarms.go
	mux.Handle("/v1/", requireToken(want, token != "", api))
	// The guard's decision takes the admin token or the decide-only token (Options.DecideToken); every other
	// route refuses the decide-only token (401 above), so an agent cannot approve what it asked.
	decide := http.HandlerFunc(p.decideForGuard)
	var decider http.Handler = decide
	if p.opts.DecideToken != "" {
		decider = requireToken(sha256.Sum256([]byte(p.opts.DecideToken)), true, decide)
	}
	mux.Handle("POST /v1/decide", eitherToken(requireToken(want, token != "", decide), decider, p.opts.DecideToken))
	mux.Handle("/", p.consoleHandler(token)) // the approvers' console (proxy/console)
	return p.adminHostGuard(mux)
}

// caPEM writes the CA certificate agents trust (Options.CA's first certificate), PEM-encoded.
func (p *Proxy) caPEM(w http.ResponseWriter, _ *http.Request) {
	if p.opts.CA == nil || len(p.opts.CA.Certificate) == 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no CA certificate"})
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="payguard-ca.pem"`)
	_ = pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: p.opts.CA.Certificate[0]})
}

func requireToken(want [32]byte, configured bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !configured || !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="payguard"`)
			writeJSON(w, http.StatusUnauthorized, apiError{"unauthorized", "a valid bearer token is required"})
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

type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// holdView is a hold as the API shows it, with the held decision as JSON.
type holdView struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	Method       string          `json:"method"`
	URL          string          `json:"url"`
	AmountUSD    string          `json:"amount_usd"`
	AmountMicros int64           `json:"amount_micros"`
	Agent        string          `json:"agent,omitempty"`
	Decision     json.RawMessage `json:"decision,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
	ExpiresAt    time.Time       `json:"expires_at"`
	ResolvedBy   string          `json:"resolved_by,omitempty"`
	Note         string          `json:"note,omitempty"`
	ResolvedAt   *time.Time      `json:"resolved_at,omitempty"`
	// Description is the seller's: the v2 challenge's resource.description, else the held option's.
	Description string `json:"description,omitempty"`
}

func (p *Proxy) view(h store.Hold) holdView {
	v := holdView{ID: h.ID, Status: h.Status, Method: h.Method, URL: h.URL, AmountUSD: usdString(h.AmountMicros), Agent: h.Agent,
		AmountMicros: h.AmountMicros, CreatedAt: h.CreatedAt, ExpiresAt: h.ExpiresAt, ResolvedBy: h.ResolvedBy, Note: h.Note,
		Description: h.Description}
	if json.Valid(h.Decision) {
		v.Decision = h.Decision
	}
	if !h.ResolvedAt.IsZero() {
		t := h.ResolvedAt
		v.ResolvedAt = &t
	}
	if v.Status == store.HoldPending && !p.opts.Now().Before(h.ExpiresAt) {
		v.Status = store.HoldExpired
	}
	return v
}

// listHolds is GET /v1/holds?status=: every hold ("" or "all"), or those whose status as shown is status.
// The filter applies to the status a person sees (view): a pending hold past its expiry is listed under
// expired, not pending, whatever the store still says.
func (p *Proxy) listHolds(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", "all", store.HoldPending, store.HoldApproved, store.HoldDenied, store.HoldUsed, store.HoldExpired:
	default:
		writeJSON(w, http.StatusBadRequest, apiError{"invalid_status",
			fmt.Sprintf("unknown status %q (pending, approved, denied, used, expired or all)", status)})
		return
	}
	hs, err := p.opts.Store.ListHolds(r.Context(), "")
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError{"store_unavailable", err.Error()})
		return
	}
	out := make([]holdView, 0, len(hs))
	for _, h := range hs {
		if v := p.view(h); status == "" || status == "all" || v.Status == status {
			out = append(out, v)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"holds": out})
}

func (p *Proxy) getHold(w http.ResponseWriter, r *http.Request) {
	h, err := p.opts.Store.GetHold(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, apiError{"not_found", "no hold with that id"})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError{"store_unavailable", err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, p.view(h))
}

type resolveRequest struct {
	By   string `json:"by"`
	Note string `json:"note"`
}

func (p *Proxy) resolveHoldAPI(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body resolveRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxAdminBody))
		dec.DisallowUnknownFields()
		err := dec.Decode(&body)
		if err == nil && dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("more than one JSON value")
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{"invalid_json", "body must be one {\"by\": \"...\", \"note\": \"...\"}: " + err.Error()})
			return
		}
		h, rerr := p.resolve(r.Context(), r.PathValue("id"), status, body.By, body.Note)
		if rerr != nil {
			writeJSON(w, rerr.status, apiError{rerr.code, rerr.message})
			return
		}
		writeJSON(w, http.StatusOK, p.view(h))
	}
}

type budgetView struct {
	Budget         string `json:"budget"`
	Day            string `json:"day"`
	SpentUSD       string `json:"spent_usd"`
	ReservedUSD    string `json:"reserved_usd"`
	CapUSD         string `json:"cap_usd"`
	SpentMicros    int64  `json:"spent_micros"`
	ReservedMicros int64  `json:"reserved_micros"`
	CapMicros      int64  `json:"cap_micros"`
}

func (p *Proxy) budget(w http.ResponseWriter, r *http.Request) {
	day := p.day()
	st, err := p.opts.Store.State(r.Context(), p.opts.Budget, day)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError{"store_unavailable", err.Error()})
		return
	}
	capMicros := int64(p.opts.Rules.DailyCapUSD)
	writeJSON(w, http.StatusOK, budgetView{Budget: p.opts.Budget, Day: day, SpentUSD: usdString(st.Spent),
		ReservedUSD: usdString(st.Reserved), CapUSD: usdString(capMicros), SpentMicros: st.Spent,
		ReservedMicros: st.Reserved, CapMicros: capMicros})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// visibleName reports whether s can name the person who resolved a hold in the audit record: valid UTF-8
// with at least one visible character, and no control or format characters (NUL, U+200B, U+FEFF...) that
// would make the name empty or misleading on screen.
func visibleName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	visible := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
		if unicode.IsGraphic(r) && !unicode.IsSpace(r) {
			visible = true
		}
	}
	return visible
}
