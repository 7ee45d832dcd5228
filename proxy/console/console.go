// Package console is the approvers' web console, served at / on the admin listener: pending holds first
// with everything the notification carries, approve or deny with a name and a note, the history of
// resolved holds, today's budget and the last decisions, refreshed by polling.
//
// The assets are embedded (no CDN, no build step). Sign-in exchanges the admin token, sent once in a POST
// body, for an HttpOnly, SameSite=Strict session cookie; every state change needs that session, the
// session's CSRF token in X-CSRF-Token, a JSON body and a same-origin Origin. Every response carries a
// strict Content-Security-Policy (scripts and styles only from this origin, nothing inline), and the page
// renders every seller-controlled string as text (textContent), never as markup.
package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/proxy/view"
)

//go:embed assets
var assets embed.FS

// Backend is the proxy as the console sees it.
type Backend interface {
	Holds(ctx context.Context) ([]view.Hold, error) // pending first, then resolved, newest first
	Budget(ctx context.Context) (view.Budget, error)
	Decisions() []view.Decision // newest first
	// Resolve approves or denies a hold; a refusal is an *errbody.Error with the status to answer with.
	Resolve(ctx context.Context, id string, approve bool, by, note string) (view.Hold, error)
}

// Options configure the console.
type Options struct {
	Token      string // the admin token; "" disables sign-in
	Backend    Backend
	Logger     *slog.Logger
	Now        func() time.Time
	SessionTTL time.Duration // idle expiry (default 30 min); a session never outlives 12 h
}

// cspHeader allows this origin's script, style and fetches, and nothing else: no inline script or style,
// no frames, no plugins, no form posts elsewhere.
const cspHeader = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type handler struct {
	o        Options
	want     [32]byte
	sessions *sessions
	throttle *throttle    // sign-in failures per client address (throttle.go)
	mux      http.Handler // its routes, with the mux's own 404 and 405 as the one error body
}

// New builds the console's handler; mount it at "/".
func New(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 30 * time.Minute
	}
	h := &handler{o: o, want: sha256.Sum256([]byte(o.Token)), sessions: newSessions(o.Now, o.SessionTTL),
		throttle: newThrottle(o.Now)}
	mux := http.NewServeMux()
	h.mux = errbody.Routes(mux)
	mux.HandleFunc("GET /{$}", h.asset("assets/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /console/app.js", h.asset("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /console/app.css", h.asset("assets/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("POST /console/session", h.signIn)
	mux.HandleFunc("GET /console/session", h.session)
	mux.HandleFunc("POST /console/signout", h.withSession(h.signOut))
	mux.HandleFunc("GET /console/api/state", h.withSession(h.state))
	mux.HandleFunc("POST /console/api/holds/{id}/approve", h.withSession(h.resolve(true)))
	mux.HandleFunc("POST /console/api/holds/{id}/deny", h.withSession(h.resolve(false)))
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", cspHeader)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

func (h *handler) asset(name, ctype string) http.HandlerFunc {
	body, err := assets.ReadFile(name)
	if err != nil {
		panic("console: missing embedded asset " + name) // a build error, caught by every test
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	}
}

// sameOrigin refuses a state change that a browser sent from another origin: the Origin header (sent by
// every browser on a POST) must name this host, and a request without one must not say it is cross-site.
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// hasSameOrigin is sameOrigin with an Origin header required.
func hasSameOrigin(r *http.Request) bool {
	return r.Header.Get("Origin") != "" && sameOrigin(r)
}

// jsonBody checks a state change's form: same origin and a JSON body (which a cross-site HTML form cannot
// send without a CORS preflight this server never grants).
func jsonBody(w http.ResponseWriter, r *http.Request) bool {
	if !sameOrigin(r) {
		writeJSON(w, http.StatusForbidden, errBody("cross_origin", "cross-origin requests are refused"))
		return false
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		writeJSON(w, http.StatusUnsupportedMediaType, errBody("json_required", "the body must be application/json"))
		return false
	}
	return true
}

// errBody is an error body of the console's API: payguard's one error (internal/errbody), flat.
func errBody(code, message string) errbody.Error { return errbody.Error{Code: code, Message: message} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// signIn exchanges the admin token for a session. The token is compared in constant time and never
// logged; failures are throttled per client address with backoff (throttle.go). A sign-in must come from
// this origin: a browser sends Origin on every POST, and a request without one (a script, a form posted
// by an old browser from elsewhere) has no business signing in: the CLI and the API use the bearer token.
func (h *handler) signIn(w http.ResponseWriter, r *http.Request) {
	if !hasSameOrigin(r) {
		writeJSON(w, http.StatusForbidden, errBody("origin_required", "sign-in needs an Origin header naming this console"))
		return
	}
	if !jsonBody(w, r) {
		return
	}
	client := clientKey(r.RemoteAddr)
	if ok, wait := h.throttle.mayTry(client); !ok {
		secs := int(wait/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSON(w, http.StatusTooManyRequests, errBody("too_many_attempts",
			fmt.Sprintf("too many failed sign-ins from this address; try again in %d s", secs)))
		return
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := decode(r, &body); err != nil {
		writeJSON(w, http.StatusBadRequest, errBody("invalid_json", "body must be {\"token\": \"...\"}"))
		return
	}
	sum := sha256.Sum256([]byte(body.Token))
	if h.o.Token == "" || subtle.ConstantTimeCompare(sum[:], h.want[:]) != 1 {
		h.throttle.failed(client)
		h.o.Logger.Warn("console: sign-in refused", "remote", r.RemoteAddr)
		writeJSON(w, http.StatusUnauthorized, errBody("unauthorized", "wrong admin token"))
		return
	}
	h.throttle.succeeded(client)
	id, s := h.sessions.create()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(maxSessionAge / time.Second)})
	h.o.Logger.Info("console: signed in", "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, map[string]any{"csrf": s.csrf, "expires_at": s.expires})
}

// session tells the page whether its cookie is still good and gives it the CSRF token again after a
// reload (the cookie is HttpOnly; only same-origin script can read this answer).
func (h *handler) session(w http.ResponseWriter, r *http.Request) {
	s, ok := h.sessions.get(r, false)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, errBody("unauthorized", "sign in with the admin token"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"csrf": s.csrf, "expires_at": s.expires})
}

// withSession requires a live session, and for every state change (POST) also the session's CSRF token,
// a same-origin request and a JSON body. Only a state change counts as activity for the idle expiry: the
// page's polling (GET) does not keep a session alive.
func (h *handler) withSession(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && !jsonBody(w, r) {
			return
		}
		s, ok := h.sessions.get(r, r.Method != http.MethodGet)
		if !ok {
			writeJSON(w, http.StatusUnauthorized, errBody("unauthorized", "sign in with the admin token"))
			return
		}
		if r.Method != http.MethodGet {
			got := r.Header.Get("X-CSRF-Token")
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
				writeJSON(w, http.StatusForbidden, errBody("csrf", "missing or wrong X-CSRF-Token"))
				return
			}
		}
		next(w, r, s)
	}
}

func (h *handler) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	h.sessions.remove(r)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	writeJSON(w, http.StatusOK, map[string]string{"status": "signed out"})
}

type stateView struct {
	Now       time.Time       `json:"now"`
	Holds     []view.Hold     `json:"holds"`
	Budget    *view.Budget    `json:"budget"`
	Decisions []view.Decision `json:"decisions"`
	Error     string          `json:"error,omitempty"`
}

func (h *handler) state(w http.ResponseWriter, r *http.Request, _ *session) {
	v := stateView{Now: h.o.Now().UTC(), Decisions: h.o.Backend.Decisions(), Holds: []view.Hold{}}
	hs, err := h.o.Backend.Holds(r.Context())
	if err != nil {
		v.Error = "holds unavailable: " + err.Error()
	} else {
		v.Holds = hs
	}
	if b, err := h.o.Backend.Budget(r.Context()); err == nil {
		v.Budget = &b
	} else if v.Error == "" {
		v.Error = "budget unavailable: " + err.Error()
	}
	if v.Decisions == nil {
		v.Decisions = []view.Decision{}
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *handler) resolve(approve bool) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, _ *session) {
		var body struct {
			By   string `json:"by"`
			Note string `json:"note"`
		}
		if err := decode(r, &body); err != nil {
			writeJSON(w, http.StatusBadRequest, errBody("invalid_json", "body must be {\"by\": \"...\", \"note\": \"...\"}"))
			return
		}
		hold, err := h.o.Backend.Resolve(r.Context(), r.PathValue("id"), approve, body.By, body.Note)
		var ce *errbody.Error
		switch {
		case errors.As(err, &ce):
			writeJSON(w, ce.Status, ce)
			return
		case err != nil:
			writeJSON(w, http.StatusServiceUnavailable, errBody("unavailable", err.Error()))
			return
		}
		writeJSON(w, http.StatusOK, hold)
	}
}
